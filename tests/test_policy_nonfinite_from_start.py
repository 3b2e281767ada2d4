"""V03/V04 (mlaudit_core/verdict/policy.py): a training loss non-finite from its first logged point,
or after a single finite point at the run's start, learned nothing: the inputs, the loss or the code
produce it (data_config), unless the data show the model finite for a while (an accuracy that moved
in the first epoch) or the learning rate is 10x typical. Real input, labelled before any mlaudit run:

- own f13b1-05 (Lightning CSVLogger, one row per epoch): data_loss NaN in all 28 epochs, nothing
  else logged (was diverged/inconclusive: "cannot be told apart");
- libraries keras-lr10-csvlogger (Keras CSVLogger, SGD lr 10): loss NaN from epoch 1, accuracy 0.136
  in epoch 1 and 0.1035 in every epoch after (was diverged/inconclusive);
- own f13b1-03 (Lightning CSVLogger of a GAN): discriminator loss 1.6e24 at step 0, NaN from step 1
  for 80 epochs (was diverged/model_convergence from the one finite point);
- report b9-02 (OSVOS console): loss 2.3e11 at step 10, NaN from step 20 on; the labels were not
  binary (was diverged/model_convergence).
"""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from mlaudit.cli import app
from mlaudit_core.audit import audit
from mlaudit_core.formats import load_path

DATA = Path(__file__).parent / "data"
RUNS = DATA / "realworld" / "runs"


def _verdict(path: Path) -> tuple[str, str, str]:
    runs = list(load_path(path).runs)
    assert runs, path
    v = audit(runs[-1][1]).verdict
    return v.outcome.value, v.cause.value, v.summary


def test_nan_in_every_epoch_with_nothing_else_logged_is_inputs_or_loss():
    out, cause, summary = _verdict(
        RUNS / "BesT1CooKie1--nn_oedometer/lightning_logs/version_0/metrics.csv"
    )
    assert (out, cause) == ("diverged", "data_config"), summary
    assert "per step" in summary  # says what would separate it from a learning-rate blow-up


def test_accuracy_that_moved_in_the_first_nan_epoch_is_a_divergence_inside_it():
    out, cause, summary = _verdict(DATA / "frameworks/keras/lr10/training.log")
    assert (out, cause) == ("diverged", "model_convergence"), summary
    assert "0.136" in summary and "0.1035" in summary


def test_one_finite_point_at_step_0_then_nan_is_non_finite_from_the_start():
    out, cause, summary = _verdict(
        RUNS / "AIRI-Institute--genrisk/lightning_logs/version_0/metrics.csv"
    )
    assert (out, cause) == ("diverged", "data_config"), summary
    assert "one finite value" in summary


def test_report_loss_2e11_at_the_first_log_then_nan_is_inputs_or_targets():
    case = DATA / "reports/b9-02-osvos-finetune-loss-2.3e11-then-nan-label-not-binary"
    res = CliRunner().invoke(
        app,
        [
            "logs",
            str(case / "train.log"),
            "--config",
            str(case / "context.txt"),
            "--format",
            "json",
        ],
    )
    v = json.loads(res.stdout)["verdict"]
    assert (v["outcome"], v["cause"]) == ("diverged", "data_config"), v["summary"]
