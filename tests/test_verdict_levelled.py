"""``verdict.levelled`` and ``policy._levelled_unended`` on real runs of the own corpus: a training loss
that is the run's only learning signal, in a record that shows no end, whose second half held within
noise of its midpoint level is plateaued/inconclusive, not succeeded (each of the first three fails
without the rule: they were succeeded/healthy from the no-plan branch of V21; then the rule's limits:
a loss still falling at pace, a training accuracy beside the loss); and ``levelled.unmoved_accuracy``
/ ``policy._unmoved_heldout``: a held-out accuracy that repeated a value at consecutive evaluations
and never rose beyond noise, beside a training loss that fell less than a fifth, is underfit (both
were succeeded/healthy), not read on distinct values or a handful of held-out examples."""

from __future__ import annotations

from pathlib import Path

from realworld_helpers import last_run

from mlaudit_core.audit import audit
from mlaudit_core.roles import Role
from mlaudit_core.verdict.levelled import levelled_off, unmoved_accuracy

REPO = Path(__file__).resolve().parents[1]
RUNS = REPO / "tests" / "data" / "realworld" / "runs"


def _verdict(rel: str):
    return audit(last_run(RUNS / rel)).verdict


def test_levelled_unended_rl_loss_flat_in_its_second_half_is_plateaued():
    # f19b2-19: a DQN grasping agent's console, loss 17.7 -> 11.8 by step 800 then flat to 1397, no
    # reward, no plan, no end line
    v = _verdict("SDU-zgl--robot_grasp_drl/logs/train_log.txt")
    assert (v.outcome.value, v.cause.value) == ("plateaued", "inconclusive"), v.summary
    assert "only learning signal" in v.summary


def test_levelled_unended_detector_loss_flat_from_epoch_20_of_60_is_plateaued():
    # f21b1-12: a BEV detector's last launch, loss 2.11 -> 1.16 by epoch 20, then 1.10-1.15 to 1.03 at
    # epoch 59; no evaluation, no planned epoch count
    v = _verdict("fadedfakers--W_BEVnewdataset/work_dirs/train.log")
    assert (v.outcome.value, v.cause.value) == ("plateaued", "inconclusive"), v.summary


def test_levelled_off_reads_a_tail_window_of_seven_flat_epochs():
    # f13b2-04: Lightning metrics.csv holding only epochs 93-99 of a DeepAR loss, 3.87-3.94
    run = last_run(
        RUNS / "PhatLeBao-Phat--Allocate-UK-Metropolitan-Crime/lightning_logs/version_3/metrics.csv"
    )
    tk = run.key_for(Role.TRAIN_LOSS)
    assert tk is not None
    lev = levelled_off(run, tk)
    assert lev is not None and lev.points == 7 and abs(lev.final - lev.mid_level) <= lev.band
    v = audit(run).verdict
    assert (v.outcome.value, v.cause.value) == ("plateaued", "inconclusive"), v.summary


def test_levelled_unended_not_read_on_a_loss_still_falling_at_pace():
    # f16b1-10: an LM console with no end, quarter medians 5.91/5.67/5.53/5.43: still learning
    v = _verdict("269652--neuroslm/training.log")
    assert (v.outcome.value, v.cause.value) == ("succeeded", "healthy"), v.summary


def test_levelled_unended_not_read_beside_a_training_accuracy():
    # f21b2-08: a TF1 text CNN whose loss is flat in its second half while its training accuracy is
    # logged beside it: the loss is not the run's only learning signal
    v = _verdict("yinminggang--CnnTopic/logs/train_log.log")
    assert v.outcome.value == "succeeded", v.summary


def test_unmoved_accuracy_majority_class_bert_is_underfit():
    # f19b2-09: W&B run of an HF BERT 3-class fine-tune, eval accuracy 0.650, 0.650, 0.668, 0.668
    # (the macro F1 of a one-class predictor), training loss 0.99 -> 0.86
    run = last_run(RUNS / "nameistzzhang--2024Autumn-NLP-Assignment2/wandb/latest-run")
    u = unmoved_accuracy(run)
    assert u is not None and abs(u.repeated - 0.65) < 1e-9
    v = audit(run).verdict
    assert (v.outcome.value, v.cause.value) == ("underfit", "model_convergence"), v.summary
    assert "did not change" in v.summary


def test_unmoved_accuracy_binary_classifier_at_its_majority_share_is_underfit():
    # f6b1-11: Lightning CSV, val_acc 0.555, 0.555, 0.560, 0.560, 0.555, train_loss 0.860 -> 0.816
    v = _verdict("Kiran261101--dental-xray-ai/lightning_logs/version_2/metrics.csv")
    assert (v.outcome.value, v.cause.value) == ("underfit", "model_convergence"), v.summary


def test_unmoved_accuracy_not_read_on_distinct_values_or_a_handful_of_examples():
    # f6b2-19: val_accuracy 0.858, 0.859, 0.863, 0.861, never the same value twice: a classifier that
    # learned in its first epoch; f8b1-21: a 16-image validation set, on which 0.75 repeats by counting
    assert (
        unmoved_accuracy(last_run(RUNS / "Baucki1--NNjetTagger/lightning_logs/version_2")) is None
    )
    assert (
        unmoved_accuracy(
            last_run(RUNS / "AreejAzhar31--pneumonia-detection-AI/logs/training_log.csv")
        )
        is None
    )


def test_still_descending_classifier_val_loss_falling_at_every_epoch_is_underfit():
    # f6b1-10: a EuroSAT classifier's Lightning CSV with only val_loss, 2.274 -> 1.877 in 10 epochs,
    # falling at every one (was succeeded/healthy from V21's no-plan branch)
    v = _verdict("JulioContrerasH--eurosat_github/lightning_logs/version_0/metrics.csv")
    assert (v.outcome.value, v.cause.value) == ("underfit", "model_convergence"), v.summary
    assert v.rule == "V20g"


def test_still_descending_forecaster_val_loss_fastest_at_the_end_is_underfit():
    # f24b2-04: a TFT forecaster, 20 epochs of one step each, val_loss 0.0533 -> 0.0490 falling fastest
    # at the end (was succeeded/healthy)
    v = _verdict("VrityaCodeRishi--cloud-forecast/lightning_logs/version_4/metrics.csv")
    assert (v.outcome.value, v.cause.value) == ("underfit", "model_convergence"), v.summary


def test_still_descending_not_read_on_a_loss_past_its_initial_descent():
    # f15b1-01: an LSTM's training loss 1.02 -> 0.014, still falling at epoch 2000, learned (healthy)
    from mlaudit_core.verdict.levelled import still_descending

    run = last_run(RUNS / "Bishwash-007--quests/lightning_logs/version_0/metrics.csv")
    assert still_descending(run) is None
    assert audit(run).verdict.outcome.value == "succeeded"
