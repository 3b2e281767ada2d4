"""OP004 nonfinite-onset."""

from __future__ import annotations

import numpy as np

from ..formats.consolelog.context import precision_setting
from ..report import Cause, ConfigEvidence, Finding, Hypothesis, Outcome, SeriesEvidence, Severity
from ..roles import Role
from ..signal import fmt
from ._knowledge import hyp, said
from .base import Detector, DetectorParams, Remedy

#: Series written by loaders that count optimizer steps apart from iterations (litgpt's ``step``).
OPTIMIZER_STEP_KEY = "train/optimizer_step"


class NonFiniteOnset(Detector, code="OP004", name="nonfinite-onset", family="optimization"):
    """How the training loss became NaN/inf: after gradual growth, or abruptly from a healthy level.

    Why it matters: the two onsets have different causes. A loss that grows for
    many steps and then overflows is an optimisation divergence (learning rate,
    warmup, clipping). A loss that is finite and not growing, then NaN on the very
    next update and on every step after, is a numerical failure: pure fp16 weights
    without master copies or loss scaling, an fp16-unsafe op, or a bad batch.
    Lowering the learning rate does not fix the second kind.
    Evidence: the last finite value against the median of the finite values
    before it, and the median of the last third of them against the first third;
    the first non-finite step and whether every later point is non-finite; where
    the onset falls relative to the first optimizer step when the log counts
    optimizer steps apart from iterations; the precision setting from params.
    Remedy: gradual: lower the peak LR, lengthen warmup, clip gradients. Abrupt:
    train in bf16 / fp32 or with mixed precision and dynamic loss scaling, replay
    the batch at the onset.
    Thresholds: growth when the last finite value exceeds ``growth_factor`` 2x the
    median before it (the divergence factor of OP001) or the last third's median
    exceeds the first third's by ``trend_factor`` 1.5x; medians rather than the
    minimum, because micro-batch losses scatter by 2-5x without any trend.
    """

    #: A non-finite symptom (``Detector.nonfinite_rank``), asked first.
    nonfinite_rank = 1

    @classmethod
    def remedies_for(cls, finding: Finding) -> tuple[Remedy, ...]:
        """An abrupt onset: the operation that produced the NaN; a gradual one has none of its own
        (the diverged run's learning-rate action is the fix)."""
        if not finding.facts.get("abrupt"):
            return ()
        return (
            Remedy(
                "Rerun a few steps before the onset with anomaly detection "
                "(torch.autograd.set_detect_anomaly(True)), from a checkpoint saved before it if one was, "
                "else from scratch",
                "names the operation that first produced the NaN: an fp16-unsafe op, a log/division "
                "of 0, or a bad batch's values",
                "hours",
            ),
        )

    @classmethod
    def hypotheses(cls, finding: Finding, outcome: Outcome) -> list[Hypothesis] | None:
        """The onset's shape: gradual growth (the learning rate) against an abrupt NaN (numerics)."""
        abrupt = bool(finding.facts.get("abrupt"))
        return [
            hyp(
                "learning rate too high (the loss grew, then overflowed)",
                "rejected" if abrupt else "supported",
                Cause.MODEL_CONVERGENCE,
                "rerun from before the onset with the LR divided by 10",
                for_=[] if abrupt else said(finding),
                against=said(finding) if abrupt else [],
            ),
            hyp(
                "a numerical failure: pure fp16, no loss scaling, an fp16-unsafe op or a bad batch",
                "supported" if abrupt else "rejected",
                Cause.DATA_CONFIG,
                "rerun from before the onset in fp32/bf16; replay the batch at the onset",
                for_=said(finding) if abrupt else [],
                against=[] if abrupt else ["the loss grew for many steps before the onset"],
            ),
        ]

    implies = "diverged"

    needs = (Role.TRAIN_LOSS,)

    class Params(DetectorParams):
        growth_factor: float = 2.0
        trend_factor: float = 1.5

    def check(self, run, p):
        key = run.key_for(Role.TRAIN_LOSS)
        s = run.series(key).by_step()
        bad = ~np.isfinite(s.values)
        if not bad.any():
            return
        i = int(np.flatnonzero(bad)[0])
        before = s.values[:i][np.isfinite(s.values[:i])]
        onset_step = int(s.steps[i])
        all_after = bool(bad[i:].all())
        n_bad = int(bad.sum())
        if before.size == 0:
            gradual, last, med = False, None, None
            basis = "the loss was non-finite from its first logged point"
        else:
            last = float(before[-1])
            med = float(np.median(before[:-1])) if before.size > 1 else last
            k = max(before.size // 3, 1)
            head, tail = float(np.median(before[:k])), float(np.median(before[-k:]))
            jump = med > 0 and last > p.growth_factor * med
            trend = before.size >= 6 and head > 0 and tail > p.trend_factor * head
            gradual = bool(jump or trend)
            basis = (
                f"last finite {fmt(last)} vs median {fmt(med)} of the {before.size - 1} earlier point(s); "
                f"first-third median {fmt(head)}, last-third {fmt(tail)}"
            )
        opt_txt = ""
        first_update = None
        if OPTIMIZER_STEP_KEY in run.metrics:
            o = run.metrics.series(OPTIMIZER_STEP_KEY).by_step()
            inc = np.flatnonzero(np.diff(o.values) > 0)
            if inc.size:
                first_update = int(o.steps[inc[0] + 1])
                if first_update <= onset_step:
                    after_first = onset_step <= int(o.steps[min(inc[0] + 2, len(o) - 1)])
                    opt_txt = (
                        f"; the loss was finite through iteration {first_update} (the first optimizer "
                        f"step){' and NaN from the very next iteration' if after_first else ''}"
                    )
        prec = precision_setting(run.params)
        kinds = "/".join(sorted({"nan" if np.isnan(x) else "inf" for x in s.values[bad]}))
        every = "on every point after" if all_after else f"on {n_bad} of {len(s) - i} points after"
        msg = (
            f"{key} was finite for {i} point(s) (steps {int(s.steps[0])}-{int(s.steps[max(i - 1, 0)])}), then "
            f"{kinds} from step {onset_step} on ({every}){opt_txt}. "
        )
        if gradual:
            msg += f"It grew before the onset ({basis}): an optimisation divergence"
        else:
            msg += (
                f"No gradual loss growth before the non-finite onset ({basis}): a numerical failure, "
                "not a learning-rate divergence"
            )
            if prec is not None:
                k, v, pure = prec
                msg += f"; the precision setting {k} = {v}" + (
                    " is pure 16-bit (no fp32 master weights, no "
                    "loss scaling): the cause to test first"
                    if pure
                    else ""
                )
        ev = [
            SeriesEvidence(
                metric=key,
                step_start=int(s.steps[max(i - 3, 0)]),
                step_end=onset_step,
                values={"last_finite": last, "median_before": med},
            )
        ]
        if prec is not None:
            ev.append(ConfigEvidence(key=prec[0], value=prec[1]))
        yield self.finding(
            Severity.ERROR,
            msg,
            evidence=ev,
            key=key,
            onset_step=onset_step,
            abrupt=not gradual,
            gradual=gradual,
            all_after_nonfinite=all_after,
            n_nonfinite=n_bad,
            finite_points_before=int(before.size),
            last_finite=last,
            median_before=med,
            first_optimizer_step_at=first_update,
            precision=prec[1] if prec else None,
            pure_16bit=bool(prec and prec[2]),
        )
