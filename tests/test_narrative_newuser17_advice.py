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


def _actions(name: str) -> list[str]:
    return [a.action for a in _report(DATA / name).next_actions]


def test_crash_in_the_first_epoch_gets_no_log_next_time_actions():
    # an HF Trainer whose Dataset.__len__ is one too long: IndexError at step 2 of 96, before any
    # evaluation was due; and Lightning's Trainer(max_epoch=10): a TypeError in Trainer.__init__
    for name in (
        "hf_dataset_len_off_by_one_indexerror.log",
        "lightning_trainer_max_epoch_typo.log",
    ):
        r = _report(DATA / name)
        assert r.verdict.outcome.value == "crashed", name
        acts = [a.action for a in r.next_actions]
        assert not any(a.startswith("Log ") and "next run" in a for a in acts), (name, acts)


def test_constructor_type_error_is_fixed_at_the_call_not_reproduced_on_a_batch():
    acts = _actions("lightning_trainer_max_epoch_typo.log")
    assert acts[0].startswith("Fix the call at ") and "pl_train.py:60" in acts[0], acts
    assert not any("on one batch" in a for a in acts), acts


def test_host_allocation_action_gives_the_size_in_gb():
    # Lightning training_step building a 345k x 345k matrix: 'you tried to allocate 475636432896 bytes'
    (shrink,) = [
        a for a in _actions("lightning_476gb_host_allocation.log") if a.startswith("Shrink")
    ]
    assert "476 GB asked" in shrink and "if 476 GB is the size meant" in shrink, shrink


def test_lightning_console_is_not_told_to_log_val_loss():
    # a Rich Lightning console (not judged): the run logs val_loss to lightning_logs/version_N, which
    # the first action points at; 'Log val loss in the next run' would contradict it
    acts = _actions("lightning_rich_console_slow_loader.log")
    assert acts[0].startswith("Audit the metric files Lightning wrote"), acts
    assert not any(a.startswith("Log val loss") for a in acts), acts


def test_healthy_summary_names_an_early_stop_short_of_the_plan():
    # the policy's healthy message (mlaudit_core/verdict/policy.py) says where and why a run that
    # stopped by itself ended: EarlyStoppingCallback at step 140 of the 960 planned
    r = _report(DATA / "hf_early_stopping_threshold_step140")
    assert r.verdict.outcome.value == "succeeded"
    s = r.verdict.summary
    assert "stopped by itself at step 140 of max_steps 960" in s and "EarlyStopping" in s, s
