"""RT004 dataloader-worker-killed."""

from __future__ import annotations

from ..report import Severity
from ._console import ConsoleSignatureDetector


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
