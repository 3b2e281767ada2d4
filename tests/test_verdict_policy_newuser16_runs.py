"""The verdict (mlaudit_core/verdict/policy.py and the detectors it reads) on runs a new user made
with the real frameworks at their defaults (session 16; files in tests/data/newuser16, README
there).

The truth of each run was written before mlaudit saw it (/tmp/newuser16/truth.md of that pass,
summarised in docs/corpus.md "Session 16: the new-user pass"). The strict xfails are the verdicts
that pass got wrong at its first run, left to the verdict-rule owners; each says what a careful
analyst reads in the file.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from report_helpers import cli_report

DATA = Path(__file__).parent / "data" / "newuser16"


def _outcome_cause(rep: dict) -> tuple[str, str]:
    return rep["verdict"]["outcome"], rep["verdict"]["cause"]


@pytest.mark.xfail(
    strict=True,
    reason="SGDClassifier(loss='log_loss', early_stopping=True, n_iter_no_change=5, verbose=1): "
    "'Validation score' 0.36-0.40 never above its epoch-2 best, 'Convergence after 7 epochs' while "
    "'Avg. loss' still fell 11% per epoch and ended at 0.82, above the log loss of a constant "
    "guess (ln 2 = 0.693): an undertrained model (underfit), yet succeeded/healthy",
)
def test_policy_sgd_early_stopped_with_log_loss_above_ln2_is_underfit():
    rep = cli_report("logs", str(DATA / "sklearn_sgd_early_stopped_epoch_7_loss_above_ln2.log"))
    assert rep["verdict"]["outcome"] == "underfit", rep["verdict"]["summary"]


@pytest.mark.xfail(
    strict=True,
    reason="MLPClassifier(early_stopping=True, verbose=True) on digits with permuted labels: "
    "'Validation score' 0.076-0.125 at every iteration (chance on 10 classes), loss 2.36 -> 2.25 "
    "(ln 10 = 2.30), the script's 'train accuracy 0.109' and 'test accuracy 0.083': the labels "
    "do not match the inputs (data_config), yet plateaued/model_convergence with 'try a higher LR'",
)
def test_policy_sklearn_mlp_validation_score_at_chance_is_data_config():
    rep = cli_report("logs", str(DATA / "sklearn_mlp_early_stopping_shuffled_labels.log"))
    assert rep["verdict"]["cause"] == "data_config", rep["verdict"]["summary"]


@pytest.mark.xfail(
    strict=True,
    reason="a print loop's loss 0.094 (step 10) -> 0.017 (step 20) -> nan from step 30, val_acc "
    "0.49 at every epoch: the loss fell to near 0 and turned NaN without growing (the report "
    "itself: 'a numerical failure, not a learning-rate divergence'), the log of a saturated "
    "probability in the loss code (correctness_bug), yet model_convergence with 'retry with a "
    "10x lower learning rate'",
)
def test_policy_nan_after_the_loss_fell_to_near_zero_is_not_the_learning_rate():
    rep = cli_report("logs", str(DATA / "pt_handwritten_bce_nan_at_step_30.log"))
    assert _outcome_cause(rep) == ("diverged", "correctness_bug"), rep["verdict"]["summary"]


@pytest.mark.xfail(
    strict=True,
    reason="SummaryWriter() logdir of a digits MLP (Adam 1e-3, 5 epochs) whose Dataset sleeps 2 ms "
    "per item: Time/data 0.22 s of a 0.73 s Time/step (29%, under SY002's 50% input-bound line), "
    "Loss/val 1.77 -> 0.481 -> 0.365, still falling 24% in the last epoch: stopped while still "
    "learning (underfit), yet slow/infra_runtime from 5 load-spike pauses (SY004) with 'Move "
    "checkpoint saves off the critical path' for a run that saves none",
)
def test_policy_summarywriter_val_loss_still_falling_24pct_is_underfit_not_slow():
    rep = cli_report(
        "audit", str(DATA / "pt_slow_loader_2ms_tb" / "Dec07_19-45-40_vm"), "--no-write"
    )
    assert rep["verdict"]["outcome"] == "underfit", rep["verdict"]["summary"]


@pytest.mark.xfail(
    strict=True,
    reason="Keras CSVLogger (and its console, Epoch 25/25) of a 10-64-64-1 MLP on standardised "
    "make_friedman1 (noise 0.3): val_loss 0.603 -> 0.0445, lower at every one of the 25 epochs and "
    "still -5% in the last, ~10x the noise floor: stopped while still learning (underfit), yet "
    "succeeded/healthy from both files",
)
@pytest.mark.parametrize(
    "args",
    [
        ("audit", "keras_regression_val_loss_still_falling.csv", "--no-write"),
        ("logs", "keras_regression_val_loss_still_falling.log"),
    ],
    ids=["csv", "console"],
)
def test_policy_keras_val_loss_falling_every_epoch_to_the_end_is_underfit(args):
    rep = cli_report(args[0], str(DATA / args[1]), *args[2:])
    assert rep["verdict"]["outcome"] == "underfit", rep["verdict"]["summary"]


@pytest.mark.xfail(
    strict=True,
    reason="HF Trainer (2-layer BERT from config, lr 1e-3, 5 epochs) on 'is token 7 in the "
    "sequence' (positive in 23.6% of sequences): eval_accuracy 0.7937 at all 5 evaluations (the "
    "eval set's majority share) and eval_loss 0.546 -> 0.503, the entropy of that prior (0.508): "
    "the model predicts the majority class (underfit), yet succeeded/healthy from the checkpoint "
    "and from the console",
)
@pytest.mark.parametrize(
    "args",
    [
        ("audit", "hf_majority_class_token_task/checkpoint-100", "--no-write"),
        ("logs", "hf_majority_class_token_task/train.log"),
    ],
    ids=["trainer_state", "console"],
)
def test_policy_trainer_eval_accuracy_constant_at_the_majority_share_is_underfit(args):
    rep = cli_report(args[0], str(DATA / args[1]), *args[2:])
    assert rep["verdict"]["outcome"] in ("underfit", "plateaued"), rep["verdict"]["summary"]
