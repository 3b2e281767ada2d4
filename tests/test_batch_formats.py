"""``mlaudit batch mlflow --format json|csv|markdown`` and the piped table, on a real
``mlflow server`` (issue 19, item 5).

The experiment holds a diverging run whose name carries a terminal escape sequence (OSC
retitle + BEL, a CSI clear-screen), a healthy run, and a run whose metric history the
server cannot read (a damaged row in its own store). Each format must give one row per run
with the documented columns, the escapes shown as ``\\xNN``, and ids whole.
"""

from __future__ import annotations

import csv
import io
import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

mlflow = pytest.importorskip("mlflow")
from test_batch_mlflow import log_run  # noqa: E402
from typer.testing import CliRunner  # noqa: E402

from mlaudit.cli import app  # noqa: E402
from mlaudit.cli.batch_formats import COLUMNS  # noqa: E402

EXP = "batch-formats"
EVIL = "diverge\x1b]0;pwned\x07\x1b[2J"
ENV = {"MLFLOW_HTTP_REQUEST_MAX_RETRIES": "0"}


@pytest.fixture(scope="module")
def runs(mlflow_server):
    client = mlflow.MlflowClient(mlflow_server["url"])
    exp_id = client.create_experiment(EXP)
    out = {
        "diverge": log_run(client, exp_id, EVIL, "diverge"),
        "healthy": log_run(client, exp_id, "healthy", "healthy"),
        "corrupt": log_run(client, exp_id, "corrupt", "healthy"),
    }
    db = sqlite3.connect(mlflow_server["root"] / "mlflow.db")
    with db:
        db.execute(
            "UPDATE metrics SET value='not a number' WHERE run_uuid=? AND step=7", (out["corrupt"],)
        )
    db.close()
    return out


def invoke(url: str, state: Path, *extra: str):
    return CliRunner().invoke(
        app,
        ["batch", "mlflow", "-e", EXP, "-u", url, "--state", str(state), "--no-write", *extra],
        env=ENV,
    )


def test_json_has_one_row_per_run_with_escapes_shown(mlflow_server, runs, tmp_path):
    res = invoke(mlflow_server["url"], tmp_path / "s.sqlite", "--format", "json")
    assert res.exit_code == 4, res.output  # one run failed: incomplete, as with the table
    doc = json.loads(res.stdout)  # stdout holds the JSON document and nothing else
    assert doc["schema"] == "mlaudit-batch/1"
    assert (doc["runs"], doc["audited"], doc["failed"]) == (3, 2, 1)
    rows = {r["id"]: r for r in doc["rows"]}
    assert set(rows) == set(runs.values())
    assert all(tuple(r) == COLUMNS for r in doc["rows"])
    d = rows[runs["diverge"]]
    assert d["status"] == "audited" and d["outcome"] == "diverged" and d["error"] == ""
    assert 0 < d["confidence"] <= 1 and d["codes"] and all(isinstance(c, str) for c in d["codes"])
    assert "\x1b" not in res.stdout and "\x07" not in res.stdout
    assert d["name"] == "diverge\\x1b]0;pwned\\x07\\x1b[2J"
    assert doc["rows"][0]["id"] == runs["diverge"]  # worst first
    c = rows[runs["corrupt"]]
    assert c["status"] == "failed" and c["outcome"] == "" and c["confidence"] is None
    assert "load: MlflowException" in c["error"] and doc["rows"][-1]["id"] == runs["corrupt"]
    assert rows[runs["healthy"]]["outcome"] == "succeeded"
    assert doc["outcomes"] == {"diverged": 1, "succeeded": 1}


def test_csv_and_markdown_rows(mlflow_server, runs, tmp_path):
    state = tmp_path / "s.sqlite"
    res = invoke(mlflow_server["url"], state, "--format", "csv")
    assert res.exit_code == 4, res.output
    table = list(csv.DictReader(io.StringIO(res.stdout)))
    assert len(table) == 3 and tuple(table[0]) == COLUMNS
    by_id = {r["id"]: r for r in table}
    assert by_id[runs["diverge"]]["outcome"] == "diverged"
    assert by_id[runs["diverge"]]["name"] == "diverge\\x1b]0;pwned\\x07\\x1b[2J"
    assert (
        by_id[runs["corrupt"]]["status"] == "failed" and by_id[runs["corrupt"]]["confidence"] == ""
    )
    assert float(by_id[runs["healthy"]]["confidence"]) > 0

    # Resumed from the state file: same rows, in markdown.
    md = invoke(mlflow_server["url"], state, "--format", "markdown")
    lines = md.stdout.splitlines()
    header = lines.index("| " + " | ".join(COLUMNS) + " |")
    body = [x for x in lines[header + 2 :] if x.startswith("|")]
    assert len(body) == 3
    assert all(x.count(" | ") == len(COLUMNS) - 1 for x in body)  # no stray pipe splits a row
    assert any(runs["diverge"] in x and "| diverged |" in x for x in body)
    assert "\x1b" not in md.stdout


def test_unknown_format_is_one_line_exit_2(mlflow_server, runs, tmp_path):
    res = invoke(mlflow_server["url"], tmp_path / "s.sqlite", "--format", "yaml")
    assert (
        res.exit_code == 2
        and "--format 'yaml': use one of table, json, csv, markdown" in res.output
    )
    assert not (tmp_path / "s.sqlite").exists()


def test_piped_table_keeps_each_run_id_on_one_line(mlflow_server, runs, tmp_path):
    """A real pipe (not a terminal, no COLUMNS): Rich used to fold the table at 80 columns and
    cut the 32-character run ids across lines."""
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    env.update(ENV)
    exe = Path(sys.executable).parent / "mlaudit"
    proc = subprocess.run(
        [
            str(exe),
            "batch",
            "mlflow",
            "-e",
            EXP,
            "-u",
            mlflow_server["url"],
            "--state",
            str(tmp_path / "p.sqlite"),
            "--no-write",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert proc.returncode == 4, proc.stderr
    out = proc.stdout
    assert runs["healthy"] not in out  # the table lists the worst runs only; --format lists all
    line = next(x for x in out.splitlines() if runs["corrupt"] in x)
    assert "load: MlflowException" in line  # the reason is on the same line as the id
    worst = next(x for x in out.splitlines() if runs["diverge"] in x)
    assert "diverged" in worst and "\\x1b]0;pwned" in worst and "\x1b" not in out
