"""Waiting on an event in tests: poll a condition until it holds or a deadline passes.

A test that waits for something a process, a server or a thread does (a log line, a file, a
lock, a server answer) polls for that thing here instead of sleeping a fixed time: on a fast
machine it goes on at once, on a loaded one it waits as long as needed, up to ``timeout``
seconds, and then fails naming what it waited for. The timeout is a deadline against hangs,
never a bound the test asserts.
"""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")


def wait_until(
    pred: Callable[[], T],
    timeout: float,
    what: str,
    *,
    every: float = 0.05,
    detail: Callable[[], str] | None = None,
) -> T:
    """Call ``pred()`` every ``every`` s until it returns a true value, and return that value.

    Raises:
        AssertionError: after ``timeout`` s, naming ``what`` (and ``detail()``, e.g. the tail
            of a log, when given).
    """
    deadline = time.monotonic() + timeout
    while True:
        got = pred()
        if got:
            return got
        if time.monotonic() >= deadline:
            extra = f"\n{detail()}" if detail is not None else ""
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}{extra}")
        time.sleep(every)


def held_by_another_process(lock: Path) -> bool:
    """True when another process holds an ``flock`` on ``lock`` (probed without blocking)."""
    try:
        fd = os.open(lock, os.O_RDWR)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)  # closing releases a lock this probe took
    return False


def live_saved_at(state: Path) -> float:
    """When a live watcher with state file ``state`` last saved its runs (epoch s; 0.0 before
    the first save). The watcher saves every followed run's row at the end of each poll
    (``mlaudit_core.live.episodes.LiveStore.save_runs``), so this moves once per poll while a
    run is followed."""
    import sqlite3

    try:
        db = sqlite3.connect(f"file:{state}?mode=ro", uri=True, timeout=5)
    except sqlite3.Error:
        return 0.0
    try:
        row = db.execute("SELECT MAX(updated_at) FROM live_runs").fetchone()
    except sqlite3.Error:  # no table yet
        return 0.0
    finally:
        db.close()
    return float(row[0] or 0.0)


def wait_live_polls(
    state: Path, n: int = 2, timeout: float = 120, detail: Callable[[], str] | None = None
) -> None:
    """Wait until a live watcher (state file ``state``) has saved its runs ``n`` times after
    this call; the last ``n - 1`` of those polls began after it, so whatever was on disk or on
    the server at the call has been read and acted on (n >= 2)."""
    last = time.time()
    for i in range(n):

        def moved(after: float = last) -> float:
            got = live_saved_at(state)
            return got if got > after else 0.0

        last = wait_until(
            moved, timeout, f"poll {i + 1} of {n} of the live watcher", every=0.1, detail=detail
        )


def live_statuses(state: Path) -> dict[str, str]:
    """``{run: status}`` of the runs a live watcher with state file ``state`` has saved
    (``running``, ``ended``, ...); empty before its first save."""
    import sqlite3

    try:
        db = sqlite3.connect(f"file:{state}?mode=ro", uri=True, timeout=5)
    except sqlite3.Error:
        return {}
    try:
        return dict(db.execute("SELECT ref, status FROM live_runs").fetchall())
    except sqlite3.Error:  # no table yet
        return {}
    finally:
        db.close()


def wait_live_runs_ended(
    state: Path, n: int, timeout: float = 120, detail: Callable[[], str] | None = None
) -> dict[str, str]:
    """Wait until a live watcher (state file ``state``) has seen ``n`` runs and the end of
    every one (no saved run is ``running``); returns their statuses."""

    def ended() -> dict[str, str]:
        got = live_statuses(state)
        return got if len(got) >= n and "running" not in got.values() else {}

    return wait_until(
        ended, timeout, f"the live watcher to see the end of {n} run(s)", every=0.1, detail=detail
    )
