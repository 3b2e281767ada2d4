"""CLI glue for ``--live``: options to :class:`LiveConfig`, the monitor thread, the
live-only watcher (``mlaudit watch tensorboard LOGDIR --live``)."""

from __future__ import annotations

import logging
import signal
import threading

from .detectors import LiveThresholds, parse_stop_on
from .monitor import LiveConfig, LiveMonitor, watching

log = logging.getLogger("mlaudit.live")


def live_config(
    poll_interval: float, stop_on: str | None, stall_floor: float, cooldown: float
) -> LiveConfig:
    """Raises ValueError on an unknown ``--stop-on`` name."""
    return LiveConfig(
        poll_interval_s=poll_interval,
        stop_on=parse_stop_on(stop_on),
        cooldown_s=cooldown,
        thresholds=LiveThresholds(stall_floor_s=stall_floor),
    )


class MonitorThread:
    """A :class:`LiveMonitor` polling in a daemon thread next to the watcher's loop."""

    def __init__(self, source, store, settings, cfg: LiveConfig, once: bool = False) -> None:
        self.monitor = LiveMonitor(source, store, settings, cfg)
        self.once = once
        self.thread = threading.Thread(target=self._run, name="mlaudit-live", daemon=True)

    def _run(self) -> None:
        if self.once:
            try:
                self.monitor.poll_once()
            except Exception as exc:  # noqa: BLE001
                log.warning("live poll failed: %s", exc)
            return
        self.monitor.run()

    def start(self) -> MonitorThread:
        self.thread.start()
        return self

    def stop(self, timeout: float = 30.0) -> None:
        self.monitor.stop_event.set()
        self.thread.join(timeout)


def run_live_only(source, store, settings, cfg: LiveConfig, once: bool = False) -> int:
    """Poll until SIGTERM/SIGINT (or one poll with ``once``); returns 0."""
    mon = LiveMonitor(source, store, settings, cfg)
    if once:  # one line, so a --once that alerted nothing still prints what it looked at
        st = mon.poll_once()
        log.info(
            "live, one poll of %s (state %s): %d run(s) followed, %d point(s) read, %d "
            "alert event(s)",
            watching(source),
            store.path,
            st.runs,
            st.points,
            st.events,
        )
        return 0
    handlers = {}
    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGTERM, signal.SIGINT):
            handlers[sig] = signal.signal(sig, lambda *_: mon.stop_event.set())
    try:
        log.info("watching %s live (state %s)", watching(source), store.path)
        mon.run()
    finally:
        for sig, h in handlers.items():
            signal.signal(sig, h)
        log.info("live watcher stopped")
    return 0
