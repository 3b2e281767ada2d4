"""The report's next actions and statements (mlaudit_core/verdict/narrative.py, the CSV readers'
checkpoint listing in mlaudit_core/formats/_common.py) on runs of the session-17 new-user pass (files in
tests/data/newuser17, README there): advice follows what the run logged and what its folder holds."""

from __future__ import annotations

import shutil
from pathlib import Path

from mlaudit_core import audit
from mlaudit_core.formats import load_path

DATA = Path(__file__).parent / "data" / "newuser17"


def _report(path: Path, fmt: str | None = None):
    ((_, run),) = load_path(path, fmt).runs
    return audit(run)


def test_lr_raise_action_gives_the_usual_peaks_when_the_run_logs_no_lr():
    # Keras SGD(learning_rate=1e-4), 15 epochs at chance; the console logs no LR: '3-10x' would leave
    # SGD 30x below its usual peak, so the action names the usual peaks instead
    r = _report(DATA / "keras_sgd_lr1e-4_underfit.log")
    assert r.verdict.outcome.value == "underfit"
    acts = [a.action for a in r.next_actions]
    (raise_lr,) = [a for a in acts if a.startswith("Raise the learning rate")]
    assert "3-10x" not in raise_lr and "0.01-0.1 for SGD" in raise_lr, raise_lr
    # the chance clause opens the parenthesis it closes
    s = r.verdict.summary
    assert s.count("(") == s.count(")"), s


def test_checkpoint_files_beside_a_lightning_csv_are_listed_and_no_checkpoint_kept_for_shuffled_labels(
    tmp_path,
):
    # Lightning CSVLogger, training labels permuted: val_acc 0.04-0.08 below chance while the training
    # loss fell; Lightning's default ModelCheckpoint wrote checkpoints/epoch=9-step=430.ckpt beside
    # metrics.csv (its weights are not in tests/data: an empty file of that name stands for it)
    run_dir = tmp_path / "version_0"
    shutil.copytree(DATA / "lightning_csv_shuffled_labels" / "version_0", run_dir)
    (run_dir / "checkpoints").mkdir()
    (run_dir / "checkpoints" / "epoch=9-step=430.ckpt").write_bytes(b"")
    ((_, run),) = load_path(run_dir).runs
    assert [a.path for a in run.artifacts] == ["checkpoints/epoch=9-step=430.ckpt"]
    r = audit(run)
    assert r.verdict.cause.value == "data_config"
    acts = [a.action for a in r.next_actions]
    assert not any("checkpoint at step" in a for a in acts), acts
    assert not any("records no checkpoint" in a for a in acts), acts
