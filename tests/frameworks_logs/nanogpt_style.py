"""A tiny character-level GPT trained with nanoGPT's loop and console lines
(``step N: train loss X, val loss Y`` every eval_interval, ``iter N: loss X, time Tms, mfu M%`` every
log_interval), on generated text.

Usage: python nanogpt_style.py {healthy,diverge}
'diverge' uses a learning rate of 5.0 without gradient clipping: the loss blows up to NaN.
"""

import math
import sys
import time

import torch
from torch import nn

mode = sys.argv[1]
torch.manual_seed(1337)
words = [
    "the",
    "model",
    "trains",
    "on",
    "a",
    "small",
    "corpus",
    "of",
    "words",
    "and",
    "learns",
    "to",
    "predict",
]
g = torch.Generator().manual_seed(0)
text = " ".join(words[i] for i in torch.randint(0, len(words), (6000,), generator=g).tolist())
chars = sorted(set(text))
data = torch.tensor([chars.index(c) for c in text])
n = int(0.9 * len(data))
train_data, val_data = data[:n], data[n:]
block, batch, vocab, d = 32, 16, len(chars), 48


def get_batch(split):
    src = train_data if split == "train" else val_data
    ix = torch.randint(len(src) - block, (batch,))
    return torch.stack([src[i : i + block] for i in ix]), torch.stack(
        [src[i + 1 : i + 1 + block] for i in ix]
    )


class GPT(nn.Module):
    def __init__(self):
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Embedding(block, d)
        layer = nn.TransformerEncoderLayer(
            d, 4, 4 * d, dropout=0.0, batch_first=True, norm_first=True
        )
        self.blocks = nn.TransformerEncoder(layer, 2)
        self.head = nn.Linear(d, vocab)
        self.mask = nn.Transformer.generate_square_subsequent_mask(block)

    def forward(self, idx, targets):
        h = self.blocks(
            self.tok(idx) + self.pos(torch.arange(idx.size(1))), mask=self.mask, is_causal=True
        )
        logits = self.head(h)
        return nn.functional.cross_entropy(logits.view(-1, vocab), targets.view(-1))


model = GPT()
print(f"number of parameters: {sum(p.numel() for p in model.parameters()) / 1e6:.2f}M")
lr = 3e-3 if mode == "healthy" else 5.0
opt = (
    torch.optim.AdamW(model.parameters(), lr=lr)
    if mode == "healthy"
    else torch.optim.SGD(model.parameters(), lr=lr)
)
max_iters, eval_interval, log_interval = 300, 100, 10


@torch.no_grad()
def estimate_loss():
    out = {}
    model.eval()
    for split in ("train", "val"):
        out[split] = torch.stack([model(*get_batch(split)) for _ in range(10)]).mean()
    model.train()
    return out


t0 = time.time()
for it in range(max_iters + 1):
    cur_lr = (
        lr * min(1.0, (it + 1) / 20) * (0.5 * (1 + math.cos(math.pi * it / max_iters)) * 0.9 + 0.1)
    )
    for gr in opt.param_groups:
        gr["lr"] = cur_lr
    if it % eval_interval == 0:
        losses = estimate_loss()
        print(f"step {it}: train loss {losses['train']:.4f}, val loss {losses['val']:.4f}")
    loss = model(*get_batch("train"))
    opt.zero_grad(set_to_none=True)
    loss.backward()
    if mode == "healthy":
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    t1 = time.time()
    dt, t0 = t1 - t0, t1
    if it % log_interval == 0:
        print(f"iter {it}: loss {loss.item():.4f}, time {dt * 1000:.2f}ms, mfu {-100.0:.2f}%")
