"""A plain PyTorch loop with one tqdm bar over all steps, the loss and lr in the bar's postfix and
``tqdm.write`` validation lines every 50 steps.

Usage: python tqdm_loop.py {healthy,diverge}
'diverge' raises the learning rate to 5.0 at step 100: the loss becomes NaN.
"""

import sys

import torch
from torch import nn
from tqdm import tqdm

mode = sys.argv[1]
torch.manual_seed(0)
x = torch.randn(2000, 16)
w = torch.randn(16, 1)
y = x @ w + 0.1 * torch.randn(2000, 1)
xv, yv = x[1600:], y[1600:]
x, y = x[:1600], y[:1600]
model = nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Linear(64, 1))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
steps = 300
pbar = tqdm(range(1, steps + 1), desc="train", mininterval=0.05)
for step in pbar:
    if mode == "diverge" and step == 100:
        for gr in opt.param_groups:
            gr["lr"] = 5.0
    i = torch.randint(0, 1600, (32,))
    loss = nn.functional.mse_loss(model(x[i]), y[i])
    opt.zero_grad()
    loss.backward()
    opt.step()
    pbar.set_postfix(loss=f"{loss.item():.4f}", lr=opt.param_groups[0]["lr"])
    if step % 50 == 0:
        with torch.no_grad():
            vl = nn.functional.mse_loss(model(xv), yv).item()
        tqdm.write(f"step {step}: val_loss={vl:.4f}")
