"""CL001 claim-contradicted."""

from __future__ import annotations

from ..claims import check_claims, claim_evidence, claims_of
from ..report import FactEvidence, Finding, Hypothesis, Outcome, Severity
from ._knowledge import claims_hypotheses
from .base import Detector, DetectorParams, Remedy, failing_row

_MEMO = "mlaudit.claims.checked"


def checked(run):
    """The claim checks of this audit, computed once."""
    if _MEMO not in run.cache:
        run.cache[_MEMO] = check_claims(claims_of(run) or [], run)
    return run.cache[_MEMO]


def facts_of(ch) -> dict:
    c = ch.claim
    return {
        "text": c.text,
        "source": c.source,
        "line": c.line,
        "kind": c.kind,
        "metric": c.metric,
        "value": c.value,
        "percent": c.percent,
        "status": ch.status,
        "explanation": ch.explanation,
        "figures": ch.figures,
    }


class ClaimContradicted(Detector, code="CL001", name="claim-contradicted", family="claims"):
    """A numeric claim in the text (PR description, results note) is contradicted by the logged telemetry.

    Why it matters: prose summaries are lower-trust than raw telemetry; a
    decision (merge, publish, ship) built on a wrong figure is unsupported.
    Evidence: the claim with its file and line, the logged figures it was
    checked against (final, mean of the last 10%, best; or the measured
    speedup, or the baseline comparison) and the precision allowed.
    Remedy: correct the claim to the logged figure, or find the run that
    produced the claimed one.
    Thresholds: half a unit in the claim's last written digit; speedups
    within 10% (see ``mlaudit_core.claims``). Runs only when claims are given
    (``--claims FILE``).
    """

    remedies = (
        Remedy(
            "Correct the claim(s) in the text to the logged figures before merging / publishing",
            "the raw telemetry contradicts them",
            "minutes",
        ),
        Remedy(
            "Find the run that produced the claimed figure, if any, and compare its config with this one",
            "tells a typo from a claim about another run",
            "minutes",
        ),
    )

    @classmethod
    def hypotheses(cls, finding: Finding, outcome: Outcome) -> list[Hypothesis] | None:
        """A contradicted claim: the text is unsupported (the claim rejected)."""
        return claims_hypotheses(finding, cls.claim_status)

    class Params(DetectorParams):
        pass

    claim_status = "contradicted"

    @classmethod
    def ci_answers(cls, finding: Finding) -> dict[str, list[dict]]:
        """The contradicted claim is a failing check and a claim of the CI answers."""
        f = finding
        return {
            "failing": [failing_row(f)],
            "claims": [
                {
                    "text": f.facts.get("text"),
                    "status": f.facts.get("status"),
                    "detail": f.facts.get("explanation"),
                }
            ],
        }

    def check(self, run, p):
        if not claims_of(run):
            return
        for ch in checked(run):
            if ch.status == "contradicted":
                yield self.finding(
                    Severity.ERROR,
                    f"claim {ch.claim.text!r} ({ch.claim.source}:{ch.claim.line}) "
                    f"is contradicted: {ch.explanation}",
                    evidence=[
                        claim_evidence(ch),
                        FactEvidence(text=ch.explanation, values=ch.figures),
                    ],
                    **facts_of(ch),
                )
