"""CI010 ci-gate-tighter-than-noise."""

from __future__ import annotations

from ..ci.context import context_of, gate_evidence, recomputed, tol_text
from ..report import Cause, Finding, Hypothesis, Outcome, SeriesEvidence, Severity
from ..signal import fmt
from ._knowledge import fact, hyp, model_regression, said
from .base import Detector, DetectorParams, Remedy


class GateTighterThanNoise(Detector, code="CI010", name="ci-gate-tighter-than-noise", family="ci"):
    """A tolerance gate is tighter than the run-to-run noise, or failed while the run is inside the golden noise band.

    Why it matters: when several seeds (or repeats) of the golden run spread
    wider than the tolerance, the gate fails on noise; a run inside the band
    of the golden seeds is not a regression whatever one golden says.
    Evidence: the median relative spread of the golden seeds (or of repeated
    actual runs) per step, the gate's tolerance, and the band verdict of the
    run against the golden seeds.
    Remedy: set the tolerance from the measured spread (e.g. k = 2 standard
    deviations) or compare against the seed band instead of one golden run.
    Thresholds: spread compared directly with the gate's rtol; the band of
    BL001 (Student-t prediction interval across >= 3 seeds).
    """

    @classmethod
    def remedies_for(cls, finding: Finding) -> tuple[Remedy, ...]:
        """A tolerance from the measured spread."""
        return (
            Remedy(
                f"Set {fact(finding, 'metric')}'s tolerance from the measured seed spread (about 2 "
                "standard deviations) or compare against the seed band instead of one golden run",
                "a gate tighter than run-to-run noise fails on noise",
                "minutes",
            ),
        )

    @classmethod
    def hypotheses(cls, finding: Finding, outcome: Outcome) -> list[Hypothesis] | None:
        """The gate is tighter than noise (supported); inside the band, no regression."""
        inside = bool(finding.facts.get("inside_band"))
        return [
            hyp(
                "the gate is tighter than run-to-run noise",
                "supported",
                Cause.METRIC_POLICY,
                "rerun the baseline config with 3 seeds and compare the spread with the tolerance",
                for_=said(finding),
            ),
            model_regression("the run is inside the golden seeds' band" if inside else None),
        ]

    class Params(DetectorParams):
        pass

    def check(self, run, p):
        if context_of(run) is None:
            return
        for r in recomputed(run):
            tol = [
                c
                for c in r.active_checks
                if c.gate.kind
                not in ("deterministic", "exact", "timing", "throughput", "threshold")
                and c.gate.rtol
            ]
            if not tol or r.spread_rel is None:
                continue
            tight = [c for c in tol if r.spread_rel > (c.gate.rtol or 0)]
            inside = (
                r.band is not None
                and r.band["verdict"] == "within_noise"
                and any(c.passed is False for c in tol)
            )
            if not tight and not inside:
                continue
            c = (tight or tol)[0]
            msg = (
                f"{r.metric}: the {tol_text(c)} gate is "
                + (
                    f"tighter than the run-to-run spread ({fmt(100 * r.spread_rel, 3)}% median relative range)"
                    if tight
                    else "failing"
                )
                + (
                    f"; the run is within the noise band of {r.band['n']} golden seeds "
                    f"({fmt(r.band['band_lo'])}..{fmt(r.band['band_hi'])}, tail mean {fmt(r.band['run_tail_mean'])})"
                    if inside
                    else ""
                )
            )
            yield self.finding(
                Severity.WARNING,
                msg,
                evidence=[
                    SeriesEvidence(
                        metric=r.metric, values={"spread_rel": r.spread_rel, "rtol": c.gate.rtol}
                    ),
                    gate_evidence(c.gate),
                ],
                metric=r.metric,
                spread_rel=r.spread_rel,
                rtol=c.gate.rtol,
                inside_band=inside,
                band=r.band,
            )
