"""SY002 data-loader-starvation."""

from __future__ import annotations

import numpy as np

from ..report import Cause, Finding, Hypothesis, Outcome, SeriesEvidence, Severity
from ..roles import Role
from ..signal import fmt
from ._knowledge import hyp, said, time_not_convergence
from .base import Detector, DetectorParams, Remedy, Skip


def epoch_starts(run, steps: np.ndarray) -> np.ndarray | None:
    """For each of ``steps`` (sorted), whether it is the first logged point of its epoch (the run's
    epoch counter, read at or before the step, differs from the one at the previous point; the first
    point is not), or ``None`` without an epoch series."""
    ek = run.key_for(Role.EPOCH)
    if not ek or len(steps) < 2:
        return None
    e = run.series(ek).by_step().finite()
    if len(e) < 2:
        return None
    at = np.clip(np.searchsorted(e.steps, steps, side="right") - 1, 0, len(e) - 1)
    ep = np.floor(e.values[at] + 1e-9)
    return np.concatenate(([False], ep[1:] != ep[:-1]))


class DataLoaderStarvation(Detector, code="SY002", name="data-loader-starvation", family="systems"):
    """Most of each step is spent waiting for the next batch: the run is input-bound.

    Why it matters: the accelerator idles while the input pipeline works, so a
    faster model, a bigger GPU or a different learning rate will not make the
    run faster; storage and pre-processing will.
    Evidence: median data time, median step time and their ratio over the steady
    part of the run (the first ``skip_frac`` points, where workers warm up, are
    left out); the share of steps whose data time exceeds half the step.
    Remedy: move the data to faster storage or cache it in memory, pre-process
    (decode/resize) offline, raise the number of loader workers and prefetching,
    pin memory.
    Thresholds: ratio > ``max_ratio`` 0.5 means more than half of each step waits
    for data (the definition of input-bound used by the PyTorch profiler's
    "DataLoader" bottleneck hint and by the ImageNet example's Data/Time columns).
    Stalls: when the median step is not input-bound, single batches that wait for data
    ``stall_factor`` 5x the median step time or more (SY004's outlier factor), after the first point
    (workers start), whose wait beyond the median data time is at least ``min_lost_seconds`` 0.5 s
    (SY004's figure) and takes ``min_stall_share`` 20% or more of the wall time of the steps read
    (data + step time; SY004's pause share) are a warning: the loader runs dry every few batches
    (too few workers, CPU-heavy decoding, a slow disk), which a median hides (report b5-11: one
    batch waits 19.6 s beside 0.65 s steps). When every such wait is the first logged batch of an
    epoch (the epoch counter changes there), it is the loader's workers starting again for the epoch
    (PyTorch and Paddle re-create them each epoch without persistent workers), paid once per epoch:
    its share is of the epochs' wall time, the steps spanned x (median step + data time), not of the
    logged points only (own corpus f7b1-04: Paddle logs every ~1250 of 5011 iterations per epoch and
    always the first, whose 1.3-1.8 s wait read as 23.5% of the logged time, 0.1% of the run's).
    Fewer than 3 records (a pasted line): each is the logger's average over its window (mmengine,
    MetricLogger), read with the same ratio, at steps from ``min_startup_step`` 20 on (the first batches
    wait for the workers' start and prefetch, 2 per worker by default) and with a wait of at least
    ``min_wait_seconds`` 1 s a step; a warning, not an error (one window) (report b9-04: 38.1 s of data
    wait in a 40.2 s step at iteration 200).
    """

    implies = "slow"
    slow_rank = 1

    @classmethod
    def hypotheses(cls, finding: Finding, outcome: Outcome) -> list[Hypothesis] | None:
        """Input-bound (supported by the data-time ratio) against compute-bound (rejected)."""
        return [
            hyp(
                "input-bound: the data pipeline cannot keep up",
                "supported",
                Cause.INFRA_RUNTIME,
                "time an epoch over the data loader alone, without the model",
                for_=said(finding),
            ),
            hyp(
                "compute-bound: the model step itself is slow",
                "rejected",
                Cause.INFRA_RUNTIME,
                "run the step on a cached synthetic batch",
                against=["data time is most of the step time"],
            ),
            time_not_convergence(),
        ]

    remedies = (
        Remedy(
            "Profile the input pipeline alone (iterate the DataLoader without the model)",
            "confirms input-bound vs compute-bound in minutes",
            "minutes",
        ),
        Remedy(
            "Move data to faster storage / cache it, pre-process offline, add loader workers",
            "the fix for an input-bound run; hyperparameters will not help",
            "hours",
        ),
    )

    needs = (Role.DATA_TIME, Role.STEP_TIME)

    class Params(DetectorParams):
        max_ratio: float = 0.5
        skip_frac: float = 0.05
        stall_factor: float = 5.0
        min_lost_seconds: float = 0.5
        min_stall_share: float = 0.2
        min_startup_step: int = 20
        min_wait_seconds: float = 1.0

    def check(self, run, p):
        dk, sk = run.key_for(Role.DATA_TIME), run.key_for(Role.STEP_TIME)
        d = run.series(dk).by_step().finite()
        s = run.series(sk).by_step().finite()
        common, di, si = np.intersect1d(d.steps, s.steps, return_indices=True)
        if common.size < 3:
            yield from self._few_records(dk, common, d.values[di], s.values[si], p)
            return
        k = int(common.size * p.skip_frac)
        dv, sv = d.values[di][k:], s.values[si][k:]
        if dv.size == 0:
            dv, sv = d.values[di], s.values[si]
        med_d, med_s = float(np.median(dv)), float(np.median(sv))
        if med_s <= 0:
            return
        ratio = med_d / med_s
        share = float((dv > 0.5 * sv).mean())
        if ratio <= p.max_ratio:
            yield from self._stalls(
                dk, common, d.values[di], s.values[si], med_d, med_s, p, epoch_starts(run, common)
            )
            return
        yield self.finding(
            Severity.ERROR,
            f"data loading takes {fmt(100 * ratio, 3)}% of each step (median data time {fmt(med_d)} s of "
            f"step time {fmt(med_s)} s; {fmt(100 * share, 3)}% of steps wait more than half): the run "
            "is input-bound, not compute-bound",
            evidence=[self._ratio_evidence(dk, common[k], common[-1], med_d, med_s, ratio)],
            ratio=ratio,
            median_data_time_s=med_d,
            median_step_time_s=med_s,
            share_starved=share,
        )

    @staticmethod
    def _ratio_evidence(dk, start, end, med_d, med_s, ratio):
        """The data-time series from step ``start`` to ``end`` with its median data and step time
        (s) and their ratio."""
        return SeriesEvidence(
            metric=dk,
            step_start=int(start),
            step_end=int(end),
            values={"median_data_time_s": med_d, "median_step_time_s": med_s, "ratio": ratio},
        )

    def _few_records(self, dk, steps, dv, sv, p):
        """One or two records (a pasted line): each is the logger's own average over its window, so the
        same ratio reads them, past start-up only and when the wait is seconds, not jitter."""
        keep = steps >= p.min_startup_step
        steps, dv, sv = steps[keep], dv[keep], sv[keep]
        if steps.size == 0:
            raise Skip(
                f"{dk}: fewer than 3 records, none past start-up (step {p.min_startup_step})"
            )
        med_d, med_s = float(np.median(dv)), float(np.median(sv))
        if med_s <= 0 or med_d / med_s <= p.max_ratio or med_d < p.min_wait_seconds:
            return
        ratio = med_d / med_s
        yield self.finding(
            Severity.WARNING,
            f"data loading takes {fmt(100 * ratio, 3)}% of each step in the {steps.size} record(s) logged "
            f"(data time {fmt(med_d)} s of step time {fmt(med_s)} s at step {int(steps[-1])}): the run is "
            "input-bound, not compute-bound",
            evidence=[self._ratio_evidence(dk, steps[0], steps[-1], med_d, med_s, ratio)],
            ratio=ratio,
            median_data_time_s=med_d,
            median_step_time_s=med_s,
            records=int(steps.size),
        )

    def _stalls(self, dk, steps, dv, sv, med_d, med_s, p, starts=None):
        """Single batches that wait for data many times the median step (see the class docstring)."""
        dv, sv, steps = dv[1:], sv[1:], steps[1:]
        wall = float(dv.sum() + sv.sum())
        if wall <= 0:
            return
        stalled = (dv >= p.stall_factor * med_s) & (dv - med_d >= p.min_lost_seconds)
        if starts is not None and stalled.any() and bool(starts[1:][stalled].all()):
            # every long wait is an epoch's first batch: the loader's workers starting again for the
            # epoch, paid once per epoch, against every step of the epochs (not the logged points only)
            wall = max(wall, float(steps[-1] - steps[0]) * (med_s + med_d))
        lost = float((dv[stalled] - med_d).sum())
        if not stalled.any() or lost < p.min_stall_share * wall:
            return
        worst = int(np.argmax(dv))
        yield self.finding(
            Severity.WARNING,
            f"{int(stalled.sum())} batch(es) waited for data {fmt(float(dv[worst]))} s at most (step "
            f"{int(steps[worst])}) against a median step time of {fmt(med_s)} s and a median data time of "
            f"{fmt(med_d)} s; the waits take {fmt(100 * lost / wall, 3)}% of the wall time read: the data "
            "loader ran dry (too few workers, CPU-heavy decoding or slow storage)",
            evidence=[
                SeriesEvidence(
                    metric=dk,
                    step_start=int(steps[0]),
                    step_end=int(steps[-1]),
                    values={"max_data_time_s": float(dv[worst]), "median_step_time_s": med_s},
                )
            ],
            stalls=int(stalled.sum()),
            stall_share=lost / wall,
            median_data_time_s=med_d,
            median_step_time_s=med_s,
        )
