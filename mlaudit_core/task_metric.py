"""The run's task metric, read first: what the run is for, and whether the losses' alarms stand.

A careful analyst judges a run by the held-out metric it was trained for (accuracy, top-1, mAP, F1,
BLEU, WER, an agent's or a policy's reward) and reads the losses in its light. This module is the one
place that picks that metric and says what it shows; the verdict policy (:mod:`.policy`) asks it
before a loss-based failure rule sets the outcome (:func:`overrules`) and when the metric itself fell
(:func:`fell`).

Which series is the task metric (:func:`task_metric`), in order:

1. the metric the run selects its checkpoint by, when that is a task metric and not a loss (a
   ``monitor`` / ``metric_for_best_model`` param; Ultralytics fitness from its mAP columns:
   :func:`..detectors._context.monitored`);
2. the held-out accuracy role (:class:`..roles.Role.VAL_ACCURACY`: an evaluation-split accuracy or
   score, an agent's episode reward);
3. a held-out error rate the roles read as the held-out loss (WER, CER: family ``error``);
4. a policy-optimisation trainer's ``reward`` (TRL GRPO/PPO log the mean reward of the sampled
   completions as ``reward``; its loss is a surrogate that sits near zero by construction);
5. only when the training loss is such a surrogate (:func:`surrogate_loss`), a training-loop score
   (an agent's episode ``score``).

What it shows is measured on *levels*, not single evaluations: a level is the median of a window of
``w = max(3, ceil(n / 10))`` consecutive evaluations (a tenth of the run, the tail share the policy's
``SELECTION_TAIL`` and ``NEW_BEST_TAIL`` use), so the best of a noisy series is not its luckiest
evaluation. The noise band (:func:`noise_band`) is the metric's own evaluation-to-evaluation
variation: ``NOISE_UNITS`` 3 x the median absolute change between consecutive evaluations over the
second half of the run (the "beyond noise" margin of GE001's ``ACC_NOISE_UNITS``, GE003 and GE007),
and for a bounded accuracy at least two binomial standard deviations of the held-out set the
accuracy's smallest step implies (GE001 :func:`~..detectors.GE001.accuracy_tolerance`). No constant
here is fitted to a run.

The readings (:class:`Judgement`):

* ``at_ceiling``: a bounded score whose last ``w`` evaluations all sit within 1% (GE007's
  ``min_rel``) of 1.0 (Ultralytics' 101-point AP tops out at 0.995): the held-out set is solved by
  this measure; no plateau or overfit is measurable on it (:func:`solved` asks it of every held-out
  accuracy and AP the run logs);
* ``holds``: the final level is within the noise band of the best level, or gave back at most
  ``MILD_RISE`` (a tenth, GE001) of what the metric gained from its first level to its best;
* ``fell``: it did not hold, and the best level came before the last ``w`` evaluations;
* :meth:`Judgement.improved_since`: the final level is above the level at a given step by more than
  the noise band (the model kept getting better at its task after, say, the held-out loss turned).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np

from .roles import Role, as_fraction, normalise_key, parse_name
from .rundata import RunData

#: Noise units of the "beyond noise" margin (GE001 ``ACC_NOISE_UNITS``, GE003, GE007 ``noise_k``).
NOISE_UNITS = 3.0
#: Evaluations a judgement needs: 5 step-to-step changes for a noise estimate (GE001 ``MIN_ACC_EVALS``).
MIN_EVALS = 6
#: A level is the median of a tenth of the evaluations (the policy's ``SELECTION_TAIL``), at least 3.
LEVEL_SHARE = 0.1
LEVEL_MIN = 3
#: A score within this share of its ceiling 1.0 has no gain left that is measured (GE007 ``min_rel``).
CEILING_MARGIN = 0.01
#: A fall that gives back at most this share of what the metric gained is mild (GE001 ``MILD_RISE``).
MILD_FALL = 0.10

#: A policy-optimisation trainer's mean reward (TRL GRPO/PPO/RLOO ``reward``, ``train/reward``,
#: ``reward_mean``): not an episode return the roles place, but the quantity the policy maximises.
_POLICY_REWARD = re.compile(r"^(?:train/|train_)?(?:reward|rewards)(?:/mean|_mean)?$")


@dataclass(frozen=True)
class TaskMetric:
    """The run's task metric.

    Attributes:
        key: the logged key, or ``"fitness (0.1 mAP@.5 + 0.9 mAP@.5:.95)"`` for Ultralytics fitness.
        steps: int64 array (n,), evaluation steps, sorted.
        values: float64 array (n,), finite values on the 0-1 scale for a bounded score logged in
            percent (:func:`..roles.as_fraction`), else as logged.
        higher_is_better: the metric's direction (an error rate is lower-is-better).
        bounded: a score with a ceiling of 1.0 (accuracy, F1, mAP, IoU, Dice on a 0-1 scale).
        source: where the choice came from, in words (for the report).
    """

    key: str
    steps: np.ndarray
    values: np.ndarray
    higher_is_better: bool
    bounded: bool
    source: str


def _bounded(key: str, values: np.ndarray) -> bool:
    p = parse_name(key)
    fin = values[np.isfinite(values)]
    return bool(
        (p.family in ("acc", "score") or key.startswith("fitness"))
        and p.head not in ("r2", "mcc", "ndcg", "mrr")
        and fin.size
        and float(fin.min()) >= 0.0
        and float(fin.max()) <= 1.0
    )


def _make(run: RunData, key: str, hib: bool, source: str) -> TaskMetric | None:
    s = run.series(key).by_step().finite()
    if not len(s):
        return None
    v, _ = as_fraction(key, s.values)
    return TaskMetric(key, s.steps, np.asarray(v, dtype=np.float64), hib, _bounded(key, v), source)


def task_metric(run: RunData, surrogate: bool = False) -> TaskMetric | None:
    """The run's task metric (the order is the module docstring's), or ``None`` when it logs none.

    ``surrogate``: the run's loss is a surrogate that is not minimised towards zero
    (:func:`surrogate_loss`); then a training-loop score (an agent's episode ``score``) is read as
    the task metric too when nothing held-out is logged."""
    for step in (_selected_metric, _heldout_accuracy, _heldout_error, _policy_reward):
        got = step(run)
        if got is not None:
            return got
    return _agent_score(run) if surrogate else None


def _selected_metric(run: RunData) -> TaskMetric | None:
    """The metric the run selects its checkpoint by, when it is not a loss."""
    from .detectors._context import monitored

    vk = run.key_for(Role.VAL_LOSS)
    if not vk:
        return None
    name, s, hib, source = monitored(run, vk)
    if source == "validation loss" or not hib or not len(s):
        return None
    if name in run.metrics.keys:
        return _make(run, name, True, f"the metric the run selects by ({source})")
    return TaskMetric(name, s.steps, np.asarray(s.values, dtype=np.float64), True, True, source)


def _heldout_accuracy(run: RunData) -> TaskMetric | None:
    ak = run.key_for(Role.VAL_ACCURACY)
    if not ak:
        return None
    pn = parse_name(ak)
    return _make(
        run,
        ak,
        pn.higher_is_better is not False,
        "the episode reward" if pn.family == "reward" else "the held-out accuracy/score",
    )


def _heldout_error(run: RunData) -> TaskMetric | None:
    for k in run.aliases.candidates(Role.VAL_LOSS, list(run.metrics.keys)):
        if parse_name(k).family == "error":
            got = _make(run, k, False, "the held-out error rate")
            if got is not None and len(got.values) >= 2:
                return got
    return None


def _policy_reward(run: RunData) -> TaskMetric | None:
    for k in run.metrics.keys:
        if _POLICY_REWARD.match(normalise_key(k)):
            got = _make(run, k, True, "the policy's mean reward")
            if got is not None:
                return got
    return None


def _agent_score(run: RunData) -> TaskMetric | None:
    for k in run.metrics.keys:
        pn = parse_name(k)
        scored = pn.family == "score" or (pn.family is None and "score" in pn.tokens)
        if scored and pn.split != "eval" and not pn.running_best:
            got = _make(run, k, True, "the agent's score")
            if got is not None and len(got.values) >= MIN_EVALS:
                return got
    return None


def noise_band(m: TaskMetric, window: int = LEVEL_MIN) -> float:
    """The noise band of the difference of two levels (medians of ``window`` evaluations), in the
    metric's units: ``NOISE_UNITS`` standard errors of that difference, the per-evaluation standard
    deviation estimated from the evaluation-to-evaluation changes of the second half (median
    |delta| / (0.6745 sqrt 2), the normal consistency factors), a median of ``window`` evaluations
    having 1.2533 / sqrt(window) of it; at ``window`` 3 this is 3.2 x the median |delta| (GE001's
    3 units). For a bounded accuracy at least two binomial standard deviations ``sqrt(p(1-p)/n)``,
    ``n`` = 1 / its smallest non-zero step (one held-out example; GE001
    :func:`~.detectors.GE001.accuracy_tolerance`): the same held-out set is scored at every
    evaluation, so a window does not average that error away."""
    v = m.values
    half = v[len(v) // 2 :]
    d = np.abs(np.diff(half))
    sigma = float(np.median(d)) / (0.6745 * math.sqrt(2.0)) if d.size else 0.0
    band = NOISE_UNITS * 1.2533 * sigma * math.sqrt(2.0 / max(1, window))
    if m.bounded and parse_name(m.key).family == "acc":
        steps = np.abs(np.diff(v))
        nz = steps[steps > 1e-9]
        if nz.size:
            n_eval = 1.0 / float(nz.min())
            p = float(np.clip(np.median(v), 0.0, 1.0))
            band = max(band, 2.0 * math.sqrt(p * (1 - p) / n_eval))
    return band


@dataclass(frozen=True)
class Judgement:
    """What the task metric shows (levels in the metric's units, oriented as logged).

    Attributes:
        metric: the :class:`TaskMetric`.
        n: evaluations.
        window: evaluations per level (``w``).
        band: the noise band (:func:`noise_band`).
        first, best, final: the first level, the best level, the final level (medians of ``w``).
        best_step: the step at the middle of the best level's window.
        at_ceiling, holds, fell: the readings of the module docstring.
    """

    metric: TaskMetric
    n: int
    window: int
    band: float
    first: float
    best: float
    final: float
    best_step: int
    at_ceiling: bool
    holds: bool
    fell: bool

    def _up(self, a: float, b: float) -> float:
        """How much better ``b`` is than ``a`` in the metric's direction."""
        return b - a if self.metric.higher_is_better else a - b

    def level_at(self, step: float) -> float:
        """The level (median of ``w`` evaluations) centred on the evaluation nearest ``step``."""
        m = self.metric
        i = int(np.clip(np.searchsorted(m.steps, step, side="left"), 0, self.n - 1))
        lo = max(0, min(i - self.window // 2, self.n - self.window))
        return float(np.median(m.values[lo : lo + self.window]))

    def improved_since(self, step: float) -> bool:
        """The final level is better than the level at ``step`` by more than the noise band, and
        ``step`` lies before the last level's window."""
        m = self.metric
        if int(np.searchsorted(m.steps, step, side="left")) >= self.n - self.window:
            return False
        return self._up(self.level_at(step), self.final) > self.band

    def describe(self) -> str:
        """One clause for a report: the metric, its first / best / final levels and the band."""
        from .signal import fmt

        return (
            f"{self.metric.key} ({self.metric.source}) went {fmt(self.first)} -> best "
            f"{fmt(self.best)} (step {self.best_step}) -> {fmt(self.final)} at the end (levels: "
            f"medians of {self.window} evaluations; noise band {fmt(self.band)})"
        )


def judge(run: RunData, surrogate: bool = False) -> Judgement | None:
    """The :class:`Judgement` of the run's task metric (:func:`task_metric`), or ``None`` without
    one of at least ``MIN_EVALS`` evaluations."""
    m = task_metric(run, surrogate)
    return None if m is None else judge_series(m)


def judge_series(m: TaskMetric) -> Judgement | None:
    """The :class:`Judgement` of any held-out series ``m`` (levels, noise band, holds/fell, read
    as :func:`judge` reads the task metric), or ``None`` under ``MIN_EVALS`` evaluations."""
    if len(m.values) < MIN_EVALS:
        return None
    v = m.values
    n = len(v)
    w = max(LEVEL_MIN, int(math.ceil(LEVEL_SHARE * n)))
    levels = np.array([np.median(v[j : j + w]) for j in range(n - w + 1)])
    oriented = levels if m.higher_is_better else -levels
    jb = int(np.argmax(oriented))
    first, best, final = float(levels[0]), float(levels[jb]), float(levels[-1])
    band = noise_band(m, w)
    gain = abs(best - first)
    drop = abs(best - final)
    holds = drop <= band or drop <= MILD_FALL * gain
    at_ceiling = bool(
        m.bounded and m.higher_is_better and float(np.min(v[-w:])) >= 1.0 - CEILING_MARGIN
    )
    return Judgement(
        m,
        n,
        w,
        band,
        first,
        best,
        final,
        int(m.steps[min(n - 1, jb + w // 2)]),
        at_ceiling,
        holds,
        not holds and jb < n - w,
    )


def surrogate_loss(run: RunData) -> str | None:
    """The training loss's key when it takes both signs (at least 3 finite points below zero and 3
    above): a loss that goes negative is not minimised towards zero (a policy-gradient surrogate of
    PPO/GRPO, a negative Dice or ELBO, a loss with a subtracted regulariser), so its rise above an
    earlier negative best is no divergence; else ``None``."""
    k = run.key_for(Role.TRAIN_LOSS)
    if not k:
        return None
    v = run.series(k).finite().values
    if int((v < 0).sum()) >= 3 and int((v > 0).sum()) >= 3:
        return k
    return None


#: Held-out scores that say nothing alone at their ceiling: recall (predict everything positive),
#: precision (predict little), a top-k with k > 1.
_NOT_ALONE = re.compile(r"recall|precision|top[-_ ]?([2-9]|\d\d)", re.I)


def solved(run: RunData) -> tuple[str, float] | None:
    """``(key, final level)`` of a held-out accuracy or AP/score (bounded 0-1, higher is better; not a
    recall, precision or top-k with k > 1) with >= ``MIN_EVALS`` evaluations whose last ``w``
    evaluations all sit within ``CEILING_MARGIN`` (1%) of 1.0: the held-out set is solved by that
    measure (own corpus f11b1-07 and f12b1-06: YOLOv8 mAP50 at Ultralytics' maximum 0.995 for the
    last 92 and 110 of their epochs; f12b2-04: top-1 1.0 from epoch 8 of 100), so no plateau or
    overfit is measurable on it; else ``None``."""
    from .roles import roles_of

    keys = list(run.metrics.keys)
    roles = roles_of(keys)
    for k in keys:
        pn = parse_name(k)
        if (
            Role.VAL_ACCURACY not in roles.get(k, ())
            or pn.family not in ("acc", "score")
            or pn.running_best
            or _NOT_ALONE.search(k)
        ):
            continue
        m = _make(run, k, True, "")
        if m is None or not m.bounded or len(m.values) < MIN_EVALS:
            continue
        w = max(LEVEL_MIN, int(math.ceil(LEVEL_SHARE * len(m.values))))
        if float(np.min(m.values[-w:])) >= 1.0 - CEILING_MARGIN:
            return k, float(np.median(m.values[-w:]))
    return None
