"""Real framework runs for the role and planned-length tests (issue 26 items 2-3, issue 27).

Each ``make_*`` function trains a small model on CPU with the framework's own logging left at
its defaults and returns where the artifacts are; nothing writes a metric by hand.

- :func:`make_hf_killed`: a Hugging Face Trainer run (``max_steps`` 3000, a checkpoint every 20
  steps, TensorBoard) killed by a signal (SIGKILL or SIGTERM) from outside once ``checkpoint-40``
  exists, its console captured as users capture it (``python train.py > train.log 2>&1``).
- :func:`make_lightning_top1`: Lightning logging ``train_loss`` and a held-out ``val_top1`` only,
  on a small training set with 60% of its labels drawn at random: the network first learns the
  class centres (held-out top-1 ~0.78) and then memorises the noise (held-out top-1 down by
  more than 13 points) while the training loss keeps falling.
- :func:`make_lightning_cli_killed`: a LightningCLI run (``--trainer.max_epochs 200``, its
  ``config.yaml`` written into the log dir by SaveConfigCallback) killed by a signal after a few epochs.
- :func:`make_keras_console_killed`: Keras ``fit(epochs=300, verbose=2)`` with its console captured,
  killed by a signal at epoch 8.
- :func:`make_keras_topk`: the same data with Keras ``fit`` and the ``SparseTopKCategoricalAccuracy``
  metric (keys ``sparse_top_k_categorical_accuracy`` / ``val_sparse_top_k_categorical_accuracy``),
  CSVLogger, and the console (``verbose=2``) captured to a file.

Every framework runs in a child process (``python role_runs.py --one NAME OUT``) so the
libraries' global state never leaks into the test process.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve()
_ENV = {
    "PYTHONHASHSEED": "0",
    "OMP_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1",
    "TOKENIZERS_PARALLELISM": "false",
    "KERAS_BACKEND": "torch",
}


def _child(name: str, out: Path, timeout: float = 600) -> dict:
    res = subprocess.run(
        [sys.executable, str(HERE), "--one", name, str(out)],
        env=dict(os.environ, **_ENV),
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    if res.returncode != 0:
        raise RuntimeError(f"{name} failed ({res.returncode}):\n{res.stderr[-4000:]}")
    return json.loads(res.stdout.strip().splitlines()[-1])


def _noisy_blobs(n: int, seed: int, noise: float, spread: float = 2.0):
    """``n`` points of 10 Gaussian classes in 16-d; a share ``noise`` of the labels redrawn at random."""
    import torch

    g = torch.Generator().manual_seed(seed)
    centres = torch.randn(10, 16, generator=torch.Generator().manual_seed(123)) * 2.0
    y = torch.randint(0, 10, (n,), generator=g)
    x = centres[y] + spread * torch.randn(n, 16, generator=g)
    if noise:
        flip = torch.rand(n, generator=g) < noise
        y = torch.where(flip, torch.randint(0, 10, (n,), generator=g), y)
    return x, y


# --- Hugging Face Trainer killed mid-training ---------------------------------------------------

_HF_SCRIPT = r"""
import os, sys, torch
from transformers import BertConfig, BertForSequenceClassification, Trainer, TrainingArguments
torch.set_num_threads(1)
out = sys.argv[1]

class Tokens(torch.utils.data.Dataset):
    def __init__(self, n, seed):
        g = torch.Generator().manual_seed(seed)
        self.x = torch.randint(1, 50, (n, 16), generator=g)
        self.y = (self.x == 7).any(1).long()
    def __len__(self):
        return len(self.y)
    def __getitem__(self, i):
        return {"input_ids": self.x[i], "attention_mask": torch.ones(16, dtype=torch.long), "labels": self.y[i]}

torch.manual_seed(0)
model = BertForSequenceClassification(BertConfig(vocab_size=50, hidden_size=32, num_hidden_layers=1,
    num_attention_heads=2, intermediate_size=64, max_position_embeddings=32, num_labels=2))
