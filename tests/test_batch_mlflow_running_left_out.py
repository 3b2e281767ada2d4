"""``mlaudit batch mlflow`` says how many runs it left out because they are still RUNNING
(integrations/mlaudit_mlflow/cli.py ``_say_running_left_out``).

A process killed by SIGKILL (the OOM killer, a scheduler's limit) never ends its MLflow run, so the
run stays RUNNING forever and the batch, which audits ended runs only, never lists it: before this
line a new user's killed runs vanished from the batch summary without a word (new-user pass
2026-12-06: 10 runs in the experiment, "7 runs, 7 audited"). Real ``mlflow server`` (the
session fixture), runs made with the real client; the one left RUNNING is never terminated, as a
SIGKILL leaves it.
"""

from __future__ import annotations

import json
import math

import pytest

mlflow = pytest.importorskip("mlflow")
from typer.testing import CliRunner  # noqa: E402

from mlaudit.cli import app  # noqa: E402


def _run(client, exp_id: str, name: str, finish: bool) -> str:
    from mlflow.entities import Metric

    rid = client.create_run(exp_id, run_name=name).info.run_id
    ms = [
        Metric("train/loss", 2.0 * math.exp(-i / 50) + 0.2, 1_700_000_000_000 + i * 1000, i)
        for i in range(1, 201)
    ]
    client.log_batch(rid, metrics=ms)
    if finish:
        client.set_terminated(rid, "FINISHED")
    return rid


def _batch(url: str, experiment: str, state) -> object:
    return CliRunner().invoke(
        app,
        [
            "batch",
            "mlflow",
            "-e",
            experiment,
            "-u",
            url,
            "--state",
            str(state),
            "--no-write",
            "--format",
            "json",
        ],
        env={"MLFLOW_HTTP_REQUEST_MAX_RETRIES": "0"},
    )


def test_batch_mlflow_names_running_runs_it_left_out(mlflow_server, tmp_path):
    client = mlflow.MlflowClient(mlflow_server["url"])
    exp_id = client.create_experiment("running-left-out")
    done = _run(client, exp_id, "finished", finish=True)
    killed = [_run(client, exp_id, f"killed-{i}", finish=False) for i in range(2)]
    assert {client.get_run(r).info.status for r in killed} == {"RUNNING"}

    res = _batch(mlflow_server["url"], "running-left-out", tmp_path / "s.sqlite")
    assert res.exit_code == 0, res.output
    doc = json.loads(res.stdout)  # stdout stays the JSON document
    assert [r["id"] for r in doc["rows"]] == [done]
    lines = [x for x in res.stderr.splitlines() if "still RUNNING" in x]
    assert len(lines) == 1, res.stderr
    assert (
        "2 run(s) of experiment 'running-left-out' are still RUNNING and are not audited"
        in lines[0]
    )
    assert "mlaudit mlflow RUN_ID" in lines[0] and "--live" in lines[0]


def test_batch_mlflow_says_nothing_when_every_run_ended(mlflow_server, tmp_path):
    client = mlflow.MlflowClient(mlflow_server["url"])
    exp_id = client.create_experiment("all-ended")
    _run(client, exp_id, "finished", finish=True)
    res = _batch(mlflow_server["url"], "all-ended", tmp_path / "s.sqlite")
    assert res.exit_code == 0, res.output
    assert "still RUNNING" not in res.stderr
