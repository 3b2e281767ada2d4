"""CI004 ci-golden-length-mismatch."""

from __future__ import annotations

from ..ci.context import context_of, gate_evidence, recomputed, tol_text
from ..report import Cause, Finding, Hypothesis, Outcome, SeriesEvidence, Severity
from ..signal import fmt
from ._knowledge import fact, hyp, said
from .base import Detector, DetectorParams, Remedy


class GoldenLengthMismatch(Detector, code="CI004", name="ci-golden-length-mismatch", family="ci"):
    """The golden values and the run cover different steps (a golden file of another length).

    Why it matters: when a test's number of steps or logging interval
    changes and the golden file is not regenerated, a whole-array comparison
    fails on the shapes before any value is compared. That is a test-setup
    problem, not a model problem, when the common steps agree.
    Evidence: the golden and actual step ranges and counts, the steps only
    one side has, and whether the gates pass on the common steps.
    Remedy: regenerate the golden file for the new length (or compare only
    the common steps); when the run is *shorter* than its golden, look for
    what stopped it early instead.
    Thresholds: none; any difference in the step sets with at least one
    active gate on the metric.
    """

    @classmethod
    def remedies_for(cls, finding: Finding) -> tuple[Remedy, ...]:
        """Regenerate the golden values for the run's length; a run shorter than its golden values:
        what stopped it."""
        if finding.facts.get("direction") == "actual_shorter":
            return (
                Remedy(
                    "Find what stopped the run before the golden values' length (a crash, a timeout, "
                    "a smaller max_steps)",
                    "a shorter run is not a golden-file problem",
                    "minutes",
                ),
            )
        return (
            Remedy(
                f"Regenerate the golden values of {fact(finding, 'golden_source')} for the "
                f"current run length ({fact(finding, 'n_actual')} steps), or compare only the "
                "common steps",
                "the values agree where both sides have them",
                "minutes",
            ),
        )

    @classmethod
    def hypotheses(cls, finding: Finding, outcome: Outcome) -> list[Hypothesis] | None:
        """A length mismatch: the test setup (supported when the common steps agree)."""
        ok = bool(finding.facts.get("common_ok"))
        return [
            hyp(
                "test setup: golden values of another length or step interval",
                "supported" if ok else "open",
                Cause.METRIC_POLICY,
                "regenerate the golden file for the current length and rerun the comparison",
                for_=said(finding),
            )
        ]

    class Params(DetectorParams):
        pass

    def check(self, run, p):
        if context_of(run) is None:
            return
        for r in recomputed(run):
            if not r.length_mismatch or not r.checks:
                continue
            direction = (
                "actual_longer"
                if r.only_actual and not r.only_golden
                else "actual_shorter"
                if r.only_golden and not r.only_actual
                else "different_steps"
            )
            evaluated = [
                c
                for c in r.common_checks
                if c.passed is not None and c.gate.kind not in ("deterministic", "exact")
            ]
            common_ok = bool(evaluated) and all(c.passed for c in evaluated)
            ok_txt = f"on the {r.n_common} common steps max rel {fmt(r.max_rel, 3)}: " + (
                "; ".join(f"{tol_text(c)} {'passes' if c.passed else 'fails'}" for c in evaluated)
                or "no tolerance check to apply"
            )
            yield self.finding(
                Severity.WARNING if common_ok else Severity.ERROR,
                f"golden values for {r.metric} cover {r.n_golden} steps ({r.golden_steps[0]}-{r.golden_steps[1]}) "
                f"but the run logged {r.n_actual} ({r.actual_steps[0]}-{r.actual_steps[1]}): a golden file of another "
                f"length; {ok_txt}",
                evidence=[
                    SeriesEvidence(
                        metric=r.metric,
                        step_start=r.actual_steps[0],
                        step_end=r.actual_steps[1],
                        values={
                            "n_golden": r.n_golden,
                            "n_actual": r.n_actual,
                            "n_common": r.n_common,
                        },
                        note=f"golden {r.golden.source}",
                    )
                ]
                + [gate_evidence(c.gate) for c in r.checks],
                metric=r.metric,
                n_golden=r.n_golden,
                n_actual=r.n_actual,
                n_common=r.n_common,
                golden_steps=list(r.golden_steps),
                actual_steps=list(r.actual_steps),
                only_golden=r.only_golden,
                only_actual=r.only_actual,
                direction=direction,
                common_ok=common_ok,
                max_rel_common=r.max_rel,
                golden_source=r.golden.source,
            )
