"""How the claims checked against the telemetry change a verdict (``mlaudit_core.claims`` checks
them; the claims detectors say what each finding means through ``Detector.claim_status``)."""

from __future__ import annotations

from ..detectors import detector_for
from ..report import AuditReport, Cause, Finding, Hypothesis, NextAction


def _with_status(report: AuditReport, status: str) -> list[Finding]:
    """The report's findings whose detector reports claims with ``status``."""
    return [f for f in report.findings if detector_for(f.code).claim_status == status]


def _first_remedy(report: AuditReport, f: Finding) -> None:
    """Put the first next action the claims detector of ``f`` recommends
    (``Detector.remedies_for``) at the head of the report's actions."""
    for r in detector_for(f.code).remedies_for(f)[:1]:
        report.next_actions.insert(0, NextAction(action=r.action, why=r.why, cost=r.cost))


def apply_claims(report: AuditReport) -> AuditReport:
    """Make a report built on contradicted (or only unverifiable) claims say ``unsupported_claim``.

    The outcome is kept (what happened to the run does not change); the cause,
    summary and confidence change, and the earlier verdict is kept in the summary.
    Returns the same report, changed in place.
    """
    bad = _with_status(report, "contradicted")
    unver = _with_status(report, "unverifiable")
    good = _with_status(report, "supported")
    v = report.verdict
    if bad:
        v.summary = (
            f"The claims do not hold against the telemetry: {bad[0].message}"
            + (f" (+{len(bad) - 1} more)" if len(bad) > 1 else "")
            + f". Underlying verdict: {v.outcome.value}/{v.cause.value}: {v.summary}"
        )
        v.cause, v.confidence, v.inconclusive = Cause.UNSUPPORTED_CLAIM, 0.85, False
        report.conclusions.insert(0, bad[0].message)
        _first_remedy(report, bad[0])
    elif unver and not good:
        n = len(unver[0].facts.get("claims", []))
        v.summary = (
            f"None of the {n} claim(s) can be verified from the telemetry. Underlying verdict: "
            f"{v.outcome.value}/{v.cause.value}: {v.summary}"
        )
        v.cause, v.confidence = Cause.UNSUPPORTED_CLAIM, 0.5
        _first_remedy(report, unver[0])
    if bad or unver or good:
        report.hypotheses.insert(
            0,
            Hypothesis(
                statement="the claims in the text are supported by the raw telemetry",
                status="rejected" if bad else "supported" if good and not unver else "open",
                cause=Cause.UNSUPPORTED_CLAIM,
                evidence_for=[f.message for f in good][:3],
                evidence_against=[f.message for f in bad + unver][:3],
                discriminating_test="recompute each quoted figure from the logged series (done above)",
            ),
        )
    return report
