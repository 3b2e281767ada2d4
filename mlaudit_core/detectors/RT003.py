"""RT003 preemption."""

from __future__ import annotations

from ..report import Severity
from ._console import ConsoleSignatureDetector


class Preemption(ConsoleSignatureDetector, code="RT003", name="preemption", family="runtime"):
    """The job was preempted or sent SIGTERM (and possibly requeued).

    Why it matters: a preempted run did not fail; if it was requeued and resumed,
    its metrics continue in a later segment, and it must not be called a crash.
    Evidence: the SIGTERM/preemption lines and any requeue line.
    Remedy: make sure checkpoints are saved on SIGTERM and restored on resume
    (including the step counter).
    Thresholds: none.
    """

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
