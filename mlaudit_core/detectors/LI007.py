"""LI007 metric-out-of-range."""

from __future__ import annotations

import re

import numpy as np

from ..report import Cause, Finding, Hypothesis, Outcome, SeriesEvidence, Severity
from ..roles import normalise_key
from ..signal import fmt
from ._knowledge import hyp, said
from .base import Detector, DetectorParams, Remedy, Skip

#: Names of metrics bounded to [0, 1] (or [0, 100] when logged in percent).
_BOUNDED = re.compile(
    r"(^|[/_])(acc|accuracy|f1|f1_score|fscore|precision|recall|auc|roc_auc|iou|miou|dice|"
    r"map\d*|top1|top5|balanced_accuracy)([/_(]|$|\d)"
)

#: A loss named after a bounded metric (YOLOX ``iou_loss``: 5.0 x (1 - IoU^2) summed over the boxes
#: and divided by their count, ``dice_loss``): a weighted training objective, not the metric, so
#: not bounded to [0, 1] (own corpus f7b2-01: YOLOX iou_loss 2.0 at epoch 1).
_LOSS = re.compile(r"(^|[/_])loss([/_]|$|\d)")


#: The least cross-entropy of one sample whose arg-max prediction is wrong: its label's probability is
#: at most 1/2, so -ln p >= ln 2.
CE_WRONG_FLOOR = float(np.log(2.0))
#: Names of a per-sample arg-max accuracy, the one the bound above is about.
_PLAIN_ACCURACY = frozenset({"acc", "accuracy"})


def _leaf(key: str) -> str:
    """A metric's last name part without its split (``val_acc`` -> ``acc``, ``train/loss`` -> ``loss``)."""
    return _SPLIT_PREFIX.sub("", normalise_key(key).rsplit("/", 1)[-1])


_SPLIT_PREFIX = re.compile(r"^(?:train(?:ing)?|val(?:id(?:ation)?)?|eval|test|dev)_")


