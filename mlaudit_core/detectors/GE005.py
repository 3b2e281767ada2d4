"""GE005 generalization-gap."""

from __future__ import annotations

import numpy as np

from ..report import Cause, Finding, Hypothesis, Outcome, SeriesEvidence, Severity
from ..roles import Role
from ..signal import fmt
from ._context import early_stopping_patience, monitored
from ._knowledge import hyp, said
from .base import Detector, DetectorParams, Remedy


class GeneralizationGap(Detector, code="GE005", name="generalization-gap", family="generalization"):
    """Train/validation loss gap over time, with the early-stopping counterfactual.

    Why it matters: a gap that keeps growing means the model fits the training set far better
    than held-out data, and the steps after the early-stopping point were spent for nothing.
    Remedy: keep the checkpoint early stopping would have chosen; add regularisation or data.
    Reported at info level for every run with both losses (it is the generalisation section
    of the report): the gap at the best validation point and at the end, how it changed,
    the step early stopping would have chosen and the share of steps after it, and the
    validation noise level (median absolute change between consecutive evaluations in the
    last half) against which any improvement is judged.
    Warns when the final gap is more than ``max_gap_ratio`` x the training loss (the model
    fits the training set far better than held-out data) and grows.
    Thresholds: ``max_gap_ratio`` 1.0 (validation loss at least double the training loss;
    convention). The early-stopping counterfactual uses what the run itself would monitor:
    the ``monitor`` / ``metric_for_best_model`` param, else Ultralytics' fitness (0.1 mAP@.5 +
    0.9 mAP@.5:.95) when YOLO metrics are logged, else the validation loss; and the run's own
    ``patience`` param, else the larger of ``patience`` 3 evaluations (Keras' EarlyStopping
    examples) and ``patience_share`` 10% of the evaluations (a 150-epoch YOLO run stopped at
    epoch 10 by patience 3 gives up mAP 0.86 for 0.32).
    """

    loss_reading = True

    remedies = (
        Remedy(
            "Compute the training and validation loss on one batch of each split with the same "
            "preprocessing, in eval mode",
            "tells a real generalisation gap from a train/eval pipeline mismatch (dropout, "
            "augmentation, another preprocessing)",
            "minutes",
        ),
    )

    @classmethod
    def hypotheses(cls, finding: Finding, outcome: Outcome) -> list[Hypothesis] | None:
        """A gap that grows: too little data or regularisation, against a train/eval mismatch;
        nothing to add when the finding is the info-level gap report."""
        if outcome is Outcome.SUCCEEDED:
            return None
        return [
            hyp(
                "too little data or regularisation for the model size",
                "supported",
                Cause.MODEL_CONVERGENCE,
                "retrain with weight decay / augmentation: the gap should shrink",
                for_=said(finding),
            ),
            hyp(
                "a train/eval pipeline mismatch (another preprocessing, augmentation in training only)",
                "open",
                Cause.DATA_CONFIG,
                "both losses on one batch of each split, same preprocessing, eval mode",
            ),
        ]

    implies = "overfit"

    needs = (Role.TRAIN_LOSS, Role.VAL_LOSS)

    class Params(DetectorParams):
        max_gap_ratio: float = 1.0
        patience: int = 3
        patience_share: float = 0.10

    def check(self, run, p):
        tk, vk = run.key_for(Role.TRAIN_LOSS), run.key_for(Role.VAL_LOSS)
        t, v = run.series(tk).by_step().finite(), run.series(vk).by_step().finite()
        if len(v) < 2 or len(t) < 2:
            return
        # training loss at each evaluation step (last training point at or before it)
        idx = np.clip(np.searchsorted(t.steps, v.steps, side="right") - 1, 0, len(t) - 1)
        tv = t.values[idx]
        gap = v.values - tv
        ib = int(np.argmin(v.values))
        mon_key, mon, hib, mon_src = monitored(run, vk)
        if (
            len(mon) < 2
        ):  # the monitored metric has no usable points: fall back to the validation loss
            mon_key, mon, hib, mon_src = vk, v, False, "validation loss"
        own = early_stopping_patience(run)
        if own:
            patience, pat_src = own[0], f"the run's {own[1]}"
        else:
            patience = max(p.patience, int(np.ceil(p.patience_share * len(mon))))
            pat_src = (
                f"max({p.patience}, {fmt(100 * p.patience_share, 2)}% of {len(mon)} evaluations)"
            )
        # early stopping on the monitored metric: stop once it has not improved for `patience` evals
        stop, best, since = None, -np.inf if hib else np.inf, 0
        for i, x in enumerate(mon.values):
            if (x > best) if hib else (x < best):
                best, since = x, 0
            else:
                since += 1
                if since >= patience:
                    stop = i
                    break
        stop_step = int(mon.steps[stop]) if stop is not None else None
        after = (
            (float(t.steps[-1] - stop_step) / max(float(t.steps[-1]), 1.0))
            if stop_step is not None
            else 0.0
        )
        final_best = float(np.nanmax(mon.values) if hib else np.nanmin(mon.values))
        at_stop = (
            float(np.nanmax(mon.values[: stop + 1]) if hib else np.nanmin(mon.values[: stop + 1]))
            if stop is not None
            else final_best
        )
        half = v.values[len(v) // 2 :]
        noise = float(np.median(np.abs(np.diff(half)))) if half.size > 2 else None
        final_ratio = gap[-1] / tv[-1] if tv[-1] > 0 else np.inf
        growing = gap[-1] > gap[ib]
        sev = Severity.WARNING if (final_ratio > p.max_gap_ratio and growing) else Severity.INFO
        msg = (
            f"train/val gap {fmt(float(gap[ib]))} at the best evaluation (step {int(v.steps[ib])}) and "
            f"{fmt(float(gap[-1]))} at the end (val {fmt(float(v.values[-1]))} vs train {fmt(float(tv[-1]))})"
        )
        if stop_step is not None:
            msg += (
                f"; early stopping on {mon_key} (patience {patience} evaluations, {pat_src}) would stop at step "
                f"{stop_step}, saving {fmt(100 * after, 3)}% of the steps"
            )
            mh = mon.values[len(mon) // 2 :]
            mon_noise = float(np.median(np.abs(np.diff(mh)))) if mh.size > 2 else 0.0
            if abs(at_stop - final_best) > max(3 * mon_noise, 0.01 * abs(final_best)):
                msg += f" but giving up the later best {mon_key} {fmt(final_best)} (vs {fmt(at_stop)} by then)"
        if noise is not None:
            msg += f"; validation noise ~{fmt(noise)}"
        yield self.finding(
            sev,
            msg,
            evidence=[
                SeriesEvidence(
                    metric=vk,
                    step_start=int(v.steps[0]),
                    step_end=int(v.steps[-1]),
                    values={"gap_best": float(gap[ib]), "gap_final": float(gap[-1])},
                )
            ],
            gap_at_best=float(gap[ib]),
            gap_final=float(gap[-1]),
            early_stop_step=stop_step,
            monitored=mon_key,
            monitored_source=mon_src,
            patience=patience,
            best_at_stop=at_stop,
            best_overall=final_best,
            compute_after_stop=after,
            val_noise=noise,
            best_step=int(v.steps[ib]),
        )
