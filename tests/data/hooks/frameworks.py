"""Train a tiny model with each framework named in FRAMEWORKS, each with its mlaudit callback.

Run by tests/test_hooks.py as one subprocess (torch is imported once for all three).
Environment: MLFLOW_TRACKING_URI, FRAMEWORKS (comma-separated: hf, lightning, keras,
lightning_fails: a fit that raises at step 20, audited by ``on_exception``; hf_wandb: the HF
``Trainer`` reporting to an offline W&B run, ``train()`` then ``evaluate()`` then
``wandb.finish()``: the hook must not finish the run at train end; hf_diverging: a tiny BERT
classifier at lr 2 with warmup over the whole run, the recipe of
tests/detectors/framework_runs.py whose loss first falls and then climbs as the LR grows, with
the Trainer's own console output, run alone with stdout and stderr sent to a file),
OUT_JSON (``{framework: {"run_id": ..., "results": [...]}}`` is written there).

Each model is a small classifier on a fixed synthetic two-class problem (no download):
Hugging Face ``Trainer`` with its own ``MLflowCallback`` (``report_to="mlflow"``), Lightning
with ``MLFlowLogger``, Keras 3 on the torch backend with ``mlflow.keras.MlflowCallback``.
"""

from __future__ import annotations

import dataclasses
import json
import os
import sys
import tempfile

os.environ.setdefault("KERAS_BACKEND", "torch")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("DISABLE_MLFLOW_INTEGRATION", "FALSE")

import mlflow
import numpy as np

import mlaudit.hooks

URI = os.environ["MLFLOW_TRACKING_URI"]
rng = np.random.default_rng(0)
X = rng.normal(size=(256, 8)).astype("float32")
Y = (X[:, 0] + 0.5 * X[:, 1] > 0).astype("int64")


