"""Whether a tracker's RUNNING status still describes a live run.

A tracker without a heartbeat (MLflow's stores) keeps a run RUNNING until ``end_run`` is called:
a process that crashed, was killed, or a notebook closed without ending the run leaves it
RUNNING forever. W&B applies the rule the store cannot: a run whose process stopped sending
heartbeats without ``wandb.finish()`` is marked Crashed (docs.wandb.ai, "Why is my run showing as
crashed?"; mlaudit's W&B reader does the same from the records' wall times, ``_silence``).
:func:`abandoned` applies it to any tracker from the run's own timestamps: a run silent for
longer than its own cadence allows (:func:`silence_limit`) is not running; its status says only
that it was never closed.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone

import numpy as np

from ..plan import planned_lengths
from ..rundata import RunData, RunStatus

#: Days without any write after which a RUNNING run with fewer than :data:`MIN_TIMED` timed
#: records (no cadence to measure) is abandoned. A live training run writes at least once per
#: epoch or evaluation; 30 days is far beyond any logging interval of the own corpus (its longest
#: epochs are hours) and far below the age of the abandoned stores in it (own f6b2-22, f18b1-11,
#: f18b2-06, realworld mlf04: 1-4 years).
ABANDONED_AFTER_DAYS = 30.0
#: Timed records a run needs before its own cadence sets the limit.
MIN_TIMED = 3
#: With a cadence: silent for more than the largest of this floor, ``CADENCE_MEDIANS`` x the median
#: interval between its writes and ``CADENCE_LONGEST`` x the longest interval it already had (an
#: evaluation or a checkpoint that took that long may come again). The W&B reader uses 600 s and 5x
#: the median (a live W&B run also writes system metrics every 15 s); a store without a heartbeat
#: gets a 30-minute floor.
SILENCE_FLOOR_S = 1800.0
CADENCE_MEDIANS = 5.0
CADENCE_LONGEST = 2.0


@dataclass(frozen=True)
class Abandoned:
    """A RUNNING status that is stale: ``last`` is the run's last write, ``days`` its age at the
    audit (days), ``status`` the status the verdict reads instead (``KILLED`` when the run states a
    planned length, i.e. a training loop that closes its run at its end: the process ended
    without closing it; ``UNKNOWN`` otherwise: a notebook's runs that were never ended say
    nothing of how their work ended)."""

    last: datetime
    days: float
    status: RunStatus

    def sentence(self) -> str:
        how = (
            "its process ended without closing the run (a crash, a kill or a closed session: W&B "
            "marks such a run crashed when its heartbeats stop)"
            if self.status is RunStatus.KILLED
            else "the run was never closed, and nothing in it says how its work ended"
        )
        age = f"{self.days:,.0f} days" if self.days >= 2 else f"{self.days * 24:,.1f} hours"
        return (
            f"The tracker still says RUNNING, but the run's last write ({self.last:%Y-%m-%d %H:%M} "
            f"UTC) is {age} before this audit, longer than it was ever silent: it is not running; "
            f"{how}."
        )


def _write_times(run: RunData) -> np.ndarray:
    """The wall times (s since the epoch, sorted, distinct) of the run's records; its start and end
    when no record carries one (a run that logged nothing wrote only its creation)."""
    parts = [np.zeros(0)]
    for k in run.metrics.keys:
        w = run.metrics.series(k).wall_times
        parts.append(w[np.isfinite(w)])
    t = np.unique(np.concatenate(parts))
    if t.size:
        return t
    return np.unique([x.timestamp() for x in (run.start_time, run.end_time) if x is not None])


def last_write(run: RunData) -> datetime | None:
    """The latest wall time of the run's records, else its start or end (UTC); ``None`` without any."""
    t = _write_times(run)
    return datetime.fromtimestamp(float(t[-1]), tz=timezone.utc) if t.size else None


def silence_limit(run: RunData) -> float:
    """Seconds a live run stays silent: with at least :data:`MIN_TIMED` distinct write times, the
    largest of :data:`SILENCE_FLOOR_S`, :data:`CADENCE_MEDIANS` x their median interval and
    :data:`CADENCE_LONGEST` x their longest; without, :data:`ABANDONED_AFTER_DAYS`."""
    t = _write_times(run)
    if t.size < MIN_TIMED:
        return ABANDONED_AFTER_DAYS * 86400
    gaps = np.diff(t)
    return max(
        SILENCE_FLOOR_S,
        CADENCE_MEDIANS * float(np.median(gaps)),
        CADENCE_LONGEST * float(gaps.max()),
    )


def abandoned(run: RunData, now: datetime | None = None) -> Abandoned | None:
    """The stale RUNNING status of ``run``, or ``None`` (not RUNNING, no timestamp, or a write
    within :func:`silence_limit` of ``now``, default the current UTC time)."""
    if run.status is not RunStatus.RUNNING or run.identity.tracker == "logs":
        # the log reader's RUNNING is an observation (the file grew while it was read), not a status
        # a tracker stored and nobody ended
        return None
    last = last_write(run)
    if last is None:
        return None
    age = ((now or datetime.now(timezone.utc)) - last).total_seconds()
    if age <= silence_limit(run):
        return None
    status = RunStatus.KILLED if planned_lengths(run) else RunStatus.UNKNOWN
    return Abandoned(last, age / 86400, status)
