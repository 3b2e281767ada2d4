"""Audit many runs: a thread pool on one machine, or the same task fanned out on Ray.

The per-run task is :func:`~mlaudit_core.service.task.audit_one` (Ray: :func:`~mlaudit_core.service.task.worker_task`); both executors yield
its :class:`~mlaudit_core.service.task.RunResult` as runs complete, and
:func:`run_batch` records each in the state file, so a batch stopped at any point
resumes where it was (settled runs are not audited again; failed ones are retried).
"""

from __future__ import annotations

import logging
import os
import queue
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future, InvalidStateError, ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from datetime import datetime, timezone
from enum import Enum

from ..errors import InputError
from ..plugins import get_plugin
from . import timing
from .state import StateStore
from .task import (
    RunResult,
    TaskSpec,
    audit_one,
    audit_stage,
    one_line,
    warm_up,
    worker_task,
    write_stage,
)

RAY_POLL_S = 0.5
READ_AHEAD_ENV = "MLAUDIT_READ_AHEAD"
#: Runs loaded ahead of the local workers (see :class:`ReadAhead`). 4: on a 2-worker local
#: ``mlflow server`` (2 cores, load 4-12) a run's load waits 100-200 ms on the server and its
#: audit takes 30-40 ms of CPU, so about four loads in flight keep one worker busy
#: (``benchmarks/batch_throughput.py --read-ahead 0,2,4,8``; figures in benchmarks/README.md).
DEFAULT_READ_AHEAD = 4
WRITE_BEHIND_ENV = "MLAUDIT_WRITE_BEHIND"
#: Write-backs in flight behind the local workers (see :func:`local_results`). A small run's
#: write-back is mostly waiting for the tracker (MLflow: ~100 ms for its requests against
#: 40 ms of the run's own CPU on a 2-core machine), so each worker hands it to a writer thread
#: and audits its next run meanwhile; 2 per worker (``benchmarks/batch_throughput.py
#: --write-behind 0,1,2,4``; figures in benchmarks/README.md). 0 writes in the worker itself.
DEFAULT_WRITE_BEHIND = 2


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
        raise InputError(
            f"--since {text!r}: not a date (YYYY-MM-DD, an ISO time, or 'all')"
        ) from None
    if dt.tzinfo is None:
        try:
            dt = dt.astimezone()
        except (OverflowError, OSError, ValueError):  # near year 1 or 9999: no local offset
            dt = dt.replace(tzinfo=timezone.utc)
    if dt > datetime.now(timezone.utc):
        raise InputError(f"--since {text!r}: in the future (no run has ended after it yet)")
    return max(dt, epoch)  # no run ended before 1970; trackers' filters take no negative times


def _depth_from_env(name: str, default: int) -> int:
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    if not raw.isdigit() or int(raw) > 64:
        raise InputError(f"{name}={raw!r}: expected a whole number from 0 to 64")
    return int(raw)


def read_ahead_depth() -> int:
    """Runs to load ahead of the local workers (:data:`READ_AHEAD_ENV`, 0 to 64; 0 = off).

    Raises:
        InputError: the variable is not a whole number from 0 to 64.
    """
    return _depth_from_env(READ_AHEAD_ENV, DEFAULT_READ_AHEAD)


