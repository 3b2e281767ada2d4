"""TensorBoard loader and write-back, on event files written by real writers.

Writers: tensorboardX's SummaryWriter (scalars as ``simple_value``) and TensorBoard's
own EventFileWriter with ``summary_v2.scalar_pb`` (scalars as tensors, the form
newer writers use). Counts are checked against TensorBoard's EventAccumulator with
sampling turned off.
"""

from __future__ import annotations

import hashlib
import time
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("tensorboard")
tbx = pytest.importorskip("tensorboardX")

from mlaudit_tensorboard.reader import MLAUDIT_SUFFIX, load_logdir  # noqa: E402
from mlaudit_tensorboard.writeback import write_verdict  # noqa: E402
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator  # noqa: E402
from tensorboard.compat.proto import event_pb2  # noqa: E402
from tensorboard.plugins.scalar.summary_v2 import scalar_pb  # noqa: E402
from tensorboard.plugins.text.summary_v2 import text_pb  # noqa: E402
from tensorboard.summary.writer.event_file_writer import EventFileWriter  # noqa: E402

from mlaudit_core import Role, audit  # noqa: E402
from mlaudit_core.errors import InputError  # noqa: E402


def write_tbx(logdir: Path, n: int = 300, nan_at: int | None = None) -> None:
    w = tbx.SummaryWriter(str(logdir))
    for i in range(1, n + 1):
        loss = 2.3 * np.exp(-i / 60) + 0.1
        if nan_at is not None and i >= nan_at:
            loss = float("nan")
        w.add_scalar("train/loss", loss, i)
        if i % 30 == 0:
            w.add_scalar("val/loss", 2.3 * np.exp(-i / 60) + 0.15, i)
    w.add_text("notes", "lr sweep point 3", 0)
    w.close()


def write_tensor_form(logdir: Path, n: int = 200) -> None:
    w = EventFileWriter(str(logdir))
    for i in range(n):
        w.add_event(
            event_pb2.Event(
                wall_time=time.time(), step=i, summary=scalar_pb("epoch_loss", 1.0 / (i + 1))
            )
        )
    w.add_event(
        event_pb2.Event(wall_time=time.time(), step=0, summary=text_pb("config", "batch=64"))
    )
    w.close()


def accumulator_count(path: Path, tag: str) -> int:
    acc = EventAccumulator(str(path), size_guidance={"scalars": 0, "tensors": 0})
    acc.Reload()
    tags = acc.Tags()
    if tag in tags["scalars"]:
        return len(acc.Scalars(tag))
    return len(acc.Tensors(tag))


def test_simple_values_full_fidelity(tmp_path):
    write_tbx(tmp_path, n=3000)
    run = load_logdir(tmp_path)
    s = run.series("train/loss")
    assert len(s) == 3000 == accumulator_count(tmp_path, "train/loss")
    assert run.key_for(Role.VAL_LOSS) == "val/loss"
    assert np.all(np.diff(s.steps) == 1)
    assert s.values[0] == pytest.approx(2.3 * np.exp(-1 / 60) + 0.1, rel=1e-6)
    assert any("lr sweep point 3" in n for n in run.notes)
    assert run.start_time is not None and run.end_time >= run.start_time


def test_tensor_scalars_and_nested_runs(tmp_path):
    write_tensor_form(tmp_path / "train", n=200)
    write_tensor_form(tmp_path / "validation", n=20)
    run = load_logdir(tmp_path)
    assert set(run.metrics.keys) == {"train/epoch_loss", "validation/epoch_loss"}
    assert (
        len(run.series("train/epoch_loss"))
        == 200
        == accumulator_count(tmp_path / "train", "epoch_loss")
    )
    assert run.series("validation/epoch_loss").values[3] == pytest.approx(0.25)
    assert any("batch=64" in n for n in run.notes)


def test_truncated_file_keeps_valid_records(tmp_path):
    write_tbx(tmp_path, n=500)
    f = next(tmp_path.glob("*tfevents*"))
    data = f.read_bytes()
    f.write_bytes(data[: len(data) - 400])
    run = load_logdir(tmp_path)
    n = len(run.series("train/loss"))
    assert 450 < n < 500
    assert any("truncated" in w for w in run.warnings)
    report = audit(run)
    assert any("truncated" in w for w in report.warnings)
    assert any("truncated" in u for u in report.unknowns)


def test_corrupt_record_stops_with_warning(tmp_path):
    write_tbx(tmp_path, n=100)
    f = next(tmp_path.glob("*tfevents*"))
    data = bytearray(f.read_bytes())
    mid = len(data) // 2
    data[mid : mid + 40] = b"\xff" * 40
    f.write_bytes(bytes(data))
    run = load_logdir(tmp_path)
    assert 0 < len(run.series("train/loss")) < 100
    assert run.warnings


