"""MLflow stores read directly, read-only: file stores (``mlruns/``, Ultralytics'
``runs/mlflow``) and SQLite stores (``mlflow.db``, MLflow 3's default; :mod:`._mlflow_sqlite`).

Detected by MLflow's layout: a run folder (``meta.yaml`` with ``run_uuid``, beside
``metrics/``, ``params/``, ``tags/``), an experiment folder (``meta.yaml`` with
``artifact_location``, run folders inside) or a store (experiment folders inside).
:func:`list_runs` names every run of a store or experiment; ``.trash`` is skipped.

Why not ``MlflowClient``: MLflow's FileStore skips run folders without an
``artifacts/`` sub-folder, and git does not keep empty folders, so stores committed
to a repository lose runs ("run not found"); it also refuses paths with a component
named ``artifacts``, and MLflow 3 refuses file stores unless
``MLFLOW_ALLOW_FILE_STORE=true``. The files are simple (``metrics/<key>``: lines of
``timestamp value [step]``; ``params/<key>`` and ``tags/<key>``: the value;
``meta.yaml``: status, times, lifecycle stage), so they are read as they are, nothing is
created in the user's store, and ``artifact_uri`` values from another machine or OS
(``file:///E:/...``) do not matter. Deleted runs (``lifecycle_stage: deleted``) are
named as deleted and not audited.
"""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import InputError
from ..rundata import Artifact, MetricTable, RunData, RunIdentity, RunStatus
from . import _mlflow_sqlite as _sql
from ._common import head_text, read_yaml

NAME = "mlflow_store"
DETECTS = "MLflow file store (meta.yaml, metrics/, params/, tags/) or SQLite store (mlflow.db)"
#: :func:`list_runs` also lists the runs inside a file (a SQLite store)
LISTS_FILE_RUNS = True
_STATUS = {
    1: RunStatus.RUNNING,
    2: RunStatus.RUNNING,
    3: RunStatus.FINISHED,
    4: RunStatus.FAILED,
    5: RunStatus.KILLED,
    "RUNNING": RunStatus.RUNNING,
    "SCHEDULED": RunStatus.RUNNING,
    "FINISHED": RunStatus.FINISHED,
    "FAILED": RunStatus.FAILED,
    "KILLED": RunStatus.KILLED,
}
_STATUS_NAME = {1: "RUNNING", 2: "SCHEDULED", 3: "FINISHED", 4: "FAILED", 5: "KILLED"}
MAX_RUNS = 10_000


def is_run_dir(d: Path) -> bool:
    meta = d / "meta.yaml"
    if not meta.is_file():
        return False
    t = head_text(meta, 4096)
    return ("run_uuid:" in t or "run_id:" in t) and "experiment_id" in t


def is_experiment_dir(d: Path) -> bool:
    meta = d / "meta.yaml"
    return meta.is_file() and "artifact_location" in head_text(meta, 4096)


def _experiments(store: Path) -> list[Path]:
    try:
        return sorted(
            (
                d
                for d in store.iterdir()
                if d.is_dir() and d.name != ".trash" and is_experiment_dir(d)
            ),
            key=lambda d: d.name,
        )
    except OSError:
        return []


def sniff(path: Path) -> float:
    if not path.is_dir():
        return 0.9 if _sql.is_store(_sql.split(path)[0]) else 0.0
    if is_run_dir(path) or is_experiment_dir(path):
        return 0.9
    if _experiments(path):
        return 0.9
    return 0.0


def list_runs(path: Path) -> list[Path]:
    """Run folders of a store or an experiment (``[]`` for a run folder itself); the runs of a
    SQLite store as ``<file>#<run_uuid>`` (``[]`` when it holds one live run)."""
    if path.is_file():
        if not _sql.is_store(path):
            return []
        inside = _sql.run_paths(path)
        return inside if len(inside) > 1 else []
    if is_run_dir(path):
        return []
    exps = [path] if is_experiment_dir(path) else _experiments(path)
    runs: list[Path] = []
    for e in exps:
        try:
            runs.extend(
                sorted(
                    (d for d in e.iterdir() if d.is_dir() and is_run_dir(d)), key=lambda d: d.name
                )
            )
        except OSError:
            continue
        if len(runs) > MAX_RUNS:
            break
    return runs[:MAX_RUNS]


