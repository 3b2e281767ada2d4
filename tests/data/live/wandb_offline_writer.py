"""A training-like process logging OFFLINE with the real wandb SDK (tests/test_live_trackers.py).

Usage: ``python wandb_offline_writer.py PROJECT OUT.json``: 200 steps, one every 0.1 s, the
loss NaN from step 100 on, a console line every 10 steps. Prints ``{"run_dir": ...}`` first
(the offline run folder, ``wandb/offline-run-...``); after step 199 it stays open until the
watcher's ``RUN_DIR/mlaudit/live.json`` exists (at most 120 s), then finishes and writes
OUT.json.
"""

import json
import math
import sys
import time
from pathlib import Path

import wandb

project, out = sys.argv[1:3]
r = wandb.init(project=project, mode="offline", settings=wandb.Settings(x_disable_stats=True))
print(json.dumps({"run_dir": str(Path(r.dir).parent)}), flush=True)
for step in range(200):
    loss = float("nan") if step >= 100 else 2.0 * math.exp(-step / 30) + 0.3
    r.log({"train/loss": loss, "train/lr": 0.1}, step=step)
    if step % 10 == 0:
        print(f"step {step} loss {loss:.4f}", flush=True)
    time.sleep(0.1)
# still training until the watcher has alerted (it writes RUN_DIR/mlaudit/live.json after
# sending), at most 120 s: "alerted while the run was live" holds however loaded the machine is
live = Path(r.dir).parent / "mlaudit" / "live.json"
deadline = time.time() + 120
while not live.exists() and time.time() < deadline:
    time.sleep(0.1)
end = time.time()
r.finish()
with open(out, "w") as fh:
    json.dump({"end_time": end}, fh)
