"""CI006 ci-ungated-drift."""

from __future__ import annotations

import math

from ..ci.context import context_of, gate_evidence, recomputed
from ..report import Cause, Finding, Hypothesis, Outcome, SeriesEvidence, Severity
from ..signal import fmt
from ._knowledge import fact, hyp, said
from .base import Detector, DetectorParams, Remedy, failing_row


class UngatedDrift(Detector, code="CI006", name="ci-ungated-drift", family="ci"):
    """A metric with golden values moved well away from them and no active gate checks it.

    Why it matters: a CI gate only protects what it checks. A slowdown or a
    memory increase on an unchecked metric passes silently, or hides behind
    a louder failure.
    Evidence: the metric's median golden and actual values and their
    relative change, the gates configured for it (if any) and why they are
    not active for this job.
    Remedy: add a tolerance gate for the metric, or record why it is
    deliberately unchecked.
    Thresholds: ``min_rel_change`` 5% of the median, the tolerance Megatron-LM
    uses for its own timing and memory checks (ApproximateTest rtol 0.05).
    """

    @classmethod
    def remedies_for(cls, finding: Finding) -> tuple[Remedy, ...]:
        """A gate for the metric that moved unchecked."""
        ch = finding.facts.get("median_rel_change") or 0.0
        return (
            Remedy(
                f"Add a tolerance gate for {fact(finding, 'metric')} (it "
                f"{'rose' if ch > 0 else 'fell'} {fmt(100 * abs(ch), 3)}% unchecked)",
                "no active gate checks it",
                "minutes",
            ),
        )

    @classmethod
    def hypotheses(cls, finding: Finding, outcome: Outcome) -> list[Hypothesis] | None:
        """A metric that moved with no gate on it: a change the CI does not see."""
        return [
            hyp(
                f"{fact(finding, 'metric')} changed and no gate saw it",
                "supported",
                Cause.METRIC_POLICY,
                "compare its values with the golden values by step",
                for_=said(finding),
            )
        ]

    class Params(DetectorParams):
        min_rel_change: float = 0.05

    @classmethod
    def surprising(cls, finding: Finding) -> str | None:
        """A metric that drifted from its golden values while no gate checks it."""
        return finding.message

    @classmethod
    def ci_answers(cls, finding: Finding) -> dict[str, list[dict]]:
        """An ungated drift is a failing check of the CI answers."""
        return {"failing": [failing_row(finding)]}

    def check(self, run, p):
        if context_of(run) is None:
            return
        for r in recomputed(run):
            if r.active_checks or not math.isfinite(r.median_rel_change):
                continue
            if abs(r.median_rel_change) < p.min_rel_change:
                continue
            word = "rose" if r.median_rel_change > 0 else "fell"
            why = (
                "; ".join(sorted({c.active_reason for c in r.checks if c.active_reason}))
                or "no gate names it"
            )
            yield self.finding(
                Severity.WARNING,
                f"{r.metric} {word} by {fmt(100 * abs(r.median_rel_change), 3)}% (median {fmt(r.median_golden)} -> "
                f"{fmt(r.median_actual)} over steps {r.actual_steps[0]}-{r.actual_steps[1]}) and no active gate "
                f"checks it ({why})",
                evidence=[
                    SeriesEvidence(
                        metric=r.metric,
                        step_start=r.actual_steps[0],
                        step_end=r.actual_steps[1],
                        values={
                            "median_golden": r.median_golden,
                            "median_actual": r.median_actual,
                            "rel_change": r.median_rel_change,
                        },
                    )
                ]
                + [gate_evidence(c.gate) for c in r.checks],
                metric=r.metric,
                median_golden=r.median_golden,
                median_actual=r.median_actual,
                median_rel_change=r.median_rel_change,
                configured_gates=len(r.checks),
                reason=why,
            )