os.environ["TENSORBOARD_LOGGING_DIR"] = os.path.join(out, "runs")
args = TrainingArguments(output_dir=out, report_to=["tensorboard"], logging_steps=5, eval_strategy="steps",
    eval_steps=20, save_steps=20, max_steps=3000, learning_rate=3e-3, per_device_train_batch_size=16,
    per_device_eval_batch_size=64, use_cpu=True, seed=0)
Trainer(model=model, args=args, train_dataset=Tokens(512, 0), eval_dataset=Tokens(128, 1)).train()
"""


def make_hf_early_stopped(out: Path, timeout: float = 600) -> dict:
    """The same Trainer script with ``EarlyStoppingCallback(patience 2, threshold 0.01)`` on the
    evaluation loss (evaluated and saved every 10 steps, ``max_steps`` 3000): training stops by itself
    after a few evaluations; the last checkpoint is the one of the stopping step."""
    out.mkdir(parents=True, exist_ok=True)
    script = out / "train.py"
    script.write_text(
        _HF_SCRIPT.replace(
            "eval_steps=20, save_steps=20",
            "eval_steps=10, save_steps=10, load_best_model_at_end=True, "
            'metric_for_best_model="eval_loss"',
        )
        .replace("from transformers import", "from transformers import EarlyStoppingCallback,")
        .replace(
            "eval_dataset=Tokens(128, 1))",
            "eval_dataset=Tokens(128, 1), "
            "callbacks=[EarlyStoppingCallback(early_stopping_patience=2, early_stopping_threshold=0.01)])",
        )
    )
    with open(out / "train.log", "wb") as log:
        rc = subprocess.run(
            [sys.executable, str(script), str(out)],
            stdout=log,
            stderr=subprocess.STDOUT,
            env=dict(os.environ, **_ENV),
            timeout=timeout,
        ).returncode
    # the last checkpoint the Trainer finished saving: a fast run can reach the next save within the
    # 0.5 s and be killed while writing it (model files without trainer_state.json yet)
    ckpts = sorted(
        (p for p in out.glob("checkpoint-*") if (p / "trainer_state.json").is_file()),
        key=lambda p: int(p.name.split("-")[1]),
    )
    return {
        "root": str(out),
        "returncode": rc,
        "last_checkpoint": str(ckpts[-1]),
        "earlier_checkpoint": str(ckpts[-2]) if len(ckpts) > 1 else None,
        "tensorboard": str(out / "runs"),
    }


def make_hf_killed(
    out: Path, sig: int = signal.SIGKILL, at_checkpoint: int = 40, timeout: float = 600
) -> dict:
    """Start the HF Trainer script as ``python train.py > train.log 2>&1`` and send ``sig`` once
    ``checkpoint-<at_checkpoint>`` holds its ``trainer_state.json``. Returns the paths and the
    child's exit code (negative: the signal number). Raises RuntimeError when the run ended
    before the signal could be sent."""
    out.mkdir(parents=True, exist_ok=True)
    script = out / "train.py"
    script.write_text(_HF_SCRIPT)
    state = out / f"checkpoint-{at_checkpoint}" / "trainer_state.json"
    with open(out / "train.log", "wb") as log:
        proc = subprocess.Popen(
            [sys.executable, str(script), str(out)],
            stdout=log,
            stderr=subprocess.STDOUT,
            env=dict(os.environ, **_ENV),
        )
        t0 = time.monotonic()
        while not state.is_file():
            if proc.poll() is not None:
                raise RuntimeError(
                    f"HF run ended (exit {proc.returncode}) before {state} was written"
                )
            if time.monotonic() - t0 > timeout:
                proc.kill()
                raise RuntimeError(f"{state} not written within {timeout} s")
            time.sleep(0.02)
        time.sleep(0.5)  # let the checkpoint finish writing
        proc.send_signal(sig)
        rc = proc.wait(timeout=60)
    # the signal can land while a later checkpoint is being written: its folder then has no
    # trainer_state.json yet, so the last checkpoint a user could resume from is the last complete one
    ckpts = sorted(
        (c for c in out.glob("checkpoint-*") if (c / "trainer_state.json").is_file()),
        key=lambda p: int(p.name.split("-")[1]),
    )
    return {
        "root": str(out),
        "returncode": rc,
        "tensorboard": str(out / "runs"),
        "log": str(out / "train.log"),
        "last_checkpoint": str(ckpts[-1]),
    }


# --- Lightning, held-out top-1 ------------------------------------------------------------------


def _lightning_top1(out: Path) -> dict:
    import lightning as L
    import torch
    from lightning.pytorch.loggers import CSVLogger, TensorBoardLogger

    torch.set_num_threads(1)

    class MLP(L.LightningModule):
        def __init__(self, lr: float) -> None:
            super().__init__()
            self.save_hyperparameters()
            self.net = torch.nn.Sequential(
                torch.nn.Linear(16, 256),
                torch.nn.ReLU(),
                torch.nn.Linear(256, 256),
                torch.nn.ReLU(),
                torch.nn.Linear(256, 10),
            )

        def training_step(self, batch, i):
            x, y = batch
            loss = torch.nn.functional.cross_entropy(self.net(x), y)
            self.log("train_loss", loss)
            return loss

        def validation_step(self, batch, i):
            x, y = batch
            self.log("val_top1", (self.net(x).argmax(-1) == y).float().mean())

        def configure_optimizers(self):
            return torch.optim.Adam(self.parameters(), lr=self.hparams.lr)

    L.seed_everything(0, verbose=False)
    xt, yt = _noisy_blobs(400, 0, noise=0.6)
    xv, yv = _noisy_blobs(1000, 1, noise=0.0)
    train = torch.utils.data.DataLoader(
        torch.utils.data.TensorDataset(xt, yt), batch_size=32, shuffle=True
    )
    val = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(xv, yv), batch_size=500)
    root = out / "lightning_top1"
    loggers = [
        TensorBoardLogger(str(root), name="lightning_logs"),
        CSVLogger(str(root), name="csv_logs"),
    ]
    trainer = L.Trainer(
        max_epochs=40,
        log_every_n_steps=5,
        logger=loggers,
        enable_progress_bar=False,
        enable_model_summary=False,
        enable_checkpointing=False,
        accelerator="cpu",
        devices=1,
    )
    trainer.fit(MLP(5e-4), train, val)
    return {"tensorboard": loggers[0].log_dir, "csv": str(Path(loggers[1].log_dir) / "metrics.csv")}


# --- Keras, held-out top-k ----------------------------------------------------------------------


def _keras_topk(out: Path) -> dict:
    import keras

    xt, yt = (a.numpy() for a in _noisy_blobs(400, 0, noise=0.6))
    xv, yv = (a.numpy() for a in _noisy_blobs(1000, 1, noise=0.0))
    keras.utils.set_random_seed(0)
    model = keras.Sequential(
        [
            keras.Input((16,)),
            keras.layers.Dense(256, activation="relu"),
            keras.layers.Dense(256, activation="relu"),
            keras.layers.Dense(10),
        ]
    )
    model.compile(
        optimizer=keras.optimizers.Adam(5e-4),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        metrics=[keras.metrics.SparseTopKCategoricalAccuracy(k=2)],
    )
    root = out / "keras_topk"
    root.mkdir(parents=True, exist_ok=True)
    hist = model.fit(
        xt,
        yt,
        epochs=40,
        batch_size=32,
        validation_data=(xv, yv),
        verbose=0,
        callbacks=[keras.callbacks.CSVLogger(str(root / "training.log"))],
    )
    (root / "history.json").write_text(
        json.dumps({k: [float(x) for x in v] for k, v in hist.history.items()})
    )
    return {
        "csv": str(root / "training.log"),
        "history": str(root / "history.json"),
        "keys": sorted(hist.history),
    }


# --- LightningCLI run killed mid-training -------------------------------------------------------

_CLI_SCRIPT = r"""
import sys, torch
import lightning as L
from lightning.pytorch.cli import LightningCLI
torch.set_num_threads(1)

