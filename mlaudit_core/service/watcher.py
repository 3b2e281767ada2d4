"""The watcher core shared by every tracker: poll, queue, audit, write back, exactly once.

One loop in the main thread lists newly finished runs (``source.list_finished``) every
``poll_interval_s``, records them in the state file, and hands ready runs to
``concurrency`` worker threads through a bounded queue. Each worker claims the run in
the state file, loads it, skips it when its verdict is already there, audits it, marks
``writing``, writes back, and marks ``done``.

Cursor. Listing asks for runs that ended after ``max(floor, cursor - overlap_s)``, where
``cursor`` is when the last complete listing started and ``floor`` is the first start
(or ``--since``). The overlap (600 s) covers a tracker's end time set by a clock that is
behind ours, or a finish committed after a listing began; runs seen twice are
deduplicated by the state file. A listing as long as the tracker's page leaves the cursor
where it was, so a backlog is never skipped.

Crash windows (the process may be SIGKILLed at any moment):

* listed, not claimed: the row is ``pending``; the next start dispatches it.
* claimed, nothing written: ``recover()`` makes it ``pending``; it is audited once later.
* writing, or written but not yet ``done``: also back to ``pending``; the worker loads
  the run, sees the verdict tag and the report artifacts (``source.is_audited``) and
  records it ``done`` without writing again. Only a kill in the middle of the write-back
  itself (tag there, report files missing) leads to a second write, which replaces the
  first in place (write-backs are idempotent).
* a run whose verdict someone else wrote meanwhile is skipped the same way.

Write order (each tracker's write-back): report artifacts, the description section, the
other ``mlaudit.*`` tags, and the verdict (``mlaudit.verdict``; W&B's ``mlaudit/verdict``
summary key) last, so the verdict present means the write-back is complete, and a run
killed before it is audited and written again. A kill is not held against the run: the
state file counts *failures* (an attempt that ended with an error) apart from
*interruptions* (an attempt cut short by a dead watcher), and only failures give a run up
(``max_attempts``). ``max_interrupts`` (default 25) stops a run that takes the watcher
down every time (a poison run), far above what random restarts cause.

Two watchers on one tracker scope with different state files: before auditing, a worker
takes the run's tracker-side claim (MLflow: tag ``mlaudit.claim`` = ``<owner> <expiry>``,
a lease of ``claim_lease_s``, read back after a settle delay; see
``mlaudit_mlflow.writeback.claim_run``). A run claimed by another live watcher goes back
to ``pending`` until the lease ends, without an attempt counted; by then the other
watcher's verdict is there and the run is recorded without writing. So one watcher writes
and notifies each run. ``owner`` is stored in the state file (host and a random id).

Outages. A failing listing is retried with exponential backoff and jitter (tenacity,
1 s doubling to 60 s), logged, never fatal. A failing run goes back to ``pending`` with
its own backoff (``retry_base_s`` doubling to ``max_backoff_s``) and is given up
(``failed``, logged) after ``max_attempts`` failed attempts (attempts cut short by a
killed watcher are not failures; see above). After any failed
run, dispatching pauses until the tracker answers a listing again, so an outage costs at
most one attempt per run in flight; that listing comes at the next poll or after
``retry_base_s``, whichever is sooner, and the loop wakes for each run's retry time.
A run whose failure retrying cannot fix (an ``MlauditError`` other than
``TrackerUnavailable``: no such run, a malformed reference, a refused write-back) is given
up at once and pauses nothing; a listing that fails that way stops the watcher (exit 2).

Shutdown. SIGTERM or SIGINT: stop listing and dispatching, let in-flight runs finish for
up to ``grace_s`` (a run not yet writing gives its claim back at once), release what is
left, exit 0. A second signal stops waiting.

Pushed runs. A tracker with its own trigger (W&B's webhook receiver, ClearML's
``TriggerScheduler``) hands runs to :meth:`Watcher.submit` from any thread; they go into the
same state file and queue as listed ones, so the trigger gets the same exactly-once,
retry and shutdown rules. ``max_pending`` bounds the runs waiting (:class:`QueueFull`).

Test hook: ``MLAUDIT_WATCH_TEST_PAUSE=after_audit:SECONDS`` or ``after_write:SECONDS``
pauses every run at that point (after the audit, before writing; after the write-back,
before ``done``), so a test can kill the process in a known crash window.
"""

from __future__ import annotations

import logging
import os
import queue
import signal
import socket
import threading
import time
import uuid
from dataclasses import dataclass
from datetime import datetime, timezone

