"""Helpers for what a detector knows besides its check: the hypotheses it adds to a report's
ledger (``Detector.hypotheses``) and the facts its remedies quote (``Detector.remedies_for``)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

from ..report import Cause, Finding, Hypothesis
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


def said(finding: Finding) -> list[str]:
    """The finding's message as the evidence of a hypothesis."""
    return [finding.message]


def fact(finding: Finding, key: str, default: str = "?") -> str:
    """A fact of ``finding`` as text for a remedy (``default`` when absent)."""
    v = finding.facts.get(key)
    return default if v is None or v == "" else str(v)
