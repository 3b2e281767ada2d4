"""A real PyTorch run started AFTER ``mlaudit watch ... --live`` (tests/test_live_discovery.py).

Usage: ``python late_writer.py KIND OUTDIR STOPFILE``. KIND ``tb``: a
``torch.utils.tensorboard.SummaryWriter(OUTDIR)`` (its event file is created by the writer, so
the folder is empty when the watcher starts); ``csv``: Lightning's ``CSVLogger`` layout, a new
``OUTDIR/version_0/metrics.csv`` (``step,train_loss``) created by this process. SGD on a small
MLP: the learning rate jumps from 0.05 to 1e6 at step 12, and the loss overflows to inf and then
NaN within a few steps (a real overflow, not a written constant). One point every 0.1 s; after
step 30 the run goes on logging (NaN) until STOPFILE exists (at most 300 s), so a test can
check that the alert came while the writer was still running.
"""

import csv
import sys
import time
from pathlib import Path

import torch

kind, out, stop = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
torch.set_num_threads(1)
torch.manual_seed(0)
X = torch.randn(1024, 8)
y = X @ torch.randn(8, 1)
model = torch.nn.Sequential(torch.nn.Linear(8, 32), torch.nn.ReLU(), torch.nn.Linear(32, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.05)

if kind == "tb":
    from torch.utils.tensorboard import SummaryWriter

    tb = SummaryWriter(str(out), flush_secs=1)

    def log(step: int, v: float) -> None:
        tb.add_scalar("train/loss", v, step)
        tb.flush()
else:
    (out / "version_0").mkdir(parents=True)
    fh = open(out / "version_0" / "metrics.csv", "w", newline="")
    w = csv.writer(fh)
    w.writerow(["step", "train_loss"])

    def log(step: int, v: float) -> None:
        w.writerow([step, v])
        fh.flush()


t_end = time.time() + 300
step = 0
while step < 30 or (not stop.exists() and time.time() < t_end):
    step += 1
    for g in opt.param_groups:
        g["lr"] = 1e6 if step >= 12 else 0.05
    idx = torch.randint(0, 1024, (64,))
    loss = torch.nn.functional.mse_loss(model(X[idx]), y[idx])
    opt.zero_grad()
    loss.backward()
    opt.step()
    log(step, float(loss.item()))
    time.sleep(0.1)
print(f"done at step {step}", flush=True)
