"""A Keras ``History`` saved as JSON: ``json.dump(model.fit(...).history, f)``.

The usual way a Keras user keeps the curves of a ``fit()`` (Keras' own guides plot
``history.history``): one JSON object mapping each metric (``loss``, ``accuracy``,
``val_loss``, ``val_accuracy``, ``learning_rate`` when a schedule or ``ReduceLROnPlateau``
runs...) to a list with one value per epoch. Detected by a ``.json`` file whose first key
holds a list of numbers and which names ``loss`` or a ``val_`` metric in its first 4 KiB.

Step axis: the epoch, counted from 0 as ``History.epoch`` and ``CSVLogger`` count it.
Values that are ``null`` (or not numbers) are left out of their series; ``NaN`` written by
Python's ``json`` is kept as a point. The file is parsed whole with ``json.loads`` (it holds a
few numbers per epoch); files over :data:`MAX_BYTES` are refused. A pickled History
(``pickle.dump(history.history)``) is never read: unpickling executes code.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from ..errors import InputError
from ._common import head, read_json, wide_run

NAME = "keras_history"
DETECTS = "Keras History saved as JSON (metric -> list of per-epoch values)"
#: Largest file read: a History of 100 metrics over 100,000 epochs is ~200 MB of text; real
#: ones are KiBs. Past this the file is no History.
MAX_BYTES = 64 << 20
_START = re.compile(rb'^\s*\{\s*"[^"\n]{1,200}"\s*:\s*\[\s*(?:-?\d|-?\.\d|NaN|-?Infinity|null)')
_NAMES = re.compile(rb'"(?:loss|val_[^"\n]{1,100})"\s*:\s*\[')


def sniff(path: Path) -> float:
    if path.is_dir() or path.suffix.lower() != ".json":
        return 0.0
    data = head(path, 4096)
    if not data or b"\x00" in data or not _START.match(data):
        return 0.0
    return 0.7 if _NAMES.search(data) else 0.0


def load(path: Path):
    """The History as a run; the epoch (from 0) is the step axis.

    Raises:
        InputError: not a text file, larger than :data:`MAX_BYTES`, not valid JSON, not an
            object of per-epoch lists, or no number in any list.
    """
    obj = read_json(path, "Keras History", MAX_BYTES, file_kind="Keras History JSON")
    if not isinstance(obj, dict):
        raise InputError(f"{path}: not a JSON object of metric lists (not a Keras History)")
    warnings: list[str] = []
    cols: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    n = max((len(v) for v in obj.values() if isinstance(v, list)), default=0)
    skipped = []
    for k, v in obj.items():
        if not isinstance(v, list):
            skipped.append(str(k))
            continue
        vals = np.full(n, np.nan)
        present = np.zeros(n, dtype=bool)
        for i, x in enumerate(v):
            if isinstance(x, (int, float)) and not isinstance(x, bool):
                vals[i] = float(x)
                present[i] = True
        if present.any():
            cols[str(k)] = (vals, present)
    if skipped:
        warnings.append(
            f"{path.name}: entries that are not per-epoch lists were left out: {', '.join(skipped[:5])}"
        )
    if not cols:
        raise InputError(f"{path}: no per-epoch numbers in any list (not a Keras History)")
    lengths = {len(v) for v in obj.values() if isinstance(v, list)}
    if len(lengths) > 1:
        warnings.append(
            f"{path.name}: the lists have different lengths ({', '.join(map(str, sorted(lengths)))}); "
            "each value is placed at its index as the epoch"
        )
    return wide_run(
        path,
        cols,
        np.arange(n, dtype=np.float64),
        tracker="keras",
        axis="epoch",
        notes=[
            "Keras History JSON: one value per epoch; the epoch (from 0, as History.epoch) is "
            "the step"
        ],
        warnings=warnings,
        what="Keras History",
        split=False,
        axis_why="a Keras History holds one value per epoch",
    )
