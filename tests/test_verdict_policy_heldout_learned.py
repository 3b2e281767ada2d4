"""V14b's ``heldout_learned_at_end``: a held-out loss that stops improving early under a held-out
accuracy that reached a learned level (GE002's 0.9) and ended at its best is a fast convergence, not a
plateau. Real input from the own corpus (tests/data/realworld, labelled before any mlaudit run).

f21b2-07: a Python-logging console of a 7-class car-brand classifier, 10 of 10 epochs, 'Training
complete.'; validation accuracy 0.964 -> 0.977 (epoch 3, best) -> 0.977 at epoch 10, validation loss
best at epoch 4 then 0.08-0.13 (was plateaued/model_convergence from GE007; labelled succeeded/healthy).
Own csv06 (a Keras CSVLogger plateau with validation accuracy ending near its best at 0.76, labelled
plateaued or overfit) stays a plateau.
"""

from __future__ import annotations

from pathlib import Path

from mlaudit_core.audit import audit
from mlaudit_core.formats import load_path
from mlaudit_core.report import Cause, Outcome
from mlaudit_core.verdict.policy import heldout_learned_at_end

RUNS = Path(__file__).parent / "data" / "realworld" / "runs"
CAR_BRANDS = RUNS / "Rajmaheta009--tarining_to_learning_ml" / "logs" / "train_log.log"


def _run(path: Path):
    return list(load_path(path).runs)[-1][1]


def test_validation_plateau_under_a_learned_accuracy_at_its_best_is_converged():
    run = _run(CAR_BRANDS)
    assert heldout_learned_at_end(run) is not None
    rep = audit(run)
    assert any(f.code == "GE007" for f in rep.findings)  # the loss's early best is still reported
    v = rep.verdict
    assert (v.outcome, v.cause) == (Outcome.SUCCEEDED, Cause.HEALTHY), v.summary


def test_validation_plateau_under_an_accuracy_below_a_learned_level_stays():
    run = _run(RUNS / "BurakErguvn--Car-Prediction-CNN-Model" / "training.log")
    assert heldout_learned_at_end(run) is None
    assert audit(run).verdict.outcome is Outcome.PLATEAUED
