"""The live monitor: poll running runs, feed their tails to the live detectors, alert once.

One poll (:meth:`LiveMonitor.poll_once`):

1. list the running runs (one tracker request per 1,000 runs); a listing that carries each
   key's latest value (MLflow) is checked at once for a non-finite loss (the fast path: that
   alert does not wait for the tails);
2. read what is new on each since its cursor (:mod:`.sources`);
3. feed the tail to the run's :class:`~mlaudit_core.live.detectors.LiveRun` (its summary
   of everything earlier) and take the conditions that hold now;
4. open/close episodes (:func:`~mlaudit_core.live.episodes.reconcile`, committed first), then
   post alerts and "recovered" messages to ``--notify`` targets, write the run's
   ``mlaudit.live`` tag and ``mlaudit/live.json``, and request a stop for ``--stop-on``;
5. a run no longer listed as running: its open episodes close silently and its live tag is
   marked superseded (the watcher's post-hoc audit writes the verdict);
6. save every run's summary and cursor in one transaction.

A failing tracker request is logged and retried at the next poll (state is saved only
after a complete poll, so nothing is skipped). Runs in the same loop thread as nothing
else: :meth:`run` blocks until ``stop`` is set; ``mlaudit watch ... --live`` runs it in a
thread next to the watcher's own loop.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass, field

from .detectors import LiveRun, LiveThresholds, is_system_key, stop_name
from .episodes import COOLDOWN_S, LiveStore, close_all, live_doc, live_tag, reconcile, send

log = logging.getLogger("mlaudit.live")

#: Ended runs' live rows are forgotten after a week (as the watcher prunes settled runs).
PRUNE_AFTER_S = 7 * 86400.0


@dataclass
class LiveConfig:
    """Live options. ``poll_interval_s``: seconds between polls; ``stop_on``: stop names
    (:data:`~mlaudit_core.live.detectors.STOP_NAMES`); ``write_back``: write the live tag and
    artifact onto the run."""

    poll_interval_s: float = 30.0
    stop_on: tuple[str, ...] = ()
    cooldown_s: float = COOLDOWN_S
    thresholds: LiveThresholds = field(default_factory=LiveThresholds)
    write_back: bool = True


@dataclass
class PollStats:
    runs: int = 0
    points: int = 0
    events: int = 0
    requests: int = 0
    cpu_s: float = 0.0
    wall_s: float = 0.0
    #: CPU seconds of the whole process during the poll (every thread: the listing thread of
    #: the fast path too), ``time.process_time``; ``cpu_s`` is the poll thread's alone
    proc_cpu_s: float = 0.0


def watching(source) -> str:
    """What a live source follows, for the log: its ``watching`` text (local folders and
    files name themselves: ``1 local path: /runs/tb3``), else ``running runs of <tracker>``."""
    return getattr(source, "watching", None) or f"running runs of {source.tracker}"


class LiveMonitor:
    """Follow the running runs of one source (see the module docstring)."""

    def __init__(self, source, store, settings, config: LiveConfig) -> None:
        self.source, self.settings, self.cfg = source, settings, config
        self.lstore = LiveStore(store)
        self._runs: dict[str, LiveRun] = {}
        self._cursors: dict[str, dict] = {}
        self._infos: dict[str, dict] = {}
        self.stop_event = threading.Event()
        self.last_stats = PollStats()
        self.sent: list = []  # (event, deliveries) of this process, for tests and the benchmark
        self.history: list[PollStats] = []
        self._mu = threading.RLock()

    def _get(self, ref: str) -> LiveRun:
        if ref not in self._runs:
            row = self.lstore.load_run(ref)
            self._runs[ref] = LiveRun.from_json(row["state"] if row else None)
            self._cursors[ref] = row["cursor"] if row else {}
        return self._runs[ref]

    def _fast(self, infos, stats: PollStats | None = None) -> dict[str, dict]:
        """The listing's part (under the lock): progress (newest step and time of any training
        key) and the fast non-finite check on each key's latest value."""
        fasts: dict[str, dict] = {}
        now = time.time()
        with self._mu:
            for info in infos:
                lr = self._get(info.ref)
                train = [v for k, v in info.latest.items() if not is_system_key(k)]
                if train:
                    lr.feed_progress(max(s for s, _ in train), max(w for _, w in train), now)
                if not info.values:
                    continue
                fast = fasts[info.ref] = lr.latest_conditions(
                    {k: (*info.latest[k], v) for k, v in info.values.items() if k in info.latest}
                )
                if fast:
                    events = reconcile(
                        self.lstore,
                        info.ref,
                        fast,
                        stop_on=self.cfg.stop_on,
                        cooldown_s=self.cfg.cooldown_s,
                        close_missing=False,
                    )
                    if events:
                        self._deliver(info, events)
                        if stats is not None:
                            stats.events += len(events)
        return fasts

    def fast_once(self) -> int:
        """List the running runs and run only the fast path (see :meth:`run`); returns the
        number of runs listed."""
        listed = self.source.list_running()
        self._fast(list(listed.values()))
        return len(listed)

    def poll_once(self) -> PollStats:
        t0, c0, p0 = time.monotonic(), time.thread_time(), time.process_time()
        listed_at = time.time()
        req0 = getattr(self.source, "requests", 0)
        stats = PollStats()
        listed = self.source.list_running()
        infos = list(listed.values())
        fasts = self._fast(infos, stats)
        with self._mu:
            need = {
                i.ref: self._runs[i.ref].needed_keys([k for k in i.latest if not is_system_key(k)])
                for i in infos
                if i.latest
            }
        tails = self.source.read(infos, self._cursors, need if need else None)
        now = time.time()
        rows = []
        with self._mu:
            for info in infos:
                rows.append(self._poll_run(info, tails.get(info.ref), fasts, now, listed_at, stats))
            rows += self._ended_runs(listed)
            self.lstore.save_runs(rows)
            self.lstore.prune(time.time() - PRUNE_AFTER_S)
        stats.runs = len(infos)
        stats.requests = getattr(self.source, "requests", 0) - req0
        stats.cpu_s = time.thread_time() - c0
        stats.proc_cpu_s = time.process_time() - p0
        stats.wall_s = time.monotonic() - t0
        self.last_stats = stats
        self.history.append(stats)
        return stats

    def _poll_run(self, info, tail, fasts: dict, now: float, listed_at: float, stats: PollStats):
        """One running run in a poll: its new points, system heartbeat and console lines fed to its
        live detectors, the conditions that hold now reconciled with the open episodes (a
        condition closes only on new training points), the events delivered; returns its row."""
        th = self.cfg.thresholds
        lr = self._runs[info.ref]
        if tail is not None:
            lr.feed(tail.points, now, th)
            if tail.system_wall is not None:
                lr.feed_system(tail.system_wall, now)
            if tail.console:
                lr.feed_console(tail.console)
            stats.points += sum(len(v[2]) for v in tail.points.values())
            for note in tail.notes:
                log.info("run %s: %s", info.ref, note)
        conds = {
            **fasts.get(info.ref, {}),
            **lr.conditions(
                now,
                th,
                running=True,
                status_known=getattr(self.source, "has_status", True),
                no_console=getattr(self.source, "no_console", None),
            ),
        }
        # a condition clears only on new evidence: training points that arrived in this
        # poll (a poll that read nothing new, e.g. as a stopped run ends, closes nothing;
        # a full CI run once saw alert, 'recovered', alert on a run NaN to its end)
        fresh = tail is not None and any(
            len(v[2]) for k, v in tail.points.items() if not is_system_key(k)
        )
        events = reconcile(
            self.lstore,
            info.ref,
            conds,
            stop_on=self.cfg.stop_on,
            cooldown_s=self.cfg.cooldown_s,
            now=now,
            close_missing=fresh,
            seen_since=listed_at,
            seen_step=lr.iv_step,
        )
        if events:
            self._deliver(info, events)
            stats.events += len(events)
        info_doc = {"name": info.name, "url": info.url, "project": info.project}
        return (info.ref, "running", lr.to_json(), self._cursors[info.ref], info_doc)

    def _ended_runs(self, listed: dict) -> list:
        """The runs monitored as running that the listing no longer shows and whose status says
        they ended: their open episodes closed, the live tag marked superseded (with write-back),
        their rows; a run listed a moment ago (page edge) waits for the next poll."""
        rows: list = []
        for ref in self.lstore.refs("running"):
            if ref in listed:
                continue
            st = self.source.status(ref)
            if st == "running":  # listed a moment ago or page edge: next poll
                continue
            n = close_all(self.lstore, ref)
            if st == "ended" and self.cfg.write_back and self.lstore.episodes(ref):
                try:
                    self.source.end_live(ref)
                except Exception as exc:  # noqa: BLE001 - cosmetic; the verdict follows
                    log.warning("run %s: could not mark the live tag superseded: %s", ref, exc)
            log.info("run %s: %s; live monitoring ends (%d open episode(s) closed)", ref, st, n)
            row = self.lstore.load_run(ref) or {}
            rows.append(
                (
                    ref,
                    st,
                    row.get("state") or {},
                    row.get("cursor") or {},
                    row.get("info") or {},
                )
            )
            self._runs.pop(ref, None)
            self._cursors.pop(ref, None)
        return rows

    def _deliver(self, info, events) -> None:
        of = getattr(self.source, "tracker_of", None)  # a composite: the source that listed it
        run = info.run_ref(of(info.ref) if of else self.source.tracker)
        for ev in events:
            f = ev.finding
            if ev.kind == "alert":
                log.warning("run %s: LIVE %s %s: %s", info.ref, f.code, f.name, f.message)
            else:
                log.info("run %s: recovered: %s (%s)", info.ref, f.name, f.code)
            deliveries = send(ev, run, self.settings)
            self.sent.append((ev, deliveries))
            if ev.stop:
                try:
                    what = self.source.request_stop(info.ref, f"{f.code} {f.name}: {f.message}")
                    log.warning(
                        "run %s: stop requested (--stop-on %s): %s",
                        info.ref,
                        stop_name(f.code),
                        what,
                    )
                except Exception as exc:  # noqa: BLE001
                    log.error("run %s: stop request failed: %s", info.ref, exc)
        if self.cfg.write_back:
            try:
                self.source.write_live(
                    info.ref, live_tag(info.ref, self.lstore), live_doc(info.ref, self.lstore, run)
                )
            except Exception as exc:  # noqa: BLE001 - the alert went out; the tag is retried next event
                log.warning(
                    "run %s: could not write the live finding onto the run: %s", info.ref, exc
                )

    def run(self) -> None:
        """Poll every ``poll_interval_s`` until :attr:`stop_event` is set; never raises for a
        tracker outage (logged, retried at the next poll).

        When the listing carries latest values (MLflow), a second thread lists the runs every
        ``poll_interval_s`` for the fast path alone, so a NaN loss is alerted within one
        interval even when reading the tails of many runs takes longer than that.
        """
        log.info("live: polling %s every %g s", watching(self.source), self.cfg.poll_interval_s)
        fast = None
        if getattr(self.source, "lists_latest_values", False):
            fast = threading.Thread(
                target=self._loop,
                args=(self.fast_once, "live listing"),
                name="mlaudit-live-fast",
                daemon=True,
            )
            fast.start()
        self._loop(self.poll_once, "live poll")
        if fast is not None:
            fast.join(30)

    def _loop(self, fn, what: str) -> None:
        while not self.stop_event.is_set():
            t0 = time.monotonic()
            try:
                fn()
            except Exception as exc:  # noqa: BLE001 - an outage: next poll
                log.warning(
                    "%s failed: %s: %s; retrying at the next poll",
                    what,
                    type(exc).__name__,
                    str(exc).splitlines()[0] if str(exc) else "",
                )
            self.stop_event.wait(max(0.0, self.cfg.poll_interval_s - (time.monotonic() - t0)))
