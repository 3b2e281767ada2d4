"""SY001 throughput-drop."""

from __future__ import annotations

import numpy as np

from ..report import Cause, Finding, Hypothesis, Outcome, SeriesEvidence, Severity
from ..roles import Role
from ..rundata import Series
from ..signal import fmt
from ._context import wall_step_times
from ._knowledge import hyp, said, time_not_convergence
from .base import Detector, DetectorParams, Remedy, Skip

#: A step-time series is a running total (time since the start) when it almost never falls and its
#: value per step at the end of each quarter stays within this factor of the others: a per-step time
#: that grows (a leak) is far higher per step late than early, a running total grows with the step count.
CUMULATIVE_RATIO = 1.5
#: ... allowing this share of falls between consecutive points (a stray value of another line parsed
#: into the same series, a counter reset at a relaunch).
CUMULATIVE_FALLS = 0.05


def per_step_time(s: Series) -> Series:
    """``s`` itself, or, when it is a running total of time (:data:`CUMULATIVE_RATIO`,
    :data:`CUMULATIVE_FALLS`), the time of each interval divided by the steps in it. A console's
    ``train_time:5695652ms`` beside ``step:4300/4300`` is the time since the start, and 1 / it is no
    throughput (own corpus f10b2-08: a modded-nanogpt log, step_avg steady at 1.32 s, read as an 81%
    throughput fall)."""
    v, st = s.values, s.steps.astype(np.float64)
    if len(v) < 8 or float(st[0]) < 0 or float(st[-1]) <= 0:
        return s
    if float((np.diff(v) < 0).mean()) > CUMULATIVE_FALLS:
        return s
    idx = [len(v) // 4, len(v) // 2, 3 * len(v) // 4, len(v) - 1]
    if any(float(st[i]) <= 0 for i in idx):
        return s
    per = np.array([float(v[i]) / float(st[i]) for i in idx])
    if float(per.min()) <= 0 or float(per.max()) > CUMULATIVE_RATIO * float(per.min()):
        return s
    dt, dn = np.diff(v), np.diff(st)
    keep = (dn > 0) & (dt >= 0)
    return Series(s.key, s.steps[1:][keep], dt[keep] / dn[keep], s.wall_times[1:][keep])


class ThroughputDrop(Detector, code="SY001", name="throughput-drop", family="systems"):
    """Throughput in the last part of the run is well below the early steady state.

    Why it matters: a run that slows down over time (memory fragmentation, a
    growing data structure, thermal throttling, a shared disk filling up) costs
    more the longer it runs, and usually gets worse.
    Evidence: median throughput of the first steady quarter (after ``skip_frac``
    warm-up/compile points) vs the last quarter, and the ratio. Uses the
    throughput series, or 1 / step time when only step time is logged, or 1 / the step time read
    from the records' own wall times when neither is (``_context.wall_step_times``).
    Remedy: profile a late step against an early one; look for host-memory
    growth, recompilation, or I/O contention.
    Thresholds: a drop of more than ``max_drop`` 30% (convention: run-to-run
    throughput jitter on shared clusters is typically within 10-15%), costing at least
    ``min_lost_seconds`` 0.5 s over the last quarter when the wall time is known (so scheduler
    noise on sub-millisecond toy steps is not reported; measured on a loaded 2-core machine,
    where such runs lose under 0.3 s to jitter).
    Severity: error when the slowdown is progressive, the median of each quarter at least
    ``min_quarter_drop`` 5% below the one before (a per-step cost that grows with the run: a leak,
    fragmentation, a growing structure, lowers every quarter from the start); warning when the drop
    is at least ``severe_drop`` 50% and sustained: the last quarter, of at least
    ``min_quarter_points`` 8 points, has its upper quartile below the first quarter's lower quartile
    (every late step takes twice as long or more, to the end: a loader that slowed for good,
    tests/data/newuser12 hf_loader_slowed_at_step_50.log, 1-3.4 it/s early, 0.35-0.39 it/s in the
    last quarter; the healthy timm-style console of tests/data/logs/frameworks, whose 5 step times a
    quarter swing 0.001-0.7 s with the machine's load, overlaps and stays at info); info otherwise. A
    slowdown that starts mid-run, as a step or a ramp, has the shape of other jobs' load arriving on
    a shared machine (a healthy run on a busy 2-core machine; the generated
    corpus, made on such a machine, has a healthy run whose throughput holds for half the run then
    falls 18% and 39%), and without a cause in the data (data wait SY002, time outside training SY005)
    it is not a verdict. SY001 fires on no artifact of the real corpora, so no real figure bounds
    this; 5% is half the lower end of the 10-15% run-to-run jitter convention above.
    """

    implies = "slow"
    slow_rank = 3

    @classmethod
    def hypotheses(cls, finding: Finding, outcome: Outcome) -> list[Hypothesis] | None:
        """A slowdown: a per-step cost that grows (progressive) against a machine that slowed."""
        grows = bool(finding.facts.get("progressive"))
        return [
            hyp(
                "a per-step cost that grows (host-memory growth, a growing structure, recompilation)",
                "supported" if grows else "open",
                Cause.CORRECTNESS_BUG,
                "profile an early and a late step; compare host memory over the run",
                for_=said(finding) if grows else [],
            ),
            hyp(
                "the machine slowed (thermal throttling, shared storage or network contention, other jobs)",
                "open",
                Cause.INFRA_RUNTIME,
                "rerun the late steps alone on an idle node: the same speed as early means the machine",
            ),
            time_not_convergence(),
        ]

    #: Its finding is a point of the report's timeline under this name.
    timeline_event = "slowdown"

    remedies = (
        Remedy(
            "Profile a late step against an early one (host memory, recompilation, I/O contention)",
            "throughput fell during the run, so something accumulates",
            "hours",
        ),
    )

    class Params(DetectorParams):
        max_drop: float = 0.3
        skip_frac: float = 0.05
        min_points: int = 20
        min_lost_seconds: float = 0.5
        min_quarter_drop: float = 0.05
        severe_drop: float = 0.5
        min_quarter_points: int = 8

    def check(self, run, p):
        key = run.key_for(Role.THROUGHPUT)
        invert = False
        if key is None:
            key, invert = run.key_for(Role.STEP_TIME), True
        if key is None:
            got = wall_step_times(run)
            if got is None:
                raise Skip("no throughput or step time series logged, and no per-point wall times")
            key, invert = got[0], True
            s = Series(key, got[1], got[2], got[3])
        else:
            s = run.series(key).by_step().finite()
            if invert:
                s = per_step_time(s)  # a running total of time is no step time
        if len(s) < p.min_points:
            raise Skip(f"{key} has {len(s)} points (< {p.min_points})")
        v = s.values[int(len(s) * p.skip_frac) :]
        if invert:
            v = 1.0 / np.maximum(v, 1e-12)
        q = max(len(v) // 4, 1)
        early, late = float(np.median(v[:q])), float(np.median(v[-q:]))
        if early <= 0:
            return
        drop = 1 - late / early
        if drop <= p.max_drop:
            return
        w = s.wall_times[-max(len(s) // 4, 1) :]
        if np.isfinite(w).all() and w.size > 1 and (w[-1] - w[0]) * drop < p.min_lost_seconds:
            return  # the slowdown is real in ratio but too small in seconds to act on
        unit = "steps/s (1/step time)" if invert else ""
        m2, m3 = float(np.median(v[q : 2 * q])), float(np.median(v[2 * q : 3 * q]))
        keep = 1 - p.min_quarter_drop
        progressive = bool(m2 <= keep * early and m3 <= keep * m2 and late <= keep * m3)
        shape = (
            "falling in every quarter from the start: a per-step cost growing with the run"
            if progressive
            else "not falling in every quarter from the start; with no data wait or time outside training "
            "in the data it may be load from other jobs on the machine"
        )
        head, tail = v[:q], v[-q:]
        sustained = bool(
            drop >= p.severe_drop
            and len(tail) >= p.min_quarter_points
            and float(np.quantile(tail, 0.75)) < float(np.quantile(head, 0.25))
        )
        if sustained and not progressive:
            shape = (
                f"a step down to {fmt(100 * (1 - drop), 3)}% of the early rate that held to the end (the "
                "last quarter's upper quartile below the first's lower quartile): each late step takes "
                f"{fmt(1 / max(1 - drop, 1e-12), 3)}x as long"
            )
        yield self.finding(
            Severity.ERROR if progressive else Severity.WARNING if sustained else Severity.INFO,
            f"throughput fell {fmt(100 * drop, 3)}%: {fmt(early)} early vs {fmt(late)} {unit} in the last "
            f"quarter ({key}), {shape}",
            evidence=[
                SeriesEvidence(
                    metric=key,
                    step_start=int(s.steps[0]),
                    step_end=int(s.steps[-1]),
                    values={"early_median": early, "late_median": late, "drop": drop},
                )
            ],
            key=key,
            early=early,
            late=late,
            drop=drop,
            from_step_time=invert,
            progressive=progressive,
            quarter_medians=[early, m2, m3, late],
        )
