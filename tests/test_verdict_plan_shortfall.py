"""The plan's shortfall and the end of a one-epoch plan (mlaudit_core/verdict/evidence.py
``Ending.short``, mlaudit_core/plan.py ``console_plan``, mlaudit_core/verdict/policy.py
``_one_epoch_plan_unshown``), on real artifacts of tests/data/realworld read with the real readers
and on a real Lightning run.

Each test fails without its rule: a console cut 119 logging intervals before its plan was read as
complete (98% >= the 5% allowance), ``EPOCH k of N`` was no plan, and a one-epoch plan counted as
reached by any record of its epoch.
"""

from __future__ import annotations

import json
from pathlib import Path

from mlaudit_core.audit import audit
from mlaudit_core.formats import load_path
from mlaudit_core.plan import console_plan
from mlaudit_core.verdict.evidence import Ending, ending

OWN = Path(__file__).parent / "data" / "realworld"


def _label(artifact_id: str) -> dict:
    return next(x for x in json.loads((OWN / "labels.json").read_text()) if x["id"] == artifact_id)


def _own(artifact_id: str):
    runs = load_path(OWN / _label(artifact_id)["path"]).runs
    assert len(runs) == 1, [w for w, _ in runs]
    return runs[0][1]


I3D = "f11b2-13-python-logging-i3d-action-detection-605700-of-617600-steps-no-end-line-cls-loss-rises-to-ln2"


def test_ending_short_counts_the_shortfall_in_logging_intervals():
    """A python-logging console printing ``Train step:N/617600`` every 100 steps that stops at
    605700 (98.1% of the plan, no end line): 119 logging intervals short, a stop, never succeeded;
    the report names the printed counter."""
    run = _own(I3D)
    e = ending(run, [])
    assert (e.planned, e.reached, e.interval) == (617600, 605700, 100)
    assert e.share is not None and e.share > 0.95  # inside the 5% allowance ...
    assert e.short and e.stopped  # ... but 119 intervals short
    v = audit(run).verdict
    assert v.outcome.value != "succeeded", v.summary
    assert "step:605700/617600" in v.summary and "119 logging intervals of 100 short" in v.summary


def test_ending_short_allows_the_last_logging_interval_and_rounding():
    """Within two logging intervals of the plan, or under 1% of it, is the end of the plan."""
    assert not Ending(planned=1000, reached=990, interval=10).short  # the last interval
    assert not Ending(planned=20, reached=19, interval=1, unit="epoch").short  # 0/1-based count
    assert not Ending(planned=100_000, reached=99_500, interval=10).short  # 0.5% of the plan
    assert Ending(planned=500, reached=480, interval=1, unit="epoch").short  # 20 epochs missing
    assert Ending(planned=100, reached=90, interval=None).short  # the 95% share alone


def test_console_plan_reads_epoch_k_of_n():
    """A real python-logging console printing ``EPOCH N of 30`` (own corpus log11, Faster R-CNN)."""
    lab = _label("log11-faster-rcnn-stopped-epoch10of30-relaunch-empty")
    lines = (OWN / lab["path"]).read_text(errors="replace").splitlines()
    plans = [p for p in console_plan(lines) if p.unit == "epoch"]
    assert plans and plans[0].planned == 30 and plans[0].text is not None
    assert plans[0].text.upper().startswith("EPOCH ") and plans[0].text.endswith(" of 30")


def test_one_epoch_plan_unshown_is_not_succeeded():
    """Lightning CSVLogger, hparams ``max_epochs: 1``, 156 training rows in epoch 0 and no
    validation row: whether the one planned epoch ended is not in the data (own corpus f12b1-03)."""
    run = _own(
        "f12b1-03-lightning-csv-vit-cifar10-max-epochs-1-step-1559-no-val-metric-warmup-5-epochs-lr-2e-4"
    )
    v = audit(run).verdict
    assert (v.outcome.value, v.cause.value) == ("unknown", "inconclusive"), v.summary
    assert "the plan is one epoch (max_epochs=1)" in v.summary


