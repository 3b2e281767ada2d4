"""The shared body of the CSV readers: columns -> RunData with a chosen axis and params."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..rundata import RunData
from . import _csv
from ._common import RUN_CONFIG_FILES, checkpoint_artifacts, config_sidecar_params, wide_run


def load_csv(
    path: Path,
    *,
    tracker: str,
    what: str,
    axis_pref: str = "auto",
    sidecars: tuple[str, ...] = (),
    drop: tuple[str, ...] = (),
    axis_why: str = "",
    rename=None,
) -> RunData:
    """Read ``path`` and build the run.

    ``axis_pref``: ``"epoch"`` (the epoch column is the axis), ``"step"`` (the step column),
    ``"auto"`` (step if the file has a step column and some series has more than one point
    per epoch, else epoch, else the row number). ``sidecars``: YAML files next to
    ``path`` whose values become params (Lightning ``hparams.yaml``, Ultralytics
    ``args.yaml``/``opt.yaml``/``hyp.yaml``, timm ``args.yaml``).
    """
    cols, warnings = _csv.read(path, what)
    if rename:
        cols = {rename(k): v for k, v in cols.items()}
    step_col = _csv.pick(cols, _csv.STEP_NAMES)
    epoch_col = _csv.pick(cols, _csv.EPOCH_NAMES)
    notes: list[str] = []
    axis = "step"
    if axis_pref == "epoch" and epoch_col:
        steps = cols[epoch_col][0]
        axis = "epoch"
    elif axis_pref in ("step", "auto") and step_col:
        steps = cols[step_col][0]
        if axis_pref == "auto" and epoch_col and _per_epoch_only(cols, step_col, epoch_col):
            steps, axis = cols[epoch_col][0], "epoch"
            axis_why = axis_why or "every series is logged at most once per epoch"
    elif epoch_col:
        steps, axis = cols[epoch_col][0], "epoch"
    else:
        n = len(next(iter(cols.values()))[0]) if cols else 0
        steps = np.arange(n, dtype=np.float64)
        notes.append(f"{path.name} has no step or epoch column; the row number is the step")
    metrics = {
        k: v
        for k, v in cols.items()
        if k not in drop and k != (epoch_col if axis == "epoch" else step_col)
    }
    if axis == "epoch" and step_col:
        metrics.pop(step_col, None)
    params: dict[str, str] = {}
    config_sidecar_params(
        path.parent, params, notes, warnings, tuple(dict.fromkeys(sidecars + RUN_CONFIG_FILES))
    )
    run = wide_run(
        path,
        metrics,
        steps,
        tracker=tracker,
        axis=axis,
        params=params,
        notes=notes,
        warnings=warnings,
        what=what,
        axis_why=axis_why,
    )
    run.artifacts.extend(checkpoint_artifacts(path.parent))
    return run


def _per_epoch_only(cols, step_col, epoch_col) -> bool:
    """True when no metric column has two values within one epoch."""
    ep = cols[epoch_col][0]
    for k, (_v, present) in cols.items():
        if k in (step_col, epoch_col):
            continue
        e = ep[present & np.isfinite(ep)]
        if e.size and np.unique(e).size < e.size:
            return False
    return True
