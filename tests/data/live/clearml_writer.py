"""A training-like process reporting to ClearML with the real SDK (tests/test_live_trackers.py).

Usage: ``python clearml_writer.py PROJECT NAME MODE OUT.json``; MODE ``healthy`` (a decaying
loss for 150 iterations), ``nan`` (NaN from iteration 30 on: the SDK reports it as 0.0 and
prints its warning) or ``stall`` (after iteration 40 it prints ``STALL_LINE`` and waits, still
running, until the file OUT.json.resume exists, then goes on to iteration 120, flushing
its reports every 10 iterations so the watcher sees it resume before it ends). One iteration every 0.1 s through ``Logger.report_scalar`` ("train",
"loss"). Prints the task id first; writes OUT.json only if the loop ends by itself (an abort
ends the process from the SDK's stop signal, exit code 1).
"""

import json
import math
import sys
import time
from pathlib import Path

from clearml import Task

project, name, mode, out = sys.argv[1:5]
task = Task.init(
    project_name=project,
    task_name=name,
    reuse_last_task_id=False,
    auto_connect_arg_parser=False,
    auto_connect_frameworks=False,
    auto_resource_monitoring=False,
)
print(json.dumps({"task_id": task.id}), flush=True)
logger = task.get_logger()
STALL_LINE = "waiting for data loader worker 3 (shard 17) to answer"
for it in range(120 if mode == "stall" else 150):
    loss = float("nan") if mode == "nan" and it >= 30 else 2.0 * math.exp(-it / 30) + 0.3
    logger.report_scalar("train", "loss", value=loss, iteration=it)
    if it % 10 == 0:
        print(f"iteration {it} loss {loss:.4f}", flush=True)
        if mode == "stall":
            logger.flush()
    if mode == "stall" and it == 40:
        print(STALL_LINE, flush=True)
        logger.flush()
        resume = Path(out + ".resume")
        while not resume.exists():
            time.sleep(0.2)
    time.sleep(0.1)
task.flush(wait_for_uploads=True)
with open(out, "w") as fh:
    json.dump({"last_iteration": it, "end_time": time.time()}, fh)
task.close()
