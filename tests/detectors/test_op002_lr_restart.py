"""OP002 (loss-spike): a spike where the learning-rate schedule restarts is the schedule's, not an
instability (``OP002.lr_restart_steps``), on real input from the own corpus (tests/data/realworld,
labelled before any mlaudit run).

f18b1-01: an HF ``trainer_state.json`` of a TinyLlama fine-tune, 500 of 500 steps, logging every step.
The learning rate warms up and decays to 0 at step 200, then its schedule starts again from 0 at
steps 201, 251, 276, 351, 376 and 401 (resumed stages with shorter linear decays); the loss jumps at
each restart (0.009 -> 3.03 at 201, 0.58 -> 2.03 at 251, 0.031 -> 1.09 at 351) and falls again within
the stage. Measured against the level before the restart, the jumps "did not recover within 100
points" and the run was called unstable/model_convergence.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from mlaudit_core.audit import audit
from mlaudit_core.detectors.OP002 import lr_restart_steps
from mlaudit_core.formats import load_path
from mlaudit_core.report import Outcome, Severity
from mlaudit_core.rundata import MetricTable, RunData, RunIdentity

RUNS = Path(__file__).parent.parent / "data" / "realworld" / "runs"
TINYLLAMA = RUNS / "ishanwa--RPG-game" / "checkpoint-500" / "trainer_state.json"


def _run(path: Path) -> RunData:
    return list(load_path(path).runs)[-1][1]


def test_lr_restart_steps_of_a_resumed_schedule():
    starts = [s for s, _ in lr_restart_steps(_run(TINYLLAMA))]
    # each stage logs lr 0 at its first step and its peak at the next
    assert starts == [202, 252, 277, 352, 377, 402], starts


def test_spikes_at_lr_restarts_are_scheduled_not_unstable():
    rep = audit(_run(TINYLLAMA))
    op002 = [f for f in rep.findings if f.code == "OP002"]
    assert op002 and all(f.severity is Severity.INFO for f in op002), [f.message for f in op002]
    assert op002[0].facts["n_unrecovered"] == 0
    assert 201 in op002[0].facts["at_lr_restart"]
    assert rep.verdict.outcome is not Outcome.UNSTABLE, rep.verdict.summary


def _spiky(lr: np.ndarray) -> RunData:
    n = len(lr)
    steps = np.arange(n, dtype=float)
    loss = np.full(n, 1.0) + 0.01 * np.sin(steps)
    loss[100:] = 3.0  # a jump at step 100 that stays
    keys = ["loss"] * n + ["learning_rate"] * n
    table = MetricTable(keys, np.concatenate([steps, steps]), np.concatenate([loss, lr]))
    return RunData(RunIdentity("test", "r", "r"), metrics=table)


def test_a_jump_under_a_steady_or_decaying_lr_stays_unrecovered():
    """No restart (a constant lr, a decay that never rises): the jump is still an instability."""
    for lr in (np.full(250, 1e-3), np.linspace(1e-3, 1e-5, 250)):
        run = _spiky(lr)
        assert lr_restart_steps(run) == []
        op002 = [f for f in audit(run).findings if f.code == "OP002"]
        assert op002 and op002[0].severity is Severity.WARNING, [f.message for f in op002]