def find_run(store: Path, run_id: str) -> Path | None:
    """The folder of run ``run_id`` in a store (any experiment), or None."""
    for e in _experiments(store):
        d = e / run_id
        if is_run_dir(d):
            return d
    return None


def _read_values(folder: Path, warnings: list[str], limit: int = 10_000) -> dict[str, str]:
    out: dict[str, str] = {}
    if not folder.is_dir():
        return out
    for f in sorted(folder.rglob("*")):
        if len(out) >= limit:
            warnings.append(f"{folder}: more than {limit} entries; the rest were not read")
            break
        if f.is_file():
            try:
                out[f.relative_to(folder).as_posix()] = f.read_text(
                    encoding="utf-8", errors="replace"
                )[:5000]
            except OSError:
                continue
    return out


def _read_metric(f: Path) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """(steps, values, wall seconds, bad lines) of one metric file."""
    ts, vs, st = [], [], []
    bad = 0
    with open(f, "rb") as fh:
        for line in fh:
            parts = line.split()
            if not parts:
                continue
            try:
                t = float(parts[0])
                v = float(parts[1])
                s = int(float(parts[2])) if len(parts) > 2 else 0
            except (ValueError, IndexError):
                bad += 1
                continue
            ts.append(t / 1000.0)
            vs.append(v)
            st.append(s)
    return (
        np.asarray(st, dtype=np.int64),
        np.asarray(vs, dtype=np.float64),
        np.asarray(ts, dtype=np.float64),
        bad,
    )


def _run_folder(path: Path) -> Path:
    """The run folder: ``path`` itself, or the one run of a store (several: an error naming one)."""
    if not path.is_dir():
        raise InputError(f"{path}: not an MLflow run folder")
    if is_run_dir(path):
        return path
    runs = list_runs(path)
    if len(runs) == 1:
        return runs[0]
    if runs:
        raise InputError(
            f"{path}: an MLflow store with {len(runs)} runs; give one run folder "
            f"(e.g. {runs[0]}) or run `mlaudit {path}` to audit each"
        )
    raise InputError(f"{path}: no MLflow run folder here (meta.yaml with run_uuid)")


def _metric_table(path: Path, warnings: list[str]) -> MetricTable:
    """Every metric file under ``metrics/`` (nested names kept as paths), unreadable lines
    counted in one warning; an empty table, with a warning, when the run logged no metric."""
    names, codes, steps, values, walls = [], [], [], [], []
    bad_total = 0
    mdir = path / "metrics"
    if mdir.is_dir():
        for f in sorted(p for p in mdir.rglob("*") if p.is_file()):
            s, v, w, bad = _read_metric(f)
            bad_total += bad
            if not v.size:
                continue
            names.append(f.relative_to(mdir).as_posix())
            codes.append(np.full(v.size, len(names) - 1, dtype=np.int32))
            steps.append(s)
            values.append(v)
            walls.append(w)
    if bad_total:
        warnings.append(
            f"{mdir}: {bad_total} metric line(s) were not 'timestamp value step' and were left out"
        )
    if not names:
        warnings.append(f"{path}: the run logged no metric")
        return MetricTable.empty()
    return MetricTable(
        np.concatenate(codes),
        np.concatenate(steps),
        np.concatenate(values),
        np.concatenate(walls),
        names=names,
    )


