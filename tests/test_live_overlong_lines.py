"""``mlaudit watch PATH --live`` on local console logs with a line longer than the 8 MiB read
(issue 33, finding 7): one log gets a 9 MiB line of text, the other 9 MiB of NUL bytes with no
newline (a preallocated log's padding); the NaN loss printed after each must still alert, and
the watcher's log says the line was skipped. Before: the reader waited for the over-long line's
end forever (a later NaN never alerted, nothing was logged).
"""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest
from webhook_receiver import Receiver, live_alerts, wait_for

pytestmark = pytest.mark.e2e  # real processes and servers throughout

MLAUDIT = str(Path(sys.executable).parent / "mlaudit")


def _dicts(start: int, n: int, nan_at: int | None = None) -> bytes:
    out = []
    for i in range(start, start + n):
        loss = "nan" if nan_at is not None and i >= nan_at else f"{2.0 / i:.4f}"
        out.append(f"{{'loss': {loss}, 'learning_rate': 0.0003, 'epoch': {i / 100}}}")
    return ("\n".join(out) + "\n").encode()


def test_files_source_skips_an_overlong_line_and_alerts_after_it(tmp_path):
    text, nul = tmp_path / "text" / "train.log", tmp_path / "nul" / "train.log"
    for f in (text, nul):
        f.parent.mkdir()
        f.write_bytes(b"")
    log = tmp_path / "watch.log"
    with Receiver() as rx:
        watcher = subprocess.Popen(
            [
                MLAUDIT,
                "watch",
                str(text),
                str(nul),
                "--live",
                "--poll-interval",
                "0.3",
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
        )
        try:
            wait_for(lambda: "live: polling" in log.read_text(), 120, "the live watcher")
            with open(text, "ab") as f:
                f.write(_dicts(1, 20) + b"x" * (9 << 20) + b"\n")
            with open(nul, "ab") as f:
                f.write(_dicts(1, 20) + b"\0" * (9 << 20))
            wait_for(lambda: log.read_text().count("longer than 8 MiB") >= 1, 60, "the first skip")
            with open(text, "ab") as f:
                f.write(_dicts(21, 10, nan_at=25))
            with open(nul, "ab") as f:
                f.write(b"\n" + _dicts(21, 10, nan_at=25))
            wait_for(lambda: len(live_alerts(rx)) >= 2, 60, "a NaN alert on each log")
        finally:
            watcher.send_signal(signal.SIGTERM)
            watcher.wait(60)
        alerts = live_alerts(rx)
    said = log.read_text()
    assert said.count("longer than 8 MiB") == 2, said[-3000:]
    assert sorted((a["run"]["id"], a["live"]["code"]) for a in alerts) == sorted(
        [(str(text.resolve()), "LV001"), (str(nul.resolve()), "LV001")]
    ), said[-3000:]
