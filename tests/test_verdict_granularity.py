"""``verdict.granularity.heldout_size`` and V12's ``_tiny_heldout``: a held-out metric that takes only
multiples of 1/n was counted on n examples; with n a handful, a rising held-out loss is counting
noise, not an overfit. Real input from the own corpus (tests/data/realworld, labelled before any
mlaudit run).

- f18b1-04: Ultralytics results.csv, a YOLOv8n fine-tune, 100 of 100 epochs; its recall is 1/3, 2/3
  or 1 at 84 of 100 epochs (three validation boxes), its val box loss swings 0.78-3.09 (was
  overfit/model_convergence "val/box_loss rose from its best 0.7811 at step 25"; labelled
  succeeded or unknown with metric_policy);
- f8b1-21: a Keras CSVLogger whose val_accuracy is a multiple of 1/16 (16 X-ray images);
- ts12: an HF trainer_state whose per-entity-class recall ``eval_T048_recall`` takes 3 values (a rare
  class), not the set's size; csv17: YOLOv8 mAP at 0 for most epochs (0 is on every grid).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from mlaudit_core.audit import audit
from mlaudit_core.formats import load_path
from mlaudit_core.report import Cause, Outcome
from mlaudit_core.verdict.granularity import HeldoutSize, _grid, heldout_size

RUNS = Path(__file__).parent / "data" / "realworld" / "runs"


def _run(path: Path):
    return list(load_path(path).runs)[-1][1]


def test_three_validation_boxes_are_read_from_the_recall():
    run = _run(RUNS / "20222641-bit--BTL_AI" / "runs" / "detect" / "train" / "results.csv")
    got = heldout_size(run)
    assert got is not None and got.n == 3 and "recall" in got.key


def test_held_out_rise_on_three_boxes_is_no_overfit():
    run = _run(RUNS / "20222641-bit--BTL_AI" / "runs" / "detect" / "train" / "results.csv")
    v = audit(run).verdict
    assert (v.outcome, v.cause) == (Outcome.SUCCEEDED, Cause.METRIC_POLICY), v.summary
    assert "multiples of 1/3" in v.summary


def test_sixteen_image_validation_accuracy():
    run = _run(RUNS / "AreejAzhar31--pneumonia-detection-AI" / "logs" / "training_log.csv")
    got = heldout_size(run)
    assert got is not None and got.n == 16 and got.key == "val_accuracy"


def test_per_class_recall_and_a_metric_at_zero_give_no_size():
    assert (
        heldout_size(_run(RUNS / "Nicolassalvan--mti881-projet2/ResultsEtape3/trainer_state.json"))
        is None
    )
    csv17 = (
        RUNS / "Ahmet-Sevli--yolov8-target-detection-with-balloons" / "runs" / "detect" / "train2"
    )
    assert heldout_size(_run(csv17)) is None


def test_values_printed_with_two_decimals_are_no_grid_beyond_twenty():
    """0.01-resolution values are on the 1/25 grid only by rounding: not read as 25 examples."""
    v = np.array([0.72, 0.76, 0.8, 0.84, 0.88, 0.92, 0.76, 0.8])
    assert _grid(v) is None
    assert _grid(np.array([0.25, 0.5, 0.75, 0.5, 0.25, 0.75, 0.5, 0.5])) == 4


def test_a_fall_beyond_counting_noise_is_not_noise():
    """On 25 examples a fall from 0.9 to 0.6 is 7 examples, beyond 2 binomial standard errors (0.12):
    V12 keeps its overfit reading; 0.9 to 0.84 (1.5 examples) is within them."""
    assert not HeldoutSize("val_accuracy", 25, 6, best=0.9, last=0.6).loss_within_noise
    assert HeldoutSize("val_accuracy", 25, 6, best=0.9, last=0.84).loss_within_noise
    three = _run(RUNS / "20222641-bit--BTL_AI" / "runs" / "detect" / "train" / "results.csv")
    got = heldout_size(three)
    assert got is not None and got.loss_within_noise  # recall 1.0 -> 2/3: one box of three