import tenacity

from ..errors import EXIT_INCOMPLETE, MlauditError, TrackerUnavailable
from .source import PluginSource
from .state import UNSETTLED, StateStore
from .task import RunResult, audit_one, one_line, warm_up

log = logging.getLogger("mlaudit.watch")

TEST_PAUSE_ENV = "MLAUDIT_WATCH_TEST_PAUSE"


#: A new state file without ``--since`` starts this many seconds before now: a run that ended
#: while the watcher was starting (imports, the first connection) or whose end time the
#: training machine's clock set a little behind ours is audited, not passed over silently
#: rather than never audited. The tracker-side claim and the state file keep
#: a run so caught from being audited twice by a watcher that ran until a moment before.
START_GRACE_S = 120.0


@dataclass
class WatchConfig:
    """Watcher options. Times in seconds.

    ``since``: the first cursor of a new state file (default: :data:`START_GRACE_S` before
    now; ignored once the file has a cursor). ``once``: list once, audit everything ready,
    exit.
    """

    poll_interval_s: float = 30.0
    concurrency: int = 2
    since: datetime | None = None
    once: bool = False
    overlap_s: float = 600.0
    max_attempts: int = 3
    max_interrupts: int = 25
    claim_lease_s: float = 900.0
    retry_base_s: float = 30.0
    max_backoff_s: float = 600.0
    listing_max_backoff_s: float = 60.0
    #: ``once``: listing attempts before giving up on an unreachable tracker (about 1+2+4 s
    #: of back-off between 4 attempts, plus each attempt's own timeouts)
    once_listing_attempts: int = 4
    grace_s: float = 30.0
    prune_after_s: float = 7 * 86400.0
    max_pending: int | None = None


class QueueFull(Exception):
    """:meth:`Watcher.submit` would leave more than ``max_pending`` runs waiting."""


class _Stopped(Exception):
    pass


