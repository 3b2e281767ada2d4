"""CI002 ci-golden-recompute."""

from __future__ import annotations

import math

from ..ci.context import check_facts, context_of, gate_evidence, recomputed, tol_text
from ..report import Cause, Finding, Hypothesis, Outcome, SeriesEvidence, Severity
from ..signal import fmt
from ._knowledge import fact, hyp, said
from .base import Detector, DetectorParams, Remedy


class GoldenRecompute(Detector, code="CI002", name="ci-golden-recompute", family="ci"):
    """Every gated metric recomputed from the raw golden and actual values, and which checks pass.

    Why it matters: a CI log says "failed"; only the per-step errors say by
    how much, at which steps, and whether a tolerance check would pass where
    an exact one failed.
    Evidence: per metric, on the steps both sides logged: max absolute error,
    max relative error ``|a - g| / |g|`` and its step, mean relative error,
    and per gate the steps outside its tolerance, the steps it allows, the
    formula, whether it is active for this job and whether the log says it
    failed.
    Remedy: see CI003-CI010 for what the figures imply.
    Thresholds: the repository's own tolerances (CI001). Severity: error when
    an active tolerance check fails, warning when only an exact-match check
    fails, info when everything passes.
    """

    @classmethod
    def remedies_for(cls, finding: Finding) -> tuple[Remedy, ...]:
        """Where a tolerance check fails: the step the metric first leaves its band."""
        if not finding.facts.get("tolerance_failed"):
            return ()
        return (
            Remedy(
                f"Look at {fact(finding, 'metric')} from step {fact(finding, 'first_step')}, where it "
                "first leaves the tolerance, and at what changed at that step",
                "a deviation from the first step is a changed input or code path; a late one, "
                "accumulated drift or a changed schedule",
                "minutes",
            ),
        )

    @classmethod
    def hypotheses(cls, finding: Finding, outcome: Outcome) -> list[Hypothesis] | None:
        """Recomputed figures: an exact check failing within tolerance is drift; a failing
        tolerance check keeps a real change open."""
        exact, tol = finding.facts.get("exact_failed"), finding.facts.get("tolerance_failed")
        if tol:
            return [
                hyp(
                    f"a real change moved {fact(finding, 'metric')}",
                    "open",
                    Cause.MODEL_CONVERGENCE,
                    "run the old code on the same runner and image: a real change reproduces the golden",
                    for_=said(finding),
                )
            ]
        if exact:
            return [
                hyp(
                    "numerical drift from another software/hardware stack",
                    "supported",
                    Cause.INFRA_RUNTIME,
                    "rerun the old code in the new image: it drifts the same way",
                    for_=said(finding),
                ),
                hyp(
                    f"a regression of {fact(finding, 'metric')}",
                    "rejected",
                    Cause.MODEL_CONVERGENCE,
                    against=["every tolerance check passes"],
                ),
            ]
        return None

    class Params(DetectorParams):
        pass

    @classmethod
    def ci_answers(cls, finding: Finding) -> dict[str, list[dict]]:
        """The recomputed comparison is a calculation; each of its checks passes or fails."""
        f = finding
        out: dict[str, list[dict]] = {
            "calculations": [
                {
                    "metric": f.facts["metric"],
                    "formula": f.facts.get("formula"),
                    "max_abs_diff": f.facts.get("max_abs"),
                    "max_rel_diff": f.facts.get("max_rel"),
                    "mean_rel_diff": f.facts.get("mean_rel"),
                    "max_rel_step": f.facts.get("max_rel_step"),
                    "steps_compared": f.facts.get("n_common"),
                    "median_golden": f.facts.get("median_golden"),
                    "median_actual": f.facts.get("median_actual"),
                    "text": f.message,
                }
            ],
            "passing": [],
            "failing": [],
        }
        for c in f.facts.get("checks", []):
            section = (
                "passing" if c.get("passed") else "failing" if c.get("passed") is False else None
            )
            if section is None:
                continue
            out[section].append(
                {
                    "metric": f.facts["metric"],
                    "check": c["kind"],
                    "name": f"{f.facts['metric']} {c['kind']}",
                    "passed": c.get("passed"),
                    "active": c.get("active"),
                    "detail": c.get("detail"),
                    "source": c["path"],
                    "line": c["line"],
                    "text": c["expr"],
                }
            )
        return out

    @classmethod
    def recomputed_gates(cls, finding: Finding) -> list[tuple[str | None, dict]]:
        """Every recomputed check, under the compared metric."""
        return [(finding.facts.get("metric"), c) for c in finding.facts.get("checks", [])]

    @classmethod
    def failing_gates(cls, finding: Finding) -> list[tuple[str | None, dict]]:
        """The active checks that fail by recomputation, under the compared metric."""
        return [
            (finding.facts.get("metric"), c)
            for c in finding.facts.get("checks", [])
            if c.get("passed") is False and c.get("active")
        ]

    def check(self, run, p):
        if context_of(run) is None:
            return
        for r in recomputed(run):
            act = r.active_checks
            tol_fail = [
                c
                for c in act
                if c.passed is False and c.gate.kind not in ("deterministic", "exact")
            ]
            exact_fail = [
                c for c in act if c.passed is False and c.gate.kind in ("deterministic", "exact")
            ]
            sev = Severity.ERROR if tol_fail else Severity.WARNING if exact_fail else Severity.INFO
            parts = []
            for c in r.checks:
                state = "passes" if c.passed else "fails" if c.passed is False else "not evaluated"
                extra = "" if c.active else " (not active in this job)"
                parts.append(f"{c.gate.kind} {tol_text(c)} {state} ({c.detail}){extra}")
            msg = (
                f"{r.metric}: max rel diff {fmt(r.max_rel, 3)} at step {r.max_rel_step} (max abs "
                f"{fmt(r.max_abs, 3)}), mean rel {fmt(r.mean_rel, 3)} over {r.n_common} common steps"
            )
            if not math.isfinite(r.median_rel_change) or abs(r.median_rel_change) >= 0.01:
                msg += f"; median {fmt(r.median_golden)} -> {fmt(r.median_actual)}"
            msg += ("; " + "; ".join(parts)) if parts else "; no gate applies to it"
            yield self.finding(
                sev,
                msg,
                evidence=[
                    SeriesEvidence(
                        metric=r.metric,
                        step_start=r.golden_steps[0],
                        step_end=r.golden_steps[1],
                        values={
                            "max_rel": r.max_rel,
                            "max_abs": r.max_abs,
                            "mean_rel": r.mean_rel,
                            "median_golden": r.median_golden,
                            "median_actual": r.median_actual,
                        },
                        note=f"golden {r.golden.source}{' [' + r.golden.label + ']' if r.golden.label else ''}"
                        f" vs actual {r.actual.source}{' [' + r.actual.label + ']' if r.actual.label else ''}",
                    )
                ]
                + [gate_evidence(c.gate) for c in r.checks],
                metric=r.metric,
                max_rel=r.max_rel,
                max_abs=r.max_abs,
                mean_rel=r.mean_rel,
                max_rel_step=r.max_rel_step,
                first_step=r.first_step,
                first_rel=r.first_rel,
                early_rel=r.early_rel,
                late_rel=r.late_rel,
                n_common=r.n_common,
                n_golden=r.n_golden,
                n_actual=r.n_actual,
                median_golden=r.median_golden,
                median_actual=r.median_actual,
                median_rel_change=r.median_rel_change,
                is_loss=r.is_loss,
                is_timing=r.is_timing,
                golden_source=r.golden.source,
                golden_label=r.golden.label,
                actual_source=r.actual.source,
                actual_label=r.actual.label,
                checks=[check_facts(c) for c in r.checks],
                tolerance_failed=bool(tol_fail),
                exact_failed=bool(exact_fail),
                band=r.band,
                spread_rel=r.spread_rel,
                nonfinite_actual=r.nonfinite_actual,
                formula="abs = |actual - golden|; rel = |actual - golden| / |golden| per common step",
            )
