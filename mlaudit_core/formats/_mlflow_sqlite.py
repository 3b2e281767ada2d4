"""MLflow SQLite stores (``mlflow.db``, MLflow 3's default local store) read directly, read-only.

The file is opened with the standard library's ``sqlite3`` in read-only mode
(``file:...?mode=ro``), so nothing in the user's store is created, migrated or locked for
writing. Why not ``MlflowClient(tracking_uri="sqlite:///...")``: MLflow checks the database's
schema revision against the installed MLflow and refuses a store written by another version
("Detected out-of-date database schema", or an unknown revision from a newer MLflow), and an
empty or foreign file is given MLflow's tables on first connection (a write); MLflow is also an
optional extra of mlaudit. The tables read (``experiments``, ``runs``, ``metrics``, ``params``,
``tags``) and their columns have the same names and meaning in MLflow 1.x to 3.x
(mlflow/store/tracking/dbmodels/models.py): a NaN metric is stored as ``value`` 0 with
``is_nan`` 1, +/-inf as +/-1.7976931348623157e308 (``SqlAlchemyStore.sanitize_metric_value``),
and both are read back as NaN / inf here.

A run inside the file is named ``<file>#<run_uuid>`` (:func:`run_paths`).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from urllib.parse import quote

import numpy as np

from ..errors import InputError
from ..rundata import MetricTable

MAGIC = b"SQLite format 3\x00"
#: MLflow's tracking tables; a SQLite file holding all of them is an MLflow store
TABLES = {"experiments", "runs", "metrics", "params", "tags"}
#: +/-inf as MLflow's SQL store writes it
_SQL_INF = 1.7976931348623157e308
MAX_POINTS = 5_000_000


def is_sqlite(path: Path) -> bool:
    """Whether ``path`` is a file starting with SQLite's 16-byte header."""
    try:
        with open(path, "rb") as f:
            return f.read(16) == MAGIC
    except OSError:
        return False


def connect(path: Path) -> sqlite3.Connection:
    """A read-only connection (raises ``sqlite3.Error`` when the file cannot be opened)."""
    uri = f"file:{quote(str(path.resolve()))}?mode=ro"
    return sqlite3.connect(uri, uri=True, timeout=5)


def is_store(path: Path) -> bool:
    """Whether ``path`` is a SQLite file holding MLflow's tracking tables (cheap: the
    header, then one query of ``sqlite_master``); never raises."""
    if not path.is_file() or not is_sqlite(path):
        return False
    try:
        con = connect(path)
        try:
            names = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        finally:
            con.close()
    except sqlite3.Error:
        return False
    return TABLES <= names


def split(path: Path) -> tuple[Path, str | None]:
    """``<file>#<run_uuid>`` -> ``(file, run_uuid)``; any other path -> ``(path, None)``."""
    s = str(path)
    if "#" in s:
        head, _, run = s.rpartition("#")
        if run and Path(head).is_file():
            return Path(head), run
    return path, None


def live_runs(db: Path) -> list[tuple[str, str]]:
    """``(run_uuid, experiment name)`` of every run not deleted (run and experiment
    ``lifecycle_stage`` not ``deleted``), by experiment id then start time."""
    con = connect(db)
    try:
        rows = con.execute(
            "SELECT r.run_uuid, COALESCE(e.name, '') FROM runs r "
            "LEFT JOIN experiments e ON e.experiment_id = r.experiment_id "
            "WHERE COALESCE(r.lifecycle_stage, 'active') != 'deleted' "
            "AND COALESCE(e.lifecycle_stage, 'active') != 'deleted' "
            "ORDER BY r.experiment_id, r.start_time, r.run_uuid"
        ).fetchall()
    finally:
        con.close()
    return [(str(a), str(b)) for a, b in rows]


def run_paths(db: Path) -> list[Path]:
    """One path ``<file>#<run_uuid>`` per live run of the store (:func:`live_runs`)."""
    return [Path(f"{db}#{run}") for run, _exp in live_runs(db)]


def read_run(db: Path, run_id: str | None) -> dict:
    """The run's row, experiment, params, tags and metric table.

    ``run_id`` None: the store's only live run.

    Raises:
        InputError: no such run, a deleted run, a store of several runs without a run id, or
            a file SQLite cannot read.
    """
    try:
        con = connect(db)
        try:
            return _read(con, db, run_id)
        finally:
            con.close()
    except sqlite3.Error as exc:
        raise InputError(f"{db}: cannot read the MLflow SQLite store ({exc})") from None


def _pick(con: sqlite3.Connection, db: Path, run_id: str | None) -> tuple:
    cols = "r.run_uuid, r.name, r.status, r.start_time, r.end_time, r.lifecycle_stage, e.name"
    base = f"SELECT {cols} FROM runs r LEFT JOIN experiments e ON e.experiment_id = r.experiment_id"
    if run_id is not None:
        row = con.execute(base + " WHERE r.run_uuid = ?", (run_id,)).fetchone()
        if row is None:
            raise InputError(f"{db}: no run {run_id} in this MLflow store")
        if row[5] == "deleted":
            raise InputError(
                f"{db}: MLflow run {run_id} is deleted (lifecycle_stage: deleted); restore it "
                "in MLflow to audit it"
            )
        return row
    live = live_runs(db)
    if len(live) != 1:
        raise InputError(
            f"{db}: an MLflow store of {len(live)} live runs; audit the file itself (every "
            "run) or one run as FILE#RUN_ID"
        )
    return con.execute(base + " WHERE r.run_uuid = ?", (live[0][0],)).fetchone()


def _read(con: sqlite3.Connection, db: Path, run_id: str | None) -> dict:
    row = _pick(con, db, run_id)
    rid = str(row[0])
    params = dict(con.execute("SELECT key, value FROM params WHERE run_uuid = ?", (rid,)))
    tags = dict(con.execute("SELECT key, value FROM tags WHERE run_uuid = ?", (rid,)))
    points = con.execute(
        "SELECT key, step, timestamp, value, is_nan FROM metrics WHERE run_uuid = ? "
        "ORDER BY key, step, timestamp LIMIT ?",
        (rid, MAX_POINTS + 1),
    ).fetchall()
    return {
        "run_id": rid,
        "name": row[1],
        "status": row[2],
        "start_time": row[3],
        "end_time": row[4],
        "experiment": row[6] or "",
        "params": {str(k): "" if v is None else str(v) for k, v in params.items()},
        "tags": {str(k): "" if v is None else str(v) for k, v in tags.items()},
        "metrics": _table(points[:MAX_POINTS]),
        "truncated": len(points) > MAX_POINTS,
    }


def _table(points: list[tuple]) -> MetricTable:
    """Rows ``(key, step, timestamp ms, value, is_nan)`` sorted by key -> a MetricTable
    (wall times in seconds, NaN and +/-inf restored)."""
    if not points:
        return MetricTable.empty()
    keys = [str(p[0]) for p in points]
    names = list(dict.fromkeys(keys))
    index = {k: i for i, k in enumerate(names)}
    values = np.array([float(p[3]) for p in points], dtype=np.float64)
    values[np.array([bool(p[4]) for p in points])] = np.nan
    values[values >= _SQL_INF] = np.inf
    values[values <= -_SQL_INF] = -np.inf
    return MetricTable(
        np.array([index[k] for k in keys], dtype=np.int32),
        np.array([int(p[1] or 0) for p in points], dtype=np.int64),
        values,
        np.array([(p[2] or 0) / 1000.0 for p in points], dtype=np.float64),
        names=names,
    )
