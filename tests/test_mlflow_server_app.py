"""``mlflow server --app-name mlaudit`` (the ``mlflow.app`` plugin) and ``mlaudit watch mlflow``
draining its inbox (issue 19, item 2), on a real ``mlflow server`` (SQL backend) started with
the app.

The watcher polls every 600 s, and its first listing (at start) happens before the run ends,
so a verdict that appears within seconds of ``set_terminated`` can only come through the
server's app and the inbox of the state file. A run of an experiment the watcher does not
watch is recorded by the app but never audited.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

mlflow = pytest.importorskip("mlflow")
from conftest import free_port  # noqa: E402
from test_batch_mlflow import log_run  # noqa: E402
from test_mlflow_registry_webhook import _stop, _wait_http  # noqa: E402

BIN = Path(sys.executable).parent


def _inbox_count(state: Path) -> int:
    """Rows still queued in the inbox table of the watcher's state file at ``state``."""
    from mlaudit_mlflow.server_app import INBOX_TABLE

    db = sqlite3.connect(state)
    try:
        return db.execute(f"SELECT COUNT(*) FROM {INBOX_TABLE}").fetchone()[0]
    finally:
        db.close()


def test_run_end_reaches_the_watcher_through_the_server_app(tmp_path):

    state = tmp_path / "watch.sqlite"
    port = free_port()
    env = dict(
        os.environ, MLFLOW_SERVER_ENABLE_JOB_EXECUTION="false", MLAUDIT_MLFLOW_APP_STATE=str(state)
    )
    server = subprocess.Popen(
        [
            shutil.which("mlflow", path=str(BIN)) or "mlflow",
            "server",
            "--app-name",
            "mlaudit",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--backend-store-uri",
            f"sqlite:///{tmp_path / 'mlflow.db'}",
            "--artifacts-destination",
            str(tmp_path / "artifacts"),
            "--workers",
            "1",
        ],
        stdout=open(tmp_path / "server.log", "wb"),
        stderr=subprocess.STDOUT,
        env=env,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}"
    watcher = None
    try:
        _wait_http(f"{url}/health", server, tmp_path / "server.log")
        client = mlflow.MlflowClient(url)
        watched = client.create_experiment("pushed")
        other = client.create_experiment("not-watched")
        rid = log_run(client, watched, "diverge", "diverge", finish=False)
        elsewhere = log_run(client, other, "diverge-too", "diverge", finish=False)
        log = tmp_path / "watch.log"
        watcher = subprocess.Popen(
            [
                str(BIN / "mlaudit"),
                "watch",
                "mlflow",
                "-e",
                "pushed",
                "-u",
                url,
                "--state",
                str(state),
                "--poll-interval",
                "600",
                "--since",
                "all",
            ],
            stdout=open(log, "wb"),
            stderr=subprocess.STDOUT,
            env=dict(os.environ, MLFLOW_HTTP_REQUEST_MAX_RETRIES="0"),
            start_new_session=True,
        )
        deadline = time.time() + 90
        while "watching mlflow" not in log.read_text():  # its first listing is done
            assert watcher.poll() is None and time.time() < deadline, log.read_text()
            time.sleep(0.3)
        time.sleep(1.0)
        ended = time.time()
        client.set_terminated(rid, "FINISHED")
        client.set_terminated(elsewhere, "FINISHED")
        # a deadline against a hang, below the 600 s poll interval: only a push can meet it
        while "mlaudit.verdict" not in client.get_run(rid).data.tags:
            assert time.time() - ended < 300, (
                log.read_text()[-3000:] + (tmp_path / "server.log").read_text()[-2000:]
            )
            time.sleep(0.3)
        assert client.get_run(rid).data.tags["mlaudit.verdict"] == "diverged"
        assert "1 run(s) queued by the trigger" in log.read_text()
        # the queue drained: every run the trigger queued was audited, so a tag on the run of
        # the experiment not watched would be there by now
        while _inbox_count(state):
            assert time.time() - ended < 300, log.read_text()[-3000:]
            time.sleep(0.3)
        assert "mlaudit.verdict" not in client.get_run(elsewhere).data.tags
        db = sqlite3.connect(state)
        refs = [r[0] for r in db.execute("SELECT ref FROM runs")]
        db.close()
        assert refs == [rid]
    finally:
        if watcher is not None:
            assert _stop(watcher) == 0
        _stop(server)
