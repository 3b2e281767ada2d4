"""Two ``mlaudit watch PATH --live`` processes on one console log alert once (issue 33, low
finding): each has its own state file, so each used to send every episode. The first to
list the run holds its live lock (a flock in the user cache folder); the second says once
that another watcher follows the run. When the first is killed (SIGKILL: the kernel drops the
lock), the second takes the run over and alerts its next episode.

The second watcher also follows a quiet log of its own: a watcher saves the runs it follows at
the end of every poll, so its polls can be waited for (``waiting.wait_live_polls``) where a
watcher that follows nothing shows none."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from waiting import held_by_another_process, wait_live_polls
from webhook_receiver import Receiver, live_alerts, wait_for

pytestmark = pytest.mark.e2e  # real processes and servers throughout

MLAUDIT = str(Path(sys.executable).parent / "mlaudit")


def _lines(start: int, n: int, nan: bool = False) -> str:
    return "".join(
        f"{{'loss': {'nan' if nan else f'{2.0 / i:.4f}'}, 'learning_rate': 0.0003, "
        f"'epoch': {i / 100}}}\n"
        for i in range(start, start + n)
    )


def _watch(
    log: Path, state: Path, out: Path, url: str, cache: Path, *more: Path
) -> subprocess.Popen:
    """``mlaudit watch LOG [MORE...] --live`` with its live locks under ``cache`` (XDG_CACHE_HOME)."""
    return subprocess.Popen(
        [
            MLAUDIT,
            "watch",
            str(log),
            *map(str, more),
            "--live",
            "--poll-interval",
            "0.3",
            "--state",
            str(state),
            "--stall-floor",
            "600",
            "--cooldown",
            "0",
            "--notify",
            url,
        ],
        stdout=subprocess.DEVNULL,
        stderr=open(out, "wb"),
        env=dict(os.environ, XDG_CACHE_HOME=str(cache)),
    )


def test_local_live_source_two_watchers_alert_once(tmp_path):
    log = tmp_path / "run" / "train.log"
    log.parent.mkdir()
    log.write_text(_lines(1, 10))
    out1, out2 = tmp_path / "w1.log", tmp_path / "w2.log"
    with Receiver() as rx:
        cache = tmp_path / "cache"
        s1, s2 = tmp_path / "s1.sqlite", tmp_path / "s2.sqlite"
        w1 = _watch(log, s1, out1, rx.url + "/hook", cache)
        locks = cache / "mlaudit" / "live-locks"
        wait_for(
            lambda: any(held_by_another_process(f) for f in locks.glob("*.lock")),
            120,
            "the first watcher to hold the run's live lock",
        )
        quiet = tmp_path / "quiet" / "train.log"  # followed by the second watcher alone
        quiet.parent.mkdir()
        quiet.write_text(_lines(1, 10))
        w2 = _watch(log, s2, out2, rx.url + "/hook", cache, quiet)
        try:
            wait_for(
                lambda: "another live watcher" in out2.read_text(),
                120,
                "the second watcher to see the first",
            )
            with open(log, "a") as f:
                f.write(_lines(11, 5, nan=True))
            wait_for(lambda: len(live_alerts(rx)) >= 1, 60, "the NaN alert")
            for state in (s1, s2):  # two polls of each after the alert: anything more is sent
                wait_live_polls(state)
            first = len(live_alerts(rx))
            w1.send_signal(signal.SIGKILL)
            w1.wait(30)
            with open(log, "a") as f:  # recovers, then NaN again: a second episode
                f.write(_lines(16, 10) + _lines(26, 5, nan=True))
            wait_for(lambda: len(live_alerts(rx)) >= 2, 90, "the second watcher's alert")
        finally:
            for w in (w1, w2):
                if w.poll() is None:
                    w.send_signal(signal.SIGTERM)
                    w.wait(60)
    assert first == 1, (out1.read_text()[-2000:], out2.read_text()[-2000:])
    assert out2.read_text().count("another live watcher") == 1
