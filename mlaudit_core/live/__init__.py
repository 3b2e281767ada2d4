"""Live triage: follow runs while they run, alert once per episode, stop where asked.

* :mod:`.detectors`: the live findings (LV001-LV007), incremental and O(1) per point.
* :mod:`.episodes`: episodes, cooldown, recovery, exactly-once bookkeeping in the state file,
  the alert messages.
* :mod:`.sources`: MLflow and TensorBoard tails (only what is new since the last poll).
* :mod:`.monitor`: :class:`LiveMonitor`, the poll loop (``mlaudit watch ... --live``).
* :mod:`.inprocess`: :class:`LiveGuard`, the per-log-step check the ``mlaudit.hooks``
  callbacks run with ``stop_on=``.

See docs/live.md.
"""

from __future__ import annotations

from .detectors import CODES, STOP_NAMES, LiveRun, LiveThresholds, parse_stop_on
from .monitor import LiveConfig, LiveMonitor

__all__ = [
    "CODES",
    "STOP_NAMES",
    "LiveConfig",
    "LiveMonitor",
    "LiveRun",
    "LiveThresholds",
    "parse_stop_on",
]