def test_bad_logdirs(tmp_path):
    with pytest.raises(InputError, match="no such log directory"):
        load_logdir(tmp_path / "nope")
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match="no TensorBoard event files"):
        load_logdir(tmp_path / "empty")
    (tmp_path / "file.txt").write_text("x")
    with pytest.raises(InputError, match="not a directory"):
        load_logdir(tmp_path / "file.txt")


def _hashes(d: Path) -> dict[str, str]:
    return {
        p.name: hashlib.sha256(p.read_bytes()).hexdigest()
        for p in d.glob("*tfevents*")
        if not p.name.endswith(MLAUDIT_SUFFIX)
    }


def test_writeback_text_tab_idempotent_and_user_files_untouched(tmp_path):
    write_tbx(tmp_path, n=300, nan_at=200)
    before = _hashes(tmp_path)
    run = load_logdir(tmp_path)
    report = audit(run)
    assert report.verdict.outcome.value == "diverged"
    dry = write_verdict(tmp_path, report, dry_run=True)
    assert dry.dry_run and not list(tmp_path.glob(f"*{MLAUDIT_SUFFIX}"))
    write_verdict(tmp_path, report)
    time.sleep(0.01)
    write_verdict(tmp_path, report)
    ours = list(tmp_path.glob(f"*{MLAUDIT_SUFFIX}"))
    assert len(ours) == 1
    assert _hashes(tmp_path) == before
    acc = EventAccumulator(str(tmp_path), size_guidance={"tensors": 0})
    acc.Reload()
    texts = [b"".join(t.tensor_proto.string_val).decode() for t in acc.Tensors("mlaudit/verdict")]
    assert len(texts) == 1 and "diverged" in texts[0]
    # the reader ignores mlaudit's own file: re-auditing sees the same points
    assert len(load_logdir(tmp_path).metrics) == len(run.metrics)


def test_vectorised_and_protobuf_tiers_agree_with_event_accumulator(tmp_path):
    """Mixed shapes in one file: step 0 (no step field on the wire), multi-byte varint steps,
    a tag longer than 127 bytes (protobuf tier), tensor scalars and text (protobuf tier)."""
    long_tag = "x/" + "a" * 140
    w = tbx.SummaryWriter(str(tmp_path))
    steps = [0, 1, 127, 128, 300, 16384, 2**31 + 5, 2**40]
    for i, st in enumerate(steps):
        w.add_scalar("train/loss", 1.0 / (i + 1), st)
        w.add_scalar(long_tag, float(i), st)
    w.close()
    ef = EventFileWriter(str(tmp_path))
    for i in range(5):
        ef.add_event(
            event_pb2.Event(wall_time=time.time(), step=i, summary=scalar_pb("t/acc", 0.1 * i))
        )
    ef.close()
    run = load_logdir(tmp_path)
    acc = EventAccumulator(str(tmp_path), size_guidance={"scalars": 0, "tensors": 0})
    acc.Reload()
    for tag in ("train/loss", long_tag):
        ref = acc.Scalars(tag)
        got = run.series(tag)
        assert list(got.steps) == [e.step for e in ref] == steps
        np.testing.assert_allclose(got.values, [e.value for e in ref], rtol=1e-7)
        np.testing.assert_allclose(got.wall_times, [e.wall_time for e in ref], rtol=0, atol=1e-6)
    t = run.series("t/acc")
    assert list(t.steps) == list(range(5))
    np.testing.assert_allclose(t.values, [0.1 * i for i in range(5)], rtol=1e-6)


def test_keras_layout_under_a_parent_folder(tmp_path):
    """Keras writes <run>/train and <run>/validation with epoch_* tags; pointing at the parent of
    the run gives the same keys and roles as pointing at the run."""
    for sub, n in (("train", 10), ("validation", 10)):
        w = tbx.SummaryWriter(str(tmp_path / "exp1" / sub))
        for i in range(n):
            w.add_scalar("epoch_loss", 1.0 / (i + 1) + (0.05 * i if sub == "validation" else 0), i)
            w.add_scalar("epoch_accuracy", 0.5 + 0.04 * i, i)
        w.close()
    for target in (tmp_path, tmp_path / "exp1"):
        run = load_logdir(target)
        assert run.key_for(Role.TRAIN_LOSS) == "train/epoch_loss"
        assert run.key_for(Role.VAL_LOSS) == "validation/epoch_loss"
        assert run.key_for(Role.VAL_ACCURACY) == "validation/epoch_accuracy"


