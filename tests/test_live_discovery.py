"""``mlaudit watch PATH --live`` started before the training wrote anything (the usual order:
start the watcher, then launch the run). Each poll finds files and folders created since the
watcher started (a TensorBoard event file, a Lightning-style ``version_0/metrics.csv``) without
walking unchanged directories again, and a folder that now holds event files is handed to the
TensorBoard plugin's source.

The end-to-end test runs the real CLI as a subprocess and real PyTorch writers
(``torch.utils.tensorboard.SummaryWriter`` and a CSV logger, tests/data/live/late_writer.py)
started after it, posting to a real HTTP receiver.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mlaudit_core.live.scan import TreeScan
from tests.waiting import wait_live_polls
from tests.webhook_receiver import Receiver
from tests.webhook_receiver import live_alerts as _live
from tests.webhook_receiver import wait_for as _wait

HERE = Path(__file__).parent
MLAUDIT = shutil.which("mlaudit", path=str(Path(sys.executable).parent)) or "mlaudit"


def _age(root: Path, seconds: float = 60.0) -> None:
    """Set every directory's mtime ``seconds`` in the past (out of TreeScan's racy window)."""
    t = time.time() - seconds
    for d, _dirs, _files in os.walk(root):
        os.utime(d, (t, t))


def test_tree_scan_lists_again_only_changed_directories(tmp_path):
    root = tmp_path / "runs"
    for i in range(5):
        (root / f"version_{i}" / "sub").mkdir(parents=True)
        (root / f"version_{i}" / "metrics.csv").write_text("step,loss\n")
    (root / "mlaudit").mkdir()
    (root / "mlaudit" / "live.json").write_text("{}")
    _age(root)
    sc = TreeScan(root)
    first = sc.scan()
    assert [p.relative_to(root).as_posix() for p in first] == [
        f"version_{i}/metrics.csv" for i in range(5)
    ]  # mlaudit/ not entered
    assert sc.changed and sc.listed == 1 + 5 * 2 and sc.generation == 1

    assert sc.scan() == first and not sc.changed and sc.listed == 0  # unchanged: stat only
    assert sc.generation == 1

    # a file appended to does not change its directory; a created file does
    with open(root / "version_2" / "metrics.csv", "a") as fh:
        fh.write("1,0.5\n")
    assert sc.scan() == first and sc.listed == 0
    (root / "version_3" / "sub" / "events.out.tfevents.1.host").write_bytes(b"")
    got = sc.scan()
    assert root / "version_3" / "sub" / "events.out.tfevents.1.host" in got
    assert sc.changed and sc.listed == 1 and sc.generation == 2  # that directory alone

    (root / "version_5").mkdir()  # a new run folder: the root and the new folder are listed
    (root / "version_5" / "metrics.csv").write_text("step,loss\n")
    got = sc.scan()
    assert root / "version_5" / "metrics.csv" in got and sc.changed
    shutil.rmtree(root / "version_0")
    got = sc.scan()
    assert not any("version_0" in str(p) for p in got) and sc.changed


def test_tree_scan_is_bounded(tmp_path):
    for i in range(30):
        (tmp_path / f"d{i:02d}").mkdir()
        (tmp_path / f"d{i:02d}" / "a.log").write_text("x\n")
    sc = TreeScan(tmp_path, max_dirs=10)
    assert len(sc.scan()) == 9  # the root and 9 sub-directories
    assert sc.listed == 10


def test_tensorboard_source_finds_event_files_and_run_folders_written_after_it_started(tmp_path):
    """``mlaudit watch tensorboard LOGDIR --live`` on a folder still empty; Lightning's
    ``lightning_logs/version_N`` layout: each version folder is a run, a new one is found at
    the next poll and the earlier ones are not read again."""
    from mlaudit_tensorboard.live import TensorBoardLiveSource
    from tensorboardX import SummaryWriter

    logdir = (tmp_path / "lightning_logs").resolve()
    logdir.mkdir()
    src = TensorBoardLiveSource([logdir])
    assert src.list_running() == {}
    w = SummaryWriter(str(logdir / "version_0"))
    for step, v in enumerate([1.0, 0.8, 0.7]):
        w.add_scalar("train/loss", v, step)
    w.close()  # tensorboardX writes from a thread: close() waits for it
    listed = src.list_running()
    v0, v1 = str(logdir / "version_0"), str(logdir / "version_1")
    assert list(listed) == [v0] and listed[v0].name == "lightning_logs/version_0"
    cursors: dict = {}
    tail = src.read(list(listed.values()), cursors)[v0]
    s, _w, v = tail.points["train/loss"]
    assert s == [0, 1, 2] and v == pytest.approx([1.0, 0.8, 0.7])

    w = SummaryWriter(str(logdir / "version_1"))  # the next fit
    for step, v in enumerate([2.0, float("nan")]):
        w.add_scalar("train/loss", v, step)
    (logdir / "version_1" / "train.log").write_text("epoch 0\n")
    w.close()
    listed = src.list_running()
    assert sorted(listed) == [v0, v1]
    tails = src.read(list(listed.values()), cursors)
    assert tails[v0].points == {} and tails[v0].console == []  # nothing read again
    s, _w, v = tails[v1].points["train/loss"]
    assert s == [0, 1] and v[0] == 2.0 and v[1] != v[1]
    assert [c[2] for c in tails[v1].console] == ["epoch 0"]


def test_local_version_folders_are_runs_of_their_own(tmp_path):
    """``mlaudit watch lightning_logs --live`` with CSVLogger output: the NaN of a
    ``version_1`` created after the watcher started is alerted on that run, once, and the
    finished ``version_0`` beside it is neither read again nor merged with it."""
    from mlaudit.cli.cmd_watch_path import make_source
    from mlaudit_core.live.monitor import LiveConfig, LiveMonitor
    from mlaudit_core.service import StateStore
    from mlaudit_core.settings import load_settings

    root = (tmp_path / "lightning_logs").resolve()
    (root / "version_0").mkdir(parents=True)
    (root / "version_0" / "metrics.csv").write_text(
        "step,train_loss\n" + "".join(f"{i},{1.0 / (i + 1)}\n" for i in range(50))
    )
    src = make_source([root])
    with StateStore(tmp_path / "s.sqlite", "t") as st:
        mon = LiveMonitor(
            src, st, load_settings(tmp_path), LiveConfig(poll_interval_s=0.1, cooldown_s=0.0)
        )
        first = mon.poll_once()
        assert first.runs == 1 and first.points == 50 and first.events == 0
        (root / "version_1").mkdir()
        with open(root / "version_1" / "metrics.csv", "w") as fh:
            fh.write("step,train_loss\n0,2.5\n1,2.1\n2,nan\n")
        second = mon.poll_once()
        assert second.runs == 2 and second.points == 3 and second.events == 1
        ((ev, _deliveries),) = mon.sent
        assert ev.kind == "alert" and ev.finding.code == "LV001"
        assert json.loads((root / "version_1" / "mlaudit" / "live.json").read_text())
        assert not (root / "version_0" / "mlaudit").exists()
        assert mon.poll_once().events == 0


def test_a_local_folder_that_gets_event_files_moves_to_the_tensorboard_source(tmp_path):
    """A folder with only a console log at start (``python train.py > run/train.log``) is
    followed as local files; when the first event file appears the TensorBoard source takes
    it over and reads the console on from where the local source stopped (no line twice)."""
    from mlaudit_tensorboard.live import TensorBoardLiveSource
    from tensorboardX import SummaryWriter

    from mlaudit.cli.cmd_watch_path import make_source
    from mlaudit_core.live.files import LocalLiveSource

    run = tmp_path / "run"
    run.mkdir()
    (run / "train.log").write_text("starting\nepoch 1\n")
    src = make_source([run.resolve()])
    ref = str(run.resolve())
    cursors: dict = {}
    listed = src.list_running()
    assert isinstance(src._of(ref), LocalLiveSource)
    tail = src.read(list(listed.values()), cursors)[ref]
    assert [c[2] for c in tail.console] == ["starting", "epoch 1"]

    w = SummaryWriter(str(run))
    w.add_scalar("loss", 0.5, 1)
    w.add_scalar("loss", float("inf"), 2)
    w.close()
    with open(run / "train.log", "a") as fh:
        fh.write("epoch 2\n")
    listed = src.list_running()
    assert isinstance(src._of(ref), TensorBoardLiveSource)
    assert run.resolve() not in next(s for s in src.sources if isinstance(s, LocalLiveSource)).paths
    tail = src.read(list(listed.values()), cursors)[ref]
    assert [(c[1], c[2]) for c in tail.console] == [(3, "epoch 2")]
    assert tail.points["loss"][0] == [1, 2] and tail.points["loss"][2][1] == float("inf")


def test_watch_started_before_the_training_alerts_once_while_it_runs(tmp_path):
    pytest.importorskip("torch")
    tb, csvdir = tmp_path / "tb3", tmp_path / "csvrun"
    tb.mkdir()
    csvdir.mkdir()
    stop = tmp_path / "stop"
    log = tmp_path / "watch.log"
    with Receiver() as rx:
        watcher = subprocess.Popen(
            [
                MLAUDIT,
                "watch",
                str(tb),
                str(csvdir),
                "--live",
                "--poll-interval",
                "0.5",
                "--state",
                str(tmp_path / "s.sqlite"),
                "--stall-floor",
                "600",
                "--cooldown",
                "0",
                "--notify",
                rx.url + "/hook",
            ],
            stdout=subprocess.DEVNULL,
            stderr=open(log, "wb"),
            env=dict(os.environ, COLUMNS="250"),
        )
        writers = []
        try:
            _wait(lambda: "live: polling" in log.read_text(), 120, "the live watcher")
            text = log.read_text()
            assert f"live: polling 2 local paths: {csvdir.resolve()}, {tb.resolve()}" in text, text
            for kind, d in (("tb", tb), ("csv", csvdir)):  # the training starts after the watcher
                writers.append(
                    subprocess.Popen(
                        [
                            sys.executable,
                            str(HERE / "data" / "live" / "late_writer.py"),
                            kind,
                            str(d),
                            str(stop),
                        ],
                        stdout=subprocess.PIPE,
                        stderr=subprocess.PIPE,
                        text=True,
                    )
                )
            _wait(
                lambda: len(_live(rx)) >= 2 or any(w.poll() is not None for w in writers),
                240,
                "two live alerts",
            )
            assert [w.poll() for w in writers] == [None, None], log.read_text()[-3000:]
            stop.touch()
            for w in writers:
                _out, err = w.communicate(timeout=120)
                assert w.returncode == 0, err[-2000:]
            wait_live_polls(tmp_path / "s.sqlite")  # two more polls: nothing more is sent
        finally:
            stop.touch()
            for w in writers:
                if w.poll() is None:
                    w.kill()
            watcher.send_signal(signal.SIGTERM)
            watcher.wait(60)
        alerts = _live(rx)
    text = log.read_text()
    by_run = {}
    for a in alerts:
        by_run.setdefault(a["run"]["id"], []).append(a)
    csv_ref = str(csvdir.resolve() / "version_0")  # the run folder the CSV writer created
    assert sorted(by_run) == sorted([str(tb.resolve()), csv_ref]), text[-3000:]
    for ref, got in by_run.items():
        assert [(a["live"]["kind"], a["live"]["code"]) for a in got] == [("alert", "LV001")], got
        msg = got[0]["live"]["finding"]["message"]
        assert "is nan" in msg or "is inf" in msg, msg
        assert json.loads((Path(ref) / "mlaudit" / "live.json").read_text())
    assert by_run[str(tb.resolve())][0]["run"]["tracker"] == "tensorboard"
    assert f"live: {tb.resolve()} now holds a run a tracker plugin reads" in text
