"""Which logged counter is the optimizer step, and where one launch of training ends and the next starts.

Shared by LI002 (step counter reset) and LI003 (epoch/step mismatch). A counter that goes back is a
resumed run that lost its step only when the counter is the optimizer step and both segments belong
to one launch. Three counters in the logs are not the optimizer step:

* a record count the console reader made (``log.step_axis`` = ``train_log_dict``: Hugging Face
  log dicts printed without a step are numbered 1, 2, 3 ...; ``log.step_source`` = ``record_count``:
  records with no step on any line before them, numbered by the reader): it starts over with every
  training the log holds. (``log.step_axis`` = ``record`` is not one: the template reader sets it
  when any one line layout lacks a counter, while the loss lines may carry the logged iteration;
  own corpus f5b1-05.)
* W&B's ``_step``: it counts ``wandb.log`` calls (W&B docs, "Log data with wandb.log": "by default,
  each call to log creates a new step"), so it moves with the logging interval, not with the
  optimizer; the Hugging Face ``WandbCallback`` logs the optimizer step as ``train/global_step``.

Several ``trainer.train()`` calls in one notebook (one W&B run) or several launches appended to one
log restart the step and the epoch together; each launch is judged on its own (own corpus f6b2-02:
nine TRL launches in one W&B run, ``train/global_step`` back at 10 eight times with the epoch).
"""

from __future__ import annotations

import numpy as np

from ..rundata import RunData, Series

#: ``log.step_axis`` values of a count the reader made, not a logged step.
READER_AXES = frozenset({"train_log_dict"})


def reader_counted(run: RunData) -> str | None:
    """Why the run's step axis is not a logged optimizer step (a sentence), or ``None``."""
    axis = str(run.params.get("log.step_axis", ""))
    if axis in READER_AXES:
        return f"the step axis ({axis}) counts records the console reader numbered, not a logged optimizer step"
    if run.params.get("log.step_source") == "record_count":
        return "the step axis counts records the console reader numbered (no line names a step), not a logged optimizer step"
    return None


def global_step_key(run: RunData) -> str | None:
    """The logged series that holds the optimizer step (``train/global_step``, ``global_step``), or ``None``."""
    for key in run.metrics.keys:
        if key.rsplit("/", 1)[-1].rsplit(".", 1)[-1] == "global_step":
            return key
    return None


def on_optimizer_step(run: RunData, s: Series) -> Series | None:
    """``s`` (in logging order) placed on the optimizer step: as logged, or, on a W&B run (``_step``
    counts log calls), at the ``global_step`` value logged in the same row. ``None`` when the run is
    a W&B run that logs no global step (its step axis says nothing about the optimizer step).

    Shapes: ``s`` of n points -> a Series of at most n points (rows without a global step left out)."""
    gkey = global_step_key(run)
    if gkey is None:
        return None if run.identity.tracker == "wandb" else s
    g = run.series(gkey).by_step().finite()
    if not len(g):
        return None if run.identity.tracker == "wandb" else s
    pos = np.searchsorted(g.steps, s.steps)
    ok = (pos < len(g)) & (g.steps[np.minimum(pos, len(g) - 1)] == s.steps)
    steps = g.values[pos[ok]].astype(np.int64)
    return Series(s.key, steps, s.values[ok], s.wall_times[ok])


def launches(steps: np.ndarray, epochs: np.ndarray) -> list[slice]:
    """Split records (logging order) into launches: a new launch starts where the step and the epoch
    both go back (a new training from scratch restarts both counters; a resume that lost its step
    keeps the epoch). Shapes: two arrays of n -> slices covering 0..n."""
    n = len(steps)
    if n < 2:
        return [slice(0, n)]
    back = np.flatnonzero((np.diff(steps) < 0) & (np.diff(epochs) < 0)) + 1
    edges = [0, *back.tolist(), n]
    return [slice(a, b) for a, b in zip(edges, edges[1:]) if b > a]
