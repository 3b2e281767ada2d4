"""Train a tiny model whose loss turns NaN at a known step, with each framework's mlaudit
callback given ``stop_on=("nan",)``; writes where each run stopped to OUT_JSON.

Run by tests/test_live_hooks.py as one subprocess. FRAMEWORKS: comma-separated hf,
lightning, keras. Each loss becomes NaN from optimizer step ``NAN_AT`` (20) on; without the
callback each would train to ``MAX_STEPS`` (100). No tracker: the callbacks' post-hoc audit
finds no run and says so.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile

os.environ.setdefault("KERAS_BACKEND", "torch")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np

import mlaudit.hooks

NAN_AT, MAX_STEPS, LOG_EVERY = 20, 100, 2
rng = np.random.default_rng(0)
X = rng.normal(size=(512, 8)).astype("float32")
Y = (X[:, 0] > 0).astype("int64")


def hf() -> dict:
    import torch
    from transformers import Trainer, TrainingArguments

    class Tiny(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.lin = torch.nn.Linear(8, 2)
            self.calls = 0

        def forward(self, x, labels=None):
            self.calls += 1
            logits = self.lin(x)
            loss = torch.nn.functional.cross_entropy(logits, labels)
            if self.calls >= NAN_AT:
                loss = loss * float("nan")
            return {"loss": loss, "logits": logits}

    data = [{"x": torch.tensor(x), "labels": torch.tensor(y)} for x, y in zip(X, Y)]
    cb = mlaudit.hooks.hf_callback(stop_on=("nan",), write_back=False, budget_s=5)
    with tempfile.TemporaryDirectory() as out:
        args = TrainingArguments(
            output_dir=out,
            report_to=[],
            max_steps=MAX_STEPS,
            logging_steps=LOG_EVERY,
            per_device_train_batch_size=16,
            learning_rate=0.05,
            save_strategy="no",
            use_cpu=True,
            disable_tqdm=True,
            dataloader_num_workers=0,
        )
        tr = Trainer(model=Tiny(), args=args, train_dataset=data, callbacks=[cb])
        tr.train()
    return {
        "stopped_at": tr.state.global_step,
        "first_nan": NAN_AT,
        "finding": cb.live.tripped.code if cb.live.tripped else None,
    }


def lightning() -> dict:
    import lightning as L
    import torch

    class Tiny(L.LightningModule):
        def __init__(self) -> None:
            super().__init__()
            self.lin = torch.nn.Linear(8, 2)

        def training_step(self, batch, i):
            x, y = batch
            loss = torch.nn.functional.cross_entropy(self.lin(x), y)
            if self.global_step + 1 >= NAN_AT:
                loss = loss * float("nan")
            self.log("train_loss", loss)
            return loss

        def configure_optimizers(self):
            return torch.optim.SGD(self.parameters(), lr=0.05)

    ds = torch.utils.data.TensorDataset(torch.tensor(X), torch.tensor(Y))
    cb = mlaudit.hooks.lightning_callback(stop_on="nan", write_back=False, budget_s=5)
    with tempfile.TemporaryDirectory() as out:
        tr = L.Trainer(
            max_steps=MAX_STEPS,
            callbacks=[cb],
            logger=False,
            enable_progress_bar=False,
            enable_checkpointing=False,
            enable_model_summary=False,
            default_root_dir=out,
            log_every_n_steps=1,
        )
        tr.fit(Tiny(), torch.utils.data.DataLoader(ds, batch_size=16))
    return {
        "stopped_at": tr.global_step,
        "first_nan": NAN_AT,
        "finding": cb.live.tripped.code if cb.live.tripped else None,
    }


def keras() -> dict:
    import keras

    class NanAfter(keras.losses.Loss):
        def __init__(self) -> None:
            super().__init__()
            self.calls = 0
            self.inner = keras.losses.SparseCategoricalCrossentropy(from_logits=True)

        def call(self, y_true, y_pred):
            self.calls += 1
            loss = self.inner(y_true, y_pred)
            return loss * float("nan") if self.calls >= NAN_AT else loss

    model = keras.Sequential([keras.Input((8,)), keras.layers.Dense(2)])
    model.compile(optimizer=keras.optimizers.SGD(0.05), loss=NanAfter(), run_eagerly=True)
    cb = mlaudit.hooks.keras_callback(stop_on=["nan"], write_back=False, budget_s=5)
    hist = model.fit(X, Y, batch_size=16, epochs=4, callbacks=[cb], verbose=0)
    del hist
    return {
        "stopped_at": cb._batches,
        "first_nan": NAN_AT,
        "finding": cb.live.tripped.code if cb.live.tripped else None,
    }


def main() -> None:
    out = {}
    for name in os.environ.get("FRAMEWORKS", "hf,lightning,keras").split(","):
        out[name] = {"hf": hf, "lightning": lightning, "keras": keras}[name]()
    with open(os.environ["OUT_JSON"], "w") as fh:
        json.dump(out, fh)


if __name__ == "__main__":
    sys.exit(main())
