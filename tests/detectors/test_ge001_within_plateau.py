"""GE001 (overfitting-onset): a held-out loss whose end stays inside the level it had reached and
visited before its best, giving back a small share of what was learned, is a plateau, not an overfit.
Real input from the own corpus: f25b2-06, a Keras History CSV of an LSTM forecaster (15 epochs):
val_loss 0.0283 -> 0.0071 at epoch 4, then 0.0066-0.0080, best 0.00665 at epoch 9, 0.00761 at the end
(below the 0.0080 of epoch 6); called overfit (GL 14.4%) against a label succeeded|plateaued. Overfit
curves (own wb03, f8b1-18) end above their whole descent and stay overfit."""

from __future__ import annotations

from pathlib import Path

import pytest

from mlaudit_core.audit import audit
from mlaudit_core.formats import load_path
from mlaudit_core.report import Outcome, Severity

RUNS = Path(__file__).parent.parent / "data" / "realworld" / "runs"


def _report(rel: str):
    runs = list(load_path(RUNS / rel).runs)
    return audit(runs[-1][1])


def test_ge001_rise_inside_the_plateau_is_not_an_overfit():
    rep = _report("SaurabhNair239--LSTM-multi-output-forcasting/model_history.csv")
    ge001 = [f for f in rep.findings if f.code == "GE001"]
    assert ge001 and all(f.severity is Severity.INFO for f in ge001), [f.message for f in ge001]
    assert ge001[0].facts.get("kind") == "within_plateau"
    assert rep.verdict.outcome is not Outcome.OVERFIT, rep.verdict.summary


@pytest.mark.parametrize(
    "rel",
    [
        "DeV-21--Waste-Classification-Using-CNN/training_history.csv",
        "Achuthan2909--ECG-Analysis/training.log",
    ],
)
def test_ge001_u_curve_stays_overfit(rel):
    rep = _report(rel)
    assert rep.verdict.outcome is Outcome.OVERFIT, rep.verdict.summary
