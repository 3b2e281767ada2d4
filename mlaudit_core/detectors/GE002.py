"""GE002 underfitting."""

from __future__ import annotations

import numpy as np

from ..report import SeriesEvidence, Severity
from ..roles import Role
from ..signal import centered_median, fmt, smooth_window
from .base import Detector, DetectorParams, Skip


class Underfitting(Detector, code="GE002", name="underfitting", family="generalization"):
    """Training loss barely moved over the whole run: the model is not learning the training set.

    Why it matters: with the training loss close to its initial value the model
    has learned little; validation numbers are then meaningless for model
    selection, and the usual culprits (LR far too low, too little capacity,
    frozen weights, labels that carry no signal) are cheap to test.
    Evidence: initial and final smoothed training loss and their ratio; the final
    validation accuracy when logged.
    Remedy: raise the learning rate, add capacity, check that parameters are
    trainable and that labels match inputs (train on a tiny subset: a healthy
    setup overfits it quickly).
    Thresholds: final / initial and best / initial both > ``max_ratio`` 0.85 (less than 15% improvement),
    measured on examples/regimes.py: healthy runs reach < 0.3, starved-of-capacity
    runs stay > 0.9.
    """

    needs = (Role.TRAIN_LOSS,)

    class Params(DetectorParams):
        max_ratio: float = 0.85
        min_points: int = 20

    def check(self, run, p):
        key = run.key_for(Role.TRAIN_LOSS)
        s = run.series(key).by_step()
        if (~np.isfinite(s.values)).any():
            return  # a run that blew up is not underfitting
        if len(s) < p.min_points:
            raise Skip(f"{key} has {len(s)} points (< {p.min_points})")
        sm = centered_median(s.values, smooth_window(len(s)))
        initial, final, best = float(sm[0]), float(sm[-1]), float(sm.min())
        if initial <= 0:
            return
        ratio = final / initial
        # judged on the best level reached: a loss that fell and then rose learned, then diverged
        if ratio <= p.max_ratio or best / initial <= p.max_ratio:
            return
        values = {"initial": initial, "final": final, "ratio": ratio}
        acc = None
        ak = run.key_for(Role.VAL_ACCURACY)
        if ak:
            a = run.series(ak).finite()
            if len(a):
                acc = float(a.values[-1])
                values["final_val_accuracy"] = acc
        msg = (f"{key} went from {fmt(initial)} to {fmt(final)} ({fmt(100 * (1 - ratio), 3)}% improvement "
               f"over {len(s)} points)")
        if acc is not None:
            msg += f"; final {ak} {fmt(acc)}"
        yield self.finding(Severity.ERROR, msg,
                           evidence=[SeriesEvidence(metric=key, step_start=int(s.steps[0]),
                                                    step_end=int(s.steps[-1]), values=values)],
                           initial=initial, final=final, ratio=ratio, final_val_accuracy=acc)