class ReadAhead:
    """A tracker plugin whose ``load`` returns runs read ahead, in the batch's order.

    A batch audits runs in the order it lists them, and a run's load from a tracking server
    is mostly waiting (the server's answer: 100-200 ms per small run on a loaded 2-core
    machine, against 30-40 ms of the audit's own CPU). Up to ``depth`` runs after the ones
    the workers hold are loaded meanwhile on a pool of ``depth`` threads, so a worker finds
    its next run already read. Memory: at most ``depth`` runs loaded and not yet taken.

    ``load(ref)`` of a run that was read ahead returns it (or raises its load error, the
    same exception the worker's own load would have raised, only earlier); any other
    reference is loaded in the calling thread. Every other attribute is the plugin's.
    The seconds spent loading ahead are added to the taking worker's ``read-ahead`` stage
    (:mod:`.timing`; overlapped, not part of the run's wall time).

    A plugin with ``load_many(refs) -> {ref: RunData or the exception its load raised}``
    (MLflow: fewer, larger requests, :func:`mlaudit_mlflow.loader.load_runs`) is asked for
    windows of ``2 x depth`` runs, a new window once at most one is left untaken: at most
    ``4 x depth`` runs loaded and not yet taken.
    """

    def __init__(self, plugin, refs: list[str], depth: int) -> None:
        self._plugin = plugin
        self._refs = list(refs)
        self._depth = max(1, depth)
        many = getattr(plugin, "load_many", None)
        self._many: Callable[[list[str]], dict] | None = many if callable(many) else None
        self._window = 2 * self._depth
        self._next = 0
        self._pending: dict[str, Future] = {}
        self._lock = threading.Lock()
        threads = 2 if self._many else self._depth
        self._pool = ThreadPoolExecutor(
            max_workers=threads, thread_name_prefix="mlaudit-read-ahead"
        )
        with self._lock:
            self._top_up()

    def __getattr__(self, name: str):
        return getattr(self._plugin, name)

    def _timed_load(self, ref: str):
        t = time.perf_counter()
        try:
            return self._plugin.load(ref), time.perf_counter() - t, None
        except Exception as exc:  # handed to the worker that takes this run
            return None, time.perf_counter() - t, exc

    def _load_window(self, refs: list[str], futures: dict[str, Future]) -> None:
        t = time.perf_counter()
        try:
            assert self._many is not None  # windows are loaded only through load_many
            got = self._many(refs)
        except Exception as exc:  # every run of the window gets the error
            got = dict.fromkeys(refs, exc)
        share = (time.perf_counter() - t) / max(1, len(refs))
        for ref, fut in futures.items():
            res = got.get(ref, LookupError(f"{ref}: not returned by load_many"))
            try:
                fut.set_result(
                    (None, share, res) if isinstance(res, Exception) else (res, share, None)
                )
            except InvalidStateError:  # cancelled by close()
                pass

    def _top_up(self) -> None:
        if self._many is not None:
            while len(self._pending) <= self._window and self._next < len(self._refs):
                refs = [
                    r
                    for r in self._refs[self._next : self._next + self._window]
                    if r not in self._pending
                ]
                self._next += self._window
                futures: dict[str, Future] = {r: Future() for r in dict.fromkeys(refs)}
                try:
                    self._pool.submit(self._load_window, list(futures), futures)
                except RuntimeError:  # closed, or the interpreter is shutting down
                    return
                self._pending.update(futures)
            return
        while len(self._pending) < self._depth and self._next < len(self._refs):
            ref = self._refs[self._next]
            self._next += 1
            if ref not in self._pending:
                try:
                    self._pending[ref] = self._pool.submit(self._timed_load, ref)
                except RuntimeError:  # closed, or the interpreter is shutting down
                    return

    def load(self, ref: str, **options):
        with self._lock:
            fut = None if options else self._pending.pop(ref, None)
            self._top_up()
        if fut is None:
            return self._plugin.load(ref, **options)
        run, seconds, exc = fut.result()
        timing.add("read-ahead", seconds)
        if exc is not None:
            raise exc
        return run

    def close(self) -> None:
        """Stop loading ahead; drop runs loaded and not taken (a stopped batch)."""
        with self._lock:
            self._next = len(self._refs)
            pending, self._pending = self._pending, {}
        for fut in pending.values():
            fut.cancel()
        self._pool.shutdown(wait=False, cancel_futures=True)


def write_behind_depth() -> int:
    """Write-backs in flight per local worker: ``MLAUDIT_WRITE_BEHIND`` (0-64), default
    :data:`DEFAULT_WRITE_BEHIND`.

    Raises:
        InputError: the variable is not a whole number from 0 to 64.
    """
    return _depth_from_env(WRITE_BEHIND_ENV, DEFAULT_WRITE_BEHIND)


