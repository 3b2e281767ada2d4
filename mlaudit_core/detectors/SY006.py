"""SY006 memory-headroom."""

from __future__ import annotations

import numpy as np

from ..report import SeriesEvidence, Severity
from ..roles import Role
from ..signal import fmt
from .base import Detector, DetectorParams


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
