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
from ..roles import AliasTable, Role
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
    run = wide_run(
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
    objective = _objective(learn)
    if objective is not None:
        # the objective's values are the run's training and validation loss, whatever its name
        # (``MultiClass``, ``RMSE``, ``Quantile:alpha=0.1``) says to the name rules
        run.aliases = AliasTable(
            {
                Role.TRAIN_LOSS.value: [f"train/{objective}"],
                Role.VAL_LOSS.value: [f"val/{objective}"],
            }
        )
        run.notes.append(
            f"{objective} is the objective CatBoost optimised (the first metric of learn_error.tsv, a "
            "loss_function name): train/ and val/ values are the run's training and validation loss"
        )
        stop = _detector_stop(test, objective, params.get("max_iterations"))
        if stop:
            run.notes.append(stop)
    return run


#: Iterations without a better eval-set objective, at the end of a fit below its planned length, that
#: read as CatBoost's overfitting detector having stopped it: its ``od_wait`` / ``early_stopping_rounds``
#: is a count of such iterations (documentation, "Overfitting detector"); 10 is the smallest count in
#: the documentation's examples and below the detector's default ``od_wait`` of 20.
DETECTOR_MIN_WAIT = 10


def _detector_stop(test: dict[str, np.ndarray] | None, objective: str, planned: str | None) -> str:
    """A note starting "training stopped by itself" (read by the verdict's ending evidence) when the
    fit ended below its planned iterations and the eval set's objective (a loss: lower is better) had
    not improved for :data:`DETECTOR_MIN_WAIT` or more iterations at its end; else ``""``. A fit
    interrupted while its eval loss still improved gets no note (its stop stays unexplained)."""
    if test is None or objective not in test or planned is None:
        return ""
    v = test[objective]
    ok = np.isfinite(v)
    if ok.sum() < 2 or len(v) >= int(planned):
        return ""
    idx = np.flatnonzero(ok)
    ib = int(idx[int(np.argmin(v[ok]))])
    wait = int(idx[-1]) - ib
    if wait < DETECTOR_MIN_WAIT:
        return ""
    return (
        f"training stopped by itself: the eval set's {objective} was best at iteration {ib} and did not "
        f"improve in the {wait} iterations after it, at iteration {int(idx[-1])} of the {planned} planned: "
        "CatBoost's overfitting detector (early_stopping_rounds / od_wait) ended the fit"
    )


#: CatBoost's ``loss_function`` values (CatBoost documentation, "Common parameters: loss_function",
#: the supported metrics), matched on the name before any ``:param=value`` suffix.
LOSS_FUNCTIONS = frozenset(
    "RMSE Logloss MAE CrossEntropy Quantile LogLinQuantile Lq MultiRMSE MultiClass "
    "MultiClassOneVsAll MultiLogloss MultiCrossEntropy MAPE Poisson PairLogit PairLogitPairwise "
    "QueryRMSE QuerySoftMax GroupQuantile Tweedie YetiRank YetiRankPairwise StochasticFilter "
    "StochasticRank LambdaMart Huber Expectile RMSEWithUncertainty Cox SurvivalAft".split()
)


def _objective(learn: dict[str, np.ndarray] | None) -> str | None:
    """The column of ``learn_error.tsv`` that holds the optimised objective: CatBoost writes the
    loss function's values first, then the ``custom_metric`` ones (documentation, "Output data:
    Metric", the ``iter<TAB><loss 1>...`` header). ``None`` when the first metric column is no
    ``loss_function`` name (an ``eval_metric`` or a user-defined objective: the name rules decide)."""
    names = [k for k in (learn or {}) if k != "iter"]
    if not names or names[0].split(":", 1)[0] not in LOSS_FUNCTIONS:
        return None
    return names[0]
