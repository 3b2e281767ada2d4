"""SY003 low-accelerator-utilisation."""

from __future__ import annotations

import numpy as np

from ..report import Cause, Finding, Hypothesis, Outcome, SeriesEvidence, Severity
from ..roles import Role
from ..signal import fmt
from ._knowledge import hyp, said, time_not_convergence
from .base import Detector, DetectorParams, Remedy, Skip


class LowUtilisation(Detector, code="SY003", name="low-accelerator-utilisation", family="systems"):
    """The accelerator (or, on CPU-only runs, the CPU) was mostly idle.

    Why it matters: idle accelerators are paid for and wasted; low utilisation
    with a normal step time points at the input pipeline, host-side work,
    synchronisation or too small a batch.
    Evidence: median and 10th/90th percentiles of the utilisation series (percent)
    over the run, from the tracker's system metrics.
    Remedy: see data-loader starvation; increase batch size; overlap host work.
    Thresholds: median GPU utilisation < ``max_gpu_median`` 50% (convention from
    nvidia-smi/DCGM "SM busy" monitoring: below half busy is under-used); CPU-only
    runs are reported at info level since machine-wide CPU percentages depend on
    core count.
    """

    implies = "slow"

    @classmethod
    def hypotheses(cls, finding: Finding, outcome: Outcome) -> list[Hypothesis] | None:
        """An idle accelerator: the input pipeline or host work, against too small a batch."""
        return [
            hyp(
                "the accelerator waits for the input pipeline, host work or synchronisation",
                "open",
                Cause.INFRA_RUNTIME,
                "log data time beside step time; iterate the loader alone",
                for_=said(finding),
            ),
            hyp(
                "the batch is too small to fill the accelerator",
                "open",
                Cause.INFRA_RUNTIME,
                "double the batch: utilisation that rises with it means the batch",
            ),
            time_not_convergence(),
        ]

    remedies = (
        Remedy(
            "Raise the batch size or overlap host work with the accelerator; check the input pipeline",
            "the accelerator is idle most of the time",
            "hours",
        ),
    )

    class Params(DetectorParams):
        max_gpu_median: float = 50.0
        max_cpu_median: float = 25.0
        min_points: int = 3

    def check(self, run, p):
        key, is_gpu = run.key_for(Role.GPU_UTIL), True
        if key is None:
            key, is_gpu = run.key_for(Role.CPU_UTIL), False
        if key is None:
            raise Skip("no GPU or CPU utilisation telemetry logged")
        s = run.series(key).finite()
        if len(s) < p.min_points:
            raise Skip(f"{key} has {len(s)} samples (< {p.min_points})")
        p10, med, p90 = (float(x) for x in np.percentile(s.values, [10, 50, 90]))
        limit = p.max_gpu_median if is_gpu else p.max_cpu_median
        if med >= limit:
            return
        what = "GPU" if is_gpu else "CPU"
        yield self.finding(
            Severity.WARNING if is_gpu else Severity.INFO,
            f"{what} utilisation median {fmt(med, 3)}% (p10 {fmt(p10, 3)}%, p90 {fmt(p90, 3)}%) over {len(s)} samples",
            evidence=[SeriesEvidence(metric=key, values={"p10": p10, "median": med, "p90": p90})],
            key=key,
            median=med,
            p10=p10,
            p90=p90,
            accelerator=is_gpu,
        )
