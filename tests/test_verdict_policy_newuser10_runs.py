"""The verdict (mlaudit_core/verdict/policy.py, mlaudit_core/exception_causes.py and the detectors
they read) on runs a new user made with the real frameworks at their defaults (session 10; files in
tests/data/newuser10, README there).

The truth of each run was written before mlaudit saw it (a table with the time). The strict xfails
are verdict problems left to the verdict-rule owners (reported to the lead); each says what a
careful analyst reads in the file.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mlaudit.cli import app

DATA = Path(__file__).parent / "data" / "newuser10"


def _verdict(*args: str) -> dict:
    res = CliRunner().invoke(app, [*args, "--format", "json"])
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


def test_policy_resumed_trainer_console_is_judged_on_its_whole_curve():
    """The killed-and-resumed Trainer console (one ``tee -a`` file) is one run that reached its
    end: never 'crashed' by the kill of its first launch (the resume finished it)."""
    rep = _verdict("logs", str(DATA / "hf_killed_resumed_tee.log"))
    assert rep["verdict"]["outcome"] != "crashed", rep["verdict"]["summary"]
    assert "16 points" in rep["verdict"]["summary"]


def test_policy_trainer_defaults_with_every_eval_at_ln2_is_underfit():
    """HF Trainer at its defaults (lr 5e-5, logging_steps 500: no training-loss point, eval each
    epoch): eval_loss 0.6936, 0.6934, 0.6933 (ln 2 = 0.6931) with eval_accuracy 0.43-0.45, summary
    train_loss 0.6923: the held-out loss at ln K at every evaluation and the accuracy at chance name
    K = 2 (``_context._heldout_at_uniform``), and training at the uniform guess too makes the run
    underfit (V11), never succeeded."""
    rep = _verdict("logs", str(DATA / "hf_defaults_at_chance.log"))
    assert rep["verdict"]["outcome"] == "underfit", rep["verdict"]["summary"]
    assert "2 classes" in rep["verdict"]["summary"]


def test_policy_from_pretrained_name_typo_is_the_configuration():
    rep = _verdict("logs", str(DATA / "hf_model_name_typo.log"))
    assert rep["verdict"]["outcome"] == "crashed"
    assert rep["verdict"]["cause"] == "data_config", rep["verdict"]["summary"]


def test_policy_lightning_silent_early_stop_logdir_is_not_crashed():
    """Lightning EarlyStopping(val_loss, patience 3, silent by default): the best val_loss at epoch
    11, the run ends right after the evaluation of epoch 14 of 30 (hparams.yaml 'epochs: 30'):
    a patience-explained stop (evidence._infer_patience), not a crash."""
    rep = _verdict("audit", str(DATA / "lightning_early_stopped_tb"), "--no-write")
    assert rep["verdict"]["outcome"] != "crashed", rep["verdict"]["summary"]


@pytest.mark.xfail(
    strict=True,
    reason="Keras fit (verbose=1, validation_split 0.2) on labels that are all one class: train "
    "and validation accuracy exactly 1.0 from epoch 4 of 8, both losses falling to 0.015: a task "
    "solved by predicting a constant (a data/label fault, data_config; a perfect held-out score is "
    "the first thing to doubt), yet succeeded/healthy",
)
def test_policy_keras_every_label_one_class_is_not_healthy():
    rep = _verdict("logs", str(DATA / "keras_one_class_labels.log"))
    assert rep["verdict"]["cause"] == "data_config", rep["verdict"]["summary"]
