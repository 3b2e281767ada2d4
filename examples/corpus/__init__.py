"""A labelled corpus of real training runs with injected faults, for measuring mlaudit's diagnosis.

``python -m examples.corpus.generate --out DIR`` trains every class (see
:mod:`examples.corpus.classes`) for several seeds into one MLflow sqlite store;
``benchmarks/diagnosis_eval.py --corpus DIR`` audits it. See ``docs/corpus.md``.
"""
