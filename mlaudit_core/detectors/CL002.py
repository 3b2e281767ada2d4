"""CL002 claim-unverifiable."""

from __future__ import annotations

from ..claims import claim_evidence, claims_of
from ..report import Finding, Hypothesis, Outcome, Severity
from ._knowledge import claims_hypotheses
from .base import Detector, DetectorParams, Remedy
from .CL001 import checked, facts_of


class ClaimUnverifiable(Detector, code="CL002", name="claim-unverifiable", family="claims"):
    """Numeric claims in the text that the telemetry cannot check (metric not logged, no baseline given).

    Why it matters: a claim nobody can recompute is unsupported, however
    plausible; it should not carry a decision.
    Evidence: each claim with its file and line and what is missing to check it.
    Remedy: log the quoted metric, or attach the baseline runs / golden values
    the comparison needs.
    Thresholds: none. Runs only when claims are given.
    """

    remedies = (
        Remedy(
            "Log the metrics the claims quote (or attach the baseline runs) so they can be checked",
            "unverifiable claims are unsupported",
            "minutes",
        ),
    )

    @classmethod
    def hypotheses(cls, finding: Finding, outcome: Outcome) -> list[Hypothesis] | None:
        """Claims the telemetry cannot check: open."""
        return claims_hypotheses(
            finding,
            cls.claim_status,
            "log the quoted metrics or attach the baseline runs, then recompute them",
        )

    class Params(DetectorParams):
        pass

    claim_status = "unverifiable"

    @classmethod
    def ci_answers(cls, finding: Finding) -> dict[str, list[dict]]:
        """Each unverifiable claim is a claim of the CI answers."""
        return {
            "claims": [
                dict(c, detail=c.get("explanation")) for c in finding.facts.get("claims", [])
            ]
        }

    def check(self, run, p):
        if not claims_of(run):
            return
        bad = [ch for ch in checked(run) if ch.status == "unverifiable"]
        if bad:
            yield self.finding(
                Severity.WARNING,
                f"{len(bad)} claim(s) cannot be checked against the telemetry: "
                + "; ".join(f"{ch.claim.text!r} ({ch.explanation})" for ch in bad[:4]),
                evidence=[claim_evidence(ch) for ch in bad[:10]],
                claims=[facts_of(ch) for ch in bad],
            )
