"""CL003 claim-supported."""

from __future__ import annotations

from ..claims import claim_evidence, claims_of
from ..report import Finding, Hypothesis, Outcome, Severity
from ._knowledge import claims_hypotheses
from .base import Detector, DetectorParams, Remedy
from .CL001 import checked, facts_of


class ClaimSupported(Detector, code="CL003", name="claim-supported", family="claims"):
    """Numeric claims in the text that the logged telemetry reproduces.

    Why it matters: the checked claims are the part of the text a reviewer
    can rely on; listing them with the figures makes the check auditable.
    Evidence: each claim, the logged figure that matches it and which one
    (final, tail mean or best - a claim that quotes the best value while the
    final one is worse says so).
    Remedy: none.
    Thresholds: as CL001. Runs only when claims are given.
    """

    remedies = (
        Remedy(
            "Quote the checked figures with the run id they come from",
            "keeps the supported claims auditable",
            "minutes",
        ),
    )

    @classmethod
    def hypotheses(cls, finding: Finding, outcome: Outcome) -> list[Hypothesis] | None:
        """Claims the telemetry reproduces: supported."""
        return claims_hypotheses(finding, cls.claim_status)

    class Params(DetectorParams):
        pass

    claim_status = "supported"

    @classmethod
    def ci_answers(cls, finding: Finding) -> dict[str, list[dict]]:
        """Each supported claim is a claim of the CI answers."""
        return {
            "claims": [
                dict(c, detail=c.get("explanation")) for c in finding.facts.get("claims", [])
            ]
        }

    def check(self, run, p):
        if not claims_of(run):
            return
        ok = [ch for ch in checked(run) if ch.status == "supported"]
        if ok:
            yield self.finding(
                Severity.INFO,
                f"{len(ok)} claim(s) reproduced from the telemetry: "
                + "; ".join(f"{ch.claim.text!r} ({ch.explanation})" for ch in ok[:4]),
                evidence=[claim_evidence(ch) for ch in ok[:10]],
                claims=[facts_of(ch) for ch in ok],
            )
