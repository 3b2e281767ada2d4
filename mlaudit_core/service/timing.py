"""Where a run's audit time goes: load, detect, verdict, render, write (seconds per stage).

The per-run task (:func:`~mlaudit_core.service.task.audit_one`) opens a :func:`collect`
scope on its thread; code deeper down (a tracker's write-back rendering its report files)
marks its own share with :func:`timed` without knowing about the task. Stages nobody marks
cost nothing. Thread-local: the batch's worker threads each keep their own.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

#: The stages a batch summary reports, in pipeline order.
STAGES = ("load", "detect", "verdict", "render", "write")
#: Loading done ahead of the workers, beside the stages (not part of a run's wall time).
OVERLAPPED = "read-ahead"

_local = threading.local()


@contextmanager
def collect() -> Iterator[dict[str, float]]:
    """A fresh ``{stage: seconds}`` for this thread until the block ends (nests: the outer
    scope is restored afterwards)."""
    outer = getattr(_local, "acc", None)
    acc: dict[str, float] = {}
    _local.acc = acc
    try:
        yield acc
    finally:
        _local.acc = outer


def add(stage: str, seconds: float) -> None:
    """Add ``seconds`` to ``stage`` in this thread's open :func:`collect` scope (if any)."""
    acc = getattr(_local, "acc", None)
    if acc is not None:
        acc[stage] = acc.get(stage, 0.0) + seconds


@contextmanager
def timed(stage: str) -> Iterator[None]:
    """Time the block into ``stage`` (see :func:`add`)."""
    t0 = time.perf_counter()
    try:
        yield
    finally:
        add(stage, time.perf_counter() - t0)


def total(results, stages: tuple[str, ...] = STAGES) -> dict[str, float]:
    """Seconds per stage summed over ``results`` (objects with a ``timings`` dict)."""
    out = dict.fromkeys(stages, 0.0)
    for r in results:
        for k, v in (getattr(r, "timings", None) or {}).items():
            out[k] = out.get(k, 0.0) + v
    return out


def split_line(sums: dict[str, float], runs: int) -> str:
    """``"time per run: load 12 ms (40%), detect ..."`` (summed over worker threads).

    ``load`` is what the workers waited for their runs; when a batch reads runs ahead
    (:class:`~mlaudit_core.service.batch.ReadAhead`) the loads' own time, overlapped with
    the audits, follows as ``; read ahead 150 ms per run (overlapped)``.
    """
    whole = sum(v for k, v in sums.items() if k in STAGES)
    if runs <= 0 or whole <= 0:
        return ""
    parts = [
        f"{k} {1000 * v / runs:.0f} ms ({100 * v / whole:.0f}%)"
        for k, v in sums.items()
        if k in STAGES
    ]
    line = "time per run: " + ", ".join(parts)
    if sums.get(OVERLAPPED):
        line += f"; read ahead {1000 * sums[OVERLAPPED] / runs:.0f} ms per run (overlapped)"
    return line
