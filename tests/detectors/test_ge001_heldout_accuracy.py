"""GE001 without a validation loss: the held-out accuracy, whatever its name, read as its error rate
(mlaudit_core/detectors/GE001.py). The real Lightning run is in test_roles_real_runs.py."""

from __future__ import annotations

import numpy as np

from mlaudit_core.audit import audit
from mlaudit_core.rundata import MetricTable, RunData, RunIdentity


def _run(acc: list[float], train_falls: bool) -> RunData:
    n_train = 200
    t = (
        np.linspace(2.3, 0.2, n_train)
        if train_falls
        else np.full(n_train, 1.2) + 0.01 * np.sin(np.arange(n_train))
    )
    acc_steps = [int(i * n_train / len(acc)) for i in range(len(acc))]
    keys = ["train_loss"] * n_train + ["val_top1"] * len(acc)
    return RunData(
        RunIdentity("t", "ge001"),
        metrics=MetricTable(keys, list(range(n_train)) + acc_steps, list(t) + list(acc)),
    )


FALL = [0.55, 0.72, 0.80, 0.79, 0.74, 0.69, 0.64, 0.60, 0.57, 0.55]


def test_heldout_accuracy_fall_while_training_loss_falls_is_overfit():
    rep = audit(_run(FALL, train_falls=True))
    ge = [f for f in rep.findings if f.code == "GE001" and f.severity.value == "error"]
    assert (
        ge
        and ge[0].facts["key"] == "val_top1"
        and ge[0].facts["measure"].startswith("held-out error")
    )
    assert abs(ge[0].facts["best"] - 0.20) < 1e-9 and abs(ge[0].facts["final"] - 0.45) < 1e-9
    assert rep.verdict.outcome.value == "overfit", rep.verdict.summary


def test_heldout_accuracy_in_percent_reads_the_same():
    rep = audit(_run([100 * a for a in FALL], train_falls=True))
    assert any(f.code == "GE001" and f.severity.value == "error" for f in rep.findings)


def test_heldout_accuracy_fall_with_flat_training_loss_is_not_an_overfit():
    """A regression (GE003), not an overfit: overfitting needs the training loss to keep falling."""
    rep = audit(_run(FALL, train_falls=False))
    assert not any(f.code == "GE001" and f.severity.value == "error" for f in rep.findings)
    assert rep.verdict.outcome.value != "overfit"
