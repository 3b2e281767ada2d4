"""SY006 memory-headroom."""

from __future__ import annotations

import numpy as np

from ..report import Cause, Finding, Hypothesis, Outcome, SeriesEvidence, Severity
from ..roles import Role
from ..signal import fmt
from ._knowledge import hyp, said
from .base import Detector, DetectorParams, Remedy


class MemoryHeadroom(Detector, code="SY006", name="memory-headroom", family="systems"):
    """Accelerator memory ran close to full: the run is one larger batch away from out-of-memory.

    Why it matters: with under 5% headroom a longer sequence, a bigger evaluation batch or
    allocator fragmentation ends the run; it also explains an OOM found elsewhere.
    Evidence: the 99th percentile and maximum of the GPU memory series (percent of capacity).
    Remedy: reduce micro-batch or sequence length, activation checkpointing, set
    ``PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True`` against fragmentation.
    Thresholds: p99 above ``max_p99`` 95% (convention: the CUDA caching allocator needs
    headroom for fragmentation; NVIDIA's DCGM memory alerts commonly fire at 95%).
    """

    remedies = (
        Remedy(
            "Log the peak allocated memory (torch.cuda.max_memory_allocated) per training step and per "
            "evaluation",
            "shows whether training or evaluation sets the peak, and how close each runs to the device",
            "minutes",
        ),
        Remedy(
            "Reduce the micro-batch or sequence length, enable activation checkpointing, or set "
            "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True against fragmentation",
            "restores headroom before a longer sequence or a larger eval batch ends the run",
            "hours",
        ),
    )

    @classmethod
    def hypotheses(cls, finding: Finding, outcome: Outcome) -> list[Hypothesis] | None:
        """Memory close to full: the run's own peak (supported), fragmentation (open)."""
        return [
            hyp(
                "the run's peak memory is at the device's capacity (one larger batch from an OOM)",
                "supported",
                Cause.INFRA_RUNTIME,
                "rerun with half the micro-batch: the peak should fall by about half the activations",
                for_=said(finding),
            ),
            hyp(
                "allocator fragmentation, not live tensors, fills the device",
                "open",
                Cause.INFRA_RUNTIME,
                "compare torch.cuda.memory_reserved with memory_allocated at the peak",
            ),
        ]

    needs = (Role.GPU_MEMORY,)

    class Params(DetectorParams):
        max_p99: float = 95.0

    def check(self, run, p):
        key = run.key_for(Role.GPU_MEMORY)
        s = run.series(key).finite()
        if len(s) < 3:
            return
        v = s.values
        if np.nanmax(v) <= 1.0:  # a fraction, not a percentage
            v = v * 100.0
        p99, mx = float(np.percentile(v, 99)), float(v.max())
        if p99 <= p.max_p99:
            return
        yield self.finding(
            Severity.WARNING,
            f"GPU memory at {fmt(p99, 3)}% (p99; max {fmt(mx, 3)}%): under "
            f"{fmt(100 - p99, 2)}% headroom",
            evidence=[SeriesEvidence(metric=key, values={"p99": p99, "max": mx})],
            p99=p99,
            max=mx,
        )
