"""SY002 data-loader-starvation."""

from __future__ import annotations

import numpy as np

from ..report import SeriesEvidence, Severity
from ..roles import Role
from ..signal import fmt
from .base import Detector, DetectorParams, Remedy, Skip


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
    """

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

    def check(self, run, p):
        dk, sk = run.key_for(Role.DATA_TIME), run.key_for(Role.STEP_TIME)
        d = run.series(dk).by_step().finite()
        s = run.series(sk).by_step().finite()
        common, di, si = np.intersect1d(d.steps, s.steps, return_indices=True)
        if common.size < 3:
            raise Skip(f"{dk} and {sk} share fewer than 3 steps")
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
            return
        yield self.finding(
            Severity.ERROR,
            f"data loading takes {fmt(100 * ratio, 3)}% of each step (median data time {fmt(med_d)} s of "
            f"step time {fmt(med_s)} s; {fmt(100 * share, 3)}% of steps wait more than half): the run "
            "is input-bound, not compute-bound",
            evidence=[
                SeriesEvidence(
                    metric=dk,
                    step_start=int(common[k]),
                    step_end=int(common[-1]),
                    values={
                        "median_data_time_s": med_d,
                        "median_step_time_s": med_s,
                        "ratio": ratio,
                    },
                )
            ],
            ratio=ratio,
            median_data_time_s=med_d,
            median_step_time_s=med_s,
            share_starved=share,
        )
