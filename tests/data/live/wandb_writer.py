"""A training-like process logging ONLINE with the real wandb SDK (tests/test_live_trackers.py).

Usage: ``python wandb_writer.py ENTITY/PROJECT RUN_ID MODE OUT.json``; MODE ``healthy`` (a
decaying loss for 300 steps), ``nan`` (NaN from step 30 on) or ``stall`` (after step 40 it
prints ``STALL_LINE`` and waits, still running, until the file OUT.json.resume exists, then
goes on to step 60). One step every 0.1 s; the console is printed every 10 steps (the SDK
captures it and streams it with the history, every second here). The
loop runs an ``mlaudit.live.inprocess.LiveGuard`` with no stop conditions of its own, so it
only honours a live watcher's stop request (the W&B tag ``mlaudit:stop-requested``, polled
every 0.5 s), as the ``mlaudit.hooks`` callbacks do; W&B's own stop (KeyboardInterrupt from
the SDK) is caught too. Writes what happened to OUT.json.
"""

import json
import math
import sys
import time
from pathlib import Path

import wandb

from mlaudit_core.live.inprocess import LiveGuard

path, run_id, mode, out = sys.argv[1:5]
entity, project = path.split("/")
r = wandb.init(
    entity=entity,
    project=project,
    id=run_id,
    settings=wandb.Settings(x_disable_stats=True, x_file_stream_transmit_interval=1.0),
)
STALL_LINE = "waiting for data loader worker 3 (shard 17) to answer"
guard = LiveGuard((), honour_stop_tag=True, tag_check_s=0.5, write_back=False)
how, step = "ended", 0
try:
    for step in range(60 if mode == "stall" else 300):
        loss = float("nan") if mode == "nan" and step >= 30 else 2.0 * math.exp(-step / 30) + 0.3
        r.log({"train/loss": loss, "train/lr": 0.1}, step=step)
        if guard.check({"train/loss": loss}, step) is not None:
            how = "stopped_by_tag"
            break
        if step % 10 == 0:
            print(f"step {step} loss {loss:.4f}", flush=True)
        if mode == "stall" and step == 40:
            print(STALL_LINE, flush=True)
            resume = Path(out + ".resume")
            while not resume.exists():
                time.sleep(0.2)
        time.sleep(0.1)
except KeyboardInterrupt:
    how = "stopped_by_wandb"
guard.close()
end = time.time()
r.finish(exit_code=0 if how == "ended" else 1)
with open(out, "w") as fh:
    json.dump({"how": how, "last_step": step, "end_time": end}, fh)
