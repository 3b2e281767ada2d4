"""Write one run per local format with the real library, into OUT (argv[1]).

Run by tests/test_formats.py as one subprocess (torch is imported once). Every model is a
tiny classifier on a fixed synthetic two-class problem (no download):

- ``hf/checkpoint-*/trainer_state.json`` and ``hf/console.log`` (the Trainer's printed
  log dicts): Hugging Face ``Trainer``;
- ``lightning_logs/version_0`` and ``version_1``: Lightning ``CSVLogger`` (two fits);
- ``keras/training.log``: Keras 3 (torch backend) ``CSVLogger(append=True)``, fit twice
  (two runs appended to one file, as users get when re-running a notebook cell);
- ``torch_tb/``: ``torch.utils.tensorboard.SummaryWriter`` with the tag names of PyTorch's
  own TensorBoard tutorial (``Loss/train``, ``Loss/test``, ``Accuracy/train``,
  ``Accuracy/test``);
- ``hf_tqdm/console.log``: what a terminal shows for a Hugging Face fine-tune with the progress
  bars on (stdout and stderr together): a tiny BERT saved in three shards and loaded back
  (``Writing model shards`` and ``Loading weights`` bars: not training), then ``Trainer.train()``
  (its bar, the log dicts written through it, the evaluation bars);
- ``keras_console/train.log``: Keras 3 ``fit(verbose=2)`` with ``ReduceLROnPlateau(verbose=1)``
  after a script's own ``epochs: 12`` configuration print;
- ``tb_logs/tiny/version_0``: Lightning ``TensorBoardLogger`` with ``LearningRateMonitor``
  (hparams in the events and in ``hparams.yaml``);
- ``accel/tiny``: accelerate's TensorBoard tracker (``Accelerator(log_with="tensorboard")``,
  ``init_trackers(config=...)`` writes the config through ``add_hparams`` into a timestamp
  sub-folder);
- ``keras_hist/history.json``: ``json.dump(model.fit(...).history)``, the usual way a Keras
  History is saved.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
from pathlib import Path

os.environ.setdefault("KERAS_BACKEND", "torch")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ["WANDB_DISABLED"] = "true"

import numpy as np

OUT = Path(sys.argv[1])
rng = np.random.default_rng(0)
X = rng.normal(size=(256, 8)).astype("float32")
Y = (X[:, 0] + 0.5 * X[:, 1] > 0).astype("int64")


def hf() -> None:
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
    args = TrainingArguments(
        output_dir=str(OUT / "hf"),
        report_to=[],
        max_steps=40,
        logging_steps=2,
        per_device_train_batch_size=16,
        learning_rate=0.05,
        eval_strategy="steps",
        eval_steps=10,
        save_strategy="steps",
        save_steps=20,
        use_cpu=True,
        disable_tqdm=True,
        dataloader_num_workers=0,
    )
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        Trainer(model=Tiny(), args=args, train_dataset=data, eval_dataset=data[:64]).train()
    (OUT / "hf" / "console.log").write_text(buf.getvalue())


def lightning() -> None:
    import lightning as L
    import torch
    from lightning.pytorch.loggers import CSVLogger

    class Tiny(L.LightningModule):
        def __init__(self, lr: float = 0.1) -> None:
            super().__init__()
            self.save_hyperparameters()
            self.lin = torch.nn.Linear(8, 2)

        def training_step(self, batch, i):
            x, y = batch
            loss = torch.nn.functional.cross_entropy(self.lin(x), y)
            self.log("train_loss", loss, on_step=True, on_epoch=True)
            return loss

        def validation_step(self, batch, i):
            x, y = batch
            self.log("val_loss", torch.nn.functional.cross_entropy(self.lin(x), y))

        def configure_optimizers(self):
            return torch.optim.SGD(self.parameters(), lr=self.hparams.lr)

    ds = torch.utils.data.TensorDataset(torch.tensor(X), torch.tensor(Y))
    for _ in range(2):
        trainer = L.Trainer(
            max_epochs=5,
            logger=CSVLogger(str(OUT)),
            accelerator="cpu",
            log_every_n_steps=2,
            enable_progress_bar=False,
            enable_model_summary=False,
            enable_checkpointing=False,
        )
        trainer.fit(
            Tiny(),
            torch.utils.data.DataLoader(ds, batch_size=16),
            torch.utils.data.DataLoader(ds, batch_size=64),
        )


def keras() -> None:
    import keras

    (OUT / "keras").mkdir(parents=True, exist_ok=True)
    for epochs in (4, 6):  # a second fit appends a second run to the same file
        model = keras.Sequential([keras.Input((8,)), keras.layers.Dense(2)])
        model.compile(
            optimizer=keras.optimizers.SGD(0.1),
            loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
            metrics=["accuracy"],
        )
        model.fit(
            X,
            Y,
            batch_size=16,
            epochs=epochs,
            validation_split=0.25,
            verbose=0,
            callbacks=[keras.callbacks.CSVLogger(str(OUT / "keras" / "training.log"), append=True)],
        )


def torch_tb() -> None:
    """The loop of https://pytorch.org/docs/stable/tensorboard.html (tags as in the docs)."""
    import torch
    from torch.utils.tensorboard import SummaryWriter

    model = torch.nn.Linear(8, 2)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    xt, yt = torch.tensor(X), torch.tensor(Y)
    writer = SummaryWriter(str(OUT / "torch_tb"))
    for n_iter in range(60):
        opt.zero_grad()
        out = model(xt[:192])
        loss = torch.nn.functional.cross_entropy(out, yt[:192])
        loss.backward()
        opt.step()
        with torch.no_grad():
            test_out = model(xt[192:])
            test_loss = torch.nn.functional.cross_entropy(test_out, yt[192:])
        writer.add_scalar("Loss/train", loss.item(), n_iter)
        writer.add_scalar("Loss/test", test_loss.item(), n_iter)
        writer.add_scalar(
            "Accuracy/train", (out.argmax(1) == yt[:192]).float().mean().item(), n_iter
        )
        writer.add_scalar(
            "Accuracy/test", (test_out.argmax(1) == yt[192:]).float().mean().item(), n_iter
        )
    writer.close()


