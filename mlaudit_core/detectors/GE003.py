"""GE003 final-worse-than-best."""

from __future__ import annotations

import numpy as np

from ..report import Cause, Finding, Hypothesis, Outcome, SeriesEvidence, Severity
from ..roles import Role, is_higher_better
from ..signal import fmt
from ._knowledge import fact, hyp, said
from .base import Detector, DetectorParams, Remedy, Skip


class FinalWorseThanBest(
    Detector, code="GE003", name="final-worse-than-best", family="generalization"
):
    """The last evaluation (the last checkpoint) is worse than the best one, beyond the metric's noise.

    Why it matters: a run that ships its last checkpoint ships a worse model than
    it already had; the report says which step to take instead.
    Evidence: best and final values with their steps, the gap, and the evaluation
    noise (median absolute step-to-step change over the last half of evals).
    Remedy: keep the best checkpoint (``load_best_model_at_end`` /
    ``ModelCheckpoint(save_best_only)``), or stop earlier.
    Thresholds: the gap must exceed both ``noise_k`` x 3 the evaluation noise and
    ``min_rel_gap`` 2% of the best value (convention; below that a gap is within
    typical seed-to-seed spread of small models, measured on examples/regimes.py).
    """

    remedies = (
        Remedy(
            "Line the held-out metric's fall after its best up with the training loss and the LR "
            "schedule",
            "a training loss that rises too is an optimisation problem (LR, instability), a falling "
            "one overfitting",
            "minutes",
        ),
        Remedy(
            "Keep the best checkpoint automatically (load_best_model_at_end, "
            "ModelCheckpoint(save_best_only=True)) or stop earlier",
            "ships the best model without a manual pick",
            "minutes",
        ),
    )

    @classmethod
    def hypotheses(cls, finding: Finding, outcome: Outcome) -> list[Hypothesis] | None:
        """A last evaluation worse than the best beyond noise: overfitting or a late optimisation
        problem (both open); evaluation noise (rejected)."""
        return [
            hyp(
                "overfitting after the best evaluation",
                "open",
                Cause.MODEL_CONVERGENCE,
                "is the training loss still falling after the best evaluation?",
                for_=said(finding),
            ),
            hyp(
                "the optimisation degraded late (an LR restart, an instability)",
                "open",
                Cause.MODEL_CONVERGENCE,
                "the LR and training loss at the steps after the best evaluation",
            ),
            hyp(
                "evaluation noise",
                "rejected",
                Cause.METRIC_POLICY,
                against=[f"the gap exceeds the metric's noise ({fact(finding, 'noise')})"],
            ),
        ]

    implies = "degraded"

    class Params(DetectorParams):
        noise_k: float = 3.0
        min_rel_gap: float = 0.02
        min_evals: int = 4

    def check(self, run, p):
        key = run.key_for(Role.VAL_ACCURACY) or run.key_for(Role.VAL_LOSS)
        if key is None:
            raise Skip("no validation metric logged")
        s = run.series(key).by_step().finite()
        if len(s) < p.min_evals:
            raise Skip(f"{key} has {len(s)} evaluations (< {p.min_evals})")
        hib = is_higher_better(key)
        v = s.values
        ib = int(np.argmax(v) if hib else np.argmin(v))
        best, final = float(v[ib]), float(v[-1])
        gap = (best - final) if hib else (final - best)
        half = v[len(v) // 2 :]
        noise = float(np.median(np.abs(np.diff(half)))) if half.size > 2 else 0.0
        if gap <= max(p.noise_k * noise, p.min_rel_gap * abs(best)):
            return
        yield self.finding(
            Severity.WARNING,
            f"final {key} {fmt(final)} (step {int(s.steps[-1])}) is worse than the best {fmt(best)} "
            f"(step {int(s.steps[ib])}) by {fmt(gap)}; evaluation noise ~{fmt(noise)}",
            evidence=[
                SeriesEvidence(
                    metric=key,
                    step_start=int(s.steps[ib]),
                    step_end=int(s.steps[-1]),
                    values={"best": best, "final": final, "noise": noise},
                )
            ],
            key=key,
            best=best,
            final=final,
            best_step=int(s.steps[ib]),
            gap=gap,
            noise=noise,
            higher_is_better=hib,
        )