class Watcher:
    """Watch one tracker source; :meth:`run` blocks until stopped.

    Args:
        source: the tracker (:class:`~mlaudit_core.service.source.PluginSource`).
        store: the opened state file (the watcher does not close it).
        settings: audit settings.
        config: options.
    """

    def __init__(
        self, source: PluginSource, store: StateStore, settings, config: WatchConfig
    ) -> None:
        self.source, self.store, self.settings, self.cfg = source, store, settings, config
        self._stop = threading.Event()
        self._hurry = threading.Event()
        self._wake = threading.Event()
        self._queue: queue.Queue[str | None] = queue.Queue(maxsize=max(1, 2 * config.concurrency))
        self._inflight: set[str] = set()
        self._mu = threading.Lock()
        self._healthy = False
        self._pause = _parse_pause(os.environ.get(TEST_PAUSE_ENV, ""))
        self._submit_mu = threading.Lock()
        self._relist_at: float | None = None
        self.audited = 0
        #: Set once the workers run and the first listing may start (for threads that push).
        self.started = threading.Event()
        #: Set when :meth:`run` returns or raises (a health endpoint reports not ok).
        self.stopped = threading.Event()

    # -- control --------------------------------------------------------------------------
    def stop(self, *_args) -> None:
        """Ask the watcher to stop (signal handler); a second call stops waiting for workers."""
        if self._stop.is_set():
            self._hurry.set()
        self._stop.set()
        self._wake.set()

    def submit(self, refs) -> int:
        """Queue runs pushed by a trigger; thread-safe. Returns how many were (re)queued.

        ``refs``: run references or ``(ref, ending)`` pairs (see
        :meth:`~mlaudit_core.service.state.StateStore.add`). A run already waiting or
        settled with the same ending is not queued again.

        Raises:
            QueueFull: ``max_pending`` runs are waiting already (nothing was queued).
        """
        refs = list(refs)
        with self._submit_mu:
            limit = self.cfg.max_pending
            if limit is not None:  # runs already waiting take no new room
                new = [
                    r
                    for r in refs
                    if (self.store.get(r if isinstance(r, str) else r[0]) or {}).get("state")
                    not in UNSETTLED
                ]
                if new and self.store.pending() + len(new) > limit:
                    raise QueueFull(f"queue full ({limit} runs waiting)")
            n = self.store.add(refs)
        if n:
            log.info("%d run(s) queued by the trigger", n)
            self._wake.set()
        return n

    def status(self) -> dict[str, int]:
        """Runs per state in the state file (``pending``, ``claimed``, ``writing``, ``done``,
        ``failed``), for a health endpoint."""
        return self.store.counts()

    def run(self) -> int:
        """Watch until stopped (or, with ``once``, until nothing is ready). Returns 0.

        Raises:
            MlauditError: the source reported a configuration problem while listing.
        """
        handlers = {}
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGTERM, signal.SIGINT):
                handlers[sig] = signal.signal(sig, self.stop)
        workers = [
            threading.Thread(target=self._worker, name=f"mlaudit-watch-{i}", daemon=True)
            for i in range(self.cfg.concurrency)
        ]
        try:
            recovered = self.store.recover()
            if recovered:
                log.info(
                    "resuming %d run(s) left in flight by a previous watcher: %s",
                    len(recovered),
                    ", ".join(recovered),
                )
            if self.store.get_meta("cursor") is not None and self.cfg.since is not None:
                log.warning(
                    "--since ignored: %s has a cursor already (give a new --state to "
                    "start from another date)",
                    self.store.path,
                )
            if self.store.get_meta("cursor") is None:
                start = (
                    self.cfg.since.timestamp()
                    if self.cfg.since is not None
                    else time.time() - START_GRACE_S
                )
                if self.cfg.since is None:  # a first '--once' otherwise says "0 audited", no why
                    at = datetime.fromtimestamp(start).strftime("%H:%M:%S")
                    log.info(
                        "new state file: runs that ended before %s (%.0f s before the "
                        "watcher started) are not audited (--since DATE or --since all "
                        "includes them; 'mlaudit batch' audits an experiment once)",
                        at,
                        START_GRACE_S,
                    )
                self.store.set_meta("floor", repr(start))
                self.store.set_meta("cursor", repr(start))
            self.owner = self.store.get_meta("owner")
            if self.owner is None:  # who holds a tracker-side claim: one id per state file
                self.owner = f"{socket.gethostname()}:{uuid.uuid4().hex[:12]}"
                self.store.set_meta("owner", self.owner)
            warm_up()
            for w in workers:
                w.start()
            self.started.set()
            how = (
                "listing once"
                if self.cfg.once
                else f"listing every {self.cfg.poll_interval_s:g} s"
                if self.source.lists
                else "pushed runs only"
            )
            log.info(
                "watching %s (%s, %d worker(s), state %s)",
                self.source.scope,
                how,
                self.cfg.concurrency,
                self.store.path,
            )
            self._loop()
        finally:
            self._shutdown(workers)
            for sig, h in handlers.items():
                signal.signal(sig, h)
            self.stopped.set()
        held, until = self.store.waiting() if self.cfg.once else (0, None)
        if (
            held and until is not None
        ):  # '--once' otherwise said only "0 run(s) audited" for a run under a lease
            log.warning(
                "%d run(s) held by another mlaudit watcher's claim (or a killed one's, "
                "until its lease ends) are not audited yet: run the same command again "
                "after %s (state %s)",
                held,
                datetime.fromtimestamp(until).strftime("%H:%M:%S"),
                self.store.path,
            )
        if self.cfg.once and self.store.retrying():
            log.warning(
                "%d run(s) failed and wait for a retry: run the same command again (state %s)",
                self.store.retrying(),
                self.store.path,
            )
            return EXIT_INCOMPLETE
        return 0

    # -- main loop ------------------------------------------------------------------------
    def _loop(self) -> None:
        next_poll = 0.0
        listed_once = False
        while not self._stop.is_set():
            # --once lists again only to get past a failure (dispatch waits for a good listing)
            done_once = self.cfg.once and listed_once and self._healthy
            now = time.monotonic()
            relist = self._relist_at is not None and now >= self._relist_at
            if (now >= next_poll or relist) and not done_once:
                self._relist_at = None
                try:
                    self._poll()
                except _Stopped:
                    return
                listed_once = True
                next_poll = time.monotonic() + self.cfg.poll_interval_s
            n = self._dispatch()
            if self.cfg.once and n == 0 and not self._busy() and not self.store.ready(1):
                return
            self._wake.clear()
            self._wake.wait(0.5 if self.cfg.once else self._sleep_s(next_poll))

    def _sleep_s(self, next_poll: float) -> float:
        """Seconds until the next listing, an earlier re-listing after a failed run, or the
        retry time of a run waiting on its backoff, whichever comes first."""
        now = time.monotonic()
        until = [next_poll - now]
        if self._relist_at is not None:
            until.append(self._relist_at - now)
        retry_at = self.store.next_retry_at()
        if retry_at is not None:
            until.append(retry_at - time.time() + 0.05)
        return max(0.0, min(until))

    def _poll(self) -> None:
        floor = float(self.store.get_meta("floor") or 0.0)
        cursor = float(self.store.get_meta("cursor") or 0.0)
        since = datetime.fromtimestamp(max(floor, cursor - self.cfg.overlap_s), tz=timezone.utc)
        # a run ended without an end time (MLflow update_run(status=...)) has no place on the
        # cursor: a source that can list those lists the ones started after the floor
        self.source.floor = datetime.fromtimestamp(floor, tz=timezone.utc)
        started = time.time()
        try:
            refs = self._retrying()(self._list, since)
        except Exception as exc:
            if not (self.cfg.once and _is_outage(exc)):
                raise
            raise TrackerUnavailable(
                f"{self.source.tracker} did not answer the listing after "
                f"{self.cfg.once_listing_attempts} attempts (--once gives up; the next run "
                f"retries): {one_line('listing', exc)}"
            ) from None
        new = self.store.add(refs)
        if self.source.page_limit is None or len(refs) < self.source.page_limit:
            self.store.set_meta("cursor", repr(started))
        self._healthy = True
        if new:
            log.info("%d newly finished run(s)", new)
        self.store.prune(time.time() - self.cfg.prune_after_s)

    def _list(self, since: datetime) -> list[str | tuple[str, str]]:
        if self._stop.is_set():
            raise _Stopped
        return self.source.list_finished(since)

    def _retrying(self) -> tenacity.Retrying:
        def before_sleep(rs: tenacity.RetryCallState) -> None:
            self._healthy = False
            exc = rs.outcome.exception() if rs.outcome is not None else None
            log.warning(
                "listing finished runs failed (attempt %d): %s; retrying in %.0f s",
                rs.attempt_number,
                one_line(self.source.tracker, exc) if exc is not None else self.source.tracker,
                rs.next_action.sleep if rs.next_action else 0,
            )

        def sleep(seconds: float) -> None:
            self._stop.wait(seconds)

        return tenacity.Retrying(
            retry=tenacity.retry_if_exception(_is_outage),
            wait=tenacity.wait_exponential_jitter(initial=1, max=self.cfg.listing_max_backoff_s),
            stop=(
                tenacity.stop_after_attempt(self.cfg.once_listing_attempts)
                if self.cfg.once
                else tenacity.stop_never
            ),
            sleep=sleep,
            before_sleep=before_sleep,
            reraise=True,
        )  # _list raises _Stopped

    def _busy(self) -> bool:
        with self._mu:
            return bool(self._inflight)

    def _dispatch(self) -> int:
        if not self._healthy or self._stop.is_set():
            return 0
        with self._mu:
            free = self._queue.maxsize - self._queue.qsize()
            refs = self.store.ready(free, exclude=self._inflight) if free > 0 else []
            self._inflight.update(refs)
        for ref in refs:
            self._queue.put_nowait(ref)
        return len(refs)

    # -- workers --------------------------------------------------------------------------
    def _worker(self) -> None:
        while True:
            ref = self._queue.get()
            if ref is None:
                return
            try:
                if not self._stop.is_set():
                    self._process(ref)
            except Exception:  # a bug in mlaudit: log it, give the run back, keep watching
                log.exception("run %s: unexpected error", ref)
                self.store.release(ref)
            finally:
                with self._mu:
                    self._inflight.discard(ref)
                self._wake.set()

    def _process(self, ref: str) -> None:
        if not self.store.claim(ref):
            return
        interrupts = (self.store.get(ref) or {}).get("interrupts", 0)
        if interrupts >= self.cfg.max_interrupts:  # the watcher died on this run every time
            self.store.fail(
                ref,
                RunResult(
                    ref=ref,
                    ok=False,
                    error=f"the watcher stopped during {interrupts} attempts on this run",
                ),
                retry_at=None,
            )
            log.error(
                "run %s: gave up: the watcher stopped during %d attempts on it", ref, interrupts
            )
            return
        owner = getattr(self, "owner", None) or "mlaudit-watch"
        deferred: list[str] = []
        loaded = []

        def after_load(run) -> str | None:
            loaded.append(run)
            reason = self.source.skip_reason(run)
            if reason:
                return reason
            refused = self.source.claim(run, owner, self.cfg.claim_lease_s)
            if refused:
                deferred.append(refused)
                return refused
            return None

        reports = []  # kept for the notification sent once the run is done

        def before_write(report) -> bool:
            reports.append(report)
            v = report.verdict
            log.info(
                "run %s: audited: %s / %s (%.2f)", ref, v.outcome.value, v.cause.value, v.confidence
            )
            self._test_pause("after_audit")
            if self._stop.is_set():  # shutting down before writing: give the run back
                return False
            return self.store.begin_write(ref)

        res = audit_one(
            self.source, ref, self.settings, after_load=after_load, before_write=before_write
        )
        if deferred:  # another watcher holds the run: look again when its lease ends
            retry = time.time() + min(self.cfg.claim_lease_s, max(self.cfg.poll_interval_s, 5.0))
            if self.store.defer(ref, retry, deferred[0]):
                log.info("run %s: %s; looking again later", ref, deferred[0])
            return
        if loaded and res.ok and res.wrote:
            self.source.release_claim(loaded[0], owner)
        if res.released:
            if self.store.release(ref):
                log.info("run %s: released unwritten (shutting down)", ref)
            return
        if res.ok:
            if res.wrote:
                log.info("run %s: wrote verdict %s / %s", ref, res.outcome, res.cause)
                self._test_pause("after_write")
            else:
                log.info("run %s: %s, recorded without writing", ref, res.note)
            self.store.finish(ref, res)
            self.audited += 1
            if res.wrote and reports:
                self._notify(reports[-1])
            return
        self._failed(ref, res)

    def _notify(self, report) -> None:
        """Post a written verdict to the ``[tool.mlaudit.notify]`` targets (``--notify``).

        After ``done``, so a crash never notifies twice (at most once); bounded in time and
        never raises (see :mod:`mlaudit_core.notify`).
        """
        if self.settings.notify:
            from ..notify import notify

            notify(report, self.settings)

    def _failed(self, ref: str, res: RunResult) -> None:
        if res.permanent:  # no such run, a malformed ref...: retrying cannot help, no outage
            self.store.fail(ref, res, retry_at=None)
            log.error("run %s: gave up: %s", ref, res.error)
            return
        self._healthy = False  # dispatch waits for the tracker to answer a listing again...
        # ...which comes no later than the first retry (a pushed-runs watcher may list rarely)
        self._relist_at = time.monotonic() + min(self.cfg.poll_interval_s, self.cfg.retry_base_s)
        attempts = (self.store.get(ref) or {}).get("failures", 0) + 1  # this one included
        if attempts >= self.cfg.max_attempts:
            self.store.fail(ref, res, retry_at=None)
            log.error("run %s: gave up after %d failed attempts: %s", ref, attempts, res.error)
        else:
            delay = min(self.cfg.max_backoff_s, self.cfg.retry_base_s * 2 ** (attempts - 1))
            self.store.fail(ref, res, retry_at=time.time() + delay)
            log.warning(
                "run %s: attempt %d failed: %s; retrying in %.0f s", ref, attempts, res.error, delay
            )

    def _test_pause(self, stage: str) -> None:
        if stage in self._pause:
            self._stop.wait(self._pause[stage])

    # -- shutdown -------------------------------------------------------------------------
    def _shutdown(self, workers: list[threading.Thread]) -> None:
        self._stop.set()
        while True:  # queued runs were never claimed: they stay pending in the state file
            try:
                ref = self._queue.get_nowait()
            except queue.Empty:
                break
            if ref is not None:
                with self._mu:
                    self._inflight.discard(ref)
        for _ in workers:
            self._queue.put(None)
        deadline = time.monotonic() + self.cfg.grace_s
        for w in workers:
            while w.is_alive() and time.monotonic() < deadline and not self._hurry.is_set():
                w.join(0.2)
        with self._mu:
            left = list(self._inflight)
        for ref in left:
            if self.store.release(ref):
                log.warning("run %s: released unfinished at shutdown", ref)
        log.info("stopped (%d run(s) audited in this session)", self.audited)


def _is_outage(exc: BaseException) -> bool:
    """A listing failure to retry: anything but a stop or a configuration problem (an
    :class:`MlauditError` other than :class:`TrackerUnavailable`)."""
    if isinstance(exc, _Stopped):
        return False
    return isinstance(exc, TrackerUnavailable) or not isinstance(exc, MlauditError)


def _parse_pause(value: str) -> dict[str, float]:
    out = {}
    for part in filter(None, (p.strip() for p in value.split(","))):
        stage, _, secs = part.partition(":")
        out[stage] = float(secs or 0)
    return out
