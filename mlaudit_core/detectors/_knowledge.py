"""Helpers for what a detector knows besides its check: the hypotheses it adds to a report's
ledger (``Detector.hypotheses``) and the facts its remedies quote (``Detector.remedies_for``)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

from ..report import Cause, Finding, Hypothesis, Outcome
from ..signal import clip


def hyp(
    statement: str,
    status: Literal["supported", "open", "rejected"],
    cause: Cause,
    test: str | None = None,
    *,
    for_: Iterable[str] = (),
    against: Iterable[str] = (),
) -> Hypothesis:
    """One row of the ledger: ``status`` is supported, open or rejected; ``test`` the check whose
    result tells this hypothesis from its rivals; ``for_`` / ``against`` the evidence (clipped)."""
    return Hypothesis(
        statement=statement,
        status=status,
        cause=cause,
        evidence_for=[clip(x) for x in for_ if x],
        evidence_against=[clip(x) for x in against if x],
        discriminating_test=test,
    )


#: The hypothesis a claims detector (CL001-CL003) adds to the ledger, and its status for each
#: ``claim_status`` the detector reports.
CLAIMS_SUPPORTED = "the claims in the text are supported by the raw telemetry"
_CLAIM_LEDGER_STATUS: dict[str, Literal["supported", "open", "rejected"]] = {
    "contradicted": "rejected",
    "unverifiable": "open",
    "supported": "supported",
}


def claims_hypotheses(
    finding: Finding,
    claim_status: str,
    test: str = "recompute each quoted figure from the logged series",
) -> list[Hypothesis]:
    """The ledger row of a claims detector: "the claims are supported", supported, open or
    rejected as its ``claim_status`` (supported, unverifiable, contradicted) says; the finding's
    message is evidence for it when supported, against it otherwise."""
    status = _CLAIM_LEDGER_STATUS[claim_status]
    evidence = said(finding)
    return [
        hyp(
            CLAIMS_SUPPORTED,
            status,
            Cause.UNSUPPORTED_CLAIM,
            test,
            for_=evidence if status == "supported" else (),
            against=() if status == "supported" else evidence,
        )
    ]


def on_crash(
    finding: Finding,
    outcome: Outcome,
    statement: str,
    cause: Cause,
    test: str,
    *others: Hypothesis,
) -> list[Hypothesis] | None:
    """The ledger of a detector that explains a crash: on a crashed run, ``statement``
    (supported, the finding's message as its evidence, ``test`` the check that confirms it), then
    ``others``; None for any other outcome."""
    if outcome is not Outcome.CRASHED:
        return None
    return [hyp(statement, "supported", cause, test, for_=said(finding)), *others]


def model_regression(cleared_by: str | None) -> Hypothesis:
    """ "A model regression" beside a gate's own explanation: rejected with ``cleared_by`` (what
    rules it out: every correctness check passes, the run is inside the seeds' band) as the
    evidence against it, open without it."""
    return hyp(
        "a model regression",
        "rejected" if cleared_by else "open",
        Cause.MODEL_CONVERGENCE,
        against=[cleared_by] if cleared_by else [],
    )


def time_not_convergence() -> Hypothesis:
    """ "A model or convergence problem", rejected: the finding of a throughput or timing detector
    (SY001-SY008) is about time, not about the loss."""
    return hyp(
        "a model or convergence problem",
        "rejected",
        Cause.MODEL_CONVERGENCE,
        against=["the finding is about time, not about the loss"],
    )


def said(finding: Finding) -> list[str]:
    """The finding's message as the evidence of a hypothesis."""
    return [finding.message]


def fact(finding: Finding, key: str, default: str = "?") -> str:
    """A fact of ``finding`` as text for a remedy (``default`` when absent)."""
    v = finding.facts.get(key)
    return default if v is None or v == "" else str(v)
