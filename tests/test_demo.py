"""`mlaudit demo` end to end: five real trainings, verdicts written back onto the MLflow runs and
into TensorBoard; the same training gets the same verdict from both sources; re-auditing a run
leaves exactly one mlaudit section and one set of artifacts."""

from __future__ import annotations

import pytest

mlflow = pytest.importorskip("mlflow")
pytest.importorskip("sklearn")
pytest.importorskip("tensorboardX")

from mlaudit_tensorboard.reader import MLAUDIT_SUFFIX, load_logdir  # noqa: E402
from typer.testing import CliRunner  # noqa: E402

from mlaudit_core import audit  # noqa: E402
from mlaudit_core.cli import app  # noqa: E402
from mlaudit_core.cli.cmd_demo import EXPECTED  # noqa: E402
from mlaudit_core.writeback import BEGIN  # noqa: E402


@pytest.fixture(scope="module")
def demo_store(tmp_path_factory):
    d = tmp_path_factory.mktemp("demo")
    res = CliRunner().invoke(app, ["demo", "--dir", str(d)], env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output
    return d, res.output


def runs_by_regime(d):
    client = mlflow.MlflowClient(f"sqlite:///{d / 'mlflow.db'}")
    exp = client.get_experiment_by_name("mlaudit-demo")
    return client, {r.data.tags["regime"]: r for r in client.search_runs([exp.experiment_id])}


def test_each_regime_gets_the_injected_verdict(demo_store):
    d, output = demo_store
    client, runs = runs_by_regime(d)
    assert set(runs) == set(EXPECTED)
    for regime, run in runs.items():
        outcomes, cause = EXPECTED[regime]
        tags = run.data.tags
        assert tags["mlaudit.verdict"] in outcomes, (regime, tags["mlaudit.verdict"])
        if cause:
            assert tags["mlaudit.cause"] == cause
        assert tags["mlflow.note.content"].count(BEGIN) == 1
        names = {a.path for a in client.list_artifacts(run.info.run_id, "mlaudit")}
        assert {"mlaudit/report.json", "mlaudit/report.md"} <= names
    assert runs["starved"].data.tags["mlaudit.codes"].count("SY002") == 1
    assert "mlflow ui --backend-store-uri" in output
    assert "other than the injected" not in output


def test_tensorboard_and_mlflow_agree(demo_store):
    d, _ = demo_store
    client, runs = runs_by_regime(d)
    for regime, run in runs.items():
        [logdir] = sorted((d / "tensorboard").glob(f"{regime}-*"))
        tb_report = audit(load_logdir(logdir))
        assert tb_report.verdict.outcome.value == run.data.tags["mlaudit.verdict"], regime
        assert tb_report.verdict.cause.value == run.data.tags["mlaudit.cause"], regime
        assert len(list(logdir.glob(f"*{MLAUDIT_SUFFIX}"))) == 1


def test_reaudit_is_idempotent(demo_store):
    d, _ = demo_store
    client, runs = runs_by_regime(d)
    rid = runs["overfit"].info.run_id
    before = sorted(a.path for a in client.list_artifacts(rid, "mlaudit"))
    res = CliRunner().invoke(app, ["mlflow", rid, "-u", f"sqlite:///{d / 'mlflow.db'}"])
    assert res.exit_code == 0, res.output
    after = client.get_run(rid)
    assert after.data.tags["mlflow.note.content"].count(BEGIN) == 1
    assert sorted(a.path for a in client.list_artifacts(rid, "mlaudit")) == before
    assert after.data.tags["mlaudit.verdict"] == "overfit"