class MetricOutOfRange(Detector, code="LI007", name="metric-out-of-range", family="integrity"):
    """A metric bounded to [0, 1] (accuracy, F1, precision, recall, AUC, IoU, mAP) took an impossible value.

    Why it matters: an F1 above 1 or a negative accuracy cannot come from a correct metric; the
    number every comparison and model selection rests on is computed wrongly (a batch-averaged
    F1 of a Keras custom metric, a sum instead of a mean, a wrong ``average=`` argument), so
    conclusions drawn from it are void until it is fixed.
    Evidence: the metric, how many points lie outside its range, the extreme value and where.
    Remedy: compute the metric from the full confusion counts of the epoch (``torchmetrics``,
    ``sklearn.metrics`` on the concatenated predictions), not as a mean of per-batch values
    of a non-linear metric; check its arguments.
    An accuracy (named ``acc`` or ``accuracy``) of exactly 0 at every point of a split whose loss (named
    ``loss``), logged at the same step, is below ln 2 is impossible too: under cross-entropy a sample whose arg-max class is wrong has a predicted
    probability of at most 1/2 for its label, so a loss of at least ln 2 (``CE_WRONG_FLOOR``); a mean
    loss below it needs some right predictions (report b20-02: the PyTorch transfer-learning tutorial
    printing ``Acc: 0.0000`` for train and val at every epoch while val loss falls to 0.2288, an integer
    division since PyTorch 0.4).
    Thresholds: any value below 0, or above 1 in a series that otherwise lives on the 0-1 scale
    (at least ``min_in_range`` 50% of its points within [0, 1]: a series mostly above 1 is in
    percent, see ``roles.as_fraction``), or above 100 in a percent series. Tolerance
    ``tol`` 1e-6 for float rounding. Realworld csv01: a Keras ``F1_score`` reaching 1.092 (train)
    and 1.059 (validation) next to an accuracy that never exceeds 1.
    """

    remedies = (
        Remedy(
            "Recompute the metric from the epoch's concatenated predictions (torchmetrics, "
            "sklearn.metrics) and compare it with the logged one",
            "a batch-averaged non-linear metric (F1) or a wrong average= argument gives impossible "
            "values; the recomputed one is the true value",
            "minutes",
        ),
    )

    @classmethod
    def hypotheses(cls, finding: Finding, outcome: Outcome) -> list[Hypothesis] | None:
        """An impossible value: the metric's computation (supported)."""
        return [
            hyp(
                "the metric is computed wrongly (a mean of per-batch values, a sum, a wrong argument)",
                "supported",
                Cause.CORRECTNESS_BUG,
                "recompute it from the concatenated predictions of one epoch",
                for_=said(finding),
            )
        ]

    class Params(DetectorParams):
        min_in_range: float = 0.5
        tol: float = 1e-6

    def check(self, run, p):
        keys = [
            k
            for k in run.metrics.keys
            if _BOUNDED.search(normalise_key(k))
            and not _LOSS.search(normalise_key(k))
            and not normalise_key(k).startswith(("system", "sys/"))
        ]
        if not keys:
            raise Skip("no accuracy-like (bounded) metric logged")
        yield from self._zero_accuracy_below_its_loss(run)
        for key in keys:
            # every logged value, not one per step: a value no such metric can take is impossible
            # wherever it was logged (a console whose records share one step counter)
            s = run.series(key).finite()
            if not len(s):
                continue
            v = s.values
            in_unit = float(np.mean((v >= -p.tol) & (v <= 1 + p.tol)))
            # one point does not tell the unit: only a value outside both scales is impossible then
            upper = 1.0 if in_unit >= p.min_in_range and len(s) >= 2 else 100.0
            bad = (v < -p.tol) | (v > upper + p.tol * upper)
            if not bad.any():
                continue
            i = int(np.argmax(np.abs(np.where(bad, v, 0.0))))
            yield self.finding(
                Severity.ERROR,
                f"{key} reaches {fmt(float(v[i]))} at step {int(s.steps[i])}: outside the range [0, {fmt(upper)}] "
                f"such a metric can take ({int(bad.sum())} of {len(v)} points), so it is computed wrongly",
                evidence=[
                    SeriesEvidence(
                        metric=key,
                        step_start=int(s.steps[i]),
                        step_end=int(s.steps[i]),
                        values={
                            "value": float(v[i]),
                            "upper_bound": upper,
                            "points_outside": float(bad.sum()),
                        },
                    )
                ],
                key=key,
                value=float(v[i]),
                upper_bound=upper,
                n_outside=int(bad.sum()),
                n_points=len(v),
            )

    def _zero_accuracy_below_its_loss(self, run):
        """An accuracy exactly 0 at every point of its split while that split's loss, at a step
        where both are logged, is below :data:`CE_WRONG_FLOOR`: no model has that pair."""
        from ..roles import Role

        for acc_role, loss_role in (
            (Role.VAL_ACCURACY, Role.VAL_LOSS),
            (Role.TRAIN_ACCURACY, Role.TRAIN_LOSS),
        ):
            ak, lk = run.key_for(acc_role), run.key_for(loss_role)
            # the argument holds for the arg-max accuracy of the samples the loss averages: a plain
            # accuracy beside a plain loss (a sequence-level exact match, a mAP or a box loss is not)
            if not ak or not lk or _leaf(ak) not in _PLAIN_ACCURACY or _leaf(lk) != "loss":
                continue
            acc = run.series(ak).by_step().finite()
            loss = run.series(lk).by_step().finite()
            if not len(acc) or np.any(acc.values != 0.0):
                continue
            at = dict(zip(loss.steps.tolist(), loss.values.tolist()))
            low = [(st, at[st]) for st in acc.steps.tolist() if at.get(st, np.inf) < CE_WRONG_FLOOR]
            if not low:
                continue
            step, value = low[-1]
            yield self.finding(
                Severity.ERROR,
                f"{ak} is exactly 0 "
                + (
                    f"at every one of its {len(acc)} points"
                    if len(acc) > 1
                    else "at its only point"
                )
                + f" while {lk} is {fmt(value)} at "
                f"step {int(step)}, below ln 2 = {fmt(CE_WRONG_FLOOR)}, the least cross-entropy of a wrong "
                "prediction: no model has both, so the accuracy is computed wrongly",
                evidence=[
                    SeriesEvidence(
                        metric=ak,
                        step_start=int(acc.steps[0]),
                        step_end=int(acc.steps[-1]),
                        values={"accuracy": 0.0, "loss": float(value)},
                    )
                ],
                key=ak,
                value=0.0,
                loss_key=lk,
                loss=float(value),
                kind="contradicts_loss",
            )
