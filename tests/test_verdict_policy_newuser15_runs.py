"""The verdict (mlaudit_core/verdict/policy.py and the detectors it reads) on runs a new user made
with the real frameworks at their defaults (session 15; files in tests/data/newuser15, README
there).

The truth of each run was written before mlaudit saw it (/tmp/newuser15/truth.md of that pass,
summarised in docs/corpus.md "Session 15: the new-user pass"). The strict xfails are the verdicts
that pass got wrong at its first run, left to the verdict-rule owners; each says what a careful
analyst reads in the file.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mlaudit.cli import app

DATA = Path(__file__).parent / "data" / "newuser15"


def _verdict(*args: str) -> dict:
    res = CliRunner().invoke(app, [*args, "--format", "json"])
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


def _outcome_cause(rep: dict) -> tuple[str, str]:
    return rep["verdict"]["outcome"], rep["verdict"]["cause"]


def test_policy_sklearn_mlp_two_hidden_units_at_train_accuracy_063_is_underfit():
    """The library's ConvergenceWarning and a loss still falling: V19m. scikit-learn
    MLPClassifier(hidden_layer_sizes=(2,)) on digits, verbose: 'Iteration 300, loss = 1.029'
    still falling, scikit-learn's ConvergenceWarning 'Maximum iterations (300) reached', then
    the script's 'train accuracy 0.63' on 10 classes: a model too small to fit its training data
    (underfit; was succeeded/healthy)"""
    rep = _verdict("logs", str(DATA / "sklearn_mlp_2_units_underfit.log"))
    assert rep["verdict"]["outcome"] == "underfit", rep["verdict"]["summary"]


@pytest.mark.xfail(
    strict=True,
    reason="LightGBM's default regression console ('[400] train's l2: 0.1966 valid's l2: 0.4938', "
    "log_evaluation(25)): l2 is LightGBM's default regression loss (mean squared error), valid l2 "
    "falling 10.9 -> 0.494 and flattening: a healthy run, yet 'not judged: none of the 2 logged "
    "metrics (train/l2, val/l2) is a training loss, validation loss or accuracy'",
)
def test_policy_lightgbm_console_l2_metric_is_a_loss_and_the_run_succeeded():
    rep = _verdict("logs", str(DATA / "lgb_regression_l2_healthy.log"))
    assert _outcome_cause(rep) == ("succeeded", "healthy"), rep["verdict"]["summary"]


@pytest.mark.xfail(
    strict=True,
    reason="KeyError: 'batch_size' at cfg['batch_size'] while the config the console printed (and "
    "the --config file) holds 'batch_szie': a misspelt config key (data_config), yet "
    "correctness_bug",
)
def test_policy_keyerror_for_a_key_misspelt_in_the_config_is_data_config():
    rep = _verdict(
        "logs",
        str(DATA / "pt_config_key_typo.log"),
        "--config",
        str(DATA / "pt_config_key_typo.config.json"),
    )
    assert _outcome_cause(rep) == ("crashed", "data_config"), rep["verdict"]["summary"]


def test_policy_lightning_csv_sgd_lr_half_blowing_up_in_four_updates_is_model_convergence():
    """The logger's first point comes after unseen updates at an LR at or above typical: the LR
    (was data_config). Lightning CSVLogger of an MLP regression at SGD lr 0.5 (momentum 0.9;
    hparams.yaml lr: 0.5): train_loss 9.7e19 at step 4 (after 4 updates; log_every_n_steps=5),
    NaN from step 9: a learning-rate blow-up (model_convergence), yet data_config with 'the
    start, before updates could move it'"""
    rep = _verdict("audit", str(DATA / "lightning_csv_sgd_lr0p5" / "version_0"), "--no-write")
    assert _outcome_cause(rep) == ("diverged", "model_convergence"), rep["verdict"]["summary"]


@pytest.mark.xfail(
    strict=True,
    reason="Lightning CSVLogger of a digits MLP whose Dataset slowed from epoch 4 (a sleep in "
    "__getitem__): val_loss 2.03 -> 0.87 -> 0.70 -> 0.61 over 6 of 6 epochs, still falling 13% in "
    "the last one (val_acc 0.66 -> 0.86): stopped while still learning, yet succeeded/healthy "
    "with no finding",
)
def test_policy_lightning_csv_val_loss_falling_13pct_in_its_last_epoch_is_not_healthy():
    rep = _verdict(
        "audit",
        str(DATA / "lightning_csv_slowed_loader_still_falling" / "version_0"),
        "--no-write",
    )
    assert rep["verdict"]["outcome"] in ("underfit", "slow"), rep["verdict"]["summary"]


@pytest.mark.xfail(
    strict=True,
    reason="Keras CSVLogger and console of an MLP regression at SGD lr 0.5 on clean friedman1 data: "
    "loss NaN at every epoch; Keras logs each epoch's mean over 25 updates, so a learning-rate "
    "blow-up inside epoch 1 and bad inputs read the same (the CSV report says so itself), yet "
    "data_config at confidence 0.74 instead of the learning rate or an open cause",
)
@pytest.mark.parametrize(
    "args",
    [
        ("logs", "keras_sgd_lr0p5_nan_from_epoch_1.log"),
        ("audit", "keras_sgd_lr0p5_nan_from_epoch_1.csv", "--no-write"),
    ],
    ids=["console", "csvlogger"],
)
def test_policy_keras_epoch_mean_nan_from_epoch_1_does_not_blame_the_data(args):
    cmd, name, *rest = args
    rep = _verdict(cmd, str(DATA / name), *rest)
    assert rep["verdict"]["outcome"] == "diverged", rep["verdict"]["summary"]
    assert rep["verdict"]["cause"] in ("model_convergence", "inconclusive"), rep["verdict"][
        "summary"
    ]