def hf_tqdm() -> None:
    import torch
    from transformers import BertConfig, BertForSequenceClassification, Trainer, TrainingArguments

    torch.manual_seed(0)
    out = OUT / "hf_tqdm"
    out.mkdir(parents=True, exist_ok=True)
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf), contextlib.redirect_stderr(buf):
        cfg = BertConfig(
            vocab_size=64,
            hidden_size=16,
            num_hidden_layers=2,
            num_attention_heads=2,
            intermediate_size=32,
            num_labels=2,
        )
        BertForSequenceClassification(cfg).save_pretrained(str(out / "tiny"), max_shard_size="20KB")
        model = BertForSequenceClassification.from_pretrained(str(out / "tiny"))
        g = torch.Generator().manual_seed(0)
        ids = torch.randint(0, 64, (128, 8), generator=g)
        data = [{"input_ids": i, "labels": i[0] % 2} for i in ids]
        args = TrainingArguments(
            output_dir=str(out / "run"),
            report_to=[],
            max_steps=30,
            logging_steps=5,
            per_device_train_batch_size=16,
            learning_rate=1e-3,
            eval_strategy="steps",
            eval_steps=10,
            save_strategy="no",
            use_cpu=True,
            dataloader_num_workers=0,
        )
        Trainer(model=model, args=args, train_dataset=data, eval_dataset=data[:32]).train()
    (out / "console.log").write_text(buf.getvalue())


def keras_console() -> None:
    import keras

    out = OUT / "keras_console"
    out.mkdir(parents=True, exist_ok=True)
    keras.utils.set_random_seed(0)
    y = Y.copy()
    y[rng.random(len(y)) < 0.3] ^= (
        1  # label noise: the validation loss flattens and the LR is reduced
    )
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        print("epochs: 12")
        print("batch_size: 32")
        model = keras.Sequential([keras.Input((8,)), keras.layers.Dense(2)])
        model.compile(
            optimizer=keras.optimizers.SGD(0.01),
            metrics=["accuracy"],
            loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        )
        model.fit(
            X,
            y,
            batch_size=32,
            epochs=12,
            validation_split=0.25,
            verbose=2,
            callbacks=[
                keras.callbacks.ReduceLROnPlateau(
                    monitor="val_loss", factor=0.1, patience=1, min_delta=0.01, verbose=1
                )
            ],
        )
    (out / "train.log").write_text(buf.getvalue())