def hf() -> dict:
    import torch
    from transformers import Trainer, TrainingArguments

    class Tiny(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.lin = torch.nn.Linear(8, 2)

        def forward(self, x, labels=None):
            logits = self.lin(x)
            loss = torch.nn.functional.cross_entropy(logits, labels) if labels is not None else None
            return {"loss": loss, "logits": logits}

    data = [{"x": torch.tensor(x), "labels": torch.tensor(y)} for x, y in zip(X, Y)]
    os.environ["MLFLOW_EXPERIMENT_NAME"] = "hooks-hf"
    os.environ["MLFLOW_RUN_NAME"] = "hf-tiny"
    cb = mlaudit.hooks.hf_callback()
    with tempfile.TemporaryDirectory() as out:
        args = TrainingArguments(
            output_dir=out,
            report_to=["mlflow"],
            max_steps=60,
            logging_steps=2,
            per_device_train_batch_size=16,
            learning_rate=0.05,
            eval_strategy="steps",
            eval_steps=10,
            save_strategy="no",
            use_cpu=True,
            disable_tqdm=True,
            dataloader_num_workers=0,
        )
        Trainer(
            model=Tiny(), args=args, train_dataset=data, eval_dataset=data[:64], callbacks=[cb]
        ).train()
    return {"run_id": mlflow.last_active_run().info.run_id, "results": cb.results}


def hf_wandb() -> dict:
    """``trainer.train(); trainer.evaluate()`` with W&B (offline, in a temporary WANDB_DIR): the
    mlaudit callback's result at train end, and after ``wandb.finish()``."""
    import copy

    import torch
    import wandb
    from transformers import Trainer, TrainingArguments

    class Tiny(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.lin = torch.nn.Linear(8, 2)

        def forward(self, x, labels=None):
            logits = self.lin(x)
            loss = torch.nn.functional.cross_entropy(logits, labels) if labels is not None else None
            return {"loss": loss, "logits": logits}

    data = [{"x": torch.tensor(x), "labels": torch.tensor(y)} for x, y in zip(X, Y)]
    os.environ.update(WANDB_MODE="offline", WANDB_SILENT="true", WANDB_PROJECT="hooks-hf-wandb")
    cb = mlaudit.hooks.hf_callback(trackers=["wandb"])
    with tempfile.TemporaryDirectory() as out:
        os.environ["WANDB_DIR"] = out
        args = TrainingArguments(
            output_dir=out,
            report_to=["wandb"],
            max_steps=40,
            logging_steps=2,
            per_device_train_batch_size=16,
            learning_rate=0.05,
            save_strategy="no",
            use_cpu=True,
            disable_tqdm=True,
            dataloader_num_workers=0,
        )
        trainer = Trainer(
            model=Tiny(), args=args, train_dataset=data, eval_dataset=data[:64], callbacks=[cb]
        )
        trainer.train()
        at_train_end = [dataclasses.asdict(r) for r in copy.deepcopy(cb.results or [])]
        run = wandb.run
        still_open = run is not None
        trainer.evaluate()
        run_dir = str(os.path.dirname(run.dir)) if run is not None else None
        wandb.finish()
        from mlaudit_wandb.offline import load_offline

        keys = sorted(load_offline(run_dir).metrics.keys) if run_dir else []
    return {
        "run_id": run_dir,
        "results": cb.results,
        "at_train_end": at_train_end,
        "open_after_train": still_open,
        "keys": keys,
    }


def hf_diverging() -> dict:
    """The diverging HF run of tests/detectors/framework_runs.py (tiny BERT from a config, lr 2.0,
    warmup 96 steps over 6 epochs, logging every 2 steps, evaluation every 8) reporting to MLflow
    with the mlaudit callback; ``logged_steps`` are the steps of the Trainer's ``log_history``
    entries with a training ``loss`` (what its console printed, one dict per logging step)."""
    import torch
    from transformers import BertConfig, BertForSequenceClassification, Trainer, TrainingArguments

    torch.set_num_threads(1)

    class Tokens(torch.utils.data.Dataset):
        """Label 1 when token 7 occurs."""

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
    os.environ["MLFLOW_EXPERIMENT_NAME"] = "hooks-hf"
    os.environ["MLFLOW_RUN_NAME"] = "hf-diverging"
    cb = mlaudit.hooks.hf_callback()
    with tempfile.TemporaryDirectory() as out:
        args = TrainingArguments(
            output_dir=out,
            report_to=["mlflow"],
            logging_steps=2,
            eval_strategy="steps",
            eval_steps=8,
            num_train_epochs=6,
            learning_rate=2.0,
            warmup_steps=96,
            per_device_train_batch_size=16,
            per_device_eval_batch_size=64,
            save_strategy="no",
            use_cpu=True,
            disable_tqdm=True,
            seed=0,
            dataloader_num_workers=0,
        )
        trainer = Trainer(
            model=model,
            args=args,
            train_dataset=Tokens(256, 0),
            eval_dataset=Tokens(128, 1),
            callbacks=[cb],
        )
        trainer.train()
    logged = [h["step"] for h in trainer.state.log_history if "loss" in h]
    return {
        "run_id": mlflow.last_active_run().info.run_id,
        "results": cb.results,
        "logged_steps": logged,
        "losses": [h["loss"] for h in trainer.state.log_history if "loss" in h],
    }


def lightning(fail_at: int | None = None) -> dict:
    import lightning as L
    import torch
    from lightning.pytorch.loggers import MLFlowLogger

    class Tiny(L.LightningModule):
        def __init__(self) -> None:
            super().__init__()
            self.lin = torch.nn.Linear(8, 2)

        def training_step(self, batch, i):
            if fail_at is not None and self.global_step >= fail_at:
                raise RuntimeError("CUDA error: an illegal memory access was encountered")
            x, y = batch
            loss = torch.nn.functional.cross_entropy(self.lin(x), y)
            self.log("train_loss", loss)
            return loss

        def validation_step(self, batch, i):
            x, y = batch
            self.log("val_loss", torch.nn.functional.cross_entropy(self.lin(x), y))

        def configure_optimizers(self):
            return torch.optim.SGD(self.parameters(), lr=0.1)

    ds = torch.utils.data.TensorDataset(torch.tensor(X), torch.tensor(Y))
    dl = torch.utils.data.DataLoader(ds, batch_size=16)
    logger = MLFlowLogger(
        experiment_name="hooks-lightning",
        tracking_uri=URI,
        run_name="lightning-tiny" if fail_at is None else "lightning-fails",
    )
    cb = mlaudit.hooks.lightning_callback()
    trainer = L.Trainer(
        max_epochs=4,
        logger=logger,
        callbacks=[cb],
        accelerator="cpu",
        log_every_n_steps=2,
        enable_progress_bar=False,
        enable_model_summary=False,
        enable_checkpointing=False,
    )
    try:
        trainer.fit(Tiny(), dl, torch.utils.data.DataLoader(ds, batch_size=64))
    except RuntimeError as exc:  # the failing fit: on_exception has audited it by now
        print(f"fit failed: {exc}", file=sys.stderr)
    return {"run_id": logger.run_id, "results": cb.results}


def keras() -> dict:
    import keras
    from mlflow.keras import MlflowCallback

    mlflow.set_experiment("hooks-keras")
    model = keras.Sequential([keras.Input((8,)), keras.layers.Dense(2)])
    model.compile(
        optimizer=keras.optimizers.SGD(0.1),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
    )
    cb = mlaudit.hooks.keras_callback()
    with mlflow.start_run(run_name="keras-tiny") as run:  # still open when on_train_end fires
        model.fit(
            X,
            Y,
            batch_size=16,
            epochs=6,
            validation_split=0.25,
            verbose=0,
            callbacks=[MlflowCallback(log_every_epoch=True), cb],
        )
    return {"run_id": run.info.run_id, "results": cb.results}


def main() -> None:
    mlflow.set_tracking_uri(URI)
    out = {}
    for name in os.environ.get("FRAMEWORKS", "hf,lightning,lightning_fails,keras").split(","):
        got = {
            "hf": hf,
            "lightning": lightning,
            "keras": keras,
            "lightning_fails": lambda: lightning(fail_at=20),
            "hf_wandb": hf_wandb,
            "hf_diverging": hf_diverging,
        }[name]()
        got["results"] = [dataclasses.asdict(r) for r in got["results"] or []]
        out[name] = got
    with open(os.environ["OUT_JSON"], "w") as f:
        json.dump(out, f)
    print("frameworks trained:", ", ".join(out), file=sys.stderr)


if __name__ == "__main__":
    main()
