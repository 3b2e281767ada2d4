"""``verdict.liveness``: a tracker's RUNNING status that nobody wrote to for weeks is not a running run.

Real input: MLflow file stores of the own corpus (tests/data/realworld, labelled before any mlaudit run)
and runs written here by the real ``mlflow`` library.

- f18b1-11: 16 runs of a course project, each only a ``meta.yaml`` with status RUNNING, no end time,
  no metric and no param, started 2024-12-20 (was running/inconclusive; labelled unknown or crashed);
- f6b2-22: two Ultralytics runs left RUNNING with params only (``epochs`` 150, then 10), 2024 (was
  running/inconclusive; the label accepts crashed).
"""

from __future__ import annotations

import time
from datetime import timedelta
from pathlib import Path

import pytest

from mlaudit_core.audit import audit
from mlaudit_core.formats import load_path
from mlaudit_core.report import Cause, Outcome
from mlaudit_core.rundata import RunStatus
from mlaudit_core.verdict.liveness import (
    ABANDONED_AFTER_DAYS,
    SILENCE_FLOOR_S,
    abandoned,
    last_write,
    silence_limit,
)

RUNS = Path(__file__).parent / "data" / "realworld" / "runs"


def _runs(path: Path):
    return [run for _, run in load_path(path).runs]


def test_store_of_never_closed_runs_without_a_plan_is_unknown_not_running():
    run = _runs(RUNS / "06382006--miniproyecto2" / "mlruns")[-1]
    assert run.status is RunStatus.RUNNING
    stale = abandoned(run)
    assert stale is not None and stale.status is RunStatus.UNKNOWN
    v = audit(run).verdict
    assert (v.outcome, v.cause) == (Outcome.UNKNOWN, Cause.INCONCLUSIVE), v.summary
    assert "it is not running" in v.summary


def test_never_closed_run_with_a_planned_length_ended_without_closing():
    runs = _runs(RUNS / "Lorel12--Cacao-Detect" / "runs" / "mlflow")
    run = next(r for r in runs if r.identity.id == "6a3fc78d8ad9475cb82a088fbd1a7c99")
    v = audit(run).verdict
    assert (v.outcome, v.cause) == (Outcome.CRASHED, Cause.INCONCLUSIVE), v.summary


def test_threshold_counts_from_the_last_write():
    run = _runs(RUNS / "06382006--miniproyecto2" / "mlruns")[-1]
    last = last_write(run)
    # nothing logged: its start is its last write
    assert last is not None and last == run.start_time
    assert abandoned(run, now=last + timedelta(days=ABANDONED_AFTER_DAYS - 1)) is None
    assert abandoned(run, now=last + timedelta(days=ABANDONED_AFTER_DAYS + 1)) is not None


@pytest.fixture
def mlflow_file_store(tmp_path, monkeypatch):
    mlflow = pytest.importorskip("mlflow")
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    from mlflow.tracking import MlflowClient

    store = tmp_path / "mlruns"
    client = MlflowClient(tracking_uri=store.as_uri())
    assert mlflow is not None
    return store, client, client.create_experiment("liveness")


def _log_epochs(client, run_id: str, t0_ms: int) -> None:
    client.log_param(run_id, "epochs", "20")
    for i in range(8):
        t = t0_ms + 60_000 * (i + 1)
        client.log_metric(run_id, "loss", 2.0 / (i + 1), timestamp=t, step=i)
        client.log_metric(run_id, "val_loss", 2.2 / (i + 1), timestamp=t, step=i)


def test_mlflow_run_written_now_and_left_running_stays_running(mlflow_file_store):
    store, client, exp = mlflow_file_store
    run_id = client.create_run(exp).info.run_id
    _log_epochs(client, run_id, int(time.time() * 1000) - 600_000)
    run = next(r for r in _runs(store) if r.identity.id == run_id)
    assert run.status is RunStatus.RUNNING and abandoned(run) is None
    assert audit(run).verdict.outcome is Outcome.RUNNING


def test_mlflow_run_silent_beyond_its_cadence_is_not_running(mlflow_file_store):
    """Eight epochs a minute apart, then two hours without a write: past the 30-minute floor."""
    store, client, exp = mlflow_file_store
    t0 = int((time.time() - 3 * 3600) * 1000)
    run_id = client.create_run(exp, start_time=t0).info.run_id
    _log_epochs(client, run_id, t0)
    run = next(r for r in _runs(store) if r.identity.id == run_id)
    assert silence_limit(run) == SILENCE_FLOOR_S
    stale = abandoned(run)
    assert stale is not None and 2 < stale.days * 24 < 3
    last = last_write(run)
    assert last is not None and abandoned(run, now=last + timedelta(minutes=20)) is None


def test_mlflow_run_left_running_a_year_ago_is_not_running(mlflow_file_store):
    store, client, exp = mlflow_file_store
    t0 = int((time.time() - 400 * 86400) * 1000)
    run_id = client.create_run(exp, start_time=t0).info.run_id
    _log_epochs(client, run_id, t0)
    run = next(r for r in _runs(store) if r.identity.id == run_id)
    stale = abandoned(run)
    assert stale is not None and stale.status is RunStatus.KILLED  # epochs 20 planned, 8 logged
    v = audit(run).verdict
    assert v.outcome is Outcome.CRASHED, v.summary
    assert "it is not running" in v.summary
