"""RT002 collective-timeout."""

from __future__ import annotations

from ..report import Severity
from ._console import ConsoleSignatureDetector


class CollectiveTimeout(
    ConsoleSignatureDetector, code="RT002", name="collective-timeout", family="runtime"
):
    """A distributed collective (NCCL all-reduce, broadcast, ...) timed out or errored.

    Why it matters: one rank stopped participating (crashed, hung in data loading,
    diverged in control flow, or lost its network); the others wait until the
    watchdog kills the job. The failing rank is rarely the one that reports.
    Evidence: the watchdog line with the operation and timeout (ms) when printed.
    Remedy: find the first rank that stopped logging; enable
    ``TORCH_NCCL_ASYNC_ERROR_HANDLING`` / ``NCCL_DEBUG=INFO``; check for rank-dependent
    control flow and for a stalled data loader on one rank.
    Thresholds: none; any watchdog timeout or NCCL error is reported.
    """

    categories = ("collective_timeout",)

    def check(self, run, p):
        hits, _ = self.hits(run)
        if not hits:
            return
        h = hits[0]
        op, tmo = h.figures.get("op"), h.figures.get("timeout_ms")
        detail = ", ".join(
            x for x in (f"op {op}" if op else "", f"timeout {tmo} ms" if tmo else "") if x
        )
        yield self.finding(
            Severity.CRITICAL,
            f"collective operation timed out or failed ({h.signature.id}"
            + (f": {detail}" if detail else "")
            + f"); {len(hits)} such line(s)",
            evidence=[self.log_evidence(x.line) for x in hits[:3]],
            op=op,
            timeout_ms=int(tmo) if tmo else None,
            n_hits=len(hits),
        )
