"""A real PyTorch run that logs to local files only (tests/test_live_files.py).

Usage: ``python torch_files.py OUTDIR MODE`` (stdout is meant to be redirected to a console
log, as ``python train.py > train.log`` does). MODE ``healthy`` or ``blowup``: at step 40 the
learning rate jumps from 0.05 to 1e4 and the loss overflows to inf/NaN within a few steps
(plain SGD on a small MLP), and at step 60 a rank-prefixed NCCL watchdog line is printed as a
torchrun job's output carries it. Each of 150 steps (0.05 s apart) appends a row to
``OUTDIR/metrics.csv`` (``step,loss,lr``, flushed) and prints a Hugging Face Trainer-style dict
(``{'loss': ..., 'learning_rate': ..., 'epoch': ...}``) to stdout.

``python torch_files.py OUTDIR MODE LIVE_JSON CODES``: after the last step the run goes on (as
a longer run would) until OUTDIR/mlaudit/LIVE_JSON, where a live watcher records each alert after
posting it, names every code of CODES (comma-separated), for at most 300 s: on a loaded machine
the watcher's polls can outlast the 150 steps.
"""

import csv
import sys
import time
from pathlib import Path

import torch

out, mode = Path(sys.argv[1]), sys.argv[2]
torch.set_num_threads(1)
torch.manual_seed(0)
X = torch.randn(2048, 8)
y = X @ torch.randn(8, 1)
model = torch.nn.Sequential(torch.nn.Linear(8, 32), torch.nn.ReLU(), torch.nn.Linear(32, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.05)
fh = open(out / "metrics.csv", "w", newline="")
w = csv.writer(fh)
w.writerow(["step", "loss", "lr"])
fh.flush()
for step in range(1, 151):
    lr = 1e4 if mode == "blowup" and step >= 40 else 0.05
    for g in opt.param_groups:
        g["lr"] = lr
    idx = torch.randint(0, 2048, (64,))
    loss = torch.nn.functional.mse_loss(model(X[idx]), y[idx])
    opt.zero_grad()
    loss.backward()
    opt.step()
    v = float(loss.item())
    w.writerow([step, v, lr])
    fh.flush()
    print({"loss": round(v, 4), "learning_rate": lr, "epoch": round(step / 150, 3)}, flush=True)
    if mode == "blowup" and step == 60:
        print(
            "[rank3]:[E ProcessGroupNCCL.cpp:607] [Rank 3] Watchdog caught collective operation "
            "timeout: WorkNCCL(SeqNum=5, OpType=ALLREDUCE) ran for 600000 milliseconds before "
            "timing out.",
            flush=True,
        )
    time.sleep(0.05)
if len(sys.argv) > 4:
    live, codes = out / "mlaudit" / sys.argv[3], sys.argv[4].split(",")
    deadline = time.time() + 300
    while time.time() < deadline:
        text = live.read_text() if live.exists() else ""
        if all(c in text for c in codes):
            break
        time.sleep(0.1)
print("done", flush=True)
