"""Two readings of runs whose curves show no learning, made where the healthy reading would stand:
a training loss that levelled off in a record that shows neither the run's end nor any held-out
figure (:func:`levelled_off`), and a held-out accuracy that did not move (:func:`unmoved_accuracy`).

When the training loss is the only learning signal and nothing shows the run's end (no planned
length, end-of-training line, early stop or finished status), the loss's course is the whole record.
A loss that still improves over the record's second half shows a model learning, and the healthy
reading stands. A loss whose second half holds within its noise of the level at the record's
midpoint shows only that the training stopped improving: with no held-out figure to say whether that
level is a good fit, and no end to say the run used what it planned, no success can be shown. An
analyst calls that plateaued, with the cause not in the data (own corpus f19b2-19: a DQN grasping
agent whose loss fell a third and was flat for the last 600 of its 1240 steps, no reward logged;
f21b1-12: a BEV detector's loss flat from epoch 20 of 60, no evaluation; f13b2-04: seven epochs of a
DeepAR loss at 3.87-3.94 with the run's start not in the file; labelled plateaued or unknown, and
plateaued/inconclusive is what f19b2-04 and f5b2-08, healthy levelled losses with no held-out figure,
accept too).

The level is the task-metric framework's (:func:`..task_metric.judge_series`: medians of a tenth of
the points, at least 3; a noise band of ``NOISE_UNITS`` standard errors of the difference of two
levels, the per-point deviation estimated from the second half's point-to-point changes). A loss that
still falls at half its average pace in its last quarter (:func:`.policy.still_falling_at_pace`)
counts as improving whatever the band says (own corpus f16b1-10: an LM loss falling 5.91 -> 5.43
over quarters with per-record noise 0.3). Not read: fewer than ``MIN_EVALS`` (6, OP003's short-run
minimum) points; a loss with a negative value (a surrogate such as a policy-gradient or critic loss,
:func:`..task_metric.surrogate_loss`) or one player's in an adversarial game: neither is minimised
towards zero, so a flat course says nothing of learning.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..roles import Role, as_fraction, has_class_chance
from ..rundata import RunData
from ..signal import fmt
from ..task_metric import MIN_EVALS, Judgement, TaskMetric, judge_series


@dataclass(frozen=True)
class Levelled:
    """A training loss whose second half held within noise of its midpoint level.

    Attributes:
        key: the training loss's key.
        points: its finite points (by step).
        mid_step: the step at the record's midpoint.
        mid_level, final: the level at the midpoint and the final level (medians of ``window`` points),
            in the loss's units.
        band: the noise band of the difference of two levels, in the loss's units.
        window: points per level.
    """

    key: str
    points: int
    mid_step: int
    mid_level: float
    final: float
    band: float
    window: int

    def describe(self) -> str:
        """One clause for a report."""
        return (
            f"{self.key} held at {fmt(self.mid_level)} (step {self.mid_step}, the record's midpoint) -> "
            f"{fmt(self.final)} at the end, within its noise band of {fmt(self.band)} (levels: medians of "
            f"{self.window} of its {self.points} points)"
        )


def levelled_off(run: RunData, key: str) -> Levelled | None:
    """The :class:`Levelled` reading of the training loss ``key`` (lower is better), or ``None`` when
    it has fewer than ``MIN_EVALS`` finite points, a negative value, or its final level is better than
    its midpoint level by more than the noise band. The caller checks that nothing shows the run's end
    and that the loss is the run's only learning signal."""
    s = run.series(key).by_step().finite()
    n = len(s.values)
    if n < MIN_EVALS or float(s.values.min()) < 0.0:
        return None
    j: Judgement | None = judge_series(
        TaskMetric(key, s.steps, s.values, False, False, "training loss")
    )
    if j is None:
        return None
    mid = float(s.steps[n // 2])
    if j.improved_since(mid) or int(s.steps.searchsorted(mid)) >= n - j.window:
        return None
    return Levelled(key, n, int(mid), j.level_at(mid), j.final, j.band, j.window)


def only_training_loss(signals: dict[str, tuple[str, int]]) -> str | None:
    """The training loss's key when it is the only learning signal examined (no held-out loss or
    accuracy, no training accuracy), else ``None``. ``signals`` is :attr:`.evidence.Basis.signals`."""
    if list(signals) != [Role.TRAIN_LOSS.value]:
        return None
    return signals[Role.TRAIN_LOSS.value][0]


#: A held-out accuracy at or above this has learned its task, whatever its course (GE002's
#: ``learned_accuracy``: a model right on 90% of its inputs).
LEARNED_ACCURACY = 0.9
#: A training loss that fell at least this share of its first level learned something (the policy's
#: ``CONVERGED_DROP``, OP001's ``min_drop`` convention for a loss that learned).
LEARNED_DROP = 0.2


@dataclass(frozen=True)
class Unmoved:
    """A held-out accuracy that repeated a value at consecutive evaluations and never rose beyond its
    noise above its first value, beside a training loss that barely fell.

    Attributes:
        key: the held-out accuracy's key; values: its values (0-1 scale).
        repeated: the value given at two consecutive evaluations.
        tolerance: its noise band (:func:`..detectors.GE001.accuracy_tolerance`).
        loss_key, loss_first, loss_last: the training loss and its first and last levels (medians of a
            tenth of its points, at least one).
    """

    key: str
    values: tuple[float, ...]
    repeated: float
    tolerance: float
    loss_key: str
    loss_first: float
    loss_last: float

    def describe(self) -> str:
        """One clause for a report."""
        shown = ", ".join(fmt(x) for x in self.values[:8]) + (
            " ..." if len(self.values) > 8 else ""
        )
        fall = 100 * (self.loss_first - self.loss_last) / self.loss_first
        moved = f"fell only {fmt(fall, 3)}%" if fall >= 0 else f"rose {fmt(-fall, 3)}%"
        return (
            f"{self.key} went {shown}: it gave exactly {fmt(self.repeated)} at consecutive evaluations and "
            f"never rose beyond its noise band ({fmt(self.tolerance)}) above its first value, while "
            f"{self.loss_key} {moved} ({fmt(self.loss_first)} -> {fmt(self.loss_last)})"
        )


def _level_fall(run: RunData, key: str) -> tuple[float, float] | None:
    """``(first level, last level)`` of a positive loss: medians of a tenth of its points (>= 1)."""
    v = run.series(key).by_step().finite().values
    if len(v) < 2 or float(v.min()) <= 0.0:
        return None
    k = max(1, len(v) // 10)
    return float(np.median(v[:k])), float(np.median(v[-k:]))


def unmoved_accuracy(run: RunData) -> Unmoved | None:
    """The :class:`Unmoved` reading, or ``None``. Read when the held-out top-1 accuracy
    (``VAL_ACCURACY``, a key with a class chance level) has at least 3 evaluations on a 0-1 scale, all
    below :data:`LEARNED_ACCURACY`; two consecutive evaluations give exactly the same value (to 1e-9);
    its best is within its noise band (:func:`..detectors.GE001.accuracy_tolerance`) of its first
    value; the held-out set is not a handful of examples (:func:`.granularity.heldout_size`: on a
    1/n grid with n <= 30 a repeat is forced by the counting, not by unchanged predictions); and the
    training loss fell less than :data:`LEARNED_DROP` of its first level.

    An accuracy on the same held-out set that comes out exactly equal after an epoch of training
    means the model's predictions on it did not change (a constant or near-constant predictor, most
    often the majority class), and with no gain over the first evaluation and a training loss that
    barely moved, nothing was learned after the first evaluation: underfit (own corpus f19b2-09: a
    BERT 3-class classifier at 0.650, 0.650, 0.668, 0.668 with the macro F1 of a one-class predictor,
    training loss -13%; f6b1-11: a binary classifier at 0.555, 0.555, 0.560, 0.560, 0.555, training
    loss above ln 2)."""
    from ..detectors.GE001 import accuracy_tolerance
    from .granularity import heldout_size

    ak, tk = run.key_for(Role.VAL_ACCURACY), run.key_for(Role.TRAIN_LOSS)
    if not ak or not tk or not has_class_chance(ak):
        return None
    raw = run.series(ak).by_step().finite().values
    acc, _ = as_fraction(ak, raw)
    if len(acc) < 3 or float(acc.min()) < 0.0 or float(acc.max()) >= LEARNED_ACCURACY:
        return None
    same = np.flatnonzero(np.abs(np.diff(acc)) <= 1e-9)
    tol = accuracy_tolerance(acc)
    if not same.size or float(acc.max()) - float(acc[0]) > tol or heldout_size(run) is not None:
        return None
    lf = _level_fall(run, tk)
    if lf is None or lf[0] - lf[1] >= LEARNED_DROP * lf[0]:
        return None
    vals = tuple(float(x) for x in acc)
    return Unmoved(ak, vals, vals[int(same[0])], tol, tk, lf[0], lf[1])


#: A loss that fell this share of its first value or more is past its initial descent, whatever its pace
#: at the end (the policy's ``STRAIGHT_MAX_FALL``: own f15b1-01, an LSTM's loss 1.02 -> 0.014 still
#: falling at its 2000th epoch, is a model that learned).
DESCENT_MAX_FALL = 0.5
#: Points of the loss read: the quarters of :func:`.policy.still_falling_at_pace` need 8.
DESCENT_MIN_POINTS = 8
#: Consecutive falls that end the record: the loss at its minimum at its last point, falling at each
#: of the last 3 intervals (not one lucky last value).
DESCENT_LAST_FALLS = 3


@dataclass(frozen=True)
class Descending:
    """A loss that ended in its initial descent.

    Attributes:
        key: the loss's key; points: its finite points.
        first, last: its first and last values (the loss's units).
        q3, q4: medians of its third and last quarters.
    """

    key: str
    points: int
    first: float
    last: float
    q3: float
    q4: float

    def describe(self) -> str:
        """One clause for a report."""
        fall = 100 * (self.first - self.last) / self.first
        return (
            f"{self.key} went {fmt(self.first)} -> {fmt(self.last)} over {self.points} points, falling at each "
            f"of its last {DESCENT_LAST_FALLS} and as fast in its last quarter (median {fmt(self.q3)} -> "
            f"{fmt(self.q4)}) as over the run, {fmt(fall, 3)}% below its start"
        )


def still_descending(run: RunData) -> Descending | None:
    """The :class:`Descending` reading of the run's loss, or ``None``. Read when the run logs no
    accuracy (neither role :attr:`Role.VAL_ACCURACY` nor :attr:`Role.TRAIN_ACCURACY`: a task score
    judges a run's success better than a loss's course); on the held-out loss when it has at least
    :data:`DESCENT_MIN_POINTS` finite points, else on the training loss. The loss is positive, still
    falls in its last quarter at half its average pace per quarter or more
    (:func:`.policy.still_falling_at_pace`), fell at each of its last :data:`DESCENT_LAST_FALLS`
    intervals, and ended less than :data:`DESCENT_MAX_FALL` below its first value.

    A learning curve decelerates as the model nears what it can fit; a loss still falling at full pace
    at its last point, not yet halved, is a model in its initial descent: the run ended while it was
    still learning, which an analyst calls underfit (more steps, or a larger learning rate), not a
    success (own corpus f6b1-10: a EuroSAT classifier's val_loss 2.27 -> 1.88 in 10 epochs, falling at
    every one; f24b2-04: a TFT forecaster's val_loss 0.053 -> 0.049 over 20 one-step epochs, falling
    fastest at the end; f15b1-03 and f20b2-12, char-level GPTs still falling, labelled succeeded or
    underfit)."""
    from .policy import still_falling_at_pace

    if run.key_for(Role.VAL_ACCURACY) or run.key_for(Role.TRAIN_ACCURACY):
        return None
    key = None
    for role in (Role.VAL_LOSS, Role.TRAIN_LOSS):
        k = run.key_for(role)
        if k and len(run.series(k).by_step().finite()) >= DESCENT_MIN_POINTS:
            key = k
            break
    if key is None:
        return None
    v = run.series(key).by_step().finite().values
    first, last = float(v[0]), float(v[-1])
    if float(v.min()) <= 0.0 or not 0.0 < (first - last) / first < DESCENT_MAX_FALL:
        return None
    if not bool(np.all(np.diff(v[-(DESCENT_LAST_FALLS + 1) :]) < 0)):
        return None
    pace = still_falling_at_pace(run, key)
    if pace is None:
        return None
    return Descending(key, len(v), first, last, pace[0], pace[1])