def test_unreadable_event_files_are_bad_input_and_nothing_is_written(tmp_path):
    from typer.testing import CliRunner

    from mlaudit.cli import app

    (tmp_path / "zero").mkdir()
    (tmp_path / "zero" / "events.out.tfevents.1.host").write_bytes(b"")
    (tmp_path / "rand").mkdir()
    (tmp_path / "rand" / "events.out.tfevents.1.host").write_bytes(
        np.random.default_rng(0).bytes(4096)
    )
    for d in ("zero", "rand"):
        res = CliRunner().invoke(app, ["tensorboard", str(tmp_path / d)])
        assert res.exit_code == 2, res.output
        assert "no scalar could be read" in res.output
        assert not list((tmp_path / d).glob(f"*{MLAUDIT_SUFFIX}"))


def test_truncated_file_marks_the_verdict_inconclusive(tmp_path):
    write_tbx(tmp_path, n=500)
    f = next(tmp_path.glob("*tfevents*"))
    f.write_bytes(f.read_bytes()[:-400])
    v = audit(load_logdir(tmp_path)).verdict
    assert v.inconclusive and "Partial data" in v.summary and v.confidence <= 0.5


def test_a_folder_of_several_runs_is_refused_and_nothing_is_written(tmp_path):
    """``lightning_logs/version_0`` and ``version_1`` (same tags): one verdict over both runs'
    curves would be wrong, so the parent is refused (exit 2) and no .mlaudit file is made;
    each run directory alone is audited."""
    from typer.testing import CliRunner

    from mlaudit.cli import app

    for v in ("version_0", "version_1"):
        write_tbx(tmp_path / "lightning_logs" / v, n=50)
    with pytest.raises(InputError, match=r"holds 2 separate runs \(version_0, version_1\)"):
        load_logdir(tmp_path / "lightning_logs")
    res = CliRunner().invoke(app, ["tensorboard", str(tmp_path / "lightning_logs")])
    assert res.exit_code == 2
    assert (
        f"one run directory at a time, e.g. {tmp_path / 'lightning_logs' / 'version_0'}"
        in res.output
    )
    assert not list(tmp_path.rglob(f"*{MLAUDIT_SUFFIX}"))
    assert load_logdir(tmp_path / "lightning_logs" / "version_0").key_for(Role.TRAIN_LOSS)


def test_summarywriter_add_scalars_folders_are_series_of_their_run(tmp_path):
    """torch's ``SummaryWriter.add_scalars("loss", {"train": .., "val": ..}, step)`` writes each key
    into ``<run>/loss_train/`` and ``<run>/loss_val/`` (tag ``loss``) beside the run's own event file:
    one run whose keys are ``loss/train`` and ``loss/val``. Sibling runs that are not such folders
    (other tags, or a parent without its own event file) stay separate runs."""
    from mlaudit_tensorboard.local_format import list_runs

    tb = pytest.importorskip("torch.utils.tensorboard")
    run = tmp_path / "runs" / "Dec07_13-19-02_vm"
    w = tb.SummaryWriter(str(run))
    for e in range(12):
        w.add_scalars("loss", {"train": 2.0 / (e + 1), "val": 2.2 / (e + 1) + 0.1}, e)
        w.add_scalar("accuracy/val", 0.5 + 0.04 * e, e)
    w.close()
    assert sorted(p.name for p in run.iterdir() if p.is_dir()) == ["loss_train", "loss_val"]
    assert list_runs(run) == []
    data = load_logdir(run)
    assert {"loss/train", "loss/val", "accuracy/val"} <= set(data.metrics.keys)
    assert data.key_for(Role.TRAIN_LOSS) == "loss/train"
    assert data.key_for(Role.VAL_LOSS) == "loss/val"
    # two runs of their own under one parent with no event file: still two runs
    for name in ("exp_1", "exp_2"):
        w = tb.SummaryWriter(str(tmp_path / "many" / name))
        for e in range(5):
            w.add_scalar("loss", 1.0 / (e + 1), e)
        w.close()
    assert len(list_runs(tmp_path / "many")) == 2


def test_a_refused_folder_with_events_of_its_own_names_another_run_to_audit(tmp_path):
    """A parent that holds an event file and a run folder below it is refused as two runs; the
    suggested run directory is not the refused folder itself."""
    write_tbx(tmp_path / "logs", n=50)
    write_tbx(tmp_path / "logs" / "version_1", n=50)
    with pytest.raises(InputError, match="holds 2 separate runs") as e:
        load_logdir(tmp_path / "logs")
    assert f"e.g. {tmp_path / 'logs' / 'version_1'} " in str(e.value)
