"""Role resolution on the names real artifacts carry, and the rules on top of the patterns (fast, no framework).

Names come from labelled real artifacts (../shared/realworld, tests/data/realworld; names only)
for frameworks that cannot run here: Ultralytics YOLOv5/v8, detectron2, Keras' TensorBoard
callback (needs TensorFlow), nanoGPT. The frameworks that can run here are exercised end to end
in test_framework_defaults.py.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from mlaudit_core.roles import AliasTable, Role, as_fraction
from mlaudit_core.rundata import MetricTable, RunData, RunIdentity

# --- names of frameworks that cannot run here, from their real artifacts ------------------------

#: Metric keys exactly as found in labelled real artifacts (source in the tuple).
REAL_KEYS = {
    "yolov5 results.csv / TensorBoard (realworld csv04, tb05)": (
        [
            "train/box_loss",
            "train/obj_loss",
            "train/cls_loss",
            "metrics/precision",
            "metrics/recall",
            "metrics/mAP_0.5",
            "metrics/mAP_0.5:0.95",
            "val/box_loss",
            "val/obj_loss",
            "val/cls_loss",
            "x/lr0",
            "x/lr1",
            "x/lr2",
        ],
        {
            "train_loss": "train/box_loss",
            "val_loss": "val/box_loss",
            "val_accuracy": "metrics/mAP_0.5:0.95",
            "learning_rate": "x/lr0",
        },
    ),
    "yolov8 MLflow callback (realworld mlf01-03; MLflow drops the parentheses)": (
        [
            "metrics/mAP50-95B",
            "metrics/recallB",
            "metrics/mAP50B",
            "metrics/precisionB",
            "lr/pg0",
            "lr/pg1",
            "lr/pg2",
            "train/dfl_loss",
            "train/cls_loss",
            "train/box_loss",
            "val/dfl_loss",
            "val/cls_loss",
            "val/box_loss",
        ],
        {
            "train_loss": "train/box_loss",
            "val_loss": "val/box_loss",
            "val_accuracy": "metrics/mAP50-95B",
            "learning_rate": "lr/pg0",
        },
    ),
    "yolov8 results.csv (Ultralytics writes the parentheses)": (
        [
            "epoch",
            "train/box_loss",
            "train/cls_loss",
            "train/dfl_loss",
            "metrics/precision(B)",
            "metrics/recall(B)",
            "metrics/mAP50(B)",
            "metrics/mAP50-95(B)",
            "val/box_loss",
            "val/cls_loss",
            "val/dfl_loss",
            "lr/pg0",
        ],
        {
            "train_loss": "train/box_loss",
            "val_accuracy": "metrics/mAP50-95(B)",
            "learning_rate": "lr/pg0",
        },
    ),
    "detectron2 TensorBoard (realworld tb01)": (
        [
            "total_loss",
            "loss_cls",
            "loss_box_reg",
            "loss_rpn_cls",
            "loss_rpn_loc",
            "lr",
            "data_time",
            "time",
            "eta_seconds",
            "fast_rcnn/cls_accuracy",
            "bbox/AP",
            "bbox/AP50",
            "bbox/AP75",
            "bbox/APs",
        ],
        {
            "train_loss": "total_loss",
            "val_accuracy": "bbox/AP",
            "learning_rate": "lr",
            "data_time": "data_time",
        },
    ),
    "Keras TensorBoard callback train/ and validation/ (realworld tb07)": (
        [
            "train/epoch_loss",
            "train/epoch_accuracy",
            "validation/epoch_loss",
            "validation/epoch_accuracy",
            "validation/evaluation_loss_vs_iterations",
        ],
        {
            "train_loss": "train/epoch_loss",
            "val_loss": "validation/epoch_loss",
            "train_accuracy": "train/epoch_accuracy",
            "val_accuracy": "validation/epoch_accuracy",
        },
    ),
    "nanoGPT console (train loss / val loss / lr)": (
        ["train loss", "val loss", "lr", "mfu", "time"],
        {"train_loss": "train loss", "val_loss": "val loss", "learning_rate": "lr"},
    ),
    "cross-entropy / nll / perplexity names": (
        ["train/cross_entropy", "val/cross_entropy", "eval_perplexity"],
        {"train_loss": "train/cross_entropy", "val_loss": "val/cross_entropy"},
    ),
    "Lightning regressor with suffix names (own tb14)": (
        ["Loss", "Loss_val", "MAE", "MAE_val", "RMSE", "RMSE_val", "RegLoss", "RegLoss_val"],
        {"train_loss": "Loss", "val_loss": "Loss_val"},
    ),
    "nll and perplexity only": (
        ["train_nll", "val_nll", "perplexity"],
        {"train_loss": "train_nll", "val_loss": "val_nll"},
    ),
}


@pytest.mark.parametrize("source", list(REAL_KEYS))
def test_roles_of_real_artifact_names(source):
    keys, want = REAL_KEYS[source]
    table = AliasTable()
    counts = dict.fromkeys(keys, 50)
    got = {r.value: table.resolve(r, keys, counts) for r in Role}
    for role, key in want.items():
        assert got[role] == key, (source, role, got)
    # an evaluation key never plays a training role
    for role in ("train_loss", "train_accuracy", "throughput", "step_time", "learning_rate"):
        assert got[role] is None or not any(
            w in got[role].lower() for w in ("val", "eval", "test")
        ), got


def test_summary_point_loses_to_series_and_zero_component_loses_to_a_moving_one():
    """HF ``train_loss`` (1 point) vs ``loss`` (series); YOLOv8 ``train/box_loss`` exactly 0
    without boxes (realworld mlf01) vs a moving ``train/cls_loss``."""
    keys = ["train_loss"] + ["loss"] * 20 + ["train/box_loss"] * 5 + ["train/cls_loss"] * 5
    run = RunData(
        RunIdentity("t", "x"),
        metrics=MetricTable(
            keys,
            [100] + list(range(20)) + list(range(5)) * 2,
            [0.3] + list(np.linspace(2, 1, 20)) + [0.0] * 5 + [3.0, 2.0, 1.0, 0.5, 0.2],
        ),
    )
    assert run.key_for(Role.TRAIN_LOSS) == "loss"
    only_yolo = RunData(
        RunIdentity("t", "y"),
        metrics=MetricTable(
            ["train/box_loss"] * 5 + ["train/cls_loss"] * 5,
            list(range(5)) * 2,
            [0.0] * 5 + [3.0, 2.0, 1.0, 0.5, 0.2],
        ),
    )
    assert only_yolo.key_for(Role.TRAIN_LOSS) == "train/cls_loss"


@pytest.mark.parametrize(
    "key,values,percent",
    [
        (
            "val_accuracy",
            [61.2, 70.5, 77.08],
            True,
        ),  # printed in percent (issue 14: 77.08 is not "perfect")
        ("bbox/AP", [23.9, 75.8], True),  # detectron2 writes AP in percent
        ("val_accuracy", [0.61, 0.77], False),
        ("val_loss", [61.2, 70.5], False),  # not accuracy-like: left alone
    ],
)
def test_accuracy_in_percent(key, values, percent):
    got, was = as_fraction(key, values)
    assert was is percent
    assert got.max() <= 1.0 or not percent
    if percent:
        assert got[-1] == pytest.approx(values[-1] / 100)
    assert math.isfinite(float(got.sum()))


def test_metric_table_from_grouped_equals_the_constructor():
    """``MetricTable.from_grouped`` (used by the format readers to skip a sort) gives the same table."""
    names, counts = ["val_loss", "loss"], [2, 3]
    steps, values = [10, 20, 1, 2, 3], [0.9, 0.8, 2.0, 1.5, 1.2]
    a = MetricTable.from_grouped(names, counts, steps, values)
    b = MetricTable(["val_loss"] * 2 + ["loss"] * 3, steps, values)
    assert sorted(a.keys) == sorted(b.keys) and len(a) == len(b)
    for k in names:
        assert a.count(k) == b.count(k)
        assert np.array_equal(a.series(k).steps, b.series(k).steps)
        assert np.array_equal(a.series(k).values, b.series(k).values)
    with pytest.raises(ValueError):
        MetricTable.from_grouped(names, [2, 2], steps, values)


@pytest.mark.parametrize(
    "params,classes",
    [
        # every HF config carries a default 2-entry id2label: a T5 fine-tune is not a binary classifier
        (
            {
                "model_config.id2label": "{'0': 'LABEL_0', '1': 'LABEL_1'}",
                "model_config.architectures": "['T5ForConditionalGeneration']",
                "model_config.vocab_size": "32128",
            },
            32128,
        ),
        (
            {
                "model_config.id2label": "{'0': 'LABEL_0', '1': 'LABEL_1', '2': 'LABEL_2', '3': 'LABEL_3'}",
                "model_config.architectures": "['RobertaForSequenceClassification']",
                "model_config.vocab_size": "50265",
            },
            4,
        ),
        ({"id2label": '{"0": "negative", "1": "positive"}'}, 2),
        ({"id2label": "{0: 'LABEL_0', 1: 'LABEL_1'}"}, None),
        ({"num_classes": "10"}, 10),
    ],
)
def test_chance_level_from_params(params, classes):
    from mlaudit_core.detectors._context import chance

    got = chance(RunData(RunIdentity("t", "x"), params=params))
    assert (got.classes if got else None) == classes
    if got:
        assert got.loss == pytest.approx(math.log(classes))


def test_chance_level_from_loss_and_accuracy_agreeing():
    """No class count anywhere, but a final loss of ln 4 with accuracy 0.24 (realworld tb02)."""
    from mlaudit_core.detectors._context import chance

    run = RunData(
        RunIdentity("t", "x"),
        metrics=MetricTable(
            ["train/loss"] * 12 + ["eval/accuracy"] * 12,
            list(range(12)) * 2,
            [
                1.3975,
                1.394,
                1.3958,
                1.3931,
                1.3957,
                1.3961,
                1.3953,
                1.3952,
                1.3905,
                1.3968,
                1.3957,
                1.3945,
            ]
            + [0.2409] * 12,
        ),
    )
    got = chance(run)
    assert got is not None and got.classes == 4 and got.source == "loss and accuracy agree"
