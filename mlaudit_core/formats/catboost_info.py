"""CatBoost's training directory (``train_dir``, default ``catboost_info/``): one run.

CatBoost writes, for one ``fit``: ``learn_error.tsv`` (``iter`` then one column per metric on the
training set), ``test_error.tsv`` (the same for the ``eval_set``), ``time_left.tsv`` (``iter``,
``Passed`` and ``Remaining`` milliseconds), ``catboost_training.json`` (the same figures plus
``meta.iteration_count``, the planned number of iterations) and ``learn/``/``test/`` TensorBoard
event files holding the same series again. A person reads the two error tables as the training
and validation curves of one run, so this reader claims the folder (its TensorBoard subfolders and
TSVs are not audited as five runs): ``learn_error.tsv`` columns become ``train/<metric>``,
``test_error.tsv`` columns ``val/<metric>`` (CatBoost's "test" is the eval set used for early
stopping and the best iteration, i.e. validation data), on the iteration axis. The training time
(``Passed``, relative to the start: no clock time is written) goes in the notes; ``iteration_count`` is kept as the param ``max_iterations`` (the planned length).

Reference: CatBoost documentation, "Output data / Training directory" (``train_dir`` files).
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np

from ..errors import InputError
from ._common import wide_run

NAME = "catboost_info"
DETECTS = "CatBoost training directory (learn_error.tsv, test_error.tsv)"
#: catboost_training.json is read only up to this size (it repeats the TSVs; only ``meta`` is used).
MAX_JSON_BYTES = 64 << 20


def sniff(path: Path) -> float:
    if not path.is_dir():
        return 0.0
    if (path / "learn_error.tsv").is_file() and (
        (path / "catboost_training.json").is_file() or (path / "time_left.tsv").is_file()
    ):
        return 0.95
    return 0.0


def _table(path: Path) -> dict[str, np.ndarray] | None:
    """A CatBoost TSV (``iter<TAB>Logloss...``) as column name -> float64 values (a cell that
    is no number: NaN); None when the file is absent.

    Raises:
        InputError: unreadable, or no ``iter`` column.
    """
    if not path.is_file():
        return None
    try:
        with open(path, encoding="utf-8", errors="replace", newline="") as fh:
            rows = [r for r in csv.reader(fh, delimiter="\t") if r]
    except (csv.Error, OSError) as exc:
        raise InputError(
            f"{path}: not a readable CatBoost error table ({str(exc)[:120]})"
        ) from None
    if not rows or "iter" not in rows[0]:
        raise InputError(f"{path}: no 'iter' column (not a CatBoost error table)")
    names, body = rows[0], rows[1:]
    return {
        name: np.array([_number(r[j]) if j < len(r) else np.nan for r in body], dtype=np.float64)
        for j, name in enumerate(names)
    }


def _number(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        return float("nan")


def load(path: Path):
    learn = _table(path / "learn_error.tsv")
    test = _table(path / "test_error.tsv")
    parts = [(p, df) for p, df in (("train", learn), ("val", test)) if df is not None]
    steps = np.unique(np.concatenate([df["iter"] for _, df in parts]))
    steps = steps[np.isfinite(steps)]
    index = {s: i for i, s in enumerate(steps)}
    columns: dict[str, np.ndarray] = {}
    for prefix, df in parts:
        rows = np.array([index.get(s, -1) for s in df["iter"]], dtype=np.int64)
        ok = rows >= 0
        for col in df:
            if col == "iter":
                continue
            v = np.full(len(steps), np.nan)
            v[rows[ok]] = df[col][ok]
            columns[f"{prefix}/{col}"] = v
    params: dict[str, str] = {}
    notes = [
        "CatBoost training directory: learn_error.tsv is the training set, test_error.tsv the eval set "
        "(validation); one point per boosting iteration"
    ]
    meta = path / "catboost_training.json"
    if meta.is_file() and meta.stat().st_size <= MAX_JSON_BYTES:
        try:
            planned = (
                json.loads(meta.read_text(encoding="utf-8", errors="replace"))
                .get("meta", {})
                .get("iteration_count")
            )
        except (ValueError, AttributeError):
            planned = None
        if isinstance(planned, (int, float)):
            params["max_iterations"] = str(int(planned))
            notes.append(
                f"planned iterations: {int(planned)} (catboost_training.json meta.iteration_count)"
            )
    left = path / "time_left.tsv"
    if left.is_file():
        try:
            times = _table(left)
            done = times["Passed"][~np.isnan(times["Passed"])] if times else np.array([])
            passed = float(done.max()) if done.size else float("nan")
        except (InputError, KeyError, ValueError):
            passed = float("nan")
        if passed == passed:
            notes.append(
                f"training time: {passed / 1000.0:.0f} s (time_left.tsv, Passed at the last iteration)"
            )
    return wide_run(
        path,
        columns,
        steps.astype(np.float64),
        tracker="catboost",
        axis="step",
        params=params,
        notes=notes,
        what="CatBoost training directory",
        split=False,
    )
