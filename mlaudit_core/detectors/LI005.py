"""LI005 smoothed-loss."""

from __future__ import annotations

import re

from ..report import Cause, Finding, Hypothesis, Outcome, SeriesEvidence, Severity
from ..roles import Role
from ._knowledge import hyp, said
from .base import Detector, DetectorParams, Remedy

_SMOOTH = re.compile(r"(avg|average|smooth|ema|running|mean)", re.IGNORECASE)


class SmoothedLoss(Detector, code="LI005", name="smoothed-loss", family="integrity"):
    """The training loss that was logged is a running average: it hides spikes.

    Why it matters: an epoch average or EMA (``Loss 6.90 (6.91)`` style, ``running_loss``,
    ``loss_avg``) smears a one-step spike or a NaN onset over many points; spike and onset
    detectors see a softened curve.
    Evidence: the key used as training loss, and whether a raw per-step loss exists.
    Remedy: log the raw per-step loss next to the average.
    Thresholds: name-based (avg, average, smooth, ema, running, mean).
    """

    remedies = (
        Remedy(
            "Log the raw per-step loss beside the running average",
            "a spike or a NaN onset shows on the raw loss; the average smears it over many points",
            "minutes",
        ),
    )

    @classmethod
    def hypotheses(cls, finding: Finding, outcome: Outcome) -> list[Hypothesis] | None:
        """The curve judged is an average: a spike or onset may be hidden (open)."""
        return [
            hyp(
                "a spike or a non-finite onset is hidden by the averaging",
                "open",
                Cause.METRIC_POLICY,
                "the raw per-step loss of the same steps",
                for_=said(finding),
            )
        ]

    needs = (Role.TRAIN_LOSS,)

    class Params(DetectorParams):
        pass

    def check(self, run, p):
        key = run.key_for(Role.TRAIN_LOSS)
        if not _SMOOTH.search(key):
            return
        yield self.finding(
            Severity.INFO,
            f"the training loss used ({key}) is a running average: spikes and the exact "
            "onset of failures are smoothed away",
            evidence=[SeriesEvidence(metric=key)],
            key=key,
        )
