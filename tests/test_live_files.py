"""``mlaudit watch PATH --live``: local CSV logs and console logs followed as they grow.

Real PyTorch runs in subprocesses (tests/data/live/torch_files.py) append a CSV row and print a
Hugging Face Trainer-style dict each step (stdout redirected to a console log, as
``python train.py > train.log`` does); one blows up after an LR jump (inf, then NaN) and prints a
rank-prefixed NCCL watchdog line. One ``mlaudit watch`` subprocess follows a CSV file, a console
log and a directory holding both, posting to a real HTTP receiver.
"""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.waiting import wait_live_polls
from tests.webhook_receiver import Receiver
from tests.webhook_receiver import live_alerts as _live
from tests.webhook_receiver import wait_for as _wait

HERE = Path(__file__).parent
MLAUDIT = shutil.which("mlaudit", path=str(Path(sys.executable).parent)) or "mlaudit"


def test_watch_path_csv_console_and_directory(tmp_path):
    pytest.importorskip("torch")
    runs = {name: tmp_path / name for name in ("csvrun", "logrun", "healthy")}
    for d in runs.values():
        d.mkdir()
        (d / "metrics.csv").write_text("step,loss,lr\n")  # the writer rewrites it at start
        (d / "train.log").write_text("")
    paths = [runs["csvrun"] / "metrics.csv", runs["logrun"] / "train.log", runs["healthy"]]
    with Receiver() as rx:
        log = tmp_path / "watch.log"
        watcher = subprocess.Popen(
            [
                MLAUDIT,
                "watch",
                *map(str, paths),
                "--live",
                "--poll-interval",
                "0.3",
                "--state",
                str(tmp_path / "s.sqlite"),
                "--stall-floor",
                "60",
                "--cooldown",
                "0",
                "--notify",
                rx.url + "/hook",
            ],
            stdout=subprocess.DEVNULL,
            stderr=open(log, "wb"),
        )
        try:
            _wait(lambda: "live: polling" in log.read_text(), 120, "the live watcher")
            writers = []
            # the blowup runs go on until the watcher has recorded their alerts (torch_files.py)
            for name, mode, until in (
                ("csvrun", "blowup", ["live-metrics.csv.json", "LV001"]),
                ("logrun", "blowup", ["live-train.log.json", "LV001,LV007"]),
                ("healthy", "healthy", []),
            ):
                writers.append(
                    subprocess.Popen(
                        [
                            sys.executable,
                            str(HERE / "data" / "live" / "torch_files.py"),
                            str(runs[name]),
                            mode,
                            *until,
                        ],
                        stdout=open(runs[name] / "train.log", "w"),
                        stderr=subprocess.PIPE,
                        text=True,
                    )
                )
            for w in writers:
                _out, err = w.communicate(timeout=420)
                assert w.returncode == 0, err[-2000:]
            ended = time.time()
            _wait(lambda: len(_live(rx)) >= 3, 120, "three live alerts")
            wait_live_polls(tmp_path / "s.sqlite")  # the writers' last lines are read
        finally:
            watcher.send_signal(signal.SIGTERM)
            watcher.wait(60)
        live = _live(rx)
    text = log.read_text()
    assert watcher.returncode == 0, text[-2000:]
    by_run: dict[str, list[tuple[str, str]]] = {}
    for d in live:
        by_run.setdefault(d["run"]["id"], []).append((d["live"]["kind"], d["live"]["code"]))
    csv_ref, log_ref = str(paths[0].resolve()), str(paths[1].resolve())
    assert by_run.get(str(runs["healthy"].resolve()), []) == [], text[-3000:]
    # the CSV run: its loss column went inf then NaN -> one LV001 alert
    assert by_run[csv_ref] == [("alert", "LV001")], text[-3000:]
    # the console log: the printed dicts' NaN loss, and the NCCL line naming rank 3
    assert sorted(by_run[log_ref]) == [("alert", "LV001"), ("alert", "LV007")], text[-3000:]
    nccl = next(d for d in live if d["live"]["code"] == "LV007")
    assert "rank 3" in nccl["findings"][0]["message"]
    from datetime import datetime

    assert all(datetime.fromisoformat(d["sent_at"]).timestamp() < ended for d in live)
    doc = json.loads((runs["csvrun"] / "mlaudit" / "live-metrics.csv.json").read_text())
    ep = doc["episodes"][0]
    assert ep["code"] == "LV001" and ep["finding"]["evidence"][0]["metric"] == "loss"
    assert ep["finding"]["facts"]["step"] in (42, 43)  # inf at 42 (NaN from 43) in the real run
    doc = json.loads((runs["logrun"] / "mlaudit" / "live-train.log.json").read_text())
    assert {e["code"] for e in doc["episodes"]} == {"LV001", "LV007"}


