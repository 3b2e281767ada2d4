"""V14's ``heldout_at_ceiling``: a training-loss plateau under a held-out score at its ceiling is where
learning ended, not a stall. Real input from the own corpus (tests/data/realworld, labelled before any
mlaudit run).

f10b1-20: a Python-logging file of 15 launches of an AI-text detector; the last trains all 5 of its 5
epochs, per-batch train loss level at 0.05 from its first record, val AUC 0.9995-1.0 and val F1
0.9989-0.9995 at every epoch, 'Training Complete!' (was plateaued/model_convergence, "train/loss flat
from step 500 to the end"; labelled succeeded/healthy).
"""

from __future__ import annotations

from pathlib import Path

from mlaudit_core.audit import audit
from mlaudit_core.formats import load_path
from mlaudit_core.report import Cause, Outcome

RUNS = Path(__file__).parent / "data" / "realworld" / "runs"


def test_plateau_under_a_held_out_score_at_its_ceiling_is_converged():
    run = list(load_path(RUNS / "BlackPool25--AI-Detector-Text" / "training.log").runs)[-1][1]
    rep = audit(run)
    assert any(f.code == "OP003" for f in rep.findings)  # the level is still reported
    v = rep.verdict
    assert (v.outcome, v.cause) == (Outcome.SUCCEEDED, Cause.HEALTHY), v.summary
