"""GE006 hidden-bad-slice."""

from __future__ import annotations

import re

from ..report import Cause, Finding, Hypothesis, Outcome, SeriesEvidence, Severity
from ..roles import Role, as_fraction
from ..signal import fmt
from ._knowledge import fact, hyp, said
from .base import Detector, DetectorParams, Remedy, Skip

_SLICE = re.compile(
    r"^(?:val|valid|validation|eval|test)[/_.](?:.*?)(?:class|slice|group|label)[/_.-]?"
    r"(?P<slice>[\w.-]+?)[/_.-]?(?P<metric>acc|accuracy|f1|recall|precision)?$",
    re.IGNORECASE,
)


class HiddenBadSlice(Detector, code="GE006", name="hidden-bad-slice", family="generalization"):
    """A per-class or per-slice validation metric is far below the headline metric.

    Why it matters: an aggregate accuracy of 0.95 can hide a class at 0.40; the headline
    number then overstates what the model does for that slice.
    Evidence: the headline validation metric's final value, and the worst slices' final values.
    Remedy: look at that slice's data (label noise, too few examples); re-weight or collect more.
    Thresholds: a slice more than ``max_gap`` 0.2 (absolute, on the 0-1 scale: metrics logged in
    percent are divided by 100 first, see ``roles.as_fraction``) below the headline (convention).
    Slices are keys like ``val/acc_class_3``, ``eval/f1/slice=night``, ``val/class_7/recall``.
    """

    @classmethod
    def remedies_for(cls, finding: Finding) -> tuple[Remedy, ...]:
        """The worst slice's own data first, then more of it."""
        s = fact(finding, "worst_slice", "the worst slice")
        return (
            Remedy(
                f"Look at {s}'s samples: its count, its label noise and what it is confused with",
                "too few examples, noisy labels and a confusable class call for different fixes",
                "minutes",
            ),
            Remedy(
                f"Re-weight {s} in the loss or collect more of it",
                "raises the slice without hiding it behind the headline metric",
                "days",
            ),
        )

    @classmethod
    def hypotheses(cls, finding: Finding, outcome: Outcome) -> list[Hypothesis] | None:
        """A slice far below the headline: the headline overstates (supported); the slice's data
        (open)."""
        return [
            hyp(
                "the headline metric overstates what the model does for this slice",
                "supported",
                Cause.METRIC_POLICY,
                "report the per-slice metric beside the headline",
                for_=said(finding),
            ),
            hyp(
                "the slice has too few examples or noisy labels",
                "open",
                Cause.DATA_CONFIG,
                "count the slice's training examples; relabel a sample of its errors",
            ),
        ]

    needs = (Role.VAL_ACCURACY,)

    class Params(DetectorParams):
        max_gap: float = 0.2

    def check(self, run, p):
        head_key = run.key_for(Role.VAL_ACCURACY)
        head = run.series(head_key).by_step().finite()
        slices = {
            k: run.series(k).by_step().finite()
            for k in run.metrics.keys
            if k != head_key and _SLICE.match(k.replace(" ", "_"))
        }
        slices = {k: s for k, s in slices.items() if len(s)}
        if not slices:
            raise Skip("no per-class or per-slice metrics logged")
        if not len(head):
            return
        h = float(as_fraction(head_key, head.values)[0][-1])
        finals = {k: float(as_fraction(k, s.values)[0][-1]) for k, s in slices.items()}
        worst = sorted(finals.items(), key=lambda kv: kv[1])
        bad = [(k, v) for k, v in worst if h - v > p.max_gap]
        if not bad:
            return
        yield self.finding(
            Severity.WARNING,
            f"headline {head_key} {fmt(h)} hides {len(bad)} slice(s) far below it: "
            + ", ".join(f"{k} {fmt(v)}" for k, v in bad[:5]),
            evidence=[
                SeriesEvidence(metric=k, values={"final": v, "headline": h}) for k, v in bad[:5]
            ],
            headline=h,
            worst_slice=bad[0][0],
            worst_value=bad[0][1],
            n_bad=len(bad),
        )
