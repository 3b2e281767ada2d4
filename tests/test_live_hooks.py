"""``mlaudit.hooks`` callbacks with ``stop_on=("nan",)``: real Hugging Face ``Trainer``,
Lightning and Keras (torch backend) runs in one subprocess, each with a loss that turns NaN at
a known step, stop within one logging step of the first NaN the framework logs; and the
in-process guard honours the ``mlaudit.stop_requested`` tag set by a live watcher."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).parent


def test_framework_callbacks_stop_on_nan(tmp_path):
    frameworks = [
        n
        for n, mod in (("hf", "transformers"), ("lightning", "lightning"), ("keras", "keras"))
        if importlib.util.find_spec(mod)
    ]
    if "hf" not in frameworks or importlib.util.find_spec("torch") is None:
        pytest.skip("transformers and torch are needed (dev extra)")
    out = tmp_path / "out.json"
    env = dict(os.environ, OUT_JSON=str(out), FRAMEWORKS=",".join(frameworks))
    p = subprocess.run(
        [sys.executable, str(HERE / "data" / "live" / "frameworks_nan.py")],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert p.returncode == 0, p.stderr[-3000:]
    res = json.loads(out.read_text())
    # HF Trainer filters a NaN loss out of its logs (logging_nan_inf_filter) but logs the NaN
    # grad norm of the same step: the guard trips on it at most one logging step (2) later
    hf = res["hf"]
    assert hf["finding"] == "LV001"
    assert hf["first_nan"] <= hf["stopped_at"] <= hf["first_nan"] + 2
    assert "mlaudit: stopping training (stop_on=nan): LV001" in p.stderr
    for name in ("lightning", "keras"):
        if name in res:  # the loss is logged every step: the stop comes at the first NaN
            assert res[name]["finding"] == "LV001"
            assert res[name]["stopped_at"] <= res[name]["first_nan"] + 1, res


def test_guard_honours_the_stop_tag(mlflow_server):
    """The tag a ``--stop-on`` watcher sets on an MLflow run stops the guard at its next step."""
    import time

    import mlflow

    from mlaudit_core.live.inprocess import LiveGuard

    mlflow.set_tracking_uri(mlflow_server["url"])
    mlflow.set_experiment("live-guard")
    guard = LiveGuard((), tag_check_s=0.2, write_back=True)
    with mlflow.start_run() as run:
        assert guard.check({"loss": 1.0}, 1) is None
        mlflow.MlflowClient().set_tag(
            run.info.run_id,
            "mlaudit.stop_requested",
            "LV004 live-stalled: no new training step for 900 s",
        )
        f = None
        deadline = time.time() + 20
        step = 1
        while f is None and time.time() < deadline:
            step += 1
            f = guard.check({"loss": 1.0}, step)
            time.sleep(0.05)
        assert f is not None and f.code == "LV004"
        assert guard.check({"loss": 1.0}, step + 1) is None  # trips once
    tags = mlflow.MlflowClient().get_run(run.info.run_id).data.tags
    assert tags["mlaudit.live"] == "stopped: LV004 live-stalled"
    mlflow.set_tracking_uri(None)
