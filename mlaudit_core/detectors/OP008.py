"""OP008 erratic-validation-loss."""

from __future__ import annotations

import numpy as np

from ..report import Cause, Finding, Hypothesis, Outcome, SeriesEvidence, Severity
from ..roles import Role
from ..signal import fmt
from ._knowledge import hyp, said
from .base import Detector, DetectorParams, Remedy, Skip


class ErraticValidationLoss(
    Detector, code="OP008", name="erratic-validation-loss", family="optimization"
):
    """The validation loss jumps by factors between consecutive evaluations late in the run.

    Why it matters: a held-out loss that halves and doubles from one evaluation to the next is
    not converging to anything: the weights swing between very different solutions (a learning
    rate too high for this scale, or inputs/targets on a scale that makes every update huge).
    Which checkpoint is "best" is then luck, and the final one means little.
    Evidence: the validation-loss key, the number of consecutive evaluations in the second half
    of the run whose ratio exceeds ``jump`` (either way), the range there, and the loss scale.
    When the loss sits at ``absurd_scale`` 1e6 or more, ``scale_suspect`` is true: no normalised
    pipeline produces a loss that large (a cross-entropy of K classes starts near ln K; a
    mean-squared error in standardised units near 1), so unnormalised inputs or targets, or a
    loss summed instead of averaged, is the first thing to check.
    Remedy: normalise inputs and targets (or the loss), lower the learning rate, add gradient
    clipping; then re-check the curve.
    Thresholds: at least ``min_jumps`` 3 jumps of more than ``jump`` 2x between consecutive
    evaluations in the second half of the run, with at least ``min_points`` 6 evaluations; the
    first half is left alone (from-scratch detectors bounce during warm-up and recover: own
    corpus csv18, YOLOv8 val/cls_loss 5.6 -> 65 -> 113 -> 0.7 in the first 12 of 100 epochs).
    Realworld csv03: a Lightning val_loss 7.9e12 -> 6.4e8 -> bouncing 2.1e7-7.2e7 (2.6x, 2.6x,
    3.3x jumps over the last five epochs). Measured on the 119 labelled real artifacts (realworld,
    own, libraries): it fires on two, realworld csv03 and tb08 (a TF2 RMSprop run, val loss 0.39-1.66),
    both labelled unstable/diverged, and on no run labelled healthy.
    Near a floor, ratios mislead: no finding when the whole second-half range (max - min) is at most
    ``floor_share`` 10% of the drop from the first evaluation to the second-half minimum (a loss near its
    floor bouncing by a few held-out examples; own corpus f5b3-09, Keras val_loss 0.055-0.199 after
    starting near ln 26, and f5b5-03, 0.0003-0.0029 after 0.0766; both healthy). A loss at ``absurd_scale``
    keeps the finding (realworld csv03 bounces 2e7-7e7 after 7.9e12).
    A run that ends at its best is not failed by its jumps: an info finding, not an error, when the
    level still fell (the second half's median below the first half's) and the last evaluation is
    within the lowest ``best_share`` tenth of the second half's evaluations (the weights the run ends
    with are among the best it evaluated, so "which checkpoint is best is luck" does not hold; an
    erratic loss lands there by chance one time in ten). Own corpus f17b2-04 (a diffusion model's
    sampled validation loss 0.0179 -> 0.0355 -> 0.0020 at its last evaluation) and f21b1-02 (a
    regressor's 1e-6-scale validation loss bouncing 2-5x, last 1.8e-6 against a minimum of 1.7e-6),
    both labelled healthy; realworld tb08 and csv03 and own f7b3-14, labelled unstable or diverged,
    end in the middle of their second half's range or above it.
    """

    @classmethod
    def remedies_for(cls, finding: Finding) -> tuple[Remedy, ...]:
        """Inputs or targets on a suspect scale: normalise them first. Otherwise none of its own:
        the unstable run's learning-rate action is the fix, and the evaluation-noise check is the
        discriminating test of its hypothesis."""
        if not finding.facts.get("scale_suspect"):
            return ()
        return (
            Remedy(
                "Check the scale of the inputs and targets (mean and std of a batch) and normalise "
                "them",
                "unnormalised inputs or targets make every update huge; normalised ones settle the "
                "curve",
                "minutes",
            ),
        )

    @classmethod
    def hypotheses(cls, finding: Finding, outcome: Outcome) -> list[Hypothesis] | None:
        """Erratic held-out loss: weights swinging (LR, scale) against a noisy evaluation."""
        scale = bool(finding.facts.get("scale_suspect"))
        return [
            hyp(
                "inputs or targets on a scale that makes every update huge",
                "supported" if scale else "open",
                Cause.DATA_CONFIG,
                "normalise inputs and targets and rerun",
                for_=said(finding) if scale else [],
            ),
            hyp(
                "a learning rate too high: the weights swing between solutions",
                "open",
                Cause.MODEL_CONVERGENCE,
                "rerun with a tenth of the LR: the held-out loss should settle",
                for_=said(finding),
            ),
            hyp(
                "the evaluation itself is noisy (too small a held-out set)",
                "open",
                Cause.METRIC_POLICY,
                "evaluate one checkpoint twice and on a larger set",
            ),
        ]

    implies = "unstable"

    needs = (Role.VAL_LOSS,)

    class Params(DetectorParams):
        jump: float = 2.0
        min_jumps: int = 3
        min_points: int = 6
        absurd_scale: float = 1e6
        floor_share: float = 0.10
        best_share: float = 0.10

    def check(self, run, p):
        key = run.key_for(Role.VAL_LOSS)
        s = run.series(key).by_step().finite()
        if len(s) < p.min_points:
            raise Skip(f"{key} has {len(s)} finite evaluations (< {p.min_points})")
        v = s.values
        if (v <= 0).any():
            raise Skip(f"{key} is not positive throughout (ratios undefined)")
        half = v[len(v) // 2 :]
        ratios = half[1:] / half[:-1]
        jumps = (ratios > p.jump) | (ratios < 1 / p.jump)
        n = int(jumps.sum())
        if n < p.min_jumps:
            return
        scale = float(np.median(half))
        suspect = scale >= p.absurd_scale
        learned = float(v[0]) - float(half.min())
        swing = float(half.max() - half.min())
        if not suspect and learned > 0 and swing <= p.floor_share * learned:
            # factor jumps of a loss near its floor: the whole second-half swing is a small part of what the
            # run learned (a 0.05 -> 0.2 bounce after 3.2 -> 0.05), noise of a few held-out examples, not a
            # loss that is not settling
            return
        first_half = v[: len(v) // 2]
        if (
            not suspect
            and first_half.size
            and float(np.median(half)) < float(np.median(first_half))
            and float(half[-1]) <= float(np.quantile(half, p.best_share))
        ):
            yield self.finding(
                Severity.INFO,
                f"{key} jumps by more than {fmt(p.jump)}x between consecutive evaluations {n} times in the "
                f"second half of the run (range {fmt(float(half.min()))} - {fmt(float(half.max()))}), but its "
                f"level fell (median {fmt(float(np.median(first_half)))} -> {fmt(float(np.median(half)))}) and "
                f"the run ends at its best ({fmt(float(half[-1]))}, in the lowest tenth of the second half): "
                "scatter of the evaluation around a falling curve, not a run that failed to settle",
                key=key,
                n_jumps=n,
                n_points=len(half),
                median=scale,
                first=float(v[0]),
                scale_suspect=False,
                ends_at_best=True,
            )
            return
        msg = (
            f"{key} jumps by more than {fmt(p.jump)}x between consecutive evaluations {n} times in the second "
            f"half of the run ({len(half)} evaluations from step {int(s.steps[len(v) // 2])}; range "
            f"{fmt(float(half.min()))} - {fmt(float(half.max()))}): the held-out loss is not settling"
        )
        if suspect:
            msg += (
                f"; and it sits at {fmt(scale)} (first evaluation {fmt(float(v[0]))}), a scale no normalised "
                "pipeline produces (cross-entropy starts near ln K, standardised MSE near 1): check input and "
                "target normalisation and whether the loss is summed instead of averaged"
            )
        yield self.finding(
            Severity.ERROR,
            msg,
            evidence=[
                SeriesEvidence(
                    metric=key,
                    step_start=int(s.steps[len(v) // 2]),
                    step_end=int(s.steps[-1]),
                    values={
                        "jumps": float(n),
                        "min": float(half.min()),
                        "max": float(half.max()),
                        "median": scale,
                    },
                )
            ],
            key=key,
            n_jumps=n,
            n_points=len(half),
            median=scale,
            first=float(v[0]),
            scale_suspect=suspect,
        )
