"""A training-like writer for the live tests: logs to a real MLflow server in its own process.

Usage: python mlflow_writer.py URL EXPERIMENT MODE OUT_JSON [RESUME_FILE]

MODE ``healthy``: 100 steps of a falling loss at ~10 Hz, then FINISHED.
MODE ``nan``: the loss turns NaN at step 40 and stays NaN; the script honours the
``mlaudit.stop_requested`` tag through :class:`mlaudit_core.live.inprocess.LiveGuard` (the
code path of the hooks) and ends the run KILLED when it is set; at most 400 steps.
MODE ``stall``: 40 steps, then no logging (the run stays RUNNING) until RESUME_FILE exists,
then 60 more steps and FINISHED.
OUT_JSON receives ``{"run_id", "last_step", "stopped_by_tag", "end_time"}``.
"""

from __future__ import annotations

import json
import math
import sys
import time
from pathlib import Path

import mlflow

from mlaudit_core.live.inprocess import LiveGuard

url, exp, mode, out = sys.argv[1:5]
resume = Path(sys.argv[5]) if len(sys.argv) > 5 else None
mlflow.set_tracking_uri(url)
mlflow.set_experiment(exp)
guard = LiveGuard((), honour_stop_tag=True, tag_check_s=0.3, write_back=False)
stopped = False
step = 0
status = "FINISHED"
with mlflow.start_run(run_name=f"live-{mode}") as run:
    n = {"healthy": 100, "nan": 400, "stall": 100}[mode]
    for step in range(1, n + 1):
        if mode == "stall" and step == 41:
            while not resume.exists():
                time.sleep(0.1)
        loss = 2.0 * math.exp(-step / 30) + 0.3 + 0.01 * math.sin(step)
        if mode == "nan" and step >= 40:
            loss = float("nan")
        mlflow.log_metrics(
            {"train/loss": loss, "train/grad_norm": 1.0 + 0.1 * math.cos(step)}, step=step
        )
        if guard.check({}, step) is not None:  # the stop tag (no local stop_on)
            stopped, status = True, "KILLED"
            break
        time.sleep(0.1)
    mlflow.end_run(status)
Path(out).write_text(
    json.dumps(
        {
            "run_id": run.info.run_id,
            "last_step": step,
            "stopped_by_tag": stopped,
            "end_time": time.time(),
        }
    )
)
