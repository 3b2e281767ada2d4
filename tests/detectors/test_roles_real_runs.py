"""Roles and planned length on runs made here by the real frameworks (tests/detectors/role_runs.py):
a Lightning run whose held-out ``val_top1`` falls while its training loss falls, a Keras run with
``SparseTopKCategoricalAccuracy``, and Hugging Face Trainer runs killed by SIGKILL / SIGTERM mid-training
(TensorBoard, the checkpoint's trainer_state.json, the console captured with ``> train.log 2>&1``).
Needs torch==2.13.0 (CPU), transformers, lightning, keras (the ``dev`` extra)."""

from __future__ import annotations

import signal
import sys
from pathlib import Path

import pytest

from mlaudit_core.audit import audit
from mlaudit_core.formats import load_path
from mlaudit_core.report import Outcome
from mlaudit_core.roles import Role

sys.path.insert(0, str(Path(__file__).parent))
from role_runs import make_hf_killed, make_keras_topk, make_lightning_top1  # noqa: E402


def _one(path) -> object:
    runs = list(load_path(Path(path)).runs)
    assert len(runs) == 1, [w for w, _ in runs]
    return runs[0][1]


@pytest.fixture(scope="module")
def lightning_top1(tmp_path_factory):
    return make_lightning_top1(tmp_path_factory.mktemp("lightning"))


@pytest.fixture(scope="module")
def keras_topk(tmp_path_factory):
    return make_keras_topk(tmp_path_factory.mktemp("keras"))


@pytest.fixture(scope="module", params=[signal.SIGKILL, signal.SIGTERM], ids=["sigkill", "sigterm"])
def hf_killed(request, tmp_path_factory):
    return make_hf_killed(tmp_path_factory.mktemp(f"hf-{request.param}") / "out", sig=request.param)


@pytest.mark.parametrize("reader", ["csv", "tensorboard"])
def test_lightning_heldout_top1_fall_drives_the_verdict(lightning_top1, reader):
    """val_top1 is in no list: its tokens make it the held-out accuracy, and a fall of more than 13
    points from its best while the training loss falls is an overfit (was succeeded/healthy)."""
    run = _one(lightning_top1[reader])
    assert run.key_for(Role.VAL_ACCURACY) == "val_top1"
    s = run.series("val_top1").by_step().finite().values
    assert s.max() - s[-1] > 0.13  # the run does what it was made to do
    rep = audit(run)
    # no validation loss is logged: GE001 reads the held-out error 1 - val_top1 (Prechelt's GL)
    assert rep.verdict.outcome.value == "overfit", rep.verdict.summary
    ge = [f for f in rep.findings if f.code == "GE001" and f.severity.value == "error"]
    assert ge and ge[0].facts["key"] == "val_top1" and ge[0].facts["train_loss_change"] < 0
    assert any(f.code == "GE003" and "val_top1" in f.message for f in rep.findings)


def test_keras_top_k_accuracy_is_the_heldout_accuracy(keras_topk):
    run = _one(keras_topk["csv"])
    assert run.key_for(Role.VAL_ACCURACY) == "val_sparse_top_k_categorical_accuracy"
    assert run.key_for(Role.TRAIN_ACCURACY) == "sparse_top_k_categorical_accuracy"
    assert run.key_for(Role.VAL_LOSS) == "val_loss"
    rep = audit(run)
    assert rep.verdict.outcome.value not in ("succeeded", "unknown"), rep.verdict.summary


def _slow(rep) -> bool:
    """Whether a throughput detector (SY) measured a fall at error severity in this report."""
    return any(f.code.startswith("SY") and f.severity.value == "error" for f in rep.findings)


def test_hf_killed_run_is_never_succeeded(hf_killed):
    """The same killed run through every reader: TensorBoard says it stopped below its max_steps
    (crashed), the console that it stopped or is still going; the last checkpoint's trainer_state.json is a mid-run snapshot (running,
    healthy so far), never 'succeeded'."""
    assert hf_killed["returncode"] < 0  # killed by the signal, not finished
    tb = audit(_one(hf_killed["tensorboard"]))
    # the verdict is the stop below the plan, except that the wall times of this CPU run's short
    # steps can also show a throughput fall on a loaded machine (an SY error: a real measurement,
    # which may then lead the verdict, as in the Lightning test below; never 'succeeded')
    if _slow(tb):
        assert tb.verdict.outcome.value in ("crashed", "slow"), tb.verdict.summary
    else:
        assert tb.verdict.outcome.value == "crashed", tb.verdict.summary
        assert "planned" in tb.verdict.summary
    log = audit(_one(hf_killed["log"]))
    # the console ends inside the progress bar (a kill leaves no line): from the file alone that is
    # a stop or a run still going (verdict/evidence.open_bar), never a finished run
    stopped = ("crashed", "running", "slow") if _slow(log) else ("crashed", "running")
    assert log.verdict.outcome.value in stopped, log.verdict.summary
    ckpt = audit(_one(hf_killed["last_checkpoint"]))
    assert ckpt.verdict.outcome.value == "running", ckpt.verdict.summary
    assert "snapshot" in ckpt.verdict.summary
    # the output_dir as a whole: every run read from it, none succeeded
    for _, run in load_path(Path(hf_killed["root"])).runs:
        assert audit(run).verdict.outcome.value != "succeeded"


