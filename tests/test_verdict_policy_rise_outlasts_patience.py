"""Rule V12 (verdict/policy._overfit, rise_outlasts_patience): an early stop excuses a held-out loss rise only
when the rise fits in the run's patience; a rise that went on for longer than the patience did not stop the
run, and a run whose task metric also ended below its best is read as overfit."""

from __future__ import annotations

from pathlib import Path

from mlaudit_core.audit import audit
from mlaudit_core.formats import load_path
from mlaudit_core.report import Cause, Outcome
from mlaudit_core.verdict.policy import rise_outlasts_patience

RUNS = Path(__file__).resolve().parent / "data" / "realworld" / "runs"


def _report(rel: str):
    run = list(load_path(RUNS / rel).runs)[-1][1]
    return run, audit(run)


def test_val_loss_rising_for_208_epochs_under_patience_100_is_overfit():
    """Own corpus f22b2-13 (YOLOv8s car damage, patience 100, stopped at epoch 220 of 400 = best fitness 120 +
    100): val/box_loss best at epoch 12 and rising to the end, mAP50-95 0.088 -> 0.063 while the training
    losses fall; labelled overfit. Read as a validation plateau before the rule."""
    run, r = _report("Nizaro--cardent/runs/detect/train25/results.csv")
    (f,) = [g for g in r.findings if g.code == "GE001" and g.severity.value == "error"]
    assert rise_outlasts_patience(run, f) == (208, 100)
    assert (r.verdict.outcome, r.verdict.cause) == (Outcome.OVERFIT, Cause.MODEL_CONVERGENCE), (
        r.verdict.summary
    )


def test_rise_inside_the_patience_window_is_the_designed_stop():
    """Own corpus f10b1-10 (YOLOv8-cls, patience 10, stopped at epoch 19 of 60): val/loss rose for 6
    evaluations after its best, inside the patience: the early stop is the designed response, succeeded."""
    run, r = _report(
        "AicoSchreurs--street-type-classification-yolov8/runs/classify/train/results.csv"
    )
    (f,) = [g for g in r.findings if g.code == "GE001" and g.severity.value == "error"]
    assert rise_outlasts_patience(run, f) is None
    assert (r.verdict.outcome, r.verdict.cause) == (Outcome.SUCCEEDED, Cause.HEALTHY), (
        r.verdict.summary
    )
