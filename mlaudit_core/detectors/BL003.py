"""BL003 first-broken-layer."""

from __future__ import annotations

from ..baseline.compare import EMITTED, baselines_of, latest_comparisons
from ..baseline.deltas import find_deltas
from ..baseline.layers import MetricMove, analyse
from ..report import FactEvidence, Finding, Hypothesis, Outcome, Severity
from ._knowledge import fact
from .base import Detector, DetectorParams, Remedy


class FirstBrokenLayer(Detector, code="BL003", name="first-broken-layer", family="baseline"):
    """The earliest pipeline boundary whose logged invariants differ from the baselines, with a hypothesis ledger.

    Why it matters: differences downstream of the first broken boundary are
    often consequences, not causes; blaming the most visible one (a metric,
    a hyperparameter) hides the fault.
    Evidence: the boundaries in causal order - source and schema, labels,
    split, features, training config, model artifact, metric and decision
    logic, runtime - the first with a consistent delta, the later ones as
    consequences, and every hypothesis (supported, open, rejected) with the
    test that would tell them apart. A loss within the noise band rejects every
    upstream change for an accuracy-like metric that moved: only the metric
    computation (e.g. a metric-library upgrade) can move a metric without the loss.
    Remedy: run the discriminating test of the supported hypothesis first.
    Thresholds: none of its own; it uses BL001's verdicts and BL002's deltas.
    """

    @classmethod
    def remedies_for(cls, finding: Finding) -> tuple[Remedy, ...]:
        """The discriminating test of the hypothesis the layers support."""
        for h in finding.facts.get("hypotheses") or []:
            if h.get("status") == "supported" and h.get("discriminating_test"):
                return (
                    Remedy(
                        str(h["discriminating_test"]),
                        f"tests the supported hypothesis: {h.get('statement')}",
                        "hours",
                    ),
                )
        return (
            Remedy(
                f"Compare the invariants at the {fact(finding, 'first_layer', 'first differing')} "
                "boundary (row counts, hashes, schemas) between this run and a baseline",
                "differences after the first broken boundary are often its consequences",
                "hours",
            ),
        )

    @classmethod
    def ledger(cls, finding: Finding) -> list[Hypothesis]:
        """The layer ledger the finding carries, folded into the report whatever the verdict."""
        return [Hypothesis.model_validate(h) for h in finding.facts.get("hypotheses") or []]

    @classmethod
    def hypotheses(cls, finding: Finding, outcome: Outcome) -> list[Hypothesis] | None:
        """The layer ledger the finding carries (seed noise, then one hypothesis per boundary)."""
        return [Hypothesis.model_validate(h) for h in finding.facts.get("hypotheses") or []] or None

    class Params(DetectorParams):
        pass

    def check(self, run, p):
        if run.cache.get(EMITTED) or not baselines_of(run):
            return
        comps = [c for c in latest_comparisons(run) if c.kind == "learning"]
        if not comps:
            return
        rep = analyse(
            find_deltas(run, baselines_of(run)),
            [MetricMove(c.key, c.is_loss, c.band.verdict, c.summary()) for c in comps],
        )
        sev = Severity.WARNING if rep.cause is not None else Severity.INFO
        yield self.finding(
            sev,
            rep.message,
            evidence=[FactEvidence(text=f"consequence: {c}") for c in rep.consequences[:6]]
            or [FactEvidence(text=rep.message)],
            first_layer=rep.first,
            cause=rep.cause.value if rep.cause else None,
            consequences=rep.consequences,
            hypotheses=[h.model_dump(mode="json") for h in rep.hypotheses],
        )