def load(path: Path) -> RunData:
    """One run of an MLflow file store, read directly (read-only): the run folder (or a store
    holding exactly one, :func:`_run_folder`), its meta.yaml, metrics (:func:`_metric_table`),
    params, tags, status and artifact list.

    A SQLite store (``mlflow.db``, or ``mlflow.db#<run_uuid>`` for one of its runs) is read by
    :func:`_load_sqlite`.

    Raises:
        InputError: not a run folder (or a store of several runs), a deleted run or experiment.
    """
    db, run_id = _sql.split(path)
    if db.is_file():
        return _load_sqlite(db, run_id)
    path = _run_folder(path)
    warnings: list[str] = []
    meta = read_yaml(path / "meta.yaml", warnings)
    run_id = str(meta.get("run_id") or meta.get("run_uuid") or path.name)
    if meta.get("lifecycle_stage") == "deleted":
        raise InputError(
            f"{path}: MLflow run {run_id} is deleted (lifecycle_stage: deleted); restore it "
            "in MLflow to audit it"
        )
    exp_meta = (
        read_yaml(path.parent / "meta.yaml", warnings)
        if (path.parent / "meta.yaml").is_file()
        else {}
    )
    if exp_meta.get("lifecycle_stage") == "deleted":
        raise InputError(f"{path}: the MLflow experiment of run {run_id} is deleted")
    table = _metric_table(path, warnings)
    params = _read_values(path / "params", warnings)
    tags = _read_values(path / "tags", warnings)
    status_raw: Any = meta.get("status")
    status = _STATUS.get(status_raw, RunStatus.UNKNOWN)
    notes = [f"read directly from the MLflow file store folder {path} (read-only)"]
    if not (path / "artifacts").is_dir():
        notes.append(
            "the run folder has no artifacts/ (git keeps no empty folder), so MLflow's own "
            "FileStore would not list this run; its files were read directly"
        )
    if status is RunStatus.RUNNING:
        notes.append(
            f"status in meta.yaml: {_STATUS_NAME.get(status_raw, status_raw)} (never set to "
            "finished: still running, or the process died without ending the run)"
        )
    arts = []
    adir = path / "artifacts"
    if adir.is_dir():
        for f in sorted(adir.rglob("*"))[:1000]:
            if f.is_file():
                try:
                    arts.append(Artifact(f.relative_to(adir).as_posix(), f.stat().st_size))
                except OSError:
                    continue

    env = {k: v for k, v in tags.items() if k.startswith(("mlflow.source.", "mlflow.gitRepoURL"))}
    return RunData(
        identity=RunIdentity(
            tracker="mlflow",
            id=run_id,
            name=str(meta.get("run_name") or tags.get("mlflow.runName") or run_id),
            project=str(exp_meta.get("name") or meta.get("experiment_id") or ""),
        ),
        status=status,
        start_time=_ms(meta.get("start_time")),
        end_time=_ms(meta.get("end_time")),
        params=params,
        tags=tags,
        metrics=table,
        artifacts=arts,
        environment=env,
        parent_id=tags.get("mlflow.parentRunId"),
        notes=notes,
        warnings=warnings,
    )


def _ms(v) -> datetime | None:
    try:
        return datetime.fromtimestamp(int(v) / 1000, tz=timezone.utc) if v else None
    except (TypeError, ValueError, OverflowError, OSError):
        return None


def _load_sqlite(db: Path, run_id: str | None) -> RunData:
    """One run of an MLflow SQLite store (``run_id`` None: its only live run), read-only.

    Raises:
        InputError: not an MLflow SQLite store, no such run, a deleted run, several runs and
            no run id, an unreadable file.
    """
    if not _sql.is_store(db):
        raise InputError(f"{db}: not an MLflow SQLite store (no experiments/runs/metrics tables)")
    r = _sql.read_run(db, run_id)
    warnings: list[str] = []
    table = r["metrics"]
    if not table.keys:
        warnings.append(f"{db}#{r['run_id']}: the run logged no metric")
    if r["truncated"]:
        warnings.append(
            f"{db}#{r['run_id']}: more than {_sql.MAX_POINTS:,} metric points; the rest were left out"
        )
    status = _STATUS.get(r["status"], RunStatus.UNKNOWN)
    notes = [f"read directly from the MLflow SQLite store {db}, run {r['run_id']} (read-only)"]
    if status is RunStatus.RUNNING:
        notes.append(
            f"status in the store: {r['status']} (never set to finished: still running, or the "
            "process died without ending the run)"
        )
    tags = r["tags"]
    env = {k: v for k, v in tags.items() if k.startswith(("mlflow.source.", "mlflow.gitRepoURL"))}
    return RunData(
        identity=RunIdentity(
            tracker="mlflow",
            id=r["run_id"],
            name=str(r["name"] or tags.get("mlflow.runName") or r["run_id"]),
            project=str(r["experiment"]),
        ),
        status=status,
        start_time=_ms(r["start_time"]),
        end_time=_ms(r["end_time"]),
        params=r["params"],
        tags=tags,
        metrics=table,
        environment=env,
        parent_id=tags.get("mlflow.parentRunId"),
        notes=notes,
        warnings=warnings,
    )
