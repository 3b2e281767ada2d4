"""A real PyTorch training run whose learning rate is bumped mid-way (tests/test_live_spike.py).

Usage: ``python torch_lr_bump.py LOGDIR MODE [SLEEP_S]``; MODE is ``bump`` (the LR goes from
0.05 to 0.2 at step 300 and stays there), ``blip`` (0.6 for steps 300-301 only, then back)
or ``steady`` (no change). A two-layer MLP on a fixed synthetic regression (seeded), SGD
with momentum 0.9, batch 64, 600 steps; the mini-batch loss is logged every step with
``torch.utils.tensorboard.SummaryWriter`` (``train/loss``, ``train/lr``) and flushed, and a
console line per 50 steps goes to ``LOGDIR/train.log``. Prints one JSON line at the end:
the losses around the bump, for the test to state what the run did.
"""

import json
import sys
import time
from pathlib import Path

import torch
from torch.utils.tensorboard import SummaryWriter

logdir, mode = Path(sys.argv[1]), sys.argv[2]
sleep_s = float(sys.argv[3]) if len(sys.argv) > 3 else 0.0
torch.set_num_threads(1)  # a tiny model: one thread (no spinning on a shared machine)
torch.manual_seed(0)
X = torch.randn(4096, 16)
w_true = torch.randn(16, 1)
y = torch.tanh(X @ w_true) + 0.1 * torch.randn(4096, 1)
model = torch.nn.Sequential(torch.nn.Linear(16, 64), torch.nn.ReLU(), torch.nn.Linear(64, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
writer = SummaryWriter(str(logdir))
con = open(logdir / "train.log", "a", encoding="utf-8")
losses = []
for step in range(1, 601):
    lr = 0.05
    if mode == "bump" and step >= 300:
        lr = 0.2
    elif mode == "blip" and 300 <= step <= 301:
        lr = 0.6
    for g in opt.param_groups:
        g["lr"] = lr
    idx = torch.randint(0, 4096, (64,))
    loss = torch.nn.functional.mse_loss(model(X[idx]), y[idx])
    opt.zero_grad()
    loss.backward()
    opt.step()
    v = float(loss.item())
    losses.append(v)
    writer.add_scalar("train/loss", v, step)
    writer.add_scalar("train/lr", lr, step)
    if step % 10 == 0:
        writer.flush()
    if step % 50 == 0:
        con.write(f"step {step} loss {v:.4f} lr {lr}\n")
        con.flush()
    if sleep_s:
        time.sleep(sleep_s)
writer.close()
med = lambda xs: sorted(xs)[len(xs) // 2]  # noqa: E731
print(
    json.dumps(
        {
            "before": med(losses[250:299]),
            "peak": max(losses[299:320]),
            "last100": med(losses[-100:]),
            "finite": all(v == v for v in losses),
        }
    )
)
