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
"""

from __future__ import annotations

import numpy as np

from ..roles import as_fraction, parse_name
from ..rundata import RunData

#: GE002's score floor (as a fraction of 1): see the module docstring for its sources.
FLOOR = 0.01
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
