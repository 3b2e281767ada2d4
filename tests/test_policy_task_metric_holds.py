"""verdict.policy rules that read the task metric before a loss: ``selection_metric_holds`` (V12,
V12a) and ``heldout_accuracy_near_best`` (V14c).

A held-out loss component rising while the metric the run selects its checkpoint by ended at or near
its best is no overfit; a jumping held-out loss while the held-out accuracy ends at its best is no
instability.
Real input from the own corpus (tests/data/realworld): a YOLOv8m run on KITTI whose val/box_loss
ended above its minimum while Ultralytics fitness is best at epoch 294 of 300 (f8b2-09, labelled
succeeded|plateaued, called overfit at the session-8 first run), a YOLOv5s run labelled overfit whose
fitness did not hold (tb10), which stays an overfit, and the runs named in each test.
"""

from __future__ import annotations

import json
from pathlib import Path

from mlaudit_core import audit
from mlaudit_core.formats import load_path
from mlaudit_core.verdict.policy import selection_metric_holds

REAL = Path(__file__).resolve().parent / "data" / "realworld"
LABELS = json.loads((REAL / "labels.json").read_text())


def _run(ident: str):
    (lab,) = [x for x in LABELS if x["id"].startswith(ident)]
    ((_, run),) = load_path(REAL / lab["path"]).runs
    return run


def test_fitness_best_at_the_end_is_no_overfit():
    run = _run("f8b2-09-")
    name, best, final, at, n = selection_metric_holds(run)
    assert name.startswith("fitness") and (at, n) == (294, 300) and final <= best
    v = audit(run).verdict
    assert v.outcome.value in ("succeeded", "plateaued") and v.rule not in ("V12", "V12a"), (
        v.summary
    )


def test_fitness_that_did_not_hold_stays_an_overfit():
    run = _run("tb10-")
    assert selection_metric_holds(run) is None
    assert audit(run).verdict.outcome.value == "overfit"


def test_a_jumping_validation_loss_with_the_accuracy_at_its_best_is_not_unstable():
    """own f8b2-12: Keras val_loss jumps > 2x between evaluations late in the run while val_accuracy
    ends at 0.961 against its best 0.981 (labelled succeeded/healthy; called unstable by V14c)."""
    from mlaudit_core.verdict.policy import heldout_accuracy_near_best

    run = _run("f8b2-12-")
    key, best, final = heldout_accuracy_near_best(run)
    assert key == "val_accuracy" and best > 0.97 and final > 0.95
    v = audit(run).verdict
    assert (v.outcome.value, v.cause.value) == ("succeeded", "healthy"), v.summary
