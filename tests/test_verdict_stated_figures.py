"""verdict.stated_figures and rules V18f-V18i (verdict.policy): figures a report states in its sentences,
read with their provenance, on real reports with no log. b21-02 (DeepDPM: acc 0.793 with the default
command, 0.2952 after changing the batch size), b21-03 (DeepSpeech: loss about 88 before the restore, 112
at epoch 58; WER 0.57 at epoch 20, 0.72 at epoch 49), b6-10 (IndicTrans: BLEU 37.1 after 3 epochs, 36.2
after 6 more), b21-05 (Torch-KWT: training accuracy 91% below validation/test 99%, SpecAugment in training
only), b21-06 (MixMatch: 85 hours on a K80, the maintainer's 20 hours on a V100). Each was
unknown/inconclusive ('no metric was logged at all') before its rule."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mlaudit.cli import app
from mlaudit_core.verdict.stated_figures import (
    stated_config_change,
    stated_course,
    stated_expected_duration,
    stated_train_below_heldout,
)

REPORTS = Path(__file__).resolve().parent / "data" / "reports"


def _verdict(case: Path) -> dict:
    logs = sorted(str(p) for p in case.glob("*.log"))
    args = ["logs", *logs, "--config", str(case / "context.txt"), "--format", "json"]
    return json.loads(CliRunner().invoke(app, args).stdout)["verdict"]


@pytest.mark.parametrize(
    ("prefix", "rule", "outcome", "cause"),
    [
        ("b21-02-", "V18f", "regressed", "data_config"),
        ("b21-03-", "V18g", "diverged", "model_convergence"),
        ("b6-10-", "V18g", "regressed", "model_convergence"),
        ("b21-05-", "V18h", "unknown", "healthy"),
        ("b21-06-", "V18i", "unknown", "healthy"),
    ],
)
def test_figures_stated_in_a_reports_sentences_are_judged_with_their_provenance(
    prefix, rule, outcome, cause
):
    (case,) = REPORTS.glob(prefix + "*")
    v = _verdict(case)
    assert (v["rule"], v["outcome"], v["cause"]) == (rule, outcome, cause), v


def test_a_config_change_is_read_between_a_default_run_and_a_changed_setting_only():
    got = stated_config_change(
        ["The result of default command : acc: 0.793", "After changing the batch size: acc: 0.2952"]
    )
    assert got is not None and got.worse and (got.before.value, got.after.value) == (0.793, 0.2952)
    assert not stated_config_change(
        ["With the default config, acc: 0.793.", "After changing the batch size, acc: 0.790."]
    ).worse  # within 1% of the default's figure: a rerun's noise
    assert stated_config_change(["default: acc 0.793", "after changing the seed: acc 0.70"]) is None


def test_a_course_is_ordered_by_the_stated_epochs_or_words_of_time():
    got = stated_course(
        ["In addition the WER 0.72 at epoch 49 is far worse than that 0.57 at epoch 20."]
    )
    assert got is not None and got.worse and (got.before.value, got.after.value) == (0.57, 0.72)
    got = stated_course(["The loss was 9.2 when the training began.", "But now it is loss 3.17."])
    assert got is not None and not got.worse
    assert stated_course(["loss 2.1 and accuracy 0.5"]) is None


def test_training_below_held_out_unless_the_held_out_data_is_in_training():
    assert stated_train_below_heldout(["The accuracy of training set is lower than testing set"])
    assert stated_train_below_heldout(["val accuracy is higher than train accuracy"])
    assert stated_train_below_heldout(["train accuracy is higher than val accuracy"]) is None
    leak = [
        "val accuracy is higher than train accuracy",
        "the test images overlap the training set",
    ]
    assert stated_train_below_heldout(leak) is None


def test_a_duration_is_accounted_for_only_by_a_reference_duration_and_without_a_failure():
    said = ["1024 epochs, each taking about 5 minutes, a total of 85 hours."]
    ref = [("maintainer NAME", "It takes roughly 20 hours for full training on a V100.")]
    assert stated_expected_duration(said, ref) is not None
    assert stated_expected_duration(said, [("maintainer NAME", "How long does it take?")]) is None
    assert stated_expected_duration(said + ["Then the loss is nan."], ref) is None
