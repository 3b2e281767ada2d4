"""RT010 process-killed."""

from __future__ import annotations

from ..report import Cause, Finding, Hypothesis, Outcome, Severity
from ._console import ConsoleSignatureDetector
from ._knowledge import hyp, said
from .base import Remedy


class ProcessKilled(
    ConsoleSignatureDetector, code="RT010", name="process-killed", family="runtime"
):
    """The training process was killed from outside: SIGKILL, or the scheduler's time limit.

    Why it matters: a process killed with SIGKILL leaves no traceback; the usual
    senders are the kernel OOM killer (host memory), the scheduler enforcing a
    memory or wall-time limit, or a watchdog. A time-limit kill is a job
    configuration issue: the run itself was fine until then.
    Evidence: the kill line (``Killed``, ``exitcode: -9``, ``Signal 9 (SIGKILL)``, ``Signal 7 (SIGBUS)``,
    ``Segmentation fault (core dumped)``, ``CANCELLED ... DUE TO TIME LIMIT``) and how many there are.
    A segmentation fault (SIGSEGV) is not sent from outside: native code of the process crashed (in a
    Python job, a compiled library or driver, most often a version that does not match the rest of the
    environment); it too leaves no Python traceback.
    Remedy: SIGKILL: check host memory (``dmesg`` for the OOM killer), fewer
    data-loader workers, smaller prefetch; time limit: resume from the last
    checkpoint with a longer limit, checkpoint more often.
    Thresholds: none.
    """

    implies = "crashed"
    supersedable_crash = True
    memory_end_rank = 1

    @classmethod
    def stopped_from_outside(cls, finding):
        """The process is killed as the job is torn down."""
        return True

    @classmethod
    def hypotheses(cls, finding: Finding, outcome: Outcome) -> list[Hypothesis] | None:
        """A crash on it: the scheduler's time limit, or a SIGKILL (host memory, a watchdog)."""
        if outcome is not Outcome.CRASHED:
            return None
        limit = finding.facts.get("kind") == "time_limit"
        if finding.facts.get("kind") == "sigsegv":
            return [
                hyp(
                    "a native library crashed (a compiled package, a driver or a framework build that "
                    "does not match the others)",
                    "open",
                    Cause.INFRA_RUNTIME,
                    "rerun with python -X faulthandler for the native frame; change one package's version",
                    for_=said(finding),
                ),
                hyp(
                    "the project's own C++/CUDA extension crashed",
                    "open",
                    Cause.CORRECTNESS_BUG,
                    "a native backtrace (gdb, faulthandler) that ends in the project's extension",
                ),
            ]
        return [
            hyp(
                "the scheduler's wall-time limit ended the job",
                "supported" if limit else "open",
                Cause.INFRA_RUNTIME,
                "compare the job's elapsed time with its --time limit (sacct -j JOB)",
                for_=said(finding) if limit else [],
            ),
            hyp(
                "the kernel OOM killer or a memory limit killed it (host memory)",
                "rejected" if limit else "open",
                Cause.INFRA_RUNTIME,
                "dmesg / the scheduler's record for an OOM kill at the end time",
                against=["the scheduler names its time limit"] if limit else [],
            ),
            hyp(
                "the training itself failed",
                "rejected",
                Cause.CORRECTNESS_BUG,
                against=["the process was killed from outside; it reported no error of its own"],
            ),
        ]

    crash_remedy = Remedy(
        "Check the kernel log for the OOM killer and the scheduler's memory/time limits; resume from the last checkpoint",
        "a killed process leaves no traceback; the sender is outside the run",
    )

    categories = ("killed", "time_limit")

    def check(self, run, p):
        hits, _ = self.hits(run)
        if not hits:
            return
        time_limit = [h for h in hits if h.signature.category == "time_limit"]
        h = time_limit[0] if time_limit else hits[0]
        if time_limit:
            msg = (
                f"the scheduler stopped the job at its wall-time limit ({h.line.source}:{h.line.lineno}); "
                "the run was cut short, not broken"
            )
        elif h.signature.id == "sigsegv":
            msg = (
                f"the process died of a segmentation fault ({h.line.source}:{h.line.lineno}: "
                f'"{h.line.text.strip()[:120]}"); no Python traceback: native code crashed (a compiled '
                "library or driver, often one whose version does not match the others, or a C++/CUDA "
                "extension)"
            )
        elif h.signature.id == "sigbus":
            msg = (
                f"the process died of SIGBUS ({h.line.source}:{h.line.lineno}: "
                f'"{h.line.text.strip()[:120]}"); no traceback: shared memory (/dev/shm, 64 MB by default in '
                "a container) or a memory-mapped file ran out under it"
            )
        else:
            msg = (
                f"the process was killed with SIGKILL ({h.line.source}:{h.line.lineno}: "
                f'"{h.line.text.strip()[:120]}"); no traceback: usually the host OOM killer or a '
                "scheduler limit"
            )
        yield self.finding(
            Severity.ERROR if time_limit else Severity.CRITICAL,
            msg,
            evidence=[self.log_evidence(x.line) for x in hits[:3]],
            kind="time_limit"
            if time_limit
            else "sigsegv"
            if h.signature.id == "sigsegv"
            else "sigkill",
            lineno=h.line.lineno,
            n_hits=len(hits),
        )
