"""Early stopping that watches a training metric (verdict.policy ``early_stop_on_training``, rule V12).

An overfit run whose own early stopping watches the training set could never be stopped by the
held-out rise: the stopping criterion is misconfigured (data_config), not only the model overfitting.
Real report b8-02 (dmlc/xgboost #2777): XGBoost prints "Will train until train-logloss hasn't improved
in 1000 rounds." (it stops on the last set of ``evals``), eval-logloss rises 0.419 -> 1.14 over 68,000
rounds while train-logloss falls to 3e-4.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mlaudit.cli import app
from mlaudit_core.rundata import ConsoleLine, RunData, RunIdentity
from mlaudit_core.verdict.policy import early_stop_on_training

REPORTS = Path(__file__).resolve().parent / "data" / "reports"


def _run(*lines: str) -> RunData:
    return RunData(
        identity=RunIdentity(tracker="test", id="r"),
        console=[ConsoleLine("train.log", i + 1, t) for i, t in enumerate(lines)],
    )


def test_xgboost_report_watching_the_training_set_is_a_misconfigured_stop():
    (case,) = REPORTS.glob("b8-02-*")
    args = ["logs", *map(str, sorted(case.glob("*.log")))]
    for cfg in sorted(case.glob("*.txt")):
        args += ["--config", str(cfg)]
    v = json.loads(CliRunner().invoke(app, [*args, "--format", "json"]).stdout)["verdict"]
    assert (v["outcome"], v["cause"]) == ("overfit", "data_config"), v["summary"]
    assert "train-logloss" in v["summary"]


@pytest.mark.parametrize(
    ("line", "watched"),
    [
        ("Will train until train-logloss hasn't improved in 1000 rounds.", True),
        ("Will train until eval-logloss hasn't improved in 10 rounds.", False),
        (
            "Monitored metric train_loss did not improve in the last 3 records. Best score: 0.100.",
            True,
        ),
        ("Metric val_loss improved by 0.010 >= min_delta = 0.0. New best score: 0.500", False),
        ("training loss did not improve", False),  # no framework line
    ],
)
def test_early_stop_on_training_reads_the_watched_metric(line, watched):
    assert (early_stop_on_training(_run(line)) is not None) is watched


def test_lightning_writes_the_message_read():
    """The Lightning format read is the installed package's own text."""
    spec = importlib.util.find_spec("lightning")  # a test dependency ([dev] extra)
    assert spec is not None and spec.origin is not None
    src = (Path(spec.origin).parent / "pytorch" / "callbacks" / "early_stopping.py").read_text()
    assert "Monitored metric {self.monitor} did not improve in the last" in src
    assert "Metric {self.monitor} improved" in src
