"""Two readings of a run whose task metric shows that the model did not learn its task, made where the
healthy reading would call the run succeeded: a held-out ROC AUC that never left chance
(:func:`auc_at_chance`), and a task metric that did not move while the loss fell
(:func:`metric_unmoved`).

A careful analyst does not call a run succeeded because no failure detector fired: they ask whether
the model learned its task. The loss is a surrogate; the task metric (accuracy, mAP, AUC) is what the
run was for.

- A ROC AUC is the probability that a random positive is ranked above a random negative, so a
  ranking that carries no information scores 0.5 whatever the class balance (Hanley & McNeil 1982,
  Radiology 143:29); unlike an accuracy it needs no class count to know its chance level. A held-out
  ROC AUC that stays within 25% of the way from chance to its ceiling of 1.0 at every evaluation
  (never above 0.625, on average within 0.125 of 0.5: the policy's convention for "beat chance",
  V19e/V20c/V20d) is a classifier that never
  left the uniform guess on held-out data (own corpus f26b2-12: an audio-deepfake detector, val AUC
  0.48, 0.49, 0.37, 0.53, cls loss at ln 2 throughout). A precision-recall AUC (``pr_auc``,
  ``auprc``, average precision) has the positives' share as its chance level and is not read.
- A task metric on a 0-1 scale whose best stays below 25% of the way to its ceiling (the same
  convention, with a chance level of 0 at worst) and that moved less than 5% of its own headroom
  (``1 - lowest``) over at least 8 evaluations, while the run's loss fell by at least 5% of its
  first value: the optimiser bought loss with nothing the task sees (the most frequent tokens or
  class, a calibration of the output scale), so the model did not learn the task (own corpus
  f26b1-01: a translation Transformer whose token accuracy sits at 0.049-0.068 for 52 epochs while
  its loss falls 11.2 -> 8.66; f9b1-11: a YOLOv8 at mAP50-95 0.002-0.010 for 100 epochs while its
  val box loss falls by a fifth). 8 evaluations are the quarters' minimum of
  :func:`.levelled.still_descending` (two per quarter), so a short run's noise is not read as
  flat; the 5% loss fall is the relative move the metric is compared with.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from ..roles import Role, as_fraction, parse_name
from ..rundata import RunData
from ..signal import fmt

#: Share of the way from chance to the ceiling 1.0 a score must reach to count as beating chance (the
#: policy's convention: V19e, V20c, V20d).
CHANCE_LIFT = 0.25
#: The ROC AUC of a ranking with no information (Hanley & McNeil 1982).
AUC_CHANCE = 0.5
#: Evaluations of a held-out AUC read (a trend's minimum, MIN_TREND_POINTS).
AUC_MIN_POINTS = 3
#: Evaluations of a task metric read as unmoved (two per quarter: :func:`.levelled.still_descending`).
UNMOVED_MIN_POINTS = 8
#: Share of its headroom (1 - lowest) within which a task metric's whole range counts as unmoved.
UNMOVED_SHARE = 0.05
#: Share of its first value the loss must have fallen for the comparison to say anything.
LOSS_FELL = 0.05

#: A ROC AUC's key (``auc``, ``roc_auc``, ``auroc``); not a precision-recall AUC.
_AUC = re.compile(r"(?<![a-z])(roc[_-]?)?auc(roc)?(?![a-z])|auroc")
_PR_AUC = re.compile(r"pr[_-]?auc|auprc|auc[_-]?pr|average[_-]?precision")


@dataclass(frozen=True)
class AtChance:
    """A held-out ROC AUC that never left chance: its key and values."""

    key: str
    values: tuple[float, ...]

    def describe(self) -> str:
        """One clause for a report."""
        vals = ", ".join(fmt(v) for v in self.values[:8])
        return (
            f"{self.key} is {vals} over its {len(self.values)} evaluations, never above "
            f"{fmt(AUC_CHANCE + CHANCE_LIFT * (1 - AUC_CHANCE))} and on average within "
            f"{fmt(CHANCE_LIFT * (1 - AUC_CHANCE))} of {fmt(AUC_CHANCE)}, the ROC AUC of a ranking that "
            "carries no information"
        )


def _heldout(key: str) -> bool:
    split = parse_name(key).split
    return split in ("eval", "test") or bool(
        re.search(r"(?<![a-z])(val|valid|test|eval)", key.lower())
    )


def auc_at_chance(run: RunData) -> AtChance | None:
    """The :class:`AtChance` reading of the first held-out ROC AUC with at least
    :data:`AUC_MIN_POINTS` evaluations on a 0-1 scale that never beat chance by ``CHANCE_LIFT`` of the
    way to 1.0 (every value <= 0.625) and whose mean is within that band of 0.5 (a small held-out set
    scatters on both sides of chance); ``None`` when no held-out ROC AUC is logged or one of them left
    chance."""
    found: AtChance | None = None
    for k in run.metrics.keys:
        low = k.lower()
        if not _heldout(k) or not _AUC.search(low) or _PR_AUC.search(low):
            continue
        v = run.series(k).by_step().finite().values
        if len(v) < AUC_MIN_POINTS or float(v.min()) < 0.0 or float(v.max()) > 1.0:
            continue
        band = CHANCE_LIFT * (1 - AUC_CHANCE)
        if float(v.max()) > AUC_CHANCE + band:
            return None
        if abs(float(v.mean()) - AUC_CHANCE) > band:
            # far below chance on average: an inverted ranking or another quantity named AUC (a pose
            # PCK curve's area), not a ranking at chance
            continue
        found = found or AtChance(k, tuple(float(x) for x in v))
    return found


@dataclass(frozen=True)
class Unmoved:
    """A low task metric that did not move while the loss fell.

    Attributes:
        key, points, lowest, best: the metric's key, evaluations, lowest and best values (0-1).
        loss_key, loss_first, loss_last: the loss read and its first and last values.
    """

    key: str
    points: int
    lowest: float
    best: float
    loss_key: str
    loss_first: float
    loss_last: float

    def describe(self) -> str:
        """One clause for a report."""
        fall = 100 * (self.loss_first - self.loss_last) / self.loss_first
        return (
            f"{self.key} stayed between {fmt(self.lowest)} and {fmt(self.best)} over {self.points} "
            f"evaluations (less than {fmt(100 * UNMOVED_SHARE)}% of its headroom, and below "
            f"{fmt(CHANCE_LIFT)} of its ceiling) while {self.loss_key} fell {fmt(self.loss_first)} -> "
            f"{fmt(self.loss_last)} ({fmt(fall, 3)}%)"
        )


def _loss(run: RunData) -> tuple[str, np.ndarray] | None:
    """The loss the metric is compared with: the held-out loss with at least
    :data:`UNMOVED_MIN_POINTS` points, else the training loss."""
    for role in (Role.VAL_LOSS, Role.TRAIN_LOSS):
        k = run.key_for(role)
        if not k:
            continue
        v = run.series(k).by_step().finite().values
        if len(v) >= UNMOVED_MIN_POINTS:
            return k, v
    return None


def metric_unmoved(run: RunData) -> Unmoved | None:
    """The :class:`Unmoved` reading of the held-out task metric (``VAL_ACCURACY``, else
    ``TRAIN_ACCURACY``), or ``None``: at least :data:`UNMOVED_MIN_POINTS` evaluations on a 0-1 scale,
    best below :data:`CHANCE_LIFT`, range at most :data:`UNMOVED_SHARE` of ``1 - lowest``, and the
    loss (:func:`_loss`, positive at its start) fell by at least :data:`LOSS_FELL` of its first value."""
    loss = _loss(run)
    if loss is None or float(loss[1][0]) <= 0:
        return None
    lk, lv = loss
    first, last = float(lv[0]), float(lv[-1])
    if first - last < LOSS_FELL * first:
        return None
    for role in (Role.VAL_ACCURACY, Role.TRAIN_ACCURACY):
        ak = run.key_for(role)
        if not ak:
            continue
        a, _ = as_fraction(ak, run.series(ak).by_step().finite().values)
        if len(a) < UNMOVED_MIN_POINTS or float(a.min()) < 0.0 or float(a.max()) > 1.0:
            continue
        lo, hi = float(a.min()), float(a.max())
        if hi < CHANCE_LIFT and hi - lo <= UNMOVED_SHARE * (1 - lo):
            return Unmoved(ak, len(a), lo, hi, lk, first, last)
        return None
    return None


#: Share of its average gain per quarter the task metric must still gain in its last quarter to count as
#: still rising (the mirror of :data:`.policy.STILL_FALLING_PACE`, V20g's reading of a loss).
STILL_RISING_PACE = 0.5


@dataclass(frozen=True)
class Rising:
    """A low task metric still rising at pace when the run ended.

    Attributes:
        key, points: the metric's key and evaluations; first, q3, q4, best: its first value, its
        third- and last-quarter medians and its best (0-1).
    """

    key: str
    points: int
    first: float
    q3: float
    q4: float
    best: float

    def describe(self) -> str:
        """One clause for a report."""
        return (
            f"{self.key} went {fmt(self.first)} -> third-quarter median {fmt(self.q3)} -> last-quarter "
            f"median {fmt(self.q4)} over {self.points} evaluations, best {fmt(self.best)} (below "
            f"{fmt(CHANCE_LIFT)} of its ceiling), still gaining in its last quarter at least "
            f"{fmt(100 * STILL_RISING_PACE)}% of its average gain per quarter"
        )


def metric_still_rising(run: RunData) -> Rising | None:
    """The :class:`Rising` reading of the held-out task metric (``VAL_ACCURACY`` role), or ``None``:
    at least :data:`UNMOVED_MIN_POINTS` evaluations on a 0-1 scale, best below :data:`CHANCE_LIFT`,
    its best in the last quarter, and its last quarter's median above the third quarter's by at least
    :data:`STILL_RISING_PACE` of its average gain per quarter (first- to last-quarter median, over 3).

    A learning curve decelerates as the model nears what it can fit (V20g's reading of a loss); a task
    metric still rising at full pace when a finished run ends, at a level that has not reached a
    quarter of its ceiling, is a model stopped in its initial climb: undertrained, "train longer"
    (own corpus f26b1-08: a YOLOv8n on CPU, 15 of 15 epochs, mAP50-95 0.04 -> 0.14 and every loss still
    falling). Healthy detectors still climbing at their end sit above the level (own f8b2-01,
    mAP50-95 0.28 at 100 of 100 epochs; f24b2-11, 0.31)."""
    ak = run.key_for(Role.VAL_ACCURACY)
    if not ak:
        return None
    a, _ = as_fraction(ak, run.series(ak).by_step().finite().values)
    n = len(a)
    if n < UNMOVED_MIN_POINTS or float(a.min()) < 0.0 or float(a.max()) >= CHANCE_LIFT:
        return None
    q1, q3, q4 = (float(np.median(a[i * n // 4 : (i + 1) * n // 4])) for i in (0, 2, 3))
    pace = (q4 - q1) / 3
    if pace <= 0 or q4 - q3 < STILL_RISING_PACE * pace or int(np.argmax(a)) < 3 * n // 4:
        return None
    return Rising(ak, n, float(a[0]), q3, q4, float(a.max()))
