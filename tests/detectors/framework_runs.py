"""Tiny training runs made by the real frameworks, with their default logging, for the role/verdict tests.

Each ``make_*`` function trains a small model for a few seconds on CPU with the framework's
own logger left at its defaults and returns where the artifacts are. Nothing here writes a
metric by hand: the keys, steps and values are whatever the library writes (that is the point:
issue 14 found the role table wrong on exactly these defaults).

Run as a script to (re)write the committed copies the diagnosis eval reads as its
``libraries`` corpus::

    python tests/detectors/framework_runs.py tests/data/frameworks

(``labels.json`` there states what each run is, from how it was made: the learning rate that
makes it diverge is chosen, not observed.)

Every framework runs in a child process (``python framework_runs.py --one NAME OUT``) so
environment-driven settings (``TENSORBOARD_LOGGING_DIR``, ``MLFLOW_TRACKING_URI``,
``WANDB_MODE``, ``KERAS_BACKEND``) and the libraries' global state never leak between them or
into the test process.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve()


def _child(name: str, out: Path, env: dict[str, str] | None = None, timeout: float = 600) -> dict:
    """Run ``--one name out`` in a fresh interpreter; returns the JSON it prints last."""
    full = dict(
        os.environ,
        PYTHONHASHSEED="0",
        OMP_NUM_THREADS="1",
        MKL_NUM_THREADS="1",
        TOKENIZERS_PARALLELISM="false",
        WANDB_SILENT="true",
        **(env or {}),
    )
    res = subprocess.run(
        [sys.executable, str(HERE), "--one", name, str(out)],
        env=full,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    if res.returncode != 0:
        raise RuntimeError(f"{name} failed ({res.returncode}):\n{res.stderr[-4000:]}")
    return json.loads(res.stdout.strip().splitlines()[-1])


# --- Hugging Face Trainer -----------------------------------------------------------------------


def _hf(out: Path) -> dict:
    """Two runs of a tiny BERT classifier (from a config: no download), reporting to MLflow,
    TensorBoard and W&B (offline) at once: ``healthy`` (lr 3e-3) and ``diverging`` (lr 2 with
    warmup over the whole run, so the loss first falls and then climbs as the LR grows)."""
    import torch
    from transformers import BertConfig, BertForSequenceClassification, Trainer, TrainingArguments

    torch.set_num_threads(1)
    os.environ.setdefault("WANDB_MODE", "offline")  # never the network
    os.environ.setdefault("WANDB_DIR", str(out / "hf"))
    os.environ.setdefault("MLFLOW_EXPERIMENT_NAME", "hf-defaults")

    class Tokens(torch.utils.data.Dataset):
        """Label 1 when token 7 occurs: learnable by a one-layer BERT in a few dozen steps."""

        def __init__(self, n: int, seed: int) -> None:
            g = torch.Generator().manual_seed(seed)
            self.x = torch.randint(1, 50, (n, 16), generator=g)
            self.y = (self.x == 7).any(1).long()

        def __len__(self) -> int:
            return len(self.y)

        def __getitem__(self, i):
            return {
                "input_ids": self.x[i],
                "attention_mask": torch.ones(16, dtype=torch.long),
                "labels": self.y[i],
            }

    def accuracy(p):
        return {"accuracy": float((p.predictions.argmax(-1) == p.label_ids).mean())}

    report = [
        r for r in os.environ.get("MLAUDIT_TEST_REPORT_TO", "tensorboard,wandb").split(",") if r
    ]
    runs = {}
    for name, lr, warmup, epochs in (("healthy", 3e-3, 0, 3), ("diverging", 2.0, 96, 6)):
        torch.manual_seed(0)
        model = BertForSequenceClassification(
            BertConfig(
                vocab_size=50,
                hidden_size=32,
                num_hidden_layers=1,
                num_attention_heads=2,
                intermediate_size=64,
                max_position_embeddings=32,
                num_labels=2,
            )
        )
        os.environ["TENSORBOARD_LOGGING_DIR"] = str(out / "hf" / name / "tb")
        os.environ["MLFLOW_RUN_NAME"] = f"hf-{name}"
        args = TrainingArguments(
            output_dir=str(out / "hf" / name),
            report_to=report,
            logging_steps=2,
            eval_strategy="steps",
            eval_steps=8,
            num_train_epochs=epochs,
            learning_rate=lr,
            warmup_steps=warmup,
            per_device_train_batch_size=16,
            per_device_eval_batch_size=64,
            save_strategy="no",
            use_cpu=True,
            disable_tqdm=True,
            seed=0,
            run_name=f"hf-{name}",
        )
        trainer = Trainer(
            model=model,
            args=args,
            train_dataset=Tokens(256, 0),
            eval_dataset=Tokens(128, 1),
            compute_metrics=accuracy,
        )
        trainer.train()
        state = out / "hf" / name / "trainer_state.json"
        trainer.state.save_to_json(str(state))
        run = {"tensorboard": str(out / "hf" / name / "tb"), "trainer_state": str(state)}
        if "mlflow" in report:
            import mlflow

            last = mlflow.last_active_run()
            run["mlflow_run_id"] = last.info.run_id if last else None
            if mlflow.active_run():
                mlflow.end_run()
        if "wandb" in report:
            import wandb

            if wandb.run is not None:
                run["wandb"] = str(Path(wandb.run.dir).parent)
                wandb.finish()
        runs[name] = run
    return runs


# --- PyTorch Lightning --------------------------------------------------------------------------


def _blobs(n: int, classes: int, seed: int, spread: float = 1.0):
    import torch

    g = torch.Generator().manual_seed(seed)
    centres = torch.randn(classes, 16, generator=torch.Generator().manual_seed(123)) * 2.0
    y = torch.randint(0, classes, (n,), generator=g)
    x = centres[y] + spread * torch.randn(n, 16, generator=g)
    return x, y


def _lightning(out: Path) -> dict:
    """A 10-class MLP with TensorBoardLogger and CSVLogger: ``healthy`` (SGD lr 0.1) and
    ``lr50`` (SGD lr 50 with gradient clipping at 1, so it stays finite, on overlapping blobs:
    the loss bounces at 40-230x chance ln 10 and validation accuracy stays far below what the
    data allows, the shape of issue 14)."""
    import lightning as L
    import torch
    from lightning.pytorch.loggers import CSVLogger, TensorBoardLogger

    torch.set_num_threads(1)

    class MLP(L.LightningModule):
        def __init__(self, lr: float, num_classes: int = 10) -> None:
            super().__init__()
            self.save_hyperparameters()
            self.net = torch.nn.Sequential(
                torch.nn.Linear(16, 64), torch.nn.ReLU(), torch.nn.Linear(64, num_classes)
            )

        def training_step(self, batch, i):
            x, y = batch
            loss = torch.nn.functional.cross_entropy(self.net(x), y)
            self.log("train_loss", loss, on_step=True, on_epoch=True)
            return loss

        def validation_step(self, batch, i):
            x, y = batch
            logits = self.net(x)
            self.log("val_loss", torch.nn.functional.cross_entropy(logits, y))
            self.log("val_acc", (logits.argmax(-1) == y).float().mean())

        def configure_optimizers(self):
            return torch.optim.SGD(self.parameters(), lr=self.hparams.lr)

    runs = {}
    for name, lr, clip, spread in (("healthy", 0.1, None, 1.0), ("lr50", 50.0, 1.0, 3.0)):
        L.seed_everything(0, verbose=False)
        xt, yt = _blobs(2048, 10, 0, spread=spread)
        xv, yv = _blobs(512, 10, 1, spread=spread)
        train = torch.utils.data.DataLoader(
            torch.utils.data.TensorDataset(xt, yt), batch_size=64, shuffle=True
        )
        val = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(xv, yv), batch_size=256)
        root = out / "lightning" / name
        loggers = [
            TensorBoardLogger(str(root), name="lightning_logs"),
            CSVLogger(str(root), name="csv_logs"),
        ]
        trainer = L.Trainer(
            max_epochs=8,
            log_every_n_steps=5,
            logger=loggers,
            enable_progress_bar=False,
            gradient_clip_val=clip,
            enable_model_summary=False,
            enable_checkpointing=False,
            accelerator="cpu",
            devices=1,
        )
        trainer.fit(MLP(lr), train, val)
        runs[name] = {
            "tensorboard": loggers[0].log_dir,
            "csv": str(Path(loggers[1].log_dir) / "metrics.csv"),
        }
    return runs


# --- Keras --------------------------------------------------------------------------------------


def _keras(out: Path) -> dict:
    """A 10-class Dense model, ``fit`` with the CSVLogger callback (and the History saved as
    JSON, as users do): ``healthy`` (Adam 1e-3) and ``lr10`` (SGD lr 10). Keras 3's TensorBoard
    callback needs TensorFlow, which is not installed here: its ``train/``/``validation/``
    ``epoch_loss`` layout is covered by the real artifact realworld tb07 instead."""
    os.environ.setdefault("KERAS_BACKEND", "torch")
    import keras
    import numpy as np

    xt, yt = (a.numpy() for a in _blobs(2048, 10, 0))
    runs = {}
    for name, opt in (
        ("healthy", lambda: keras.optimizers.Adam(1e-3)),
        ("lr10", lambda: keras.optimizers.SGD(10.0)),
    ):
        keras.utils.set_random_seed(0)
        model = keras.Sequential(
            [keras.Input((16,)), keras.layers.Dense(64, activation="relu"), keras.layers.Dense(10)]
        )
        model.compile(
            optimizer=opt(),
            loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
            metrics=["accuracy"],
        )
        root = out / "keras" / name
        root.mkdir(parents=True, exist_ok=True)
        hist = model.fit(
            xt,
            yt,
            epochs=12,
            batch_size=64,
            validation_split=0.25,
            verbose=0,
            callbacks=[keras.callbacks.CSVLogger(str(root / "training.log"))],
        )
        (root / "history.json").write_text(
            json.dumps({k: [float(x) for x in v] for k, v in hist.history.items()})
        )
        runs[name] = {
            "csv": str(root / "training.log"),
            "history": str(root / "history.json"),
            "final_loss": float(np.asarray(hist.history["loss"])[-1]),
        }
    return runs


# --- torch.utils.tensorboard, the PyTorch tutorial's names --------------------------------------


def _torch_tb(out: Path) -> dict:
    """A plain PyTorch loop logging as the torch.utils.tensorboard tutorial does: ``Loss/train``
    per step, ``Loss/test`` and ``Accuracy/test`` per epoch. ``healthy`` (SGD 0.05) and ``lr50``."""
    import torch
    from torch.utils.tensorboard import SummaryWriter

    torch.set_num_threads(1)
    xt, yt = _blobs(1024, 10, 0)
    xv, yv = _blobs(256, 10, 1)
    runs = {}
    for name, lr in (("healthy", 0.05), ("lr50", 50.0)):
        torch.manual_seed(0)
        net = torch.nn.Sequential(torch.nn.Linear(16, 64), torch.nn.ReLU(), torch.nn.Linear(64, 10))
        opt = torch.optim.SGD(net.parameters(), lr=lr)
        writer = SummaryWriter(str(out / "torch_tb" / name))
        step = 0
        for _epoch in range(8):
            for i in range(0, len(xt), 32):
                loss = torch.nn.functional.cross_entropy(net(xt[i : i + 32]), yt[i : i + 32])
                opt.zero_grad()
                loss.backward()
                opt.step()
                writer.add_scalar("Loss/train", loss.item(), step)
                step += 1
            with torch.no_grad():
                logits = net(xv)
                writer.add_scalar(
                    "Loss/test", torch.nn.functional.cross_entropy(logits, yv).item(), step
                )
                writer.add_scalar(
                    "Accuracy/test", (logits.argmax(-1) == yv).float().mean().item(), step
                )
        writer.close()
        runs[name] = {"tensorboard": str(out / "torch_tb" / name)}
    return runs


MAKERS = {"hf": _hf, "lightning": _lightning, "keras": _keras, "torch_tb": _torch_tb}

#: What each run is, from how it was made (labels.json of the ``libraries`` corpus).
LABELS = [
    (
        "hf-healthy-tensorboard",
        "tensorboard",
        "hf/healthy/tb",
        ["succeeded"],
        ["healthy"],
        ["diverged", "overfit", "underfit"],
        "HF Trainer, tiny BERT from a config, lr 3e-3, 3 epochs; learns the token rule",
    ),
    (
        "hf-healthy-trainer-state",
        "trainer_state",
        "hf/healthy/trainer_state.json",
        ["succeeded"],
        ["healthy"],
        ["diverged", "overfit", "underfit"],
        "same run, trainer_state.json",
    ),
    (
        "hf-diverging-tensorboard",
        "tensorboard",
        "hf/diverging/tb",
        ["diverged", "unstable"],
        ["model_convergence"],
        ["succeeded", "overfit"],
        "HF Trainer, lr 2 with warmup over the whole run: loss falls, then climbs with the LR",
    ),
    (
        "hf-diverging-trainer-state",
        "trainer_state",
        "hf/diverging/trainer_state.json",
        ["diverged", "unstable"],
        ["model_convergence"],
        ["succeeded", "overfit"],
        "same run, trainer_state.json",
    ),
    (
        "lightning-healthy-tensorboard",
        "tensorboard",
        "lightning/healthy/lightning_logs/version_0",
        ["succeeded"],
        ["healthy"],
        ["diverged", "overfit", "underfit"],
        "Lightning MLP, 10 blobs, SGD lr 0.1, 8 epochs",
    ),
    (
        "lightning-healthy-csv",
        "csv",
        "lightning/healthy/csv_logs/version_0/metrics.csv",
        ["succeeded"],
        ["healthy"],
        ["diverged", "overfit", "underfit"],
        "same run, CSVLogger",
    ),
    (
        "lightning-lr50-tensorboard",
        "tensorboard",
        "lightning/lr50/lightning_logs/version_0",
        ["diverged", "unstable", "underfit", "plateaued"],
        ["model_convergence"],
        ["succeeded", "overfit"],
        "Lightning MLP, SGD lr 50 clipped at 1, overlapping blobs: loss 40-230x chance ln 10",
    ),
    (
        "lightning-lr50-csv",
        "csv",
        "lightning/lr50/csv_logs/version_0/metrics.csv",
        ["diverged", "unstable", "underfit", "plateaued"],
        ["model_convergence"],
        ["succeeded", "overfit"],
        "same run, CSVLogger",
    ),
    (
        "keras-healthy-csvlogger",
        "csv",
        "keras/healthy/training.log",
        ["succeeded"],
        ["healthy"],
        ["diverged", "overfit", "underfit"],
        "same run, CSVLogger",
    ),
    (
        "keras-lr10-csvlogger",
        "csv",
        "keras/lr10/training.log",
        ["diverged", "unstable", "underfit", "plateaued"],
        ["model_convergence"],
        ["succeeded", "overfit"],
        "Keras Dense, SGD lr 10",
    ),
    (
        "torch-tb-healthy",
        "tensorboard",
        "torch_tb/healthy",
        ["succeeded"],
        ["healthy"],
        ["diverged", "overfit", "underfit"],
        "plain PyTorch loop, tutorial tag names, SGD 0.05",
    ),
    (
        "torch-tb-lr50",
        "tensorboard",
        "torch_tb/lr50",
        ["diverged", "unstable", "underfit", "plateaued"],
        ["model_convergence"],
        ["succeeded", "overfit"],
        "plain PyTorch loop, tutorial tag names, SGD lr 50",
    ),
]


def write_fixtures(dest: Path) -> None:
    """Make every run into ``dest`` (TensorBoard, trainer_state, CSV; no tracker) with labels.json."""
    dest.mkdir(parents=True, exist_ok=True)
    for name in MAKERS:
        _child(name, dest, env={"MLAUDIT_TEST_REPORT_TO": "tensorboard"} if name == "hf" else None)
    labels = [
        {
            "id": i,
            "kind": k,
            "path": p,
            "outcome_any_of": o,
            "cause_any_of": c,
            "must_not": m,
            "judgement": j,
            "source": "tests/detectors/framework_runs.py (made here by the real library)",
        }
        for i, k, p, o, c, m, j in LABELS
    ]
    (dest / "labels.json").write_text(json.dumps(labels, indent=1) + "\n")


if __name__ == "__main__":
    if sys.argv[1] == "--one":
        out = Path(sys.argv[3])
        out.mkdir(parents=True, exist_ok=True)
        print(json.dumps(MAKERS[sys.argv[2]](out)))
    else:
        write_fixtures(Path(sys.argv[1]))
        print(
            f"wrote {len(LABELS)} labelled runs to {sys.argv[1]} (chance ln 10 = {math.log(10):.4f})"
        )
