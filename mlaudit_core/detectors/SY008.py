"""SY008 summary-time-swings."""

from __future__ import annotations

import numpy as np

from ..report import Cause, Finding, Hypothesis, Outcome, SeriesEvidence, Severity
from ..roles import Role
from ..signal import fmt
from ._knowledge import hyp, said, time_not_convergence
from .base import Detector, DetectorParams, Remedy, Skip


class SummaryTimeSwings(Detector, code="SY008", name="summary-time-swings", family="systems"):
    """A sparse timing series (one time per epoch, or per logging interval) doubles or grows.

    Why it matters: frameworks that print a time per epoch (nnU-Net ``This epoch took N s``) or an
    average over each logging interval (Megatron ``elapsed time per iteration (ms)``) average away
    the per-step jitter: when such a figure doubles between epochs of the same work, or grows at
    every interval, the machine, its storage or the job's own per-step cost changed, even while the
    learning curves look fine.
    Evidence: the step-time series (epoch times read as the step time of an epoch axis), its
    smallest and largest value after the first point, and whether it grew at every point (every
    interval up and no one interval holding more than 3/4 of the rise: a steady growth spreads
    its rise, a step between two flat stretches puts it in one interval).
    Remedy: compare the slow epochs' time with the machine's load (other jobs, I/O wait, thermal
    throttling, a network file system); a time per iteration that grows with the iteration is a
    per-step cost that grows (a leak, a growing structure).
    The series is one of summaries when its points are epochs (the log's step axis) or at least 2 steps
    apart (an average over a logging interval); per-step times logged at consecutive steps jitter
    2x on their own (the litgpt log of shared/cases/fp16-true-nan-after-first-step: 1.04-2.15 s).
    Thresholds: only series of fewer than ``max_points`` 20 points (SY001 and SY004, which need
    that many per-step points, judge the longer ones); at least ``min_points`` 3 after the first,
    which is skipped (start-up, compilation). The largest value at ``factor`` 2x the smallest or
    more (a step that doubled: SY004's pause factor), or at least ``factor`` x growth from first to
    last with a rise at every point (read from the first point on when it rises from there: start-up
    makes the first point slower, never faster, so a series rising from it has nothing to skip; the
    3-point Megatron paste of report b2-14). Each value being an average of many steps, a 2x swing is a
    sustained change, not jitter. The time the points above the smallest cost adds up to at least
    ``min_lost_seconds`` 0.5 s (SY004's figure, also a total: a millisecond step that doubles on a loaded
    machine is scheduling jitter, not a slowdown to act on); a point of a series logged every k steps
    stands for k steps (nanoGPT's ``time 300ms -> 650ms`` every 10 iterations costs 3.5 s per point),
    an epoch time for its epoch. Step times are read in seconds.
    """

    slow_rank = 4

    remedies = (
        Remedy(
            "Compare the slow epochs' time with the machine's load at that time (other jobs, I/O wait, "
            "thermal throttling, a network file system)",
            "tells a machine that slowed from a per-step cost of the job that grows",
            "minutes",
        ),
        Remedy(
            "Profile an early and a late iteration (torch.profiler) and compare host memory between them",
            "a per-step cost that grows (a leak, a growing structure) shows as an op or a memory that grows",
            "hours",
        ),
    )

    @classmethod
    def hypotheses(cls, finding: Finding, outcome: Outcome) -> list[Hypothesis] | None:
        """A summary time that doubles or grows: the job's own per-step cost against the machine."""
        grew = bool(finding.facts.get("grew"))
        return [
            hyp(
                "a per-step cost of the job that grows (a leak, a growing structure)",
                "supported" if grew else "open",
                Cause.CORRECTNESS_BUG,
                "profile an early and a late iteration",
                for_=said(finding) if grew else [],
            ),
            hyp(
                "the machine, its storage or its network slowed",
                "open",
                Cause.INFRA_RUNTIME,
                "the node's load and I/O wait during the slow epochs",
                for_=[] if grew else said(finding),
            ),
            time_not_convergence(),
        ]

    class Params(DetectorParams):
        max_points: int = 20
        min_points: int = 3
        factor: float = 2.0
        min_lost_seconds: float = 0.5

    def check(self, run, p):
        key = run.key_for(Role.STEP_TIME)
        if key is None:
            raise Skip("no step or epoch time series logged")
        s = run.series(key).by_step().finite()
        if len(s) >= p.max_points:
            raise Skip(f"{key} has {len(s)} points: the per-step detectors (SY001, SY004) judge it")
        by_epoch = run.params.get("log.step_axis") == "epoch" or self._one_epoch_each(run, s.steps)
        if not by_epoch and len(s) > 1 and int(np.min(np.diff(s.steps))) < 2:
            raise Skip(f"{key} is logged at consecutive steps: per-step times, not averages")
        v, steps = s.values[1:], s.steps[1:]
        full = s.values
        if (
            len(full) >= p.min_points
            and float(full.min()) > 0
            and bool(np.all(np.diff(full) > 0))
            and float(full[-1]) >= p.factor * float(full[0])
        ):
            # start-up inflates the first point, so it is skipped against a false swing; a series
            # that rises from its first point on has no start-up bump to skip
            v, steps = full, s.steps
        if len(v) < p.min_points or float(v.min()) <= 0:
            raise Skip(f"{key} has {len(v)} positive points after the first (< {p.min_points})")
        lo, hi = float(v.min()), float(v.max())
        # grew at every interval: every step up, the last >= factor x the first, and no one interval
        # holds 3/4 of the rise or more (a single jump between two flat stretches, with jitter that happens
        # to rise, is a changed machine or loader, not a per-step cost that grows)
        d = np.diff(v)
        grew = (
            bool(np.all(d > 0))
            and float(v[-1]) >= p.factor * float(v[0])
            and float(d.max()) <= 0.75 * float(v[-1] - v[0])
        )
        if hi < p.factor * lo and not grew:
            return
        # the time the slow points cost: a point of a step-time series logged every k steps stands for
        # k steps; an epoch time is already the whole epoch's
        per_point = 1.0
        if not by_epoch and len(steps) > 1:
            per_point = float(max(1, int(np.median(np.diff(steps)))))
        lost = float(np.sum(v - lo)) * per_point
        if lost < p.min_lost_seconds:
            return  # a doubled millisecond step time (Keras ms/step, a toy loop) costs nothing to act on
        i_lo, i_hi = int(np.argmin(v)), int(np.argmax(v))
        what = (
            f"{key} grew at every logged point, {fmt(float(v[0]))} -> {fmt(float(v[-1]))} "
            f"({float(v[-1]) / float(v[0]):.1f}x)"
            if grew
            else f"{key} swings {hi / lo:.1f}x: {fmt(lo)} at step {int(steps[i_lo])} vs {fmt(hi)} at step "
            f"{int(steps[i_hi])}"
        )
        yield self.finding(
            Severity.WARNING,
            what + f" ({len(s)} points; each an average over an epoch or a logging interval)",
            evidence=[
                SeriesEvidence(
                    metric=key,
                    step_start=int(s.steps[0]),
                    step_end=int(s.steps[-1]),
                    values={
                        "min": lo,
                        "max": hi,
                        "first": float(s.values[0]),
                        "last": float(s.values[-1]),
                    },
                )
            ],
            ratio=round(hi / lo, 3),
            grew=grew,
            key=key,
        )

    @staticmethod
    def _one_epoch_each(run, steps) -> bool:
        """Whether the epoch logged with each point advances by a whole epoch or more from point to
        point (``epoch 3 loss 1.7 time 260.3s`` records counted as steps): the points are epoch times."""
        ek = run.key_for(Role.EPOCH)
        if ek is None or len(steps) < 2:
            return False
        e = run.series(ek).by_step().finite()
        at = dict(zip(e.steps.tolist(), e.values.tolist()))
        ev = [at.get(int(x)) for x in steps]
        if any(x is None for x in ev):
            return False
        return bool(np.all(np.diff(np.asarray(ev, dtype=float)) >= 1))