def _lightning_one_epoch(root: Path, validate: bool) -> Path:
    """A real Lightning run of ``max_epochs=1`` (CSVLogger, 125 steps, a row every 5 steps) on 10
    Gaussian classes, with or without a validation loop; returns its CSVLogger folder."""
    import lightning as L
    import torch
    from lightning.pytorch.loggers import CSVLogger

    torch.set_num_threads(1)
    L.seed_everything(0, verbose=False)
    centres = torch.randn(10, 16, generator=torch.Generator().manual_seed(1)) * 3.0

    def blobs(n: int, seed: int):
        g = torch.Generator().manual_seed(seed)
        y = torch.randint(0, 10, (n,), generator=g)
        return torch.utils.data.TensorDataset(centres[y] + torch.randn(n, 16, generator=g), y)

    class MLP(L.LightningModule):
        def __init__(self, lr: float = 1e-2, max_epochs: int = 1) -> None:
            super().__init__()
            self.save_hyperparameters()
            self.net = torch.nn.Sequential(
                torch.nn.Linear(16, 64), torch.nn.ReLU(), torch.nn.Linear(64, 10)
            )

        def training_step(self, batch, i):
            x, y = batch
            loss = torch.nn.functional.cross_entropy(self.net(x), y)
            self.log("train_loss", loss)
            return loss

        def validation_step(self, batch, i):
            x, y = batch
            self.log("val_loss", torch.nn.functional.cross_entropy(self.net(x), y))
            self.log("val_acc", (self.net(x).argmax(-1) == y).float().mean())

        def configure_optimizers(self):
            return torch.optim.Adam(self.parameters(), lr=self.hparams.lr)

    if not validate:
        MLP.validation_step = None  # type: ignore[assignment,method-assign]
    train = torch.utils.data.DataLoader(blobs(4000, 0), batch_size=32, shuffle=True)
    val = torch.utils.data.DataLoader(blobs(500, 2), batch_size=250)
    logger = CSVLogger(str(root), name="lightning_logs")
    model = MLP()  # save_hyperparameters writes the plan (max_epochs: 1) into hparams.yaml
    trainer = L.Trainer(
        max_epochs=1,
        log_every_n_steps=5,
        logger=logger,
        enable_progress_bar=False,
        enable_model_summary=False,
        enable_checkpointing=False,
        accelerator="cpu",
    )
    trainer.fit(model, train, val if validate else None)
    return Path(logger.log_dir)


def test_one_epoch_plan_unshown_spares_a_run_that_validated_at_its_end(tmp_path):
    """The same one-epoch plan with Lightning's end-of-epoch validation in the CSV: the epoch's end
    is shown, the run is judged (succeeded); without a validation loop, nothing shows that end."""
    with_val = _own_run(_lightning_one_epoch(tmp_path / "val", validate=True))
    v = audit(with_val).verdict
    assert v.outcome.value == "succeeded", v.summary
    without = _own_run(_lightning_one_epoch(tmp_path / "noval", validate=False))
    v = audit(without).verdict
    assert v.outcome.value == "unknown" and "the plan is one epoch" in v.summary, v.summary


def _own_run(folder: Path):
    runs = load_path(folder).runs
    assert len(runs) == 1, [w for w, _ in runs]
    return runs[0][1]


def test_console_plan_reads_the_plan_a_run_states_at_start():
    """``Starting training for 100 epochs...`` (own corpus f5b5-09, a python-logging console) and the
    command-line / dict / JSON forms of the same statement are plans; the past tense is not."""
    lab = _label("f5b5-09-rf-classifier-val-acc-zero-one-class-val-set")
    lines = (OWN / lab["path"]).read_text(errors="replace").splitlines()
    stated = [p for p in console_plan(lines) if p.source == "console's stated plan"]
    assert [(p.planned, p.unit, p.text) for p in stated] == [
        (100, "epoch", "Starting training for 100 epochs")
    ]
    for line, want in (
        ("python train.py --data coco --epochs 300 --lr 0.01", (300, "epoch")),
        ("{'lr': 0.001, 'num_train_epochs': 5, 'seed': 42}", (5, "epoch")),
        ('{"max_steps": 20000, "lr": 3e-4}', (20000, "step")),
    ):
        got = [(p.planned, p.unit) for p in console_plan([line])]
        assert got == [want], line
    assert console_plan(["Trained for 300 epochs in 2 h"]) == []
    assert console_plan(["{'max_steps': -1, 'num_train_epochs': 0}"]) == []


def test_ending_reads_a_stated_plan_against_the_series():
    """A python-logging console printing its arguments as a dict (``'epochs': 10``) whose last launch
    ends after epoch 4 with no end line (own corpus f11b1-10): a stop at about half the plan, named."""
    run = _own(
        "f11b1-10-python-logging-text-segmentation-many-launches-last-trains-no-step-f1-0-identical-"
        "4-epochs-stops-4-of-10"
    )
    e = ending(run, [])
    assert e.planned == 10 and e.unit == "epoch" and e.short
    v = audit(run).verdict
    assert v.outcome.value == "crashed", v.summary
    assert "of the 10 planned (printed `'epochs': 10`" in v.summary
