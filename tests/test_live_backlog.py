"""``mlaudit watch PATH --live`` after a console log grows by hundreds of MiB at once (issue
33, low finding: the alert on the newest lines came over 10 minutes after a 1 GiB append, the
reader taking 8 MiB a poll). A backlog over 64 MiB is skipped to the newest 8 MiB (lines
counted, the skip said in the log), so a NaN at the end alerts within a few polls."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from waiting import live_saved_at
from webhook_receiver import Receiver, live_alerts, wait_for

pytestmark = pytest.mark.e2e  # real processes and servers throughout

MLAUDIT = str(Path(sys.executable).parent / "mlaudit")


def _lines(start: int, n: int, nan: bool = False) -> bytes:
    return "".join(
        f"{{'loss': {'nan' if nan else f'{1.0 + 1.0 / i:.4f}'}, "
        f"'learning_rate': 0.0003, 'epoch': {i / 1000}}}\n"
        for i in range(start, start + n)
    ).encode()


def test_local_live_source_skips_a_backlog_and_alerts_the_newest_lines(tmp_path):
    log = tmp_path / "run" / "train.log"
    log.parent.mkdir()
    log.write_bytes(_lines(1, 50))
    out = tmp_path / "watch.log"
    with Receiver() as rx:
        w = subprocess.Popen(
            [
                MLAUDIT,
                "watch",
                str(log),
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
            stderr=open(out, "wb"),
        )
        try:
            wait_for(lambda: "live: polling" in out.read_text(), 120, "the watcher")
            # its first poll has read the first 50 lines (it saves the run's row after reading)
            wait_for(lambda: live_saved_at(tmp_path / "s.sqlite") > 0, 120, "the first poll")
            block = _lines(51, 20000)
            n = 51
            with open(log, "ab") as f:
                while f.tell() < 200 << 20:
                    f.write(block)
                    n += 20000
                f.write(_lines(n, 3, nan=True))
            appended = time.monotonic()
            wait_for(lambda: len(live_alerts(rx)) >= 1, 120, "the NaN alert")
            latency = time.monotonic() - appended
        finally:
            w.send_signal(signal.SIGTERM)
            w.wait(60)
    text = out.read_text()
    assert "MiB appended since the last poll" in text, text[-2000:]
    assert latency < 60, (latency, text[-2000:])  # 25 polls of 8 MiB of parsing before
