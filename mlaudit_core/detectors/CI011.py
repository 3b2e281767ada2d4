"""CI011 ci-job-crash."""

from __future__ import annotations

import re

from ..ci.context import context_of
from ..report import Cause, Finding, Hypothesis, LogEvidence, Outcome, Severity
from ._knowledge import hyp, said
from .base import Detector, DetectorParams, Remedy

#: Exceptions raised by a metric comparison itself, not by the code under test.
_GATE_EXC = re.compile(
    r"AssertionError|NotApproximateError|NotDeterminsticError|NotDeterministicError|"
    r"could not be broadcast|shapes? .*mismatch|Failed: Timeout",
    re.IGNORECASE,
)


class JobCrash(Detector, code="CI011", name="ci-job-crash", family="ci"):
    """The job crashed: an infrastructure signature (OOM, NCCL timeout, killed worker, disk full, preemption) or an exception in the code under test.

    Why it matters: a job that did not finish has no metrics to compare; the
    cause is the crash, and golden values are irrelevant to it.
    Evidence: the signature or exception line with its context window and
    the raising frame. Exceptions raised by the comparison itself
    (AssertionError from a gate, a shape mismatch between golden and actual
    arrays) are left to the gate findings.
    Remedy: infrastructure: rerun / fix the resource; exception: reproduce at
    the raising frame.
    Thresholds: the signature catalog of ``mlaudit_core.signatures``.
    """

    @classmethod
    def remedies_for(cls, finding: Finding) -> tuple[Remedy, ...]:
        """Infrastructure: rerun and fix the resource; an exception: reproduce it where it was raised."""
        if finding.facts.get("kind") == "infra":
            return (
                Remedy(
                    "Rerun the job; if it recurs, fix the resource the signature names "
                    "(memory, interconnect, disk, node)",
                    "an infrastructure failure says nothing about the model",
                    "minutes",
                ),
            )
        return (
            Remedy(
                f"Reproduce the exception at {finding.facts.get('raising') or 'the raising frame'}"
                " on one batch",
                "the traceback names the failing code",
                "minutes",
            ),
        )

    @classmethod
    def hypotheses(cls, finding: Finding, outcome: Outcome) -> list[Hypothesis] | None:
        """A crashed job: infrastructure or the code under test, by the signature."""
        infra = finding.facts.get("kind") == "infra"
        return [
            hyp(
                "infrastructure failure",
                "supported" if infra else "open",
                Cause.INFRA_RUNTIME,
                "rerun on another node",
                for_=said(finding) if infra else [],
            ),
            hyp(
                "an exception in the code under test",
                "open" if infra else "supported",
                Cause.CORRECTNESS_BUG,
                "reproduce the exception at the raising frame on one batch",
                for_=[] if infra else said(finding),
            ),
        ]

    class Params(DetectorParams):
        pass

    def check(self, run, p):
        ctx = context_of(run)
        if ctx is None:
            return
        for x in ctx.infra[:1]:
            yield self.finding(
                Severity.ERROR,
                f"infrastructure failure in the job: {x.text[:200]}",
                evidence=[LogEvidence(source=x.source, line=x.line, text=x.text)],
                kind="infra",
                signature=x.kind.split(":", 1)[-1],
                context=x.context,
            )
        for x in ctx.exceptions:
            if _GATE_EXC.search(x.text) or _GATE_EXC.search(x.kind):
                continue
            exc = x.kind.split(":", 1)[-1].split("@")[0]
            yield self.finding(
                Severity.ERROR,
                f"the code under test raised {x.text[:200]}",
                evidence=[LogEvidence(source=x.source, line=x.line, text=x.text)],
                kind="exception",
                exception_type=exc,
                raising=x.kind.partition("@")[2],
                context=x.context,
            )
            break
