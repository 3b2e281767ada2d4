"""RT003 preemption."""

from __future__ import annotations

from ..report import Cause, Finding, Hypothesis, Outcome, Severity
from ._console import ConsoleSignatureDetector
from ._knowledge import hyp, said
from .base import Remedy


class Preemption(ConsoleSignatureDetector, code="RT003", name="preemption", family="runtime"):
    """The job was preempted or sent SIGTERM (and possibly requeued).

    Why it matters: a preempted run did not fail; if it was requeued and resumed,
    its metrics continue in a later segment, and it must not be called a crash.
    Evidence: the SIGTERM/preemption lines and any requeue line.
    Remedy: make sure checkpoints are saved on SIGTERM and restored on resume
    (including the step counter).
    Thresholds: none.
    """

    implies = "crashed"

    crash_remedy = Remedy(
        "Resubmit from the last checkpoint; check that the job saves one on SIGTERM and that the "
        "resume restores it, step counter and optimizer state included",
        "the run was stopped from outside, not broken; it is only lost when its resume starts over",
    )
    remedies = (
        Remedy(
            "Checkpoint more often than the scheduler preempts (or within its notice period)",
            "bounds the compute one preemption costs",
            "hours",
        ),
    )

    @classmethod
    def hypotheses(cls, finding: Finding, outcome: Outcome) -> list[Hypothesis] | None:
        """The job's end as the scheduler's doing (supported), not a failure of the run (rejected)."""
        if outcome not in (Outcome.CRASHED, Outcome.RUNNING):
            return None
        requeued = bool(finding.facts.get("requeued"))
        return [
            hyp(
                "stopped from outside by the scheduler (preemption, SIGTERM)"
                + (", then requeued" if requeued else ""),
                "supported",
                Cause.INFRA_RUNTIME,
                "look up the job's events (sacct -j JOB, the cluster's preemption log) at the end time",
                for_=said(finding),
            ),
            hyp(
                "the training itself failed",
                "rejected",
                Cause.CORRECTNESS_BUG,
                "look for a traceback before the SIGTERM line",
                against=[
                    "the job was sent SIGTERM; the run reported no error of its own before it"
                ],
            ),
        ]

    #: Its finding is a point of the report's timeline under this name.
    timeline_event = "preemption"

    categories = ("preemption", "requeue")

    def check(self, run, p):
        hits, _ = self.hits(run)
        if not hits:
            return
        requeued = any(h.signature.category == "requeue" for h in hits)
        yield self.finding(
            Severity.WARNING,
            f"the job received a termination/preemption signal ({hits[0].signature.id})"
            + ("; it was requeued" if requeued else ""),
            evidence=[self.log_evidence(h.line) for h in hits[:3]],
            requeued=requeued,
            n_hits=len(hits),
        )