class MLP(L.LightningModule):
    def __init__(self, lr: float = 0.05):
        super().__init__()
        self.save_hyperparameters()
        self.net = torch.nn.Sequential(torch.nn.Linear(16, 64), torch.nn.ReLU(), torch.nn.Linear(64, 10))
    def training_step(self, batch, i):
        x, y = batch
        loss = torch.nn.functional.cross_entropy(self.net(x), y)
        self.log("train_loss", loss)
        return loss
    def validation_step(self, batch, i):
        x, y = batch
        self.log("val_loss", torch.nn.functional.cross_entropy(self.net(x), y))
    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=self.hparams.lr)

class Blobs(L.LightningDataModule):
    def __init__(self, n: int = 2048):
        super().__init__()
        g = torch.Generator().manual_seed(0)
        centres = torch.randn(10, 16, generator=g) * 2
        y = torch.randint(0, 10, (n,), generator=g)
        self.x, self.y = centres[y] + 2.5 * torch.randn(n, 16, generator=g), y
    def train_dataloader(self):
        return torch.utils.data.DataLoader(torch.utils.data.TensorDataset(self.x, self.y), batch_size=32, shuffle=True)
    def val_dataloader(self):
        return torch.utils.data.DataLoader(torch.utils.data.TensorDataset(self.x[:512], self.y[:512]), batch_size=256)

