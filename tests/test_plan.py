"""Planned length from every source that states it (mlaudit_core/plan.py): params and config files,
the HF banner, ``Epoch k/N`` and ``step k/N`` counters in console text; and a real Keras ``fit``
killed by SIGKILL mid-training, its console captured with ``> train.log 2>&1``."""

from __future__ import annotations

import signal
import sys
from pathlib import Path

from mlaudit_core.plan import (
    PLANNED_EPOCH_NAMES,
    PLANNED_STEP_NAMES,
    console_plan,
    param_plan,
    planned_epochs,
    planned_lengths,
)
from mlaudit_core.rundata import ConsoleLine, MetricTable, RunData, RunIdentity

sys.path.insert(0, str(Path(__file__).parent / "detectors"))


def test_param_plan_reads_nested_config_keys_and_ignores_unset():
    params = {
        "trainer.max_epochs": "-1",
        "trainer.max_steps": "-1",
        "config/epochs": "50",
        "args.max_train_steps": "1200",
        "epoch": "3.0",
    }
    assert param_plan(params, PLANNED_STEP_NAMES) == ("args.max_train_steps", 1200.0)
    assert param_plan(params, PLANNED_EPOCH_NAMES) == ("config/epochs", 50.0)  # -1 means not set
    assert (
        param_plan({"epoch": "3.0"}, PLANNED_EPOCH_NAMES) is None
    )  # HF's epoch reached, not the plan


def test_console_plan_counters():
    keras = ["Epoch 1/20", "52/52 - 0s - loss: 1.2", "Epoch 2/20", "52/52 - 0s - loss: 1.1"]
    assert console_plan(keras)[0].planned == 20 and console_plan(keras)[0].reached == 2
    rich = [
        "Epoch 3/19 ━━━━━━━━━━━━━━━━ 32/32 0:00:01 • 0:00:00 45.2it/s v_num: 0 train_loss: 0.41"
    ]
    p = console_plan(rich)[0]
    assert (p.planned, p.unit, p.reached) == (19, "epoch", 3)
    bracket = ["Epoch [4/100] Batch [10/50] loss 0.3", "Epoch [5/100] Batch [50/50] loss 0.2"]
    assert console_plan(bracket)[0].planned == 100
    steps = ["step 100/5000 | loss 2.1", "step 200/5000 | loss 1.9"]
    p = console_plan(steps)[0]
    assert (p.planned, p.unit, p.reached) == (5000, "step", 200)
    hf = ["  Total optimization steps = 1,500", "{'loss': 0.4, 'epoch': 0.1}"]
    assert console_plan(hf)[0].planned == 1500


def test_console_plan_ignores_a_counter_whose_total_changes():
    """A per-epoch batch bar restarts with its own total at every epoch: not the run's plan."""
    lines = [f"step {k}/{n}" for n in (100, 120, 140, 160) for k in (10, 50)]
    assert console_plan(lines) == []


def test_planned_lengths_order_params_then_console():
    run = RunData(
        RunIdentity("t", "p"),
        params={"num_train_epochs": "3"},
        metrics=MetricTable(["loss"] * 3, [0, 1, 2], [1.0, 0.9, 0.8]),
        console=[ConsoleLine("x.log", 1, "Epoch 2/10")],
    )
    got = planned_lengths(run)
    assert [(p.source, p.planned) for p in got] == [
        ("num_train_epochs", 3.0),
        ("console 'Epoch k/N'", 10.0),
    ]
    assert planned_epochs(run) == 3


def test_keras_fit_killed_is_crashed_from_its_console(tmp_path):
    from role_runs import make_keras_console_killed

    from mlaudit_core.audit import audit
    from mlaudit_core.formats import load_path

    res = make_keras_console_killed(tmp_path / "keras")
    assert res["returncode"] == -signal.SIGKILL
    runs = list(load_path(Path(res["log"])).runs)
    assert len(runs) == 1
    rep = audit(runs[0][1])
    assert rep.verdict.outcome.value == "crashed", rep.verdict.summary
    assert "of the 300 planned" in rep.verdict.summary


def test_console_plan_is_not_a_docker_build_step():
    """CI logs hold Docker's 'Step 3/12 : RUN ...' lines: not a training plan."""
    assert console_plan(["Step 3/12 : RUN pip install -e .", "Step 4/12 : COPY . /app"]) == []
