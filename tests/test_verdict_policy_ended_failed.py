"""V-ended-failed: a failed or crashed tracker status after a run that reached its stated plan.

Real input: a W&B run folder from the realworld corpus (f16b2-09, an HF Trainer LoRA notebook run of
3/3 epochs whose ``.wandb`` file has no exit record, so W&B and mlaudit read it crashed), and a
W&B folder whose training stopped short (f15b1-12, a KeyboardInterrupt at epoch 25 of 60)."""

from __future__ import annotations

import json
from pathlib import Path

from mlaudit_core.audit import audit
from mlaudit_core.formats import load_path
from mlaudit_core.report import Cause, Outcome
from mlaudit_core.rundata import RunStatus
from mlaudit_core.verdict.evidence import ending

OWN = Path(__file__).parent / "data" / "realworld"


def _own(prefix: str):
    lab = next(
        e for e in json.loads((OWN / "labels.json").read_text()) if e["id"].startswith(prefix)
    )
    return load_path(OWN / lab["path"]).runs[-1][1]


def test_a_crashed_status_after_the_plan_was_reached_leaves_the_training_to_the_learning_rules():
    run = _own("f16b2-09-")
    assert run.status in (RunStatus.FAILED, RunStatus.KILLED)
    rep = audit(run)
    e = ending(run, rep.findings)
    assert e.planned and e.reached is not None and not e.short
    v = rep.verdict
    assert (v.outcome, v.cause) == (Outcome.SUCCEEDED, Cause.HEALTHY), v.summary


def test_a_crashed_status_of_a_run_that_stopped_short_stays_crashed():
    run = _own("f15b1-12-")
    v = audit(run).verdict
    assert v.outcome is Outcome.CRASHED, v.summary
