"""CI009 ci-metric-definition-change."""

from __future__ import annotations

from ..ci.context import context_of, gate_evidence, recomputed, tol_text
from ..report import Cause, Finding, Hypothesis, LogEvidence, Outcome, Severity
from ..signal import fmt
from ._knowledge import fact, hyp, said
from .base import Detector, DetectorParams, Remedy
from .CI008 import env_deltas


class MetricDefinitionChange(
    Detector, code="CI009", name="ci-metric-definition-change", family="ci"
):
    """An evaluation metric moved while the loss matched its golden values, and a metric library changed version.

    Why it matters: the loss is computed by the training code; an evaluation
    metric (F1, accuracy, BLEU ...) by a library. If the loss is unchanged the
    model is unchanged, so a metric that moved with a library upgrade changed
    its *definition* (defaults, averaging, tokenisation), not its value.
    Evidence: the loss checks that pass, the metric check that fails with its
    figures, and the version change of the metric library.
    Remedy: recompute the metric from the same predictions with both library
    versions; pin the library or re-record the golden value for the new
    definition, and record package versions with golden files.
    Thresholds: the repository's own tolerances.
    """

    @classmethod
    def remedies_for(cls, finding: Finding) -> tuple[Remedy, ...]:
        """Confirm the definition change, then pin the library or re-record the golden value."""
        m, lib = fact(finding, "metric"), fact(finding, "library")
        old, new = fact(finding, "old"), fact(finding, "new")
        return (
            Remedy(
                f"Recompute {m} from the same predictions with {lib} {old} and {new}",
                "confirms the definition change in minutes",
                "minutes",
            ),
            Remedy(
                f"Pin {lib}=={old} for the gate, or re-record the golden {m} under {new} and store "
                "package versions with golden files",
                "the gate compares two definitions",
                "minutes",
            ),
        )

    @classmethod
    def hypotheses(cls, finding: Finding, outcome: Outcome) -> list[Hypothesis] | None:
        """The metric's definition changed (supported), the model did not (the loss matched)."""
        return [
            hyp(
                "the metric's definition changed with a library upgrade",
                "supported",
                Cause.METRIC_POLICY,
                "recompute the metric from the same predictions with both versions",
                for_=said(finding),
            ),
            hyp(
                "the model changed",
                "rejected",
                Cause.MODEL_CONVERGENCE,
                against=["the loss matches its golden values"],
            ),
        ]

    class Params(DetectorParams):
        pass

    def check(self, run, p):
        ctx = context_of(run)
        if ctx is None:
            return
        libs = [d for d in env_deltas(ctx) if d["metric_library"]]
        if not libs:
            return
        recs = recomputed(run)
        losses = [r for r in recs if r.is_loss and r.active_checks]
        if not _losses_match(losses):
            return
        for r in recs:
            if r.is_loss or r.is_timing:
                continue
            bad = [c for c in r.active_checks if c.passed is False]
            if not bad:
                continue
            lib = libs[0]
            loss_txt = ", ".join(f"{x.metric} max rel {fmt(x.max_rel, 3)}" for x in losses)
            yield self.finding(
                Severity.WARNING,
                f"{r.metric} moved (max rel {fmt(r.max_rel, 3)}, {tol_text(bad[0])} fails) while the loss matches "
                f"its golden values ({loss_txt}) and {lib['name']} changed {lib['old'] or '?'} -> "
                f"{lib['new'] or '?'}: the metric's definition changed, not the model",
                evidence=[gate_evidence(bad[0].gate)]
                + (
                    [LogEvidence(source=lib["source"], line=lib["line"], text=lib["text"])]
                    if lib["line"]
                    else []
                ),
                metric=r.metric,
                max_rel=r.max_rel,
                library=lib["name"],
                old=lib["old"],
                new=lib["new"],
                loss_metrics=[x.metric for x in losses],
                loss_max_rel=[x.max_rel for x in losses],
            )


def _losses_match(losses: list) -> bool:
    """Some loss was checked and no tolerance check of a loss failed (a bit-exact one may)."""
    return bool(losses) and not any(
        c.passed is False and c.gate.kind not in ("deterministic", "exact")
        for r in losses
        for c in r.active_checks
    )
