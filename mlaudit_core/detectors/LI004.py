"""LI004 eval-alignment."""

from __future__ import annotations

import numpy as np

from ..report import Cause, Finding, Hypothesis, Outcome, SeriesEvidence, Severity
from ..roles import Role
from ._knowledge import hyp, said
from .base import Detector, DetectorParams, Remedy, Skip


class EvalAlignment(Detector, code="LI004", name="eval-alignment", family="integrity"):
    """Validation points are misaligned with training steps, or too sparse to support a conclusion.

    Why it matters: validation logged at a constant step (often 0 or the epoch number while
    training logs global steps) overlays all evaluations at one x position and breaks
    step-based comparisons; with fewer than ``min_evals`` evaluations an overfit or plateau
    judgement is a guess.
    Evidence: number of evaluations, distinct validation steps, validation vs training step ranges.
    Remedy: log validation with the global step; evaluate at least every 10% of the run.
    Thresholds: ``min_evals`` 4 (the fewest points that show a minimum followed by a sustained
    rise); misaligned when the validation step range is under ``min_range_share`` 10% of the
    training step range while there are several evaluations (convention).
    """

    remedies = (
        Remedy(
            "Log validation with the training's global step, and evaluate at least every 10% of the run",
            "aligned, dense evaluations make overfit and plateau calls checkable",
            "minutes",
        ),
    )

    @classmethod
    def hypotheses(cls, finding: Finding, outcome: Outcome) -> list[Hypothesis] | None:
        """Misaligned validation (a logging bug) or too few evaluations to judge."""
        mis = bool(finding.facts.get("misaligned"))
        return [
            hyp(
                "validation is logged on another axis than training (a constant step, the epoch)"
                if mis
                else "too few evaluations to judge overfitting or a plateau",
                "supported",
                Cause.METRIC_POLICY,
                "plot validation and training against wall time: aligned curves overlap"
                if mis
                else "evaluate more often and compare the conclusion",
                for_=said(finding),
            )
        ]

    needs = (Role.TRAIN_LOSS,)

    class Params(DetectorParams):
        min_evals: int = 4
        min_range_share: float = 0.10
        min_train_points: int = 50

    def check(self, run, p):
        vk = run.key_for(Role.VAL_LOSS) or run.key_for(Role.VAL_ACCURACY)
        if vk is None:
            raise Skip("no validation metric logged")
        t = run.series(Role.TRAIN_LOSS)
        v = run.series(vk)
        if len(t) < p.min_train_points:
            raise Skip("too few training points to judge the evaluation cadence")
        t_range = float(t.steps.max() - t.steps.min()) or 1.0
        v_range = float(v.steps.max() - v.steps.min())
        distinct = int(np.unique(v.steps).size)
        ev = [
            SeriesEvidence(
                metric=vk,
                step_start=int(v.steps.min()),
                step_end=int(v.steps.max()),
                values={"evaluations": float(len(v)), "distinct_steps": float(distinct)},
            )
        ]
        if len(v) >= p.min_evals and v_range < p.min_range_share * t_range:
            yield self.finding(
                Severity.WARNING,
                f"{vk}: {len(v)} evaluations span steps {int(v.steps.min())}-{int(v.steps.max())} "
                f"while training spans {int(t.steps.min())}-{int(t.steps.max())}: validation "
                "is logged on another step axis (epoch or a constant)",
                evidence=ev,
                n_evals=len(v),
                distinct_steps=distinct,
                misaligned=True,
            )
        elif len(v) < p.min_evals:
            yield self.finding(
                Severity.INFO,
                f"only {len(v)} evaluation(s) of {vk} over {len(t)} training points: too "
                "sparse to judge overfitting or the best checkpoint",
                evidence=ev,
                n_evals=len(v),
                distinct_steps=distinct,
                misaligned=False,
            )
