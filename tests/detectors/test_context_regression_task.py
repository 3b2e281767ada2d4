"""detectors._context.regression_task and chance: a run whose config states a regression has no
chance level over classes, so no config integer becomes one (issue 27: the chance level comes from
the task's label count only).

Real input: own corpus f10b2-01 (tests/data/realworld/runs/aarugunj27--EnzymeKcatAnaylsis/logs), an HF
Trainer TensorBoard logdir of an ESM protein-regression fine-tune: ``model_config.problem_type``
``regression``, the pretrained masked-LM config's ``vocab_size`` 33 and ``id2label`` {0: LABEL_0}, MSE
25 -> 15. Its loss was read as 4.7x the uniform guess over 33 classes ("the model predicts worse
than guessing": diverged).
"""

from __future__ import annotations

from pathlib import Path

from mlaudit_core.detectors._context import chance, regression_task
from mlaudit_core.formats import load_path

RUN = Path(__file__).parents[1] / "data/realworld/runs/aarugunj27--EnzymeKcatAnaylsis/logs"


def test_a_stated_regression_has_no_chance_level():
    runs = list(load_path(RUN).runs)
    run = runs[-1][1]
    assert regression_task(run)
    assert chance(run) is None