def local_results(spec: TaskSpec, refs: list[str], jobs: int) -> Iterator[RunResult]:
    """Audit ``refs`` on ``jobs`` threads (tracker I/O dominates a small run's audit), with
    up to :func:`read_ahead_depth` runs loaded ahead of them (:class:`ReadAhead`) and, with
    write-back, up to ``jobs x`` :func:`write_behind_depth` write-backs in flight behind them
    on writer threads (a worker that would exceed it waits). A run's result is yielded once
    its write-back is done, so the state file never records a run whose write is pending."""
    from ..settings import Settings

    warm_up()
    try:  # one plugin (and tracker client) and one Settings for every run of the batch
        # A new plugin per batch, not the process-wide one of Ray workers (task._plugin): its
        # tracker client would keep the first batch's server, credentials and SDK session (a
        # wandb.Api outlives wandb.teardown() with a closed connection: every load of a later
        # batch in the same process failed with 'Cannot schedule tasks after join()').
        plugin = get_plugin(spec.tracker, **dict(spec.plugin_options))
        settings = Settings(**spec.settings)
        depth = read_ahead_depth()
        behind = write_behind_depth() if spec.write_back else 0
    except Exception as exc:
        for ref in refs:
            yield RunResult(ref=ref, ok=False, error=one_line("setup", exc))
        return
    reader = ReadAhead(plugin, refs, depth) if depth and len(refs) > 1 else None
    source = reader or plugin
    pool = ThreadPoolExecutor(max_workers=max(1, jobs), thread_name_prefix="mlaudit-batch")
    if not behind or len(refs) < 2:
        try:
            futures = [
                pool.submit(audit_one, source, ref, settings, write_back=spec.write_back)
                for ref in refs
            ]
            for fut in as_completed(futures):
                yield fut.result()
        finally:
            if reader is not None:
                reader.close()
            pool.shutdown(wait=True, cancel_futures=True)
        return
    slots = threading.BoundedSemaphore(max(1, jobs) * behind)
    writers = ThreadPoolExecutor(
        max_workers=max(1, jobs) * behind, thread_name_prefix="mlaudit-write"
    )
    done: queue.SimpleQueue[RunResult] = queue.SimpleQueue()

    def write(res: RunResult, audited) -> None:
        try:
            res = write_stage(plugin, res, audited)
        except BaseException as exc:  # noqa: BLE001 - an SDK's sys.exit on this thread: the run's failure
            res.ok, res.error = False, one_line("write-back", exc)
        finally:
            slots.release()
            done.put(res)  # every run's result, or the batch waits for it forever

    def audit_then_hand_over(ref: str) -> None:
        try:
            res, audited = audit_stage(source, ref, settings, write_back=True)
            if audited is None:
                done.put(res)
                return
            slots.acquire()  # at most jobs x behind write-backs in flight
            try:
                writers.submit(write, res, audited)
            except RuntimeError:  # the batch is stopping: write in this thread
                slots.release()
                done.put(write_stage(plugin, res, audited))
        except BaseException as exc:  # noqa: BLE001 - never leave the batch waiting for this run's result
            done.put(RunResult(ref=ref, ok=False, error=one_line("batch", exc)))

    try:
        for ref in refs:
            pool.submit(audit_then_hand_over, ref)
        for _ in refs:
            yield done.get()
    finally:
        if reader is not None:
            reader.close()
        pool.shutdown(wait=True, cancel_futures=True)  # a started audit still hands its run over
        writers.shutdown(wait=True)  # a started write-back ends (the verdict tag goes last)


def ray_init(address: str | None, jobs: int | None):
    """Connect to the Ray cluster at ``address``, or start a local one (``jobs`` CPUs).

    Raises:
        MissingDependency: ray is not installed (``pip install 'mlaudit[ray]'``).
    """
    from ..plugins import require

    ray = require("ray", "ray", "ray")
    kwargs: dict = {
        "include_dashboard": False,
        "log_to_driver": False,
        "logging_level": logging.WARNING,
    }
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


def run_batch(
    refs: list[str],
    spec: TaskSpec,
    store: StateStore,
    *,
    jobs: int | None = None,
    executor: Executor = Executor.local,
    ray_address: str | None = None,
    on_start: Callable[[int], None] | None = None,
    on_result: Callable[[RunResult], None] | None = None,
) -> BatchOutcome:
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
        stream = (
            ray_results(ray, spec, todo)
            if ray is not None
            else local_results(spec, todo, jobs or 1)
        )
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
    return BatchOutcome(
        results=results,
        audited_now=len(todo),
        from_earlier=len(wanted & settled),
        seconds=seconds,
        startup_s=startup,
        timings=timing.total(now),
    )
