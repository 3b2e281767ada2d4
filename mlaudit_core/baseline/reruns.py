"""Reruns of the same configuration in one record, compared with their noise band.

A console log or a CSV that holds a reference run and its rerun one after the other (a script
that loops over seeds, ``python train.py >> log`` twice, Keras ``CSVLogger(append=True)``) is two
runs of the same configuration. Before anything is called a regression, the last run is compared
with the earlier one(s) the way separate baselines are (:mod:`.band`): with one or two earlier runs
a gap counts only beyond 10x the within-run noise and 5% of the reference, with three or more the
Student-t prediction interval; a gap within the band is noise.

:func:`split_reruns` finds them: the training loss's step counter restarts (``_common.split_restarts``)
and the loss after each restart is back at its starting level (closer to the first run's first
value than to where it had got: a relaunch from scratch, as LI002 reads it, not a resume), and
the last run covers at least :data:`COMPLETE_SHARE` of the steps of the longest earlier one (a
rerun that stopped early is judged by its own stop, not compared). The other way round too: an earlier
launch is a baseline only when it reached :data:`COMPLETE_SHARE` of the last run's steps; one that
stopped short of that (a launch aborted at its start, then fixed and relaunched: own corpus f22b1-19,
two launches of 11 and 1 iterations before a 100-epoch run; f7b3-12, a 2-step launch before a 373-step
one) is an attempt, not a run of the configuration, and is left out. Every series of the record
is cut at its own restarts; a series whose number of segments differs is left out of the
segments.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..formats._common import split_restarts
from ..roles import Role
from ..rundata import MetricTable, RunData

#: The last run must reach this share of the earlier runs' last step to be compared with them.
COMPLETE_SHARE = 0.9


def split_reruns(run: RunData) -> tuple[RunData, list[RunData]] | None:
    """``(last run, earlier complete runs)`` when ``run`` holds several complete runs of one
    configuration one after the other (see the module), else ``None``. The runs share ``run``'s params; their
    ids are ``run``'s with ``#run-k`` appended."""
    key = run.key_for(Role.TRAIN_LOSS)
    if key is None:
        return None
    s = run.metrics.series(key)
    cuts = split_restarts(s.steps.astype(float))
    if not cuts:
        return None
    bounds = [0, *cuts, len(s)]
    v = s.values
    for b in bounds[1:-1]:
        first, before, after = v[bounds[0]], v[b - 1], v[b]
        if not (
            np.isfinite([first, before, after]).all()
            and before < first
            and abs(after - first) < abs(after - before)
        ):
            return None  # not a relaunch from scratch (a resume, a rewind, a counter bug)
    ends = [float(s.steps[b - 1]) for b in bounds[1:]]
    if ends[-1] < COMPLETE_SHARE * max(ends[:-1]):
        return None
    complete = [i for i, end in enumerate(ends[:-1]) if end >= COMPLETE_SHARE * ends[-1]]
    if not complete:
        return None
    n = len(bounds) - 1
    parts: list[list] = [[] for _ in range(n)]
    for k in run.metrics.keys:
        ks = run.metrics.series(k)
        kc = split_restarts(ks.steps.astype(float))
        if len(kc) != n - 1:
            continue
        kb = [0, *kc, len(ks)]
        for i in range(n):
            a, b = kb[i], kb[i + 1]
            parts[i].append(type(ks)(k, ks.steps[a:b], ks.values[a:b], ks.wall_times[a:b]))
    runs = [
        RunData(
            identity=replace(
                run.identity,
                id=f"{run.identity.id}#run-{i + 1}",
                name=f"{run.identity.name or run.identity.id} run {i + 1} of {n}",
            ),
            params=dict(run.params),
            metrics=MetricTable.from_series(p),
        )
        for i, p in enumerate(parts)
    ]
    return runs[-1], [runs[i] for i in complete]
