"""A training-like process reporting to ClearML with the real SDK (tests/test_live_trackers.py).

Usage: ``python clearml_writer.py PROJECT NAME MODE OUT.json``; MODE ``healthy`` (a decaying
loss for 150 iterations) or ``nan`` (NaN from iteration 30 on: the SDK reports it as 0.0 and
prints its warning). One iteration every 0.1 s through ``Logger.report_scalar`` ("train",
"loss"). Prints the task id first; writes OUT.json only if the loop ends by itself (an abort
ends the process from the SDK's stop signal, exit code 1).
"""

import json
import math
import sys
import time

from clearml import Task

project, name, mode, out = sys.argv[1:5]
task = Task.init(project_name=project, task_name=name, reuse_last_task_id=False,
                 auto_connect_arg_parser=False, auto_connect_frameworks=False,
                 auto_resource_monitoring=False)
print(json.dumps({"task_id": task.id}), flush=True)
logger = task.get_logger()
for it in range(150):
    loss = float("nan") if mode == "nan" and it >= 30 else 2.0 * math.exp(-it / 30) + 0.3
    logger.report_scalar("train", "loss", value=loss, iteration=it)
    if it % 10 == 0:
        print(f"iteration {it} loss {loss:.4f}", flush=True)
    time.sleep(0.1)
task.flush(wait_for_uploads=True)
with open(out, "w") as fh:
    json.dump({"last_iteration": it, "end_time": time.time()}, fh)
task.close()
