"""Abstention end to end (issue 14): inputs without a judgeable training signal are ``unknown``,
printed in the headline and written back as the verdict, with what to log next; never ``succeeded``.

Real parts: a TensorBoard logdir written by torch's ``SummaryWriter.add_hparams`` (the call that
produces ``hp_metric``), a console log no format recognises, and an MLflow run with one point per
metric logged through the real client to a real ``mlflow server`` (sqlite backend, conftest).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mlaudit.cli import app


def _report(out: Path) -> dict:
    return json.loads(out.read_text())


def _assert_unknown_with_next_step(rep: dict) -> None:
    v = rep["verdict"]
    assert v["outcome"] == "unknown", v["summary"]
    assert v["cause"] == "inconclusive" and v["confidence"] == 0.0
    assert v["summary"].startswith("Not judged:")
    assert any(u.startswith("verdict: not judged") for u in rep["unknowns"])
    assert rep["next_actions"][0]["action"].startswith("Log the"), rep["next_actions"][0]


def test_tensorboard_hp_metric_only_is_unknown_and_written_back(tmp_path):
    pytest.importorskip("torch")
    from torch.utils.tensorboard import SummaryWriter

    logdir = tmp_path / "tb"
    with SummaryWriter(
        str(logdir)
    ) as w:  # Lightning's TensorBoardLogger does the same at fit start
        w.add_hparams({"lr": 0.01, "batch_size": 32}, {"hp_metric": -1.0}, run_name=".")
    out = tmp_path / "r.json"
    res = CliRunner().invoke(
        app, ["tensorboard", str(logdir), "--format", "json", "--out", str(out)]
    )
    assert res.exit_code == 0, res.output
    rep = _report(out)
    _assert_unknown_with_next_step(rep)
    assert (
        "hp_metric" in rep["verdict"]["summary"]
    )  # says which metric it saw and why it is not enough
    res = CliRunner().invoke(app, ["tensorboard", str(logdir)])
    assert "UNKNOWN" in res.output and "SUCCEEDED" not in res.output
    res = CliRunner().invoke(
        app, ["tensorboard", str(logdir), "--format", "markdown", "--no-write"]
    )
    assert "none of the 1 logged metrics plays a recognised role" in res.output, res.output
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    acc = EventAccumulator(str(logdir), size_guidance={"tensors": 0})
    acc.Reload()
    texts = [b"".join(t.tensor_proto.string_val).decode() for t in acc.Tensors("mlaudit/verdict")]
    assert texts and "unknown" in texts[-1] and "succeeded" not in texts[-1]


def test_logs_with_no_recognised_line_is_unknown(tmp_path):
    log = tmp_path / "train.log"
    log.write_text("Loading dataset from /data/train\nBuilding model resnet18\nStarted.\nDone.\n")
    out = tmp_path / "r.json"
    res = CliRunner().invoke(app, ["logs", str(log), "--format", "json", "--out", str(out)])
    assert res.exit_code == 0, res.output
    rep = _report(out)
    _assert_unknown_with_next_step(rep)
    assert "no metric was logged" in rep["verdict"]["summary"]
    res = CliRunner().invoke(app, ["logs", str(log)])
    assert "UNKNOWN" in res.output and "Log the training loss" in res.output


def test_mlflow_one_point_per_metric_is_unknown_and_written_back(mlflow_server, tmp_path):
    import mlflow

    client = mlflow.MlflowClient(mlflow_server["url"])
    exp = client.create_experiment(f"abstain-{tmp_path.name}")
    run = client.create_run(exp, run_name="summary-only")
    rid = run.info.run_id
    for k, v in {"train_loss": 0.41, "eval_loss": 0.52, "eval_accuracy": 0.83}.items():
        client.log_metric(rid, k, v, step=1000)  # HF's end-of-training summary: one point each
    client.set_terminated(rid, "FINISHED")
    out = tmp_path / "r.json"
    res = CliRunner().invoke(
        app, ["mlflow", rid, "-u", mlflow_server["url"], "--format", "json", "--out", str(out)]
    )
    assert res.exit_code == 0, res.output
    rep = _report(out)
    _assert_unknown_with_next_step(rep)
    assert "too few points" in rep["verdict"]["summary"]
    assert "as a series" in rep["next_actions"][0]["action"]
    tags = client.get_run(rid).data.tags
    assert tags["mlaudit.verdict"] == "unknown" and tags["mlaudit.cause"] == "inconclusive"
