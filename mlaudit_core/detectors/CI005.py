"""CI005 ci-timing-gate."""

from __future__ import annotations

from ..ci.context import check_facts, context_of, gate_evidence, recomputed, tol_text
from ..ci.recompute import standalone_checks
from ..report import Cause, Finding, Hypothesis, LogEvidence, Outcome, Severity
from ..signal import fmt
from ._knowledge import hyp, model_regression, said
from .base import Detector, DetectorParams, Remedy, failing_row


class TimingGate(Detector, code="CI005", name="ci-timing-gate", family="ci"):
    """A timing, throughput or timeout gate failed; says whether every loss/correctness check passed.

    Why it matters: a slower job, a tight timeout or a throughput threshold
    can fail CI while the model trains exactly as before. Such a failure is
    about the runtime or the gate policy, never a model regression, as long
    as the metric checks pass.
    Evidence: the gate (file:line, expression, bound), the measured value
    (printed by the failed assertion, or the median of the logged series) and
    how far past the bound it is; job-timeout lines from the log; and the
    metric checks that passed.
    Remedy: find what slowed the runtime (image, driver, hardware, data
    location) or re-baseline the bound if the slowdown is expected; for a
    timeout with passing metrics, raise the limit or shorten the test.
    Thresholds: the repository's own bounds.
    """

    remedies = (
        Remedy(
            "Time the same job on the old and new environment on the same node",
            "tells a slower runtime from a bound that was always tight",
            "minutes",
        ),
        Remedy(
            "Raise the time limit or re-baseline the bound when the slowdown is expected, or shorten "
            "the test",
            "a timing gate that fails while every metric passes is about the runtime, not the model",
            "minutes",
        ),
    )

    @classmethod
    def hypotheses(cls, finding: Finding, outcome: Outcome) -> list[Hypothesis] | None:
        """A timing gate: the runtime (supported), a model regression (rejected while the metric
        checks pass)."""
        passing = bool(finding.facts.get("metrics_pass"))
        return [
            hyp(
                "runtime slowdown or a tight time limit",
                "supported",
                Cause.INFRA_RUNTIME,
                "time the same job on the old and new environment on the same node",
                for_=said(finding),
            ),
            model_regression("every loss/correctness check passes" if passing else None),
        ]

    class Params(DetectorParams):
        pass

    @classmethod
    def ci_answers(cls, finding: Finding) -> dict[str, list[dict]]:
        """A failed timing gate is a failing check of the CI answers."""
        return {"failing": [failing_row(finding)]}

    @classmethod
    def failing_gates(cls, finding: Finding) -> list[tuple[str | None, dict]]:
        """Each timing check that failed, under its expression."""
        return [(c.get("expr"), c) for c in finding.facts.get("checks", [])]

    def check(self, run, p):
        ctx = context_of(run)
        if ctx is None:
            return
        recs = recomputed(run)
        metric_checks = [c for r in recs if not r.is_timing for c in r.active_checks]
        metrics_pass = bool(metric_checks) and all(c.passed is not False for c in metric_checks)
        metric_fail = any(c.passed is False for c in metric_checks)
        timing = _failed_timing_checks(ctx, recs)
        timeouts = ctx.timeouts
        if not timing and not timeouts:
            return
        parts = [_timing_part(c, ctx) for c in timing]
        if timeouts:
            parts.append(_timeout_part(ctx))
        state = (
            "every loss/metric check passed"
            if metrics_pass
            else "a metric check failed too"
            if metric_fail
            else "no metric check was evaluated"
        )
        yield self.finding(
            Severity.WARNING,
            "timing/timeout gate failed: " + "; ".join(parts) + f"; {state}",
            evidence=[gate_evidence(c.gate) for c in timing]
            + [LogEvidence(source=t.source, line=t.line, text=t.text) for t in timeouts[:3]],
            checks=[check_facts(c) for c in timing],
            timeouts=[t.text for t in timeouts],
            metrics_pass=metrics_pass,
            metric_fail=metric_fail,
            n_metric_checks=len(metric_checks),
            timeout=bool(timeouts),
        )


def _failed_timing_checks(ctx, recs) -> list:
    """The failed timing and throughput checks: active checks of timing comparisons (not
    deterministic or exact ones), then the standalone timing gates that failed."""
    timing = [
        c
        for r in recs
        if r.is_timing
        for c in r.active_checks
        if c.passed is False and c.gate.kind not in ("deterministic", "exact")
    ]
    return timing + [
        c
        for c in standalone_checks(ctx, recs)
        if c.passed is False and c.gate.kind in ("timing", "throughput")
    ]


def _timing_part(c, ctx) -> str:
    """One failed timing check as a sentence: where, the gate, its tolerance, the detail, and how
    far past the bound the printed measurement was."""
    over = ""
    m = [x for x in ctx.measured if c.gate.threshold and x.threshold == c.gate.threshold]
    if m and c.gate.threshold:
        over = f" ({fmt(100 * (m[0].value - c.gate.threshold) / abs(c.gate.threshold), 3)}% past the bound)"
    return f"{c.gate.path}:{c.gate.line} `{c.gate.expr}` ({tol_text(c)}): {c.detail}{over}"


def _timeout_part(ctx) -> str:
    """The job timeout as a sentence: the log line, and the configured limit when known."""
    timeouts = ctx.timeouts
    limits = [g for g in ctx.gates if g.kind == "timeout"]
    return f"job timeout at {timeouts[0].source}:{timeouts[0].line}: {timeouts[0].text}" + (
        f" (limit {limits[0].threshold:g} s at {limits[0].path}:{limits[0].line})" if limits else ""
    )
