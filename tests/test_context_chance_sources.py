"""detectors._context.chance: the chance level from a metric named after LightGBM's binary objective
(``binary_logloss``: K = 2), and from the final validation accuracy and validation loss agreeing on
one K when the training loss does not (:func:`_inferred`).

Real input: LightGBM 4.7.0 ``train`` at learning_rate 1e-4 with ``log_evaluation(10)`` captured
``> train.log 2>&1`` (tests/data/newuser9, valid binary_logloss 0.6924 -> 0.6808: still at ln 2, so
V19e calls it underfit; it was judged succeeded/healthy), and the same loader on shuffled labels
(tests/data/default_runs), whose verdict (the labels, data_config) must not move.
"""

from __future__ import annotations

import math
from pathlib import Path

from mlaudit_core import audit
from mlaudit_core.detectors._context import chance
from mlaudit_core.formats import load_path
from mlaudit_core.rundata import MetricTable, RunData, RunIdentity

DATA = Path(__file__).resolve().parent / "data"


def _run(rel: str) -> RunData:
    ((_, run),) = load_path(DATA / rel).runs
    return run


def test_chance_of_a_lightgbm_binary_logloss_is_one_half():
    run = _run("newuser9/lightgbm_lr_1e-4.log")
    ch = chance(run, vocab=False)
    assert ch is not None and ch.classes == 2 and ch.source == "val/binary_logloss"


def test_lightgbm_still_at_ln_2_after_200_rounds_is_underfit():
    v = audit(_run("newuser9/lightgbm_lr_1e-4.log")).verdict
    assert (v.outcome.value, v.rule) == ("underfit", "V19e"), v.summary


def test_lightgbm_on_shuffled_labels_stays_a_label_problem():
    v = audit(_run("default_runs/lightgbm_shuffled_labels.log")).verdict
    assert v.cause.value == "data_config", v.summary


def _table(series: dict[str, list[float]]) -> RunData:
    keys, steps, vals = [], [], []
    for k, v in series.items():
        keys += [k] * len(v)
        steps += list(range(len(v)))
        vals += v
    return RunData(
        identity=RunIdentity(tracker="test", id="r"), metrics=MetricTable(keys, steps, vals)
    )


def test_chance_from_validation_accuracy_and_validation_loss_agreeing():
    """4 classes: the held-out accuracy at 0.26 and the held-out loss at 1.40 (ln 4 = 1.386) agree on
    K = 4 while the training loss (1.9, noisy) does not."""
    run = _table(
        {
            "train_loss": [1.9, 1.8, 1.95, 1.9, 1.85, 1.9],
            "val_loss": [1.45, 1.42, 1.41, 1.40, 1.40, 1.40],
            "val_acc": [0.24, 0.25, 0.26, 0.26, 0.26, 0.26],
        }
    )
    ch = chance(run, vocab=False)
    assert ch is not None and ch.classes == 4 and math.isclose(ch.loss, math.log(4))


def test_no_chance_when_neither_loss_agrees_with_the_accuracy():
    run = _table(
        {
            "train_loss": [1.9, 1.8, 1.7, 1.6, 1.5, 1.4],
            "val_loss": [0.9, 0.8, 0.7, 0.6, 0.5, 0.5],
            "val_acc": [0.24, 0.25, 0.26, 0.26, 0.26, 0.26],
        }
    )
    assert chance(run, vocab=False) is None


def test_chance_from_training_accuracy_and_training_loss_with_no_heldout_number():
    """Own corpus f22b2-12 (a DeepSleepNet console, 5 sleep stages, no validation line read): training
    loss 1.609 (ln 5) and training accuracy 0.198 (1/5) in every epoch agree on K = 5, and the run that
    learned nothing is underfit at the uniform guess (V19e; was succeeded/healthy)."""
    run = _run("realworld/runs/hongnguyen1306--Deepsleepnet_check/output/train.log")
    ch = chance(run, vocab=False)
    assert ch is not None and ch.classes == 5, ch
    v = audit(run).verdict
    assert (v.outcome.value, v.rule) == ("underfit", "V19e"), v.summary


def test_a_ranking_metric_in_the_accuracy_role_does_not_hide_k_from_the_first_losses():
    """Own corpus f22b1-05 (an HF Trainer console of an LLM-based link predictor): train loss 0.6964 ->
    0.6886 and eval_loss 0.696-0.697, both at ln 2 from the start, eval MRR 0.003 -> 0.019 in the
    accuracy role. MRR has no 1/K chance level, so the two first losses name K = 2 and the run is
    underfit at the uniform guess (V19e; was succeeded/healthy)."""
    run = _run("realworld/runs/AdamHermes--MKGL-master/train_log.txt")
    v = audit(run).verdict
    assert (v.outcome.value, v.rule) == ("underfit", "V19e"), v.summary


def test_no_chance_from_a_training_accuracy_when_a_heldout_loss_is_logged():
    """The training pair is read only when no held-out number is logged: a held-out loss that does
    not agree (the model learned) leaves K unknown."""
    run = _table(
        {
            "train/loss": [1.62, 1.61, 1.609, 1.609, 1.609],
            "train/accuracy": [0.2, 0.2, 0.2, 0.2, 0.2],
            "val/loss": [1.2, 0.9, 0.7, 0.6, 0.5],
        }
    )
    assert chance(run, vocab=False) is None
