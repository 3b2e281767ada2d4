"""A tiny training loop with Hugging Face accelerate (the shape of accelerate's nlp_example: a tqdm bar
over the batches, ``accelerator.print(f"epoch {epoch}:", eval_metric)`` after each evaluation).

Usage: python accelerate_loop.py {healthy,diverge}
'diverge' uses a learning rate of 300: the loss becomes NaN.
"""

import sys

import torch
from accelerate import Accelerator
from accelerate.utils import set_seed
from torch import nn
from torch.utils.data import DataLoader, TensorDataset
from tqdm.auto import tqdm

mode = sys.argv[1]
set_seed(0)
accelerator = Accelerator(cpu=True)
g = torch.Generator().manual_seed(0)
x = torch.randn(480, 10, generator=g)
y = (x[:, :3].sum(1) > 0).long()
xv = torch.randn(160, 10, generator=g)
yv = (xv[:, :3].sum(1) > 0).long()
model = nn.Sequential(nn.Linear(10, 32), nn.Tanh(), nn.Linear(32, 2))
opt = torch.optim.SGD(model.parameters(), lr=0.3 if mode == "healthy" else 300.0)
train_dl = DataLoader(TensorDataset(x, y), batch_size=32, shuffle=True)
eval_dl = DataLoader(TensorDataset(xv, yv), batch_size=64)
model, opt, train_dl, eval_dl = accelerator.prepare(model, opt, train_dl, eval_dl)
for epoch in range(4):
    model.train()
    bar = tqdm(train_dl, disable=not accelerator.is_local_main_process, desc=f"epoch {epoch}")
    for xb, yb in bar:
        loss = nn.functional.cross_entropy(model(xb), yb)
        accelerator.backward(loss)
        opt.step()
        opt.zero_grad()
        bar.set_postfix(loss=f"{loss.item():.4f}")
    model.eval()
    correct = total = 0
    losses = []
    with torch.no_grad():
        for xb, yb in eval_dl:
            out = model(xb)
            losses.append(nn.functional.cross_entropy(out, yb).item())
            preds, refs = accelerator.gather_for_metrics((out.argmax(-1), yb))
            correct += (preds == refs).sum().item()
            total += refs.numel()
    eval_metric = {
        "accuracy": round(correct / total, 4),
        "eval_loss": round(sum(losses) / len(losses), 4),
    }
    accelerator.print(f"epoch {epoch}:", eval_metric)
