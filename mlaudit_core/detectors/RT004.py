"""RT004 dataloader-worker-killed."""

from __future__ import annotations

from ..report import Cause, Finding, Hypothesis, Outcome, Severity
from ._console import ConsoleSignatureDetector
from ._knowledge import hyp, said
from .base import Remedy


class WorkerKilled(
    ConsoleSignatureDetector, code="RT004", name="dataloader-worker-killed", family="runtime"
):
    """A data-loader worker process died (usually killed by the host OOM killer or a signal).

    Why it matters: the run crashed in the input pipeline, not in the model: host
    memory (too many workers x prefetched batches, large shared-memory segments) or
    a crash inside a decoding library.
    Evidence: the ``DataLoader worker (pid N) is killed by signal`` line.
    Remedy: fewer workers or a lower ``prefetch_factor``, a bigger ``/dev/shm``,
    check host memory; reproduce with ``num_workers=0`` to see the real error.
    Thresholds: none.
    """

    implies = "crashed"
    supersedable_crash = True
    memory_end_rank = 2

    @classmethod
    def stopped_from_outside(cls, finding):
        """Workers are killed as the job is torn down."""
        return True

    crash_remedy = Remedy(
        "Rerun the failing epoch with num_workers=0 to see the worker's own error, and check host "
        "memory (dmesg for the OOM killer)",
        "a killed worker hides its error; in the main process the same batch raises with a traceback",
    )
    remedies = (
        Remedy(
            "Lower num_workers or prefetch_factor, or enlarge /dev/shm (docker --shm-size)",
            "the fix when host or shared memory ran out; it changes nothing for a bad sample",
            "minutes",
        ),
    )

    @classmethod
    def hypotheses(cls, finding: Finding, outcome: Outcome) -> list[Hypothesis] | None:
        """A crash on it: host or shared memory (a SIGKILL), or a crash on one sample in the
        dataset code or a decoding library; not the model."""
        if outcome is not Outcome.CRASHED:
            return None
        sig = str(finding.facts.get("signal") or "").upper()
        killed = "KILL" in sig or sig.strip() == "9"
        return [
            hyp(
                "host or shared memory ran out (the OOM killer, a small /dev/shm)",
                "supported" if killed else "open",
                Cause.INFRA_RUNTIME,
                "dmesg for 'Out of memory: Killed process'; rerun with fewer workers",
                for_=said(finding) if killed else [],
            ),
            hyp(
                "one sample crashes the dataset code or a decoding library",
                "open",
                Cause.DATA_CONFIG,
                "iterate the dataset with num_workers=0 from the failing epoch: a bad sample raises",
            ),
            hyp(
                "the model or its optimisation",
                "rejected",
                Cause.MODEL_CONVERGENCE,
                against=["the failure is in a data-loader worker process, not in a training step"],
            ),
        ]

    categories = ("worker_killed",)

    def check(self, run, p):
        hits, _ = self.hits(run)
        if not hits:
            return
        h = hits[0]
        yield self.finding(
            Severity.CRITICAL,
            f"a data-loader worker died (pid {h.figures.get('pid', '?').strip()}, "
            f"signal {h.figures.get('signal', '?').strip()})",
            evidence=[self.log_evidence(h.line)],
            signal=h.figures.get("signal"),
        )
