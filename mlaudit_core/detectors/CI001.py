"""CI001 ci-gate-inventory."""

from __future__ import annotations

from ..ci.context import context_of, gate_evidence
from ..report import Cause, FactEvidence, Finding, Hypothesis, Outcome, Severity
from ._knowledge import hyp, said
from .base import Detector, DetectorParams, Remedy


class GateInventory(Detector, code="CI001", name="ci-gate-inventory", family="ci"):
    """How the repository gates metrics: golden files and every comparison, cited by file and line.

    Why it matters: a CI failure means "a gate said no"; which gate (exact
    match, tolerance, timing, timeout) decides whether it is about the model
    at all.
    Evidence: each comparison found in the tests and scripts (pytest.approx,
    assert_allclose / assert_close, isclose, exact equality, Megatron-LM
    CHECK_THRESHOLDS with DeterministicTest / ApproximateTest, timing and
    throughput thresholds, pytest and CI job timeouts, rtol/atol settings)
    with its file:line, expression, tolerance and formula; the golden-value
    files; the list of checked metrics when the repo declares one.
    Remedy: none; this is the map the other CI findings refer to.
    Thresholds: none. Python is parsed with ``ast``, never executed. Runs only
    inside ``mlaudit ci``.
    """

    remedies = (
        Remedy(
            "Give every gated metric a tolerance gate beside any exact one, and record the environment "
            "with each golden file",
            "an exact gate alone fails on numerical drift; a tolerance gate tells drift from a change",
            "minutes",
        ),
    )

    @classmethod
    def hypotheses(cls, finding: Finding, outcome: Outcome) -> list[Hypothesis] | None:
        """A repository that gates no metric: a passing job says nothing of the model."""
        if finding.facts.get("gates"):
            return None
        return [
            hyp(
                "no gate checks a metric: the CI result says nothing of the model",
                "supported",
                Cause.METRIC_POLICY,
                "add a tolerance gate on the training loss against golden values",
                for_=said(finding),
            )
        ]

    class Params(DetectorParams):
        max_listed: int = 25

    @classmethod
    def ci_answers(cls, finding: Finding) -> dict[str, list[dict]]:
        """The inventory is the CI answers' list of gates."""
        return {
            "gates": [
                {
                    "source": g["path"],
                    "line": g["line"],
                    "text": g["expr"],
                    "metric": g.get("metric"),
                    "kind": g["kind"],
                    "rtol": g.get("rtol"),
                    "atol": g.get("atol"),
                    "threshold": g.get("threshold"),
                    "formula": g.get("formula"),
                }
                for g in finding.facts["gates"]
            ]
        }

    def check(self, run, p):
        ctx = context_of(run)
        if ctx is None or not (ctx.gates or ctx.golden_files):
            return
        kinds: dict[str, int] = {}
        for g in ctx.gates:
            kinds[g.kind] = kinds.get(g.kind, 0) + 1
        files = sorted({g.path for g in ctx.gates})
        msg = (
            f"{len(ctx.gates)} metric gate(s) in {len(files)} file(s) ("
            + ", ".join(f"{n} {k}" for k, n in sorted(kinds.items()))
            + ")"
        )
        if ctx.golden_files:
            msg += f"; golden files: {', '.join(ctx.golden_files[:5])}"
        if ctx.checked_metrics is not None:
            msg += f"; checked metrics: {', '.join(ctx.checked_metrics)}"
        ev = [gate_evidence(g) for g in ctx.gates[: p.max_listed]]
        if ctx.checked_metrics_source is not None:
            w = ctx.checked_metrics_source
            from ..report import CodeEvidence

            ev.append(CodeEvidence(path=w.source, line=w.line, text=w.text))
        yield self.finding(
            Severity.INFO,
            msg,
            evidence=ev or [FactEvidence(text="golden files: " + ", ".join(ctx.golden_files))],
            gates=[
                {
                    "path": g.path,
                    "line": g.line,
                    "expr": g.expr,
                    "kind": g.kind,
                    "metric": g.metric,
                    "rtol": g.rtol,
                    "atol": g.atol,
                    "threshold": g.threshold,
                    "op": g.op,
                    "function": g.function,
                    "formula": g.formula,
                    "style": g.style,
                }
                for g in ctx.gates
            ],
            golden_files=ctx.golden_files,
            checked_metrics=ctx.checked_metrics,
        )
