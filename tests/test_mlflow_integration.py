"""MLflow loader and write-back against a real ``mlflow server`` (sqlite backend) on 127.0.0.1,
and the same store read directly through its ``sqlite:///`` URI."""

from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

mlflow = pytest.importorskip("mlflow")
from mlaudit_mlflow.loader import load_run  # noqa: E402
from mlaudit_mlflow.writeback import NOTE_TAG, write_verdict  # noqa: E402
from typer.testing import CliRunner  # noqa: E402

from mlaudit.cli import app  # noqa: E402
from mlaudit_core import InputError, audit  # noqa: E402
from mlaudit_core.writeback import BEGIN  # noqa: E402

USER_NOTE = "My notes: sweep 7, lr 3e-4. Do not lose this."


def log_diverging_run(url: str, tmp_path: Path, name: str = "diverge") -> str:
    # MLflow 2.x resolves proxied artifact URIs (mlflow-artifacts:/) against the *global*
    # tracking URI, not the client's (CI also runs these tests against MLflow 2.16)
    mlflow.set_tracking_uri(url)
    client = mlflow.MlflowClient(url)
    exp = client.get_experiment_by_name("it") or None
    exp_id = exp.experiment_id if exp else client.create_experiment("it")
    parent = client.create_run(exp_id, run_name="parent")
    run = client.create_run(
        exp_id, run_name=name, tags={"mlflow.parentRunId": parent.info.run_id, NOTE_TAG: USER_NOTE}
    )
    rid = run.info.run_id
    from mlflow.entities import Metric, Param

    ms = []
    for i in range(1, 1501):
        loss = 2.3 * math.exp(-i / 200) + 0.2 if i < 1000 else 0.3 + (i - 1000) * 0.01
        if i > 1450:
            loss = float("nan") if i % 2 else float("inf")
        ms.append(Metric("train/loss", loss, 1_700_000_000_000 + i, i))
        if i % 100 == 0:
            ms.append(
                Metric(
                    "val/loss",
                    loss + 0.1 if math.isfinite(loss) else loss,
                    1_700_000_000_000 + i,
                    i,
                )
            )
        ms.append(Metric("system/cpu_utilization_percentage", 90.0, 1_700_000_000_000 + i, i))
    for k in range(0, len(ms), 900):
        client.log_batch(rid, metrics=ms[k : k + 900])
    client.log_batch(rid, params=[Param("lr", "0.3"), Param("hf_token", "hf_" + "a" * 34)])
    console = tmp_path / "console.log"
    console.write_text("step 1000 loss 0.3\nWARNING loss is rising\nstep 1450 loss 4.8\n")
    client.log_artifact(rid, str(console))
    client.set_terminated(rid, "FAILED")
    client.set_terminated(parent.info.run_id)
    return rid


@pytest.fixture(scope="module")
def diverged(mlflow_server, tmp_path_factory):
    return log_diverging_run(mlflow_server["url"], tmp_path_factory.mktemp("art"))


def test_server_and_sqlite_read_the_same_points(mlflow_server, diverged):
    via_server = load_run(diverged, mlflow_server["url"])
    via_db = load_run(diverged, mlflow_server["db_uri"])
    for key in ("train/loss", "val/loss", "system/cpu_utilization_percentage"):
        a, b = via_server.series(key), via_db.series(key)
        assert len(a) == len(b)
        np.testing.assert_array_equal(a.steps, b.steps)
        np.testing.assert_array_equal(a.values, b.values)  # NaN and inf restored on both paths
    s = via_db.series("train/loss")
    assert len(s) == 1500
    assert np.isnan(s.values[1450]) and np.isposinf(s.values[1451])
    assert via_server.status.value == "failed"
    assert via_server.parent_id is not None
    assert via_server.params["lr"] == "0.3"
    assert any(c.text == "WARNING loss is rising" for c in via_server.console)
    assert via_server.identity.url.endswith(f"/runs/{diverged}")


def test_writeback_idempotent_keeps_user_text(mlflow_server, diverged):
    url = mlflow_server["url"]
    client = mlflow.MlflowClient(url)
    run = load_run(diverged, url)
    report = audit(run)
    assert report.verdict.outcome.value == "diverged"
    dry = write_verdict(client, run, report, dry_run=True)
    assert "mlaudit.verdict" not in client.get_run(diverged).data.tags
    assert dry.tags["mlaudit.verdict"] == "diverged"
    for _ in range(2):
        write_verdict(client, run, report)
    tags = client.get_run(diverged).data.tags
    assert tags["mlaudit.verdict"] == "diverged"
    assert tags["mlaudit.cause"] == report.verdict.cause.value
    assert tags["mlaudit.codes"].split(",") == report.codes
    note = tags[NOTE_TAG]
    assert note.count(BEGIN) == 1 and note.startswith(USER_NOTE)
    names = sorted(a.path for a in client.list_artifacts(diverged, "mlaudit"))
    assert "mlaudit/report.html" in names  # the page carries the JSON report too
    assert len(names) == len(set(names))
    # the secret param never reaches what is written back
    local = client.download_artifacts(diverged, "mlaudit/report.html")
    assert "hf_aaaa" not in Path(local).read_text()


def test_cli_end_to_end_and_errors(mlflow_server, diverged, tmp_path):
    runner = CliRunner()
    out = tmp_path / "r.json"
    res = runner.invoke(
        app,
        [
            "mlflow",
            diverged,
            "-u",
            mlflow_server["db_uri"],
            "--no-write",
            "--format",
            "json",
            "--out",
            str(out),
            "--fail-on",
            "error",
        ],
    )
    assert res.exit_code == 1, res.output  # critical findings at/above --fail-on error
    assert '"outcome": "diverged"' in out.read_text()
    res = runner.invoke(app, ["mlflow", "0" * 32, "-u", mlflow_server["url"]])
    assert res.exit_code == 2
    assert "not found" in res.output and "Traceback" not in res.output
    assert len([line for line in res.output.splitlines() if line.strip()]) == 1


def test_missing_mlflow_prints_install_hint(tmp_path):
    code = (
        "import sys; sys.modules['mlflow'] = None\n"
        "from mlaudit.cli import main\n"
        "sys.argv = ['mlaudit', 'mlflow', 'abc', '-u', 'http://127.0.0.1:9']\nmain()\n"
    )
    p = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=dict(os.environ, COLUMNS="200"),
    )
    assert p.returncode == 2
    assert "pip install 'mlaudit[mlflow]'" in p.stderr
    assert "Traceback" not in p.stderr


def test_no_such_database_is_not_created(tmp_path):
    db = tmp_path / "missing.db"
    with pytest.raises(InputError, match="no such MLflow database"):
        load_run("abc", f"sqlite:///{db}")
    assert not db.exists()


def test_help_imports_no_tracker_sdk():
    code = (
        "import sys\nfrom typer.testing import CliRunner\nfrom mlaudit.cli import app\n"
        "r = CliRunner().invoke(app, ['--help'])\nassert r.exit_code == 0\n"
        "bad = [m for m in ('mlflow', 'wandb', 'clearml', 'tensorboard') if m in sys.modules]\n"
        "print(bad)\nsys.exit(1 if bad else 0)\n"
    )
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert p.returncode == 0, p.stdout + p.stderr