def test_get_series_role_name_returns_the_audited_curve(hf_killed):
    """MCP get_series asked for the role train_loss answers with the key the audit reads."""
    from mlaudit_core.agent.tools import Roots, Toolbox

    box = Toolbox(Roots.of([hf_killed["root"]]))
    for path, key in (
        (hf_killed["last_checkpoint"], "loss"),
        (hf_killed["tensorboard"], "train/loss"),
    ):
        data = box.get_series("path", path, "train_loss").data
        assert data["key"] == key and data["points_total"] >= 5, data


def test_lightning_cli_killed_planned_length_from_its_config_yaml(tmp_path):
    """LightningCLI's SaveConfigCallback writes config.yaml (trainer.max_epochs 200) into the log dir;
    the TensorBoard reader reads it as params, so the run killed after a few epochs is crashed, not
    succeeded (without the file the same events read as a finished healthy run)."""
    from role_runs import make_lightning_cli_killed

    res = make_lightning_cli_killed(tmp_path / "cli")
    assert res["returncode"] == -signal.SIGKILL
    run = _one(res["tensorboard"])
    assert run.params.get("trainer.max_epochs") == "200"
    rep = audit(run)
    # the verdict is the stop below the plan, except that the wall times of this CPU run's ~2 ms
    # steps can also show a throughput fall on a loaded machine (an SY finding: a real measurement
    # of this run, which may then lead the verdict; never 'succeeded')
    slow = any(f.code.startswith("SY") for f in rep.findings)
    if slow:
        assert rep.verdict.outcome.value in ("crashed", "slow"), rep.verdict.summary
    else:
        assert rep.verdict.outcome.value == "crashed", rep.verdict.summary
        assert "trainer.max_epochs" in rep.verdict.summary


def test_hf_early_stopped_run_is_not_a_stop(tmp_path):
    """EarlyStoppingCallback ends training at step 30 of max_steps 3000: the last checkpoint's saved
    callback states and TensorBoard's end-of-training summary (train/train_runtime) say training
    returned by itself, so neither is read as a crash or a mid-run snapshot; an earlier checkpoint
    of the same run still is a snapshot (running)."""
    from role_runs import make_hf_early_stopped

    res = make_hf_early_stopped(tmp_path / "es")
    assert res["returncode"] == 0
    last = _one(res["last_checkpoint"])
    assert any(n.startswith("training stopped by itself") for n in last.notes), last.notes
    assert last.params.get("early_stopping_patience") == "2"
    for run in (last, _one(res["tensorboard"])):
        rep = audit(run)
        assert rep.verdict.outcome.value not in ("crashed", "running"), rep.verdict.summary
    assert audit(_one(res["earlier_checkpoint"])).verdict.outcome.value == "running"


def test_lightning_cli_early_stopped_is_not_a_stop(tmp_path):
    """The same LightningCLI run with an EarlyStopping callback (patience 2, min_delta 0.01) in its
    config.yaml stops at a few epochs of 200 by itself: the callback's patience and min_delta are
    params (trainer.callbacks.0.init_args.*), and its own counting explains the stop."""
    from role_runs import make_lightning_cli_early_stopped

    res = make_lightning_cli_early_stopped(tmp_path / "cli-es")
    assert res["returncode"] == 0
    run = _one(res["tensorboard"])
    assert run.params.get("trainer.callbacks.0.init_args.patience") == "2"
    rep = audit(run)
    assert rep.verdict.outcome.value != "crashed", rep.verdict.summary


OWN = Path(__file__).parents[1] / "data" / "realworld" / "runs"


def test_validation_step_series_does_not_replace_the_epoch_value():
    run = _one(OWN / "aakashvardhan--pl-wrapper/logs/lightning_logs/version_0/metrics.csv")
    assert run.key_for(Role.VAL_LOSS) == "val_loss_epoch"
    # the training series still prefers Lightning's per-step values
    assert run.key_for(Role.TRAIN_LOSS) == "train_loss_step"
    rep = audit(run)
    assert rep.verdict.outcome is Outcome.SUCCEEDED, rep.verdict.summary
