"""OP007 loss-scale-collapse."""

from __future__ import annotations

import numpy as np

from ..report import Cause, Finding, Hypothesis, Outcome, SeriesEvidence, Severity
from ..roles import Role
from ..signal import fmt
from ._knowledge import hyp, said
from .base import Detector, DetectorParams, Remedy


class LossScaleCollapse(Detector, code="OP007", name="loss-scale-collapse", family="optimization"):
    """The logged fp16 dynamic loss scale collapsed (or kept halving) instead of settling.

    Why it matters: dynamic loss scaling halves the scale on every overflow and skips the
    step; a scale that falls to 1 or below means nearly every step overflows and is skipped,
    so the run stops learning (or underflows gradients). A few halvings that settle are normal.
    Evidence: initial, minimum and final loss scale, and the number of decreases.
    Remedy: bf16 if the hardware has it; find the overflowing op (attention logits, large
    activations); lower the LR; keep master weights in fp32.
    Thresholds: a collapse is a scale that started above and fell to ``min_scale`` 1 or below
    (the floor of apex's ``min_loss_scale`` default); a constant scale (bf16 runs print 1.0)
    and a long settled descent (DeepSpeed: 2^32 to about 2^16) are not collapses.
    """

    remedies = (
        Remedy(
            "Find the op that overflows first: log the activation and gradient maxima per layer at the "
            "collapse, or run those steps under torch.autograd.detect_anomaly",
            "names the fp16-unsafe op (attention logits, a large activation, an exp or a sum)",
            "hours",
        ),
        Remedy(
            "Rerun the steps before the collapse in bf16 (or fp32), master weights in fp32",
            "a collapse that vanishes in bf16 is fp16's range; one that stays is the LR or the model",
            "hours",
        ),
    )

    @classmethod
    def hypotheses(cls, finding: Finding, outcome: Outcome) -> list[Hypothesis] | None:
        """A collapsed loss scale: fp16's range (supported) against a learning rate that blows the
        gradients up (open)."""
        return [
            hyp(
                "the gradients overflow fp16 on most steps (an fp16-unsafe op, large activations)",
                "supported",
                Cause.DATA_CONFIG,
                "rerun the same steps in bf16: the skips stop",
                for_=said(finding),
            ),
            hyp(
                "the learning rate makes the gradients blow up",
                "open",
                Cause.MODEL_CONVERGENCE,
                "rerun with a tenth of the LR in fp16: the scale settles if the LR was the cause",
            ),
        ]

    implies = "diverged"

    needs = (Role.LOSS_SCALE,)

    class Params(DetectorParams):
        min_scale: float = 1.0

    shows_reduced_precision = True
    surprise_rank = 1

    @classmethod
    def surprising(cls, finding: Finding) -> str | None:
        """A loss scale that dipped and recovered (info) is routine dynamic loss scaling."""
        return finding.message if finding.severity is Severity.INFO else None

    def check(self, run, p):
        key = run.key_for(Role.LOSS_SCALE)
        s = run.series(key).by_step().finite()
        if len(s) < 2:
            return
        v = s.values
        first, lo, last = float(v[0]), float(v.min()), float(v[-1])
        decreases = int((np.diff(v) < 0).sum())
        # a constant scale (bf16 runs print "loss scale: 1.0") never collapsed; nor does a long
        # settled descent (DeepSpeed starts at 2^32 and normally settles near 2^16)
        collapsed = decreases > 0 and first > p.min_scale and lo <= p.min_scale
        sev = Severity.ERROR if collapsed else Severity.INFO
        msg = (
            f"{key}: {fmt(first)} -> min {fmt(lo)} -> final {fmt(last)} ({decreases} decreases)"
            + (
                "; the scale collapsed: most steps overflow and are skipped"
                if collapsed
                else "; settled (benign overflow handling)"
            )
        )
        yield self.finding(
            sev,
            msg,
            evidence=[
                SeriesEvidence(
                    metric=key,
                    step_start=int(s.steps[0]),
                    step_end=int(s.steps[-1]),
                    values={"initial": first, "min": lo, "final": last},
                )
            ],
            initial=first,
            min=lo,
            final=last,
            decreases=decreases,
            collapsed=collapsed,
        )
