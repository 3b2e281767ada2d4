"""A run that ends while ``mlaudit watch mlflow`` is starting is audited (issue 33, low
finding: a new state file started its cursor at the moment the watcher had started up, so a
run that ended a few seconds before, during the start, or with an end time a slightly slow
training-machine clock set, was never audited, and nothing said so). A real ``mlflow
server``; the first ``--once`` on a new state file."""

from __future__ import annotations

import time

import pytest
from typer.testing import CliRunner

pytestmark = pytest.mark.e2e  # real processes and servers throughout

mlflow = pytest.importorskip("mlflow")
from test_watch_mlflow import finish_run  # noqa: E402

from mlaudit.cli import app  # noqa: E402


def test_watcher_first_listing_includes_a_run_that_ended_while_it_started(mlflow_server, tmp_path):
    client = mlflow.MlflowClient(mlflow_server["url"])
    name = f"start-grace-{tmp_path.name}"
    exp_id = client.create_experiment(name)
    rid = finish_run(client, exp_id, "ended-at-start", diverge=True)
    # its end time 20 s behind ours: ended as the watcher started, by a slow clock
    client.set_terminated(rid, "FINISHED", end_time=int((time.time() - 20) * 1000))
    res = CliRunner().invoke(
        app,
        [
            "watch",
            "mlflow",
            "-e",
            name,
            "-u",
            mlflow_server["url"],
            "--once",
            "--state",
            str(tmp_path / "s.sqlite"),
        ],
    )
    assert res.exit_code == 0, res.output
    assert client.get_run(rid).data.tags.get("mlaudit.verdict") == "diverged"
