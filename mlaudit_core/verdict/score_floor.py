"""A detection or pose score that never left its floor in a run that ended: the model does not do its
task, whatever its losses did.

A detector's mean average precision has no class-count chance level: an untrained detector scores about
0. GE002's score floor (1% as a fraction: above an untrained detector, own corpus csv17 at mAP50-95 0.0005
over 10 epochs, and below every trained detector of the real corpora after its first epochs, own tb08 at
0.056 after epoch 1, csv11 past 0.01 in its first quarter) needs 5 evaluations there, to keep the first
epochs of a from-scratch run out: a run still going may leave the floor later. A run that ended (its
plan reached, its tracker's finished status, the framework's end-of-training line) has no later epochs:
its model is the one evaluated, and an AP at or under the floor at every one of its evaluations is a model
that does not perform its task, however few the evaluations. That holds for every head of a multi-task
model: a pose model whose box mAP rose while its keypoint mAP stayed at 0.0035 does not detect keypoints
(own corpus f22b1-01, YOLOv8n-pose 5 of 5 epochs; f22b1-06, a YOLOv5-codebase detector 2 of 2 epochs at
mAP50 0.0029, both labelled underfit).

Its cause (:func:`learned_elsewhere`): a model that learned something the floored score does not see
-- another held-out AP head above the floor (the box head of a pose model), or a training loss that fell
by a fifth or more (the model fits its training targets) -- does not fail for lack of optimisation: the
targets of that score (its labels, keypoints, class indices) or what it is evaluated on (image size,
held-out set) do not match what was learned, a data/config failure of that head. A model with no such
sign learned nothing at all, which is an optimisation failure (too few epochs, no pretrained weights):
own corpus csv17, YOLOv8n from scratch for 10 epochs, losses within 7% of their start, mAP50-95 0.0005,
labelled model_convergence; f23b1-11, a pose head at exactly 0 for 60 epochs while the box mAP reached
0.5 and the pose loss fell 27%, labelled data_config.
"""

from __future__ import annotations

import numpy as np

from ..roles import as_fraction, parse_name
from ..rundata import RunData

#: GE002's score floor (as a fraction of 1): see the module docstring for its sources.
FLOOR = 0.01
#: A training loss that fell at least this share of its first level learned something (the policy's
#: ``CONVERGED_DROP``, OP001's ``min_drop`` convention for a loss that learned).
LEARNED_DROP = 0.2
#: Evaluations needed: two, so that one evaluation before any training is not all there is.
MIN_EVALUATIONS = 2


def _is_average_precision(key: str) -> bool:
    """Whether ``key`` names a held-out average precision (mAP, AP, AP50, mAP_0.5:0.95 ...)."""
    p = parse_name(key)
    head = (p.head or "").lower()
    return (
        p.family == "score"
        and p.higher_is_better is True
        and p.split != "train"
        and (head.startswith("map") or head.startswith("ap"))
    )


def ap_at_floor(run: RunData) -> tuple[str, float, float, int] | None:
    """``(key, first, best, n)`` of the first held-out average-precision series (>= :data:`MIN_EVALUATIONS`
    finite evaluations, values as fractions) whose best is at or under :data:`FLOOR`, else ``None``.
    The caller checks that the run ended."""
    for k in run.metrics.keys:
        if not _is_average_precision(k):
            continue
        s = run.metrics.series(k).by_step().finite()
        if len(s) < MIN_EVALUATIONS:
            continue
        v, _ = as_fraction(k, s.values)
        if float(np.min(v)) < 0.0:
            continue
        best = float(np.max(v))
        if best <= FLOOR:
            return k, float(v[0]), best, len(v)
    return None


def _fall(values: np.ndarray) -> float:
    """Relative fall of a positive loss from its first to its last level (medians of a tenth of its
    points, at least one), 0 when it has fewer than 2 points or a non-positive value."""
    if len(values) < 2 or float(np.min(values)) <= 0.0:
        return 0.0
    k = max(1, len(values) // 10)
    first, last = float(np.median(values[:k])), float(np.median(values[-k:]))
    return (first - last) / first


def learned_elsewhere(run: RunData, floored: str) -> str | None:
    """What shows the model learned something although ``floored`` (an AP series at its floor) did not:
    another held-out AP series whose best is above :data:`FLOOR`, or a loss with no evaluation split (by
    :func:`..roles.parse_name`: a training loss) whose last level is at least :data:`LEARNED_DROP` below its first;
    ``None`` when nothing does. See the module docstring for what each means."""
    for k in run.metrics.keys:
        if k == floored or not _is_average_precision(k):
            continue
        v, _ = as_fraction(k, run.metrics.series(k).by_step().finite().values)
        if len(v) and float(np.max(v)) > FLOOR:
            return f"{k} reached {float(np.max(v)):.3g}"
    for k in run.metrics.keys:
        p = parse_name(k)
        if p.family != "loss" or p.split == "eval" or p.running_best:
            continue
        v = run.metrics.series(k).by_step().finite().values
        fall = _fall(v)
        if fall >= LEARNED_DROP:
            return f"{k} fell {100 * fall:.3g}% ({float(v[0]):.4g} -> {float(v[-1]):.4g})"
    return None