LightningCLI(MLP, Blobs)
"""


def make_lightning_cli_early_stopped(out: Path, timeout: float = 600) -> dict:
    """The LightningCLI script with ``--trainer.max_epochs 200`` and an ``EarlyStopping`` callback
    (``val_loss``, patience 2, ``min_delta`` 0.01) given on the command line, run to its own end:
    the saved ``config.yaml`` holds the callback among ``trainer.callbacks``."""
    out.mkdir(parents=True, exist_ok=True)
    script = out / "train.py"
    script.write_text(_CLI_SCRIPT)
    args = [
        sys.executable,
        str(script),
        "fit",
        "--trainer.max_epochs",
        "200",
        "--trainer.accelerator",
        "cpu",
        "--trainer.devices",
        "1",
        "--trainer.log_every_n_steps",
        "4",
        "--trainer.enable_progress_bar",
        "false",
        "--trainer.default_root_dir",
        str(out),
        "--trainer.callbacks+=lightning.pytorch.callbacks.EarlyStopping",
        "--trainer.callbacks.monitor",
        "val_loss",
        "--trainer.callbacks.patience",
        "2",
        "--trainer.callbacks.min_delta",
        "0.01",
    ]
    with open(out / "train.log", "wb") as log:
        rc = subprocess.run(
            args,
            stdout=log,
            stderr=subprocess.STDOUT,
            env=dict(os.environ, **_ENV),
            cwd=out,
            timeout=timeout,
        ).returncode
    return {
        "root": str(out),
        "returncode": rc,
        "tensorboard": str(out / "lightning_logs" / "version_0"),
    }


def make_lightning_cli_killed(
    out: Path, sig: int = signal.SIGKILL, after_s: float = 6.0, timeout: float = 600
) -> dict:
    """``python train.py fit --trainer.max_epochs 200 ...`` with LightningCLI (TensorBoardLogger by
    default; SaveConfigCallback writes ``config.yaml`` into the log dir) killed by ``sig`` ``after_s``
    seconds after that ``config.yaml`` appeared. Raises RuntimeError when the run ended first."""
    out.mkdir(parents=True, exist_ok=True)
    script = out / "train.py"
    script.write_text(_CLI_SCRIPT)
    logdir = out / "lightning_logs" / "version_0"
    args = [
        sys.executable,
        str(script),
        "fit",
        "--trainer.max_epochs",
        "200",
        "--trainer.accelerator",
        "cpu",
        "--trainer.devices",
        "1",
        "--trainer.log_every_n_steps",
        "4",
        "--trainer.enable_progress_bar",
        "false",
        "--trainer.default_root_dir",
        str(out),
    ]
    with open(out / "train.log", "wb") as log:
        proc = subprocess.Popen(
            args, stdout=log, stderr=subprocess.STDOUT, env=dict(os.environ, **_ENV), cwd=out
        )
        t0 = time.monotonic()
        while not (logdir / "config.yaml").is_file():
            if proc.poll() is not None:
                raise RuntimeError(
                    f"LightningCLI run ended (exit {proc.returncode}) before {logdir}/config.yaml"
                )
            if time.monotonic() - t0 > timeout:
                proc.kill()
                raise RuntimeError("config.yaml not written in time")
            time.sleep(0.05)
        time.sleep(after_s)
        if proc.poll() is not None:
            raise RuntimeError(f"LightningCLI run ended (exit {proc.returncode}) before the signal")
        proc.send_signal(sig)
        rc = proc.wait(timeout=60)
    return {
        "root": str(out),
        "returncode": rc,
        "tensorboard": str(logdir),
        "log": str(out / "train.log"),
    }


# --- Keras fit killed mid-training, console captured ----------------------------------------------

_KERAS_SCRIPT = r"""
import os
os.environ.setdefault("KERAS_BACKEND", "torch")
import keras, numpy as np
rng = np.random.default_rng(0)
centres = rng.normal(size=(10, 16)) * 2
y = rng.integers(0, 10, 4096)
x = (centres[y] + 2.5 * rng.normal(size=(4096, 16))).astype("float32")
keras.utils.set_random_seed(0)
model = keras.Sequential([keras.Input((16,)), keras.layers.Dense(64, activation="relu"), keras.layers.Dense(10)])
model.compile(optimizer=keras.optimizers.Adam(1e-3),
              loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True), metrics=["accuracy"])
