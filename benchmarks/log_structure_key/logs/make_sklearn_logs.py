"""Make the two scikit-learn console logs of the log-structure keys with the real library.

Run from the repository root with the venv's Python; each fit prints to stdout as a user's
``python train.py > log 2>&1`` captures it::

    python benchmarks/log_structure_key/logs/make_sklearn_logs.py mlp > .../sklearn-mlp-verbose.log 2>&1
    python benchmarks/log_structure_key/logs/make_sklearn_logs.py gb > .../sklearn-gb-verbose.log 2>&1

The keys' triples are the fitted model's own arrays (``loss_curve_``, ``validation_scores_``,
``train_score_``, ``oob_improvement_``) formatted as scikit-learn prints them, checked against
the log text; never the reader's output. Made with scikit-learn 1.9.1.
"""

from __future__ import annotations

import sys

from sklearn.datasets import load_breast_cancer, load_digits
from sklearn.ensemble import GradientBoostingClassifier
from sklearn.neural_network import MLPClassifier


def main(which: str) -> None:
    if which == "mlp":
        x, y = load_digits(return_X_y=True)
        MLPClassifier(
            hidden_layer_sizes=(32,),
            max_iter=40,
            early_stopping=True,
            n_iter_no_change=50,
            random_state=0,
            verbose=True,
        ).fit(x / 16.0, y)
    else:
        x, y = load_breast_cancer(return_X_y=True)
        GradientBoostingClassifier(n_estimators=60, subsample=0.8, random_state=0, verbose=1).fit(
            x, y
        )


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "mlp")
