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
            [MLAUDIT, "watch", *map(str, paths), "--live", "--poll-interval", "0.3",
             "--state", str(tmp_path / "s.sqlite"), "--stall-floor", "60", "--cooldown", "0",
             "--notify", rx.url + "/hook"], stdout=subprocess.DEVNULL, stderr=open(log, "wb"))
        try:
            _wait(lambda: "live: polling" in log.read_text(), 120, "the live watcher")
            writers = []
            for name, mode in (("csvrun", "blowup"), ("logrun", "blowup"), ("healthy", "healthy")):
                writers.append(subprocess.Popen(
                    [sys.executable, str(HERE / "data" / "live" / "torch_files.py"),
                     str(runs[name]), mode], stdout=open(runs[name] / "train.log", "w"),
                    stderr=subprocess.PIPE, text=True))
            for w in writers:
                _out, err = w.communicate(timeout=300)
                assert w.returncode == 0, err[-2000:]
            ended = time.time()
            _wait(lambda: len(_live(rx)) >= 3, 30, "three live alerts")
            time.sleep(1.5)
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
    p = subprocess.run([MLAUDIT, "watch", "path", str(tmp_path / "nope.csv"), "--live"],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 2 and "no such file" in p.stderr
    f = tmp_path / "m.csv"
    f.write_text("step,loss\n1,1.0\n")
    p = subprocess.run([MLAUDIT, "watch", str(f)], capture_output=True, text=True, timeout=60)
    assert p.returncode == 2 and "--live" in p.stderr
    assert not (tmp_path / "mlaudit").exists()
