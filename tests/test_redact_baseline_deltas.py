"""Credentials in params stay redacted through the baseline comparison (BL002 deltas).

A run and its baselines differ in ``api_secret`` / ``db_password`` params (each run got its
own): BL002's finding said ``api_secret: [REDACTED] -> Qz0plainsecretvalue`` (the redactor
caught the first value of ``key: a/b -> c`` only) in the terminal, the JSON and HTML reports
and everything written back; the MCP tool ``compare_runs`` returned every param delta raw
(``hf_token``, a ``postgresql://u:PASSWORD@h/db`` URI, a GitHub token in a note). Fixed: a
credential-named key's values never leave ``find_deltas`` (the key and the fact that it
differs stay), and ``compare_runs`` scrubs its result like the other tools.

Real ``mlflow server`` (tests/conftest.py) and the real console script; the MCP tool is called
through its Toolbox, the object the MCP server serves.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

mlflow = pytest.importorskip("mlflow")

MLAUDIT = str(Path(sys.executable).with_name("mlaudit"))
SECRETS = [
    "Qz0plainsecretvalue",
    "Qz1plainsecretvalue",
    "hunter0x",
    "hunter1x",
    "pw0secret",
    "pw1secret",
    "hf_abcdefghijklmnopqrstuvwxyzABCDEFGH",
    "abcdabcdabcdabcd",
]


@pytest.fixture(scope="module")
def runs(mlflow_server):
    client = mlflow.MlflowClient(mlflow_server["url"])
    exp = client.create_experiment("redact-baseline-deltas")
    ids = []
    for k in range(3):
        r = client.create_run(exp, run_name=f"r{k}")
        rid = r.info.run_id
        for key, value in {
            "api_secret": f"Qz{k}plainsecretvalue",
            "db_password": f"hunter{k}x",
            "db_uri": f"postgresql://u:pw{k}secret@db.example.com/mlflow",
            "hf_token": "hf_abcdefghijklmnopqrstuvwxyzABCDEFGH" if k == 0 else f"hf_{k}",
            "note": f"pushed with ghp_{'abcd' * 9}{k}",
            "lr": "0.9" if k == 0 else "0.1",
        }.items():
            client.log_param(rid, key, value)
        for i in range(60):  # the run (k=0) degrades from step 30; the baselines do not
            loss = 2 * math.exp(-i / 10) + 0.1 + (0.05 * (i - 30) if k == 0 and i >= 30 else 0)
            client.log_metric(rid, "loss", loss, step=i)
        client.set_terminated(rid)
        ids.append(rid)
    return mlflow_server["url"], ids


def test_report_names_the_changed_credential_without_its_values(runs, tmp_path):
    url, (rid, b1, b2) = runs
    html = tmp_path / "r.html"
    p = subprocess.run(
        [
            MLAUDIT,
            "mlflow",
            rid,
            "-u",
            url,
            "--no-write",
            "-b",
            b1,
            "-b",
            b2,
            "-f",
            "json",
            "--out",
            str(html),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert p.returncode in (0, 1), p.stderr
    out = p.stdout + p.stderr + html.read_text()
    for s in SECRETS:
        assert s not in out, s
    report = json.loads(p.stdout)
    texts = json.dumps([f for f in report["findings"] if f["code"] == "BL002"])
    assert "lr: 0.1 -> 0.9" in texts  # ordinary deltas keep their values
    assert "api_secret: [REDACTED] -> [REDACTED]" in texts  # the key that changed is named


def test_mcp_compare_runs_returns_no_credential(runs):
    from mlaudit_core.agent.tools import Roots, Toolbox

    url, (rid, b1, b2) = runs
    res = Toolbox(Roots((Path.cwd(),)), tracking_uris=[url]).compare_runs(
        "mlflow", rid, [b1, b2], tracking_uri=url
    )
    out = json.dumps(res.data) + json.dumps(res.lines)
    for s in SECRETS:
        assert s not in out, s
    deltas = {d["key"]: d for d in res.data["deltas"]}
    assert deltas["lr"]["run_value"] == "0.9"
    assert deltas["db_uri"]["run_value"] == "postgresql://u:[REDACTED]@db.example.com/mlflow"
    assert deltas["api_secret"]["baseline_values"] == ["[REDACTED]", "[REDACTED]"]
