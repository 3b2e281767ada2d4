"""RT002 collective-timeout."""

from __future__ import annotations

from ..report import Cause, Finding, Hypothesis, Outcome, Severity
from ._console import ConsoleSignatureDetector
from ._knowledge import hyp, said
from .base import Remedy


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

    implies = "crashed"
    supersedable_crash = True

    crash_remedy = Remedy(
        "Find the rank that stopped first: compare the last step each rank logged before the timeout, "
        "then rerun with NCCL_DEBUG=INFO and TORCH_NCCL_ASYNC_ERROR_HANDLING=1",
        "the rank that reports the timeout is the one left waiting; the first silent rank is the cause",
    )
    remedies = (
        Remedy(
            "Check the first silent rank for rank-dependent control flow (a branch, an early return, "
            "uneven batches) and for a stalled data loader",
            "tells a hang in the code from a network or node failure",
            "hours",
        ),
    )

    @classmethod
    def hypotheses(cls, finding: Finding, outcome: Outcome) -> list[Hypothesis] | None:
        """A crash on it: the processes stopped communicating (infrastructure), or one rank hung in
        its own code; never the model's learning."""
        if outcome not in (Outcome.CRASHED, Outcome.RUNNING):
            return None
        return [
            hyp(
                "the interconnect or a node failed (network, NCCL transport, a lost host)",
                "supported",
                Cause.INFRA_RUNTIME,
                "rerun on other nodes with NCCL_DEBUG=INFO: a transport error names the failing link",
                for_=said(finding),
            ),
            hyp(
                "one rank hung or took another code path (rank-dependent control flow, uneven data, "
                "a stalled loader)",
                "open",
                Cause.CORRECTNESS_BUG,
                "compare the last step each rank logged: the rank that stopped first is the culprit",
            ),
            hyp(
                "the model stopped learning",
                "rejected",
                Cause.MODEL_CONVERGENCE,
                against=[
                    "a collective timed out: the processes stopped talking, the loss did not fail"
                ],
            ),
        ]

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