def lightning_tb() -> None:
    import lightning as L
    import torch
    from lightning.pytorch.callbacks import LearningRateMonitor
    from lightning.pytorch.loggers import TensorBoardLogger

    class Tiny(L.LightningModule):
        def __init__(self, lr: float = 0.1) -> None:
            super().__init__()
            self.save_hyperparameters()
            self.lin = torch.nn.Linear(8, 2)

        def training_step(self, batch, i):
            x, y = batch
            out = self.lin(x)
            loss = torch.nn.functional.cross_entropy(out, y)
            self.log("train_loss", loss, on_step=True, on_epoch=True)
            self.log("train_acc", (out.argmax(1) == y).float().mean())
            return loss

        def validation_step(self, batch, i):
            x, y = batch
            out = self.lin(x)
            self.log("val_loss", torch.nn.functional.cross_entropy(out, y))
            self.log("val_acc", (out.argmax(1) == y).float().mean())

        def configure_optimizers(self):
            opt = torch.optim.SGD(self.parameters(), lr=self.hparams.lr)
            return {"optimizer": opt, "lr_scheduler": torch.optim.lr_scheduler.StepLR(opt, 2)}

    ds = torch.utils.data.TensorDataset(torch.tensor(X), torch.tensor(Y))
    trainer = L.Trainer(
        max_epochs=4,
        logger=TensorBoardLogger(str(OUT / "tb_logs"), name="tiny"),
        accelerator="cpu",
        log_every_n_steps=2,
        enable_progress_bar=False,
        enable_model_summary=False,
        enable_checkpointing=False,
        callbacks=[LearningRateMonitor()],
    )
    trainer.fit(
        Tiny(),
        torch.utils.data.DataLoader(ds, batch_size=16),
        torch.utils.data.DataLoader(ds, batch_size=64),
    )


def accel_tb() -> None:
    import torch
    from accelerate import Accelerator

    acc = Accelerator(log_with="tensorboard", project_dir=str(OUT / "accel"), cpu=True)
    acc.init_trackers("tiny", config={"lr": 0.1, "epochs": 3})
    model = torch.nn.Linear(8, 2)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    model, opt = acc.prepare(model, opt)
    xt, yt = torch.tensor(X), torch.tensor(Y)
    step = 0
    for ep in range(3):
        for i in range(0, 192, 32):
            loss = torch.nn.functional.cross_entropy(model(xt[i : i + 32]), yt[i : i + 32])
            acc.backward(loss)
            opt.step()
            opt.zero_grad()
            acc.log({"train_loss": loss.item(), "lr": 0.1}, step=step)
            step += 1
        with torch.no_grad():
            out = model(xt[192:])
            acc.log(
                {
                    "valid_loss": torch.nn.functional.cross_entropy(out, yt[192:]).item(),
                    "valid_accuracy": (out.argmax(1) == yt[192:]).float().mean().item(),
                    "epoch": ep,
                },
                step=step,
            )
    acc.end_training()


def keras_hist() -> None:
    import json

    import keras

    (OUT / "keras_hist").mkdir(parents=True, exist_ok=True)
    model = keras.Sequential([keras.Input((8,)), keras.layers.Dense(2)])
    model.compile(
        optimizer=keras.optimizers.SGD(0.1),
        metrics=["accuracy"],
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
    )
    history = model.fit(X, Y, batch_size=16, epochs=5, validation_split=0.25, verbose=0)
    (OUT / "keras_hist" / "history.json").write_text(json.dumps(history.history))


if __name__ == "__main__":
    OUT.mkdir(parents=True, exist_ok=True)
    for fn in (
        torch_tb,
        keras,
        lightning,
        hf,
        hf_tqdm,
        keras_console,
        lightning_tb,
        accel_tb,
        keras_hist,
    ):
        fn()
    print("done")
