"""The script behind lightning_csv_moons_healthy/ (``python lightning_csv_moons.py healthy``); with
``lr_high`` it trains the same model with SGD at lr 50."""

import sys

import lightning as L
import torch
from lightning.pytorch.loggers import CSVLogger
from sklearn.datasets import make_moons
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
X, y = make_moons(3000, noise=0.2, random_state=0)
X, y = torch.tensor(X, dtype=torch.float32), torch.tensor(y)
tr, va = TensorDataset(X[:2400], y[:2400]), TensorDataset(X[2400:], y[2400:])
mode = sys.argv[1]
HIGH = mode == "lr_high"


class M(L.LightningModule):
    def __init__(self):
        super().__init__()
        self.save_hyperparameters(
            {"mode": mode, "lr": 50.0 if HIGH else 1e-3, "optimizer": "SGD" if HIGH else "Adam"}
        )
        self.net = nn.Sequential(
            nn.Linear(2, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 2)
        )

    def training_step(self, b, i):
        x, t = b
        loss = nn.functional.cross_entropy(self.net(x), t)
        self.log("train_loss", loss)
        return loss

    def validation_step(self, b, i):
        x, t = b
        o = self.net(x)
        self.log("val_loss", nn.functional.cross_entropy(o, t))
        self.log("val_acc", (o.argmax(1) == t).float().mean())

    def configure_optimizers(self):
        if HIGH:
            return torch.optim.SGD(self.parameters(), lr=50.0)
        return torch.optim.Adam(self.parameters(), lr=1e-3)


t = L.Trainer(
    max_epochs=15, logger=CSVLogger("logs"), accelerator="cpu", enable_checkpointing=False
)
t.fit(M(), DataLoader(tr, batch_size=32, shuffle=True), DataLoader(va, batch_size=256))