def test_watch_path_needs_live_and_an_existing_path(tmp_path):
    p = subprocess.run(
        [MLAUDIT, "watch", "path", str(tmp_path / "nope.csv"), "--live"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert p.returncode == 2 and "no such file" in p.stderr
    f = tmp_path / "m.csv"
    f.write_text("step,loss\n1,1.0\n")
    p = subprocess.run([MLAUDIT, "watch", str(f)], capture_output=True, text=True, timeout=60)
    assert p.returncode == 2 and "--live" in p.stderr
    assert not (tmp_path / "mlaudit").exists()


REPLACE_WRITER = r"""
import csv, os, sys
path, first, last, scale = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
tmp = path + ".tmp"
with open(tmp, "w", newline="") as fh:
    w = csv.writer(fh)
    w.writerow(["step", "loss"])
    for s in range(first, last):
        w.writerow([s, round(scale / (1 + s), 6)])
os.replace(tmp, path)  # an atomic save: a new file (inode) under the same name
"""


def _write_replace(tmp_path, path, first, last, scale):
    script = tmp_path / "replace_writer.py"
    script.write_text(REPLACE_WRITER)
    subprocess.run(
        [sys.executable, str(script), str(path), str(first), str(last), str(scale)],
        check=True,
        timeout=60,
    )


def test_a_replaced_csv_longer_than_the_offset_is_read_from_its_start(tmp_path):
    """Break-it: a CSV replaced (``os.replace``, by another process) with a file of the same
    header that is already larger than the saved offset was read on from mid-file. The cursor
    now knows the file's identity: another run's file is read from its start; the same history
    saved again with more rows gives only the new rows."""
    from mlaudit_core.live.files import LocalLiveSource

    path = tmp_path / "metrics.csv"
    _write_replace(tmp_path, path, 0, 10, 1.0)
    src = LocalLiveSource([path])
    cursors: dict = {}
    info = src.list_running()[str(path.resolve())]
    first = src.read([info], cursors)[info.ref].points["loss"]
    assert first[0] == list(range(10))

    # another run's file in its place: 40 rows, other values, bigger than the offset
    _write_replace(tmp_path, path, 0, 40, 7.0)
    tail = src.read([info], cursors)[info.ref]
    steps, _w, values = tail.points["loss"]
    assert steps == list(range(40))
    assert values == [round(7.0 / (1 + s), 6) for s in range(40)]
    assert any("replaced" in n for n in tail.notes)

    # the same history saved again with 20 more rows: only those are new
    _write_replace(tmp_path, path, 0, 60, 7.0)
    steps, _w, values = src.read([info], cursors)[info.ref].points["loss"]
    assert steps == list(range(40, 60)) and values[0] == round(7.0 / 41, 6)

    # nothing new: nothing read
    assert "loss" not in src.read([info], cursors)[info.ref].points


def test_a_console_log_rewritten_in_place_is_read_again(tmp_path):
    """A console log truncated and rewritten in place (same inode) with other content longer
    than the offset: the bytes before the offset changed, so it is read from its start."""
    from mlaudit_core.live.files import LocalLiveSource

    path = tmp_path / "train.log"
    path.write_text("".join(f"step {s} loss {1.0 / (1 + s):.4f}\n" for s in range(10)))
    src = LocalLiveSource([path])
    cursors: dict = {}
    info = src.list_running()[str(path.resolve())]
    tail = src.read([info], cursors)[info.ref]
    assert len(tail.console) == 10
    ino = path.stat().st_ino
    with open(path, "w") as fh:  # truncate + write: the same file
        fh.write("".join(f"step {s} loss {5.0 / (1 + s):.4f} (run 2)\n" for s in range(30)))
    assert path.stat().st_ino == ino
    tail = src.read([info], cursors)[info.ref]
    assert [t for _src, _n, t in tail.console][0] == "step 0 loss 5.0000 (run 2)"
    assert len(tail.console) == 30
