"""BL002 baseline-deltas."""

from __future__ import annotations

from ..baseline.compare import EMITTED, baselines_of, latest_comparisons
from ..baseline.deltas import find_deltas
from ..report import Cause, ConfigEvidence, Finding, Hypothesis, Outcome, Severity
from ._knowledge import hyp, said
from .base import Detector, DetectorParams, Remedy


class BaselineDeltas(Detector, code="BL002", name="baseline-deltas", family="baseline"):
    """What differs between the run and its baselines, ranked by likely effect on the metrics.

    Why it matters: a regression is explained by a change; listing every logged
    difference (config and hyperparameters, data version / dataset hash / row
    and class counts, code commit, package versions, hardware, precision) in
    the order they usually matter points at the first thing to swap back.
    Evidence: each delta as key, baseline value(s) -> run value, its category,
    the layer it belongs to and its rank score.
    Remedy: rerun the baseline with only the top-ranked delta applied.
    Thresholds: category weights data 6 > optimiser config 5 > precision 4.5 >
    model 4 > packages 3.5 > code 3 = metric settings 3 > other config 2 >
    hardware 1.5, times the size of a numeric change, x0.3 when the baselines
    already differ on the key (see docs/baselines.md). Seeds and run identity
    are never deltas.
    """

    @classmethod
    def remedies_for(cls, finding: Finding) -> tuple[Remedy, ...]:
        """Swap back the top-ranked difference first."""
        top = (finding.facts.get("deltas") or [{}])[0]
        what = (
            f"{top.get('key')} ({top.get('category')})" if top.get("key") else "the top difference"
        )
        return (
            Remedy(
                f"Rerun the baseline with only {what} changed to this run's value",
                "one controlled swap tells whether that difference moved the metrics",
                "hours",
            ),
        )

    @classmethod
    def hypotheses(cls, finding: Finding, outcome: Outcome) -> list[Hypothesis] | None:
        """The top-ranked difference as the explanation, open until the swap is run."""
        top = (finding.facts.get("deltas") or [{}])[0]
        if not top.get("key"):
            return None
        return [
            hyp(
                f"the difference in {top.get('key')} ({top.get('category')}, {top.get('layer')}) "
                "moved the metrics",
                "open",
                Cause.DATA_CONFIG,
                "rerun the baseline with only this difference applied",
                for_=said(finding),
            )
        ]

    class Params(DetectorParams):
        max_listed: int = 10

    def check(self, run, p):
        if run.cache.get(EMITTED) or not baselines_of(run):
            return
        deltas = find_deltas(run, baselines_of(run))
        if not deltas:
            return
        worse = any(
            c.band.verdict == "worse" for c in latest_comparisons(run) if c.kind == "learning"
        )
        top = deltas[: p.max_listed]
        sev = Severity.WARNING if worse else Severity.INFO
        lead = "; ".join(d.describe() for d in top[:3])
        yield self.finding(
            sev,
            f"{len(deltas)} logged difference(s) from the baselines, most likely effect first: {lead}",
            evidence=[
                ConfigEvidence(
                    key=f"{d.source}:{d.key}",
                    value=f"{d.baseline_value if d.consistent else sorted({str(v) for v in d.baseline_values})}"
                    f" -> {d.run_value} ({d.category}, {d.layer}, score {d.score})",
                )
                for d in top
            ],
            deltas=[
                {
                    "key": d.key,
                    "source": d.source,
                    "run": d.run_value,
                    "baselines": d.baseline_values,
                    "category": d.category,
                    "layer": d.layer,
                    "consistent": d.consistent,
                    "score": d.score,
                    "notes": d.notes,
                }
                for d in deltas
            ],
        )