model.fit(x, y, epochs=300, batch_size=64, validation_split=0.2, verbose=2)
"""


def make_keras_console_killed(
    out: Path, sig: int = signal.SIGKILL, at_epoch: int = 8, timeout: float = 600
) -> dict:
    """``python train.py > train.log 2>&1`` of a Keras ``fit(epochs=300, verbose=2)``, sent ``sig`` once
    the console shows ``Epoch <at_epoch>/300``. Raises RuntimeError when the run ended first."""
    out.mkdir(parents=True, exist_ok=True)
    script = out / "train.py"
    script.write_text(_KERAS_SCRIPT)
    log_path = out / "train.log"
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(
            [sys.executable, str(script)],
            stdout=log,
            stderr=subprocess.STDOUT,
            env=dict(os.environ, **_ENV, PYTHONUNBUFFERED="1"),
        )
        t0 = time.monotonic()
        while f"Epoch {at_epoch}/300" not in log_path.read_text(errors="replace"):
            if proc.poll() is not None:
                raise RuntimeError(
                    f"Keras run ended (exit {proc.returncode}) before epoch {at_epoch}"
                )
            if time.monotonic() - t0 > timeout:
                proc.kill()
                raise RuntimeError(f"epoch {at_epoch} not reached in time")
            time.sleep(0.05)
        proc.send_signal(sig)
        rc = proc.wait(timeout=60)
    return {"root": str(out), "returncode": rc, "log": str(log_path)}


_ONE = {"lightning_top1": _lightning_top1, "keras_topk": _keras_topk}


def make_lightning_top1(out: Path) -> dict:
    return _child("lightning_top1", out)


def make_keras_topk(out: Path) -> dict:
    return _child("keras_topk", out)


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "--one":
        print(json.dumps(_ONE[sys.argv[2]](Path(sys.argv[3]))))
    else:
        dest = Path(sys.argv[1])
        print(
            json.dumps(
                {
                    "hf_sigkill": make_hf_killed(dest / "hf_sigkill"),
                    "hf_sigterm": make_hf_killed(dest / "hf_sigterm", sig=signal.SIGTERM),
                    "lightning_top1": make_lightning_top1(dest),
                    "keras_topk": make_keras_topk(dest),
                    "lightning_cli_sigkill": make_lightning_cli_killed(dest / "cli_sigkill"),
                },
                indent=1,
            )
        )
