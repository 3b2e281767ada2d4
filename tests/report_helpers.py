"""Shared access to the report corpus (tests/data/reports) for tests that audit one report folder
the way a user does (`mlaudit logs *.log --config context.txt --format json`), and the JSON report
of any command line (`cli_report`)."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from mlaudit.cli import app

REPORTS = Path(__file__).resolve().parent / "data" / "reports"


def report_case(prefix: str) -> Path:
    """The one report folder whose name starts with ``prefix-``."""
    (case,) = REPORTS.glob(f"{prefix}-*")
    return case


def cli_report(*args: str) -> dict:
    """The JSON report of ``mlaudit ARGS --format json`` run in-process (exit code 0 asserted)."""
    res = CliRunner().invoke(app, [*args, "--format", "json"])
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


def report_verdict(case: Path, context: Path | None = None) -> dict:
    """The JSON verdict of the folder's logs with its context file (or ``context`` instead)."""
    logs = sorted(str(p) for p in case.glob("*.log"))
    args = ["logs", *logs, "--config", str(context or case / "context.txt")]
    return json.loads(CliRunner().invoke(app, [*args, "--format", "json"]).stdout)["verdict"]


def edited_context(case: Path, tmp_path: Path, old: str, new: str) -> Path:
    """A copy of the folder's context.txt in ``tmp_path`` with ``old`` replaced by ``new``."""
    text = (case / "context.txt").read_text()
    assert old in text, old
    out = tmp_path / "context.txt"
    out.write_text(text.replace(old, new))
    return out


def replay_mlflow(record: Path, tmp_path: Path) -> dict:
    """The JSON report of ``mlaudit mlflow RUN -u sqlite:///... --no-write`` on a run exported as
    JSON (``run_name``, ``params``, ``status`` and ``metrics``: name -> ``[step, value,
    timestamp_ms]`` points as MLflow stored them), logged into a fresh sqlite store in
    ``tmp_path``."""
    import mlflow

    uri = f"sqlite:///{tmp_path / 'mlflow.db'}"
    client = mlflow.MlflowClient(uri)
    rid = log_mlflow_record(client, client.create_experiment(record.stem), record)
    return cli_report("mlflow", rid, "-u", uri, "--no-write")


def log_mlflow_record(client, experiment_id: str, record: Path) -> str:
    """Log the run exported as JSON in ``record`` (the shape :func:`replay_mlflow` reads) into
    ``experiment_id`` with the real ``MlflowClient`` ``client``; returns the new run's id."""
    from mlflow.entities import Metric, Param

    rec = json.loads(record.read_text())
    rid = client.create_run(experiment_id, run_name=rec["run_name"]).info.run_id
    client.log_batch(rid, params=[Param(k, str(v)) for k, v in rec["params"].items()])
    points = [
        Metric(k, float(v), int(t), int(s)) for k, pts in rec["metrics"].items() for s, v, t in pts
    ]
    for i in range(0, len(points), 1000):
        client.log_batch(rid, metrics=points[i : i + 1000])
    client.set_terminated(rid, rec["status"])
    return rid
