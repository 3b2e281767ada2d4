"""A tiny image-classification loop that logs with timm train.py's line formats (timm 1.0 train.py:
``Train: {} [{:>4d}/{} ({:>3.0f}%)]  Loss: ...  Time: ...  LR: ...  Data: ...`` and the validate()
``Test: [...]  Time: ...  Loss: ...  Acc@1: ...  Acc@5: ...`` lines, then ``*** Best metric``).
timm itself is not installed here: its torchvision dependency does not import beside torch 2.13.0+cpu.

Usage: python timm_style.py {healthy,overfit}
'overfit' trains on 64 images with random labels: train loss falls, eval accuracy does not rise.
"""

import logging
import sys
import time

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

logging.basicConfig(level=logging.INFO, format="%(message)s")
_logger = logging.getLogger("train")
mode = sys.argv[1]
noise = 0.8 if mode == "overfit" else 4.0
torch.manual_seed(0)
g = torch.Generator().manual_seed(0)
proto = torch.randn(10, 3, 8, 8, generator=g)


def make(n, random_labels=False):
    y = torch.randint(0, 10, (n,), generator=g)
    xs = proto[y] + noise * torch.randn(n, 3, 8, 8, generator=g)
    if random_labels:
        y = torch.randint(0, 10, (n,), generator=g)
    return xs, y


class AverageMeter:
    def __init__(self):
        self.val = self.avg = self.sum = self.count = 0

    def update(self, val, n=1):
        self.val = val
        self.sum += val * n
        self.count += n
        self.avg = self.sum / self.count


x, y = make(64 if mode == "overfit" else 640, random_labels=mode == "overfit")
xv, yv = make(200)
loader = DataLoader(TensorDataset(x, y), batch_size=16 if mode == "overfit" else 32, shuffle=True)
eval_loader = DataLoader(TensorDataset(xv, yv), batch_size=50)
model = nn.Sequential(
    nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.Flatten(), nn.Linear(16 * 64, 10)
)
opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
epochs = 8 if mode == "overfit" else 4
sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, epochs)
best = None
for epoch in range(epochs):
    model.train()
    losses_m, batch_time_m, data_time_m = AverageMeter(), AverageMeter(), AverageMeter()
    last_idx = len(loader) - 1
    end = time.time()
    for batch_idx, (inp, target) in enumerate(loader):
        data_time_m.update(time.time() - end)
        loss = nn.functional.cross_entropy(model(inp), target)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses_m.update(loss.item(), inp.size(0))
        batch_time_m.update(time.time() - end)
        if batch_idx == last_idx or batch_idx % 5 == 0:
            lr = opt.param_groups[0]["lr"]
            _logger.info(
                f"Train: {epoch} [{batch_idx:>4d}/{len(loader)} ({100.0 * batch_idx / last_idx:>3.0f}%)]  "
                f"Loss: {losses_m.val:#.3g} ({losses_m.avg:#.3g})  "
                f"Time: {batch_time_m.val:.3f}s, {inp.size(0) / batch_time_m.val:>7.2f}/s  "
                f"({batch_time_m.avg:.3f}s, {inp.size(0) / batch_time_m.avg:>7.2f}/s)  "
                f"LR: {lr:.3e}  "
                f"Data: {data_time_m.val:.3f} ({data_time_m.avg:.3f})"
            )
        end = time.time()
    sched.step()
    model.eval()
    losses_v, top1_m, top5_m, bt = AverageMeter(), AverageMeter(), AverageMeter(), AverageMeter()
    last_idx = len(eval_loader) - 1
    end = time.time()
    with torch.no_grad():
        for batch_idx, (inp, target) in enumerate(eval_loader):
            out = model(inp)
            loss = nn.functional.cross_entropy(out, target)
            top5 = out.topk(5, 1).indices
            acc1 = (top5[:, 0] == target).float().mean().item() * 100
            acc5 = (top5 == target[:, None]).any(1).float().mean().item() * 100
            losses_v.update(loss.item(), inp.size(0))
            top1_m.update(acc1, inp.size(0))
            top5_m.update(acc5, inp.size(0))
            bt.update(time.time() - end)
            end = time.time()
            if batch_idx == last_idx or batch_idx % 5 == 0:
                _logger.info(
                    "{0}: [{1:>4d}/{2}]  "
                    "Time: {batch_time.val:.3f} ({batch_time.avg:.3f})  "
                    "Loss: {loss.val:>7.3f} ({loss.avg:>6.3f})  "
                    "Acc@1: {top1.val:>7.3f} ({top1.avg:>7.3f})  "
                    "Acc@5: {top5.val:>7.3f} ({top5.avg:>7.3f})".format(
                        "Test",
                        batch_idx,
                        last_idx,
                        batch_time=bt,
                        loss=losses_v,
                        top1=top1_m,
                        top5=top5_m,
                    )
                )
    if best is None or top1_m.avg > best[0]:
        best = (top1_m.avg, epoch)
_logger.info("*** Best metric: {} (epoch {})".format(*best))
