"""GE007 validation-plateau."""

from __future__ import annotations

import numpy as np

from ..report import SeriesEvidence, Severity
from ..roles import Role, is_higher_better
from ..signal import fmt
from ._context import monitored
from .base import Detector, DetectorParams, Skip


class ValidationPlateau(Detector, code="GE007", name="validation-plateau", family="generalization"):
    """The held-out metric the run monitors stopped improving early: the rest of the run bought nothing.

    Why it matters: when validation reached its best level (within noise) in the first part of
    the run, every later epoch is compute without held-out gain, whatever the training loss
    still does; a shorter schedule, early stopping or a change of data/model is the lever.
    Evidence: the monitored metric (the run's ``monitor``/``metric_for_best_model``, Ultralytics
    fitness for YOLO, else the validation loss, else the validation accuracy), the evaluation at
    which it first came within the tolerance of its final best, and the share of evaluations after.
    Remedy: stop earlier (early stopping on this metric), or change what limits it (data,
    augmentation, capacity); a longer run of the same setup will not help.
    Thresholds: the tolerance is the larger of ``noise_k`` 3 x the evaluation noise (median
    absolute change between consecutive evaluations in the last half), capped at ``max_rel`` 3% of
    the best value, and ``min_rel`` 1% of it; a plateau when at least ``min_flat_share`` 60% of the
    evaluations come after the best level was first reached, with at least ``min_evals`` 8
    evaluations. Measured on the real corpora (shared/realworld, tests/data/realworld): runs
    labelled plateaued reach their level with 62-99% of evaluations left (YOLOv8 mAP flat from
    epoch 38 of 100, mlf02; YOLOv5 from 59 of 159, tb09; Keras val_loss from 20 of 100, csv06);
    healthy runs with early stopping have 50-58% left (wb06, tb04 Lightning, a 25-epoch YOLOv8
    whose noisy early fitness gave a 26% tolerance before the cap, tb08).
    """

    class Params(DetectorParams):
        noise_k: float = 3.0
        min_rel: float = 0.01
        max_rel: float = 0.03
        min_flat_share: float = 0.6
        min_evals: int = 8

    def check(self, run, p):
        vk = run.key_for(Role.VAL_LOSS)
        if vk is not None:
            key, s, hib, src = monitored(run, vk)
        else:
            ak = run.key_for(Role.VAL_ACCURACY)
            if ak is None:
                raise Skip("no validation metric logged")
            key, s, hib, src = ak, run.series(ak).by_step().finite(), is_higher_better(ak) or True, "validation accuracy"
        if len(s) < p.min_evals:
            raise Skip(f"{key} has {len(s)} evaluations (< {p.min_evals})")
        v = s.values
        best = float(v.max() if hib else v.min())
        half = v[len(v) // 2:]
        noise = float(np.median(np.abs(np.diff(half)))) if half.size > 2 else 0.0
        tol = max(min(p.noise_k * noise, p.max_rel * abs(best)), p.min_rel * abs(best))
        near = (v >= best - tol) if hib else (v <= best + tol)
        i = int(np.flatnonzero(near)[0])
        first = float(v[0])
        if (best - first if hib else first - best) <= tol:
            return  # never improved beyond its noise: an underfit/at-chance question (GE002, GE004), not a plateau
        after = (len(v) - 1 - i) / (len(v) - 1)
        if after < p.min_flat_share:
            return
        yield self.finding(
            Severity.WARNING,
            f"{key} came within {fmt(tol, 3)} of its best {fmt(best)} at step {int(s.steps[i])} (evaluation {i + 1} of "
            f"{len(v)}) and did not improve beyond that in the remaining {fmt(100 * after, 3)}% of evaluations "
            f"(monitored: {src})",
            evidence=[SeriesEvidence(metric=key, step_start=int(s.steps[i]), step_end=int(s.steps[-1]),
                                     values={"best": best, "at_plateau_start": float(v[i]), "tolerance": tol,
                                             "first": first})],
            key=key, monitored_source=src, plateau_step=int(s.steps[i]), flat_share=after, best=best,
            tolerance=tol, noise=noise, higher_is_better=bool(hib))
