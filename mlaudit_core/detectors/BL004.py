"""BL004 baseline-throughput."""

from __future__ import annotations

from ..baseline.compare import EMITTED, baselines_of, compare_metrics
from ..report import Cause, Finding, Hypothesis, Outcome, SeriesEvidence, Severity
from ._knowledge import hyp, said
from .base import Detector, DetectorParams, Remedy


class BaselineThroughput(Detector, code="BL004", name="baseline-throughput", family="baseline"):
    """Step time, data time or throughput differs from the baselines beyond their noise band.

    Why it matters: a slower run is a systems finding, never a model
    regression; reporting it apart keeps "the model got worse" and "the job
    got slower" from being confused.
    Evidence: as BL001, for the step-time / data-time / throughput series.
    Remedy: compare the environment deltas of BL002 (image, driver, hardware,
    data location); profile the input pipeline.
    Thresholds: the band of BL001 (defaults: k = 2 std, tail 20%, 50% of tail
    points outside).
    """

    remedies = (
        Remedy(
            "Compare the environment differences with the baselines (image, driver, hardware, data "
            "location)",
            "a slower job with the same code points at the machine or the storage",
            "minutes",
        ),
        Remedy(
            "Profile the input pipeline and one training step against a baseline's",
            "tells an input-bound slowdown from a slower step",
            "hours",
        ),
    )

    @classmethod
    def hypotheses(cls, finding: Finding, outcome: Outcome) -> list[Hypothesis] | None:
        """A timing difference: the job or machine got slower (supported), the model got worse
        (rejected)."""
        return [
            hyp(
                "the job got slower (environment, hardware, data location, input pipeline)",
                "supported",
                Cause.INFRA_RUNTIME,
                "rerun the baseline config on this run's node and image",
                for_=said(finding),
            ),
            hyp(
                "the model got worse",
                "rejected",
                Cause.MODEL_CONVERGENCE,
                against=["the finding is about time, not about a learning metric"],
            ),
        ]

    class Params(DetectorParams):
        k: float = 2.0
        tail_frac: float = 0.2
        min_outside: float = 0.5

    def check(self, run, p):
        if run.cache.get(EMITTED) or not baselines_of(run):
            return
        for c in compare_metrics(run, p.k, p.tail_frac, p.min_outside):
            if c.kind != "performance" or c.band.verdict in ("within_noise", "insufficient_seeds"):
                continue
            b = c.band
            slower = b.verdict == "worse"
            yield self.finding(
                Severity.WARNING if slower else Severity.INFO,
                ("slower: " if slower else "faster: ") + c.summary(),
                evidence=[
                    SeriesEvidence(
                        metric=c.key,
                        step_start=b.tail_start_step,
                        step_end=b.tail_end_step,
                        values=b.figures(),
                    )
                ],
                metric=c.key,
                role=c.role,
                verdict=b.verdict,
                rel_delta=b.rel_delta,
                run_tail_mean=b.run_tail_mean,
                baseline_tail_means=b.baseline_tail_means,
            )
