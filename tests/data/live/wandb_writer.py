"""A training-like process logging ONLINE with the real wandb SDK (tests/test_live_trackers.py).

Usage: ``python wandb_writer.py ENTITY/PROJECT RUN_ID MODE OUT.json``; MODE ``healthy`` (a
decaying loss for 150 steps) or ``nan`` (NaN from step 30 on). One step every 0.1 s. The
loop runs an ``mlaudit.live.inprocess.LiveGuard`` with no stop conditions of its own, so it
only honours a live watcher's stop request (the W&B tag ``mlaudit:stop-requested``, polled
every 0.5 s), as the ``mlaudit.hooks`` callbacks do; W&B's own stop (KeyboardInterrupt from
the SDK) is caught too. Writes what happened to OUT.json.
"""

import json
import math
import sys
import time

import wandb

from mlaudit_core.live.inprocess import LiveGuard

path, run_id, mode, out = sys.argv[1:5]
entity, project = path.split("/")
r = wandb.init(entity=entity, project=project, id=run_id, settings=wandb.Settings(x_disable_stats=True))
guard = LiveGuard((), honour_stop_tag=True, tag_check_s=0.5, write_back=False)
how, step = "ended", 0
try:
    for step in range(300):
        loss = float("nan") if mode == "nan" and step >= 30 else 2.0 * math.exp(-step / 30) + 0.3
        r.log({"train/loss": loss, "train/lr": 0.1}, step=step)
        if guard.check({"train/loss": loss}, step) is not None:
            how = "stopped_by_tag"
            break
        time.sleep(0.1)
except KeyboardInterrupt:
    how = "stopped_by_wandb"
guard.close()
end = time.time()
r.finish(exit_code=0 if how == "ended" else 1)
with open(out, "w") as fh:
    json.dump({"how": how, "last_step": step, "end_time": end}, fh)
