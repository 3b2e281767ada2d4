"""CI007 ci-failure-evidence."""

from __future__ import annotations

from ..ci.context import context_of
from ..report import Cause, Finding, Hypothesis, LogEvidence, Outcome, Severity
from ._knowledge import hyp, said
from .base import Detector, DetectorParams, Remedy


class FailureEvidence(Detector, code="CI007", name="ci-failure-evidence", family="ci"):
    """What the CI logs say failed and passed: failure lines, test outcomes, failed metric names.

    Why it matters: the starting point of the audit, with every line cited so
    it can be checked, and the passing checks next to the failing ones (a
    failure is read differently when the tolerance lane passed).
    Evidence: failure lines with a context window, failed and passed tests,
    the metric names the comparison reported as failed, pass lines.
    Remedy: none by itself.
    Thresholds: none. Lines starting with ``# `` are annotations, not log content.
    """

    remedies = (
        Remedy(
            "Match each failure line to the gate or test that raised it (file and line)",
            "which gate said no decides whether the failure is about the model at all",
            "minutes",
        ),
    )

    @classmethod
    def hypotheses(cls, finding: Finding, outcome: Outcome) -> list[Hypothesis] | None:
        """Failed tests without a failed metric: the failure is not a metric comparison."""
        if not finding.facts.get("failed_tests") or finding.facts.get("failed_metrics"):
            return None
        return [
            hyp(
                "the failure is not a metric comparison (a test error, a crash, a harness problem)",
                "open",
                Cause.INCONCLUSIVE,
                "read the failing test's assertion and traceback",
                for_=said(finding),
            )
        ]

    class Params(DetectorParams):
        max_listed: int = 12

    def check(self, run, p):
        ctx = context_of(run)
        if ctx is None or not (
            ctx.failure_lines
            or ctx.failed_metrics
            or any(t.outcome in ("failed", "error") for t in ctx.tests)
        ):
            return
        failed = [t.test for t in ctx.tests if t.outcome in ("failed", "error")]
        passed = [t.test for t in ctx.tests if t.outcome == "passed"]
        msg = f"{len(ctx.failure_lines)} failure line(s) in the logs"
        if ctx.failed_metrics:
            fl = ctx.failed_metrics_line
            msg += f"; metrics reported failed: {', '.join(ctx.failed_metrics)}"
            msg += f" ({fl.source}:{fl.line})" if fl else ""
        if failed:
            msg += f"; failed tests: {', '.join(failed[:5])}"
        if passed:
            msg += f"; passed tests: {len(passed)}"
        if ctx.pass_lines:
            msg += f"; {len(ctx.pass_lines)} pass line(s) (first at {ctx.pass_lines[0].source}:{ctx.pass_lines[0].line})"
        first = ctx.failed_metrics_line
        lines = ([first] if first else []) + [
            x
            for x in ctx.failure_lines
            if not (first and (x.source, x.line) == (first.source, first.line))
        ]
        yield self.finding(
            Severity.ERROR,
            msg,
            evidence=[
                LogEvidence(source=x.source, line=x.line, text=x.text)
                for x in lines[: p.max_listed]
            ],
            failed_metrics=ctx.failed_metrics,
            failed_tests=failed,
            passed_tests=passed,
            failure_lines=[
                {"source": x.source, "line": x.line, "text": x.text, "context": x.context}
                for x in ctx.failure_lines[: p.max_listed]
            ],
            pass_lines=[
                {"source": x.source, "line": x.line, "text": x.text}
                for x in ctx.pass_lines[: p.max_listed]
            ],
        )
