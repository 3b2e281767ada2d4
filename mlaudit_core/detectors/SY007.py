"""SY007 slow-startup."""

from __future__ import annotations

import numpy as np

from ..report import Cause, FactEvidence, Finding, Hypothesis, Outcome, Severity
from ..roles import Role
from ..signal import fmt
from ._knowledge import hyp, said, time_not_convergence
from .base import Detector, DetectorParams, Remedy, Skip


class SlowStartup(Detector, code="SY007", name="slow-startup", family="systems"):
    """The run took long to reach its first training step (setup, data indexing, compilation).

    Why it matters: startup is paid on every run and every restart; when it is a large
    share of the run it dominates short experiments and resumes.
    Evidence: seconds from the run's start time to the first logged training step, and the
    share of the run's duration.
    Remedy: cache the dataset index, pre-compile or cache compiled graphs, lazy-load.
    Thresholds: more than ``min_seconds`` 120 s and more than ``max_share`` 20% of the run
    (convention: below either, startup is not worth optimising).
    """

    remedies = (
        Remedy(
            "Time the startup phases from the log's timestamps (imports, dataset indexing, model "
            "loading, compilation)",
            "shows which phase to cache before changing anything",
            "minutes",
        ),
        Remedy(
            "Cache the dataset index and the compiled graphs between runs (torch.compile / XLA "
            "persistent cache), lazy-load what the first steps do not need",
            "removes the cost from every run and every restart",
            "hours",
        ),
    )

    @classmethod
    def hypotheses(cls, finding: Finding, outcome: Outcome) -> list[Hypothesis] | None:
        """A slow start: setup (indexing, loading, compilation) against slow training steps."""
        return [
            hyp(
                "setup before the first step (dataset indexing, model loading, compilation) dominates",
                "supported",
                Cause.INFRA_RUNTIME,
                "time the startup phases; rerun with a warm cache",
                for_=said(finding),
            ),
            time_not_convergence(),
        ]

    needs = (Role.TRAIN_LOSS,)

    class Params(DetectorParams):
        min_seconds: float = 120.0
        max_share: float = 0.20

    def check(self, run, p):
        if run.start_time is None or run.end_time is None:
            raise Skip("run start/end time unknown")
        s = run.series(Role.TRAIN_LOSS)
        w = s.wall_times[np.isfinite(s.wall_times)]
        if not w.size:
            raise Skip("training loss has no wall times")
        startup = float(w.min() - run.start_time.timestamp())
        dur = run.duration_s or 0.0
        if dur <= 0 or startup <= p.min_seconds or startup / dur <= p.max_share:
            return
        yield self.finding(
            Severity.WARNING,
            f"{fmt(startup, 4)} s from run start to the first training step "
            f"({fmt(100 * startup / dur, 3)}% of the run)",
            evidence=[
                FactEvidence(
                    text="first training-loss point vs run start time",
                    values={"startup_s": startup, "duration_s": dur},
                )
            ],
            startup_s=startup,
            share=startup / dur,
        )
