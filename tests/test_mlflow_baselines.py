"""`mlaudit mlflow RUN --baseline ...` and automatic baseline selection on real training runs
(numpy MLP on digits, mlaudit_demo.regimes) in a sqlite MLflow store."""

from __future__ import annotations

import json

import pytest

mlflow = pytest.importorskip("mlflow")
pytest.importorskip("sklearn")
pytest.importorskip("tensorboardX")
from typer.testing import CliRunner  # noqa: E402

from mlaudit.cli import app  # noqa: E402


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    from mlaudit_demo.regimes import train

    d = tmp_path_factory.mktemp("bl")
    uri = f"sqlite:///{d / 'mlflow.db'}"
    prev = mlflow.get_tracking_uri()
    mlflow.set_tracking_uri(uri)
    mlflow.set_experiment("baselines")
    try:
        base = [train("healthy", seed=s, verbose=False)["run_id"] for s in (0, 1, 2)]
        client = mlflow.MlflowClient(uri)
        for rid in base:
            client.set_tag(rid, "mlaudit.baseline", "true")
        same = train("healthy", seed=3, verbose=False)["run_id"]
        worse = train("underfit", seed=0, verbose=False)["run_id"]
    finally:
        mlflow.set_tracking_uri(prev)
    return uri, base, same, worse


def audit_json(uri, run_id, *extra):
    res = CliRunner().invoke(app, ["mlflow", run_id, "-u", uri, "--no-write", "-f", "json", *extra])
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


def test_tagged_baselines_found_and_run_within_noise(store):
    uri, base, same, _ = store
    rep = audit_json(uri, same)
    bl = [f for f in rep["findings"] if f["family"] == "baseline"]
    assert bl, "no baseline comparison in the report"
    assert rep["verdict"]["outcome"] == "succeeded"
    assert not any(f["code"] == "BL001" and f["severity"] in ("error", "critical") for f in bl)


def test_explicit_baselines_judge_a_worse_run_regressed(store):
    uri, base, _, worse = store
    args = [x for b in base for x in ("--baseline", b)]
    rep = audit_json(uri, worse, *args)
    assert rep["verdict"]["outcome"] == "regressed", rep["verdict"]
    bl1 = next(f for f in rep["findings"] if f["code"] == "BL001")
    assert bl1["severity"] in ("error", "critical")
    assert any(h["status"] == "rejected" for h in rep["hypotheses"]) or rep["hypotheses"]


def test_unknown_explicit_baseline_is_one_clear_line(store):
    uri, _, same, _ = store
    res = CliRunner().invoke(app, ["mlflow", same, "-u", uri, "--no-write", "--baseline", "f" * 32])
    assert res.exit_code == 2
    assert "baseline mlflow run" in res.output and "not found" in res.output


def test_no_baselines_flag(store):
    uri, _, same, _ = store
    rep = audit_json(uri, same, "--no-baselines")
    assert not [f for f in rep["findings"] if f["family"] == "baseline" and f["code"] == "BL001"]
