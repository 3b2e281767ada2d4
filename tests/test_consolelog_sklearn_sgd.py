"""The console reader (mlaudit_core/formats/consolelog/parser.py ``_metric_words``) on
scikit-learn's ``SGDClassifier(loss="log_loss", verbose=1)``.

tests/data/newuser9/sklearn_sgd_verbose.log was printed by scikit-learn 1.9.1 itself
(``python train.py > train.log 2>&1``; 2,250 rows of ``make_classification``, 82 epochs to its
own convergence check, validation accuracy 0.885 printed at the end). Each epoch prints
``-- Epoch N``, ``Norm: ..., Avg. loss: ...`` and ``Total training time: 0.00 seconds.``: the time
since ``fit`` began, not the time of the epoch.
"""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from mlaudit.cli import app
from mlaudit_core.formats.consolelog import load_logs

LOG = Path(__file__).parent / "data" / "newuser9" / "sklearn_sgd_verbose.log"


def test_metric_words_keeps_a_total_training_time_out_of_the_step_time():
    run = load_logs([LOG])
    assert "perf/step_time" not in run.metrics.keys
    assert "train/total_training_time" in run.metrics.keys
    loss = run.metrics.series("train/loss")
    assert len(loss.steps) == 82 and loss.values[0] == 30.259886


def test_mlaudit_logs_does_not_call_a_converged_sgd_run_slow():
    """Read as a step time, 0.00 s on the early epochs gave 1e12 steps/s 'falling 100%' (SY001)."""
    res = CliRunner().invoke(app, ["logs", str(LOG), "--format", "json"])
    assert res.exit_code == 0, res.output
    verdict = json.loads(res.stdout)["verdict"]
    assert verdict["outcome"] == "succeeded", verdict["summary"]
