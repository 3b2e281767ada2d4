"""mlaudit_core.formats.mlflow_store on SQLite stores (``mlflow.db``, MLflow 3's default local
store), written by the real MLflow client (``mlflow.set_tracking_uri("sqlite:///...")``)."""

from __future__ import annotations

import hashlib
import math

import pytest
from typer.testing import CliRunner

from mlaudit.cli import app
from mlaudit_core.errors import InputError
from mlaudit_core.formats import load_path, plan

mlflow = pytest.importorskip("mlflow")


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> dict:
    """A SQLite store with a falling run, a run whose loss overflows to inf then NaN, and a
    deleted run; returns the file, the run ids by name and the file's sha256."""
    d = tmp_path_factory.mktemp("sqlstore")
    db = d / "mlflow.db"
    client = mlflow.MlflowClient(tracking_uri=f"sqlite:///{db}")
    exp = client.create_experiment("demo", artifact_location=(d / "art").as_uri())
    ids = {}
    for name in ("falling", "blowup", "deleted"):
        run = client.create_run(exp, run_name=name)
        client.log_param(run.info.run_id, "lr", "0.1" if name != "blowup" else "5.0")
        loss = 2.0
        for step in range(40):
            if name == "blowup":
                loss = loss * 1.5 if step < 20 else (math.inf if step == 20 else math.nan)
            else:
                loss *= 0.95
            client.log_metric(run.info.run_id, "train_loss", loss, step=step)
        client.set_terminated(run.info.run_id, "FINISHED" if name != "blowup" else "FAILED")
        ids[name] = run.info.run_id
    client.delete_run(ids["deleted"])
    return {"db": db, "ids": ids, "sha": hashlib.sha256(db.read_bytes()).hexdigest()}


def test_load_path_reads_every_live_run_of_a_sqlite_store_read_only(store):
    db = store["db"]
    loaded = load_path(db)
    assert loaded.reader == "mlflow_store"
    by_id = {run.identity.id: run for _p, run in loaded.runs}
    assert set(by_id) == {store["ids"]["falling"], store["ids"]["blowup"]}  # deleted left out
    blow = by_id[store["ids"]["blowup"]]
    s = blow.metrics.series("train_loss")
    assert len(s.values) == 40 and math.isinf(s.values[20]) and math.isnan(s.values[-1])
    assert blow.params == {"lr": "5.0"} and blow.identity.project == "demo"
    assert blow.status.name == "FAILED" and blow.identity.name == "blowup"
    # nothing written: same bytes, no journal or WAL file beside the store
    assert hashlib.sha256(db.read_bytes()).hexdigest() == store["sha"]
    assert sorted(p.name for p in db.parent.iterdir() if p.name.startswith("mlflow.db")) == [
        "mlflow.db"
    ]


def test_plan_names_one_run_of_a_sqlite_store_as_file_hash_run_id(store):
    rid = store["ids"]["falling"]
    cands, _ = plan(f"{store['db']}#{rid}")
    assert [str(c.path) for c in cands] == [f"{store['db']}#{rid}"]
    loaded = load_path(f"{store['db']}#{rid}")
    assert [run.identity.id for _p, run in loaded.runs] == [rid]
    with pytest.raises(InputError, match="deleted"):
        load_path(f"{store['db']}#{store['ids']['deleted']}")


def test_a_folder_holding_a_sqlite_store_is_walked_into_its_runs(store):
    cands, _ = plan(store["db"].parent)
    assert sorted(str(c.path).rpartition("#")[2] for c in cands) == sorted(
        [store["ids"]["falling"], store["ids"]["blowup"]]
    )


def test_a_sqlite_file_without_mlflow_tables_is_not_a_run(tmp_path):
    import sqlite3

    other = tmp_path / "app.db"
    con = sqlite3.connect(other)
    con.execute("CREATE TABLE runs (id INTEGER)")
    con.commit()
    con.close()
    with pytest.raises(InputError, match="not a recognised run file"):
        load_path(other)


def test_mlaudit_audit_of_mlflow_db_judges_each_run(store):
    res = CliRunner().invoke(app, ["audit", str(store["db"]), "--format", "json"])
    assert res.exit_code in (0, 1), res.output
    assert "diverged" in res.output and "succeeded" in res.output
    assert hashlib.sha256(store["db"].read_bytes()).hexdigest() == store["sha"]
