"""A tiny PyTorch Lightning 2.x classifier with the default progress bar, as a user's train.py would.

Usage: python lightning_fit.py {healthy,diverge} OUTDIR [tqdm]
With 'tqdm' the TQDMProgressBar is used (what Lightning shows where rich is not installed); without,
Lightning's default bar (2.x: the RichProgressBar when rich is installed, as here; 1.x: tqdm).
'diverge' uses SGD with a learning rate of 200: the loss grows and becomes NaN.
"""

import sys

try:
    import lightning as L
    from lightning.pytorch.callbacks import TQDMProgressBar
except ImportError:  # Lightning 1.x (pytorch_lightning), in a side venv
    import pytorch_lightning as L
    from pytorch_lightning.callbacks import TQDMProgressBar
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

mode, outdir = sys.argv[1], sys.argv[2]
bars = [TQDMProgressBar()] if sys.argv[3:] == ["tqdm"] else None
L.seed_everything(0)
g = torch.Generator().manual_seed(0)
x = torch.randn(512, 8, generator=g)
y = (x[:, 0] + 0.5 * x[:, 1] > 0).long()
xv = torch.randn(128, 8, generator=g)
yv = (xv[:, 0] + 0.5 * xv[:, 1] > 0).long()


class Net(L.LightningModule):
    def __init__(self, lr):
        super().__init__()
        self.lr = lr
        self.net = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, 2))

    def training_step(self, batch, _):
        xb, yb = batch
        loss = nn.functional.cross_entropy(self.net(xb), yb)
        self.log("train_loss", loss, prog_bar=True, on_step=True, on_epoch=True)
        return loss

    def validation_step(self, batch, _):
        xb, yb = batch
        out = self.net(xb)
        self.log("val_loss", nn.functional.cross_entropy(out, yb), prog_bar=True)
        self.log("val_acc", (out.argmax(1) == yb).float().mean(), prog_bar=True)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=self.lr)


lr = 0.5 if mode == "healthy" else 200.0
trainer = L.Trainer(
    max_epochs=5,
    default_root_dir=outdir,
    enable_model_summary=True,
    log_every_n_steps=4,
    accelerator="cpu",
    devices=1,
    callbacks=bars,
)
trainer.fit(
    Net(lr),
    DataLoader(TensorDataset(x, y), batch_size=32, shuffle=True),
    DataLoader(TensorDataset(xv, yv), batch_size=64),
)
