"""Audit many runs: a thread pool on one machine, or the same task fanned out on Ray.

The per-run task is :func:`~mlaudit_core.service.task.audit_task`; both executors yield
its :class:`~mlaudit_core.service.task.RunResult` as runs complete, and
:func:`run_batch` records each in the state file, so a batch stopped at any point
resumes where it was (settled runs are not audited again; failed ones are retried).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from datetime import datetime, timezone
from enum import Enum

from ..errors import InputError
from . import timing
from .state import StateStore
from .task import RunResult, TaskSpec, audit_task, one_line, warm_up, worker_task

RAY_POLL_S = 0.5


class Executor(str, Enum):
    local = "local"
    ray = "ray"


@dataclass
class BatchOutcome:
    """Every run of the listing with its result (earlier sessions included), and timings.

    ``seconds``: wall time of this session's audits; ``startup_s``: executor start-up
    (``ray.init``), not included in ``seconds``; ``timings``: seconds per stage (load,
    detect, verdict, render, write) summed over this session's runs and worker threads
    (:mod:`.timing`).
    """

    results: list[RunResult]
    audited_now: int
    from_earlier: int
    seconds: float
    startup_s: float = 0.0
    timings: dict[str, float] = field(default_factory=dict)


def parse_since(text: str | None) -> datetime | None:
    """``YYYY-MM-DD`` or an ISO time (local time unless it has an offset); ``all`` = the epoch.

    Returns an aware datetime, or None for None.

    Raises:
        InputError: the text is not a date, or is in the future (no run has ended after it:
            a watcher or batch would audit nothing).
    """
    if text is None:
        return None
    epoch = datetime(1970, 1, 1, tzinfo=timezone.utc)
    if text.strip().lower() == "all":
        return epoch
    try:
        dt = datetime.fromisoformat(text.strip())
    except ValueError:
        raise InputError(f"--since {text!r}: not a date (YYYY-MM-DD, an ISO time, "
                         "or 'all')") from None
    if dt.tzinfo is None:
        try:
            dt = dt.astimezone()
        except (OverflowError, OSError, ValueError):  # near year 1 or 9999: no local offset
            dt = dt.replace(tzinfo=timezone.utc)
    if dt > datetime.now(timezone.utc):
        raise InputError(f"--since {text!r}: in the future (no run has ended after it yet)")
    return max(dt, epoch)  # no run ended before 1970; trackers' filters take no negative times


def local_results(spec: TaskSpec, refs: list[str], jobs: int) -> Iterator[RunResult]:
    """Audit ``refs`` on ``jobs`` threads (tracker I/O dominates a small run's audit)."""
    warm_up()
    pool = ThreadPoolExecutor(max_workers=max(1, jobs), thread_name_prefix="mlaudit-batch")
    try:
        futures = [pool.submit(audit_task, spec, ref) for ref in refs]
        for fut in as_completed(futures):
            yield fut.result()
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def ray_init(address: str | None, jobs: int | None):
    """Connect to the Ray cluster at ``address``, or start a local one (``jobs`` CPUs).

    Raises:
        MissingDependency: ray is not installed (``pip install 'mlaudit[ray]'``).
    """
    from ..plugins import require

    ray = require("ray", "ray", "ray")
    kwargs: dict = {"include_dashboard": False, "log_to_driver": False,
                    "logging_level": logging.WARNING}
    if address:
        kwargs["address"] = address
    elif jobs:
        kwargs["num_cpus"] = jobs
    ray.init(**kwargs)
    return ray


def ray_results(ray, spec: TaskSpec, refs: list[str]) -> Iterator[RunResult]:
    """Fan the per-run task out as one Ray task per run; yield results as they complete.

    Each worker first sets ``spec.env`` (the tracker's server and credentials, see
    :class:`TaskSpec`), since a worker on a cluster node shares neither the caller's
    environment nor its files. A task lost with its worker (Ray retries it first) comes
    back as a failed run.
    """
    task = ray.remote(worker_task)
    spec_ref = ray.put(spec)
    pending = {task.remote(spec_ref, ref): ref for ref in refs}
    while pending:
        done, _ = ray.wait(list(pending), num_returns=len(pending), timeout=RAY_POLL_S)
        for obj in done:
            ref = pending.pop(obj)
            try:
                yield ray.get(obj)
            except Exception as exc:
                yield RunResult(ref=ref, ok=False, error=one_line("ray", exc))


def run_batch(refs: list[str], spec: TaskSpec, store: StateStore, *, jobs: int | None = None,
              executor: Executor = Executor.local, ray_address: str | None = None,
              on_start: Callable[[int], None] | None = None,
              on_result: Callable[[RunResult], None] | None = None) -> BatchOutcome:
    """Audit every run of ``refs`` not yet settled in ``store``; record each result there.

    Args:
        refs: run references of the tracker in ``spec``.
        spec: the task (tracker, plugin options, settings, write-back on/off).
        store: the batch's state file (runs settled ``done`` in an earlier session are
            skipped; ``failed`` ones are tried again).
        jobs: local threads (default 1), or a local Ray instance's CPUs (default: all).
        executor: ``local`` or ``ray``.
        ray_address: a Ray cluster (``ray://host:10001`` or ``host:6379``); local when None.
        on_start: called with the number of runs to audit in this session.
        on_result: called with each result as it arrives (progress bars).

    Returns:
        A :class:`BatchOutcome`. Never raises for a run's own failure.

    Raises:
        MissingDependency: ``executor`` is ray and ray is not installed.
    """
    store.requeue(("claimed", "writing", "failed"))
    store.add(refs)
    settled = {r["ref"] for r in store.rows(("done",))}
    todo = [r for r in refs if r not in settled]
    if on_start is not None:
        on_start(len(todo))
    startup = 0.0
    ray = None
    if todo and executor is Executor.ray:
        t = time.perf_counter()
        ray = ray_init(ray_address, jobs)
        startup = time.perf_counter() - t
    t0 = time.perf_counter()
    now: list[RunResult] = []
    try:
        stream = (ray_results(ray, spec, todo) if ray is not None
                  else local_results(spec, todo, jobs or 1))
        for res in stream:
            now.append(res)
            if res.ok:
                store.finish(res.ref, res)
            else:
                store.fail(res.ref, res, retry_at=None)
            if on_result is not None:
                on_result(res)
    finally:
        if ray is not None:
            ray.shutdown()
    seconds = time.perf_counter() - t0
    wanted = set(refs)
    results = [r for r in store.results(wanted)]
    return BatchOutcome(results=results, audited_now=len(todo), from_earlier=len(wanted & settled),
                        seconds=seconds, startup_s=startup, timings=timing.total(now))
