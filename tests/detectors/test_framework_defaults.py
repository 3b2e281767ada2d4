"""Zero-configuration role mapping and verdicts on what the frameworks write by default (issue 14, item 3).

Inputs are made by the real libraries (tests/detectors/framework_runs.py, each framework in a
child process): Hugging Face Trainer reporting to MLflow (a real ``mlflow server``, the
session fixture), TensorBoard and W&B (offline) at once; PyTorch Lightning with
TensorBoardLogger and CSVLogger; Keras ``fit`` with CSVLogger and its History; a plain
PyTorch loop with the torch.utils.tensorboard tutorial's tag names. Each run is read by the
project's own readers (``mlaudit_core.formats.load_path`` and the MLflow loader), audited with
default settings, and the roles and the verdict are asserted.

Frameworks that cannot run here are covered by the names their real artifacts carry (copied
from the labelled real runs in ../shared/realworld and tests/data/realworld, names only):
Ultralytics YOLOv5/v8, detectron2, Keras' TensorBoard callback (it needs TensorFlow, which is
not installed), nanoGPT.
"""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path

import numpy as np
import pytest

from mlaudit_core.audit import audit
from mlaudit_core.roles import AliasTable, Role, as_fraction
from mlaudit_core.rundata import MetricTable, RunData, RunIdentity

sys.path.insert(0, str(Path(__file__).parent))
import framework_runs  # noqa: E402

pytest.importorskip("torch")

BAD = ("succeeded", "unknown")


def load(path) -> RunData:
    from mlaudit_core.formats import load_path

    runs = list(load_path(path))
    assert len(runs) == 1, runs
    return runs[0][1]


def roles(run: RunData) -> dict[str, str]:
    return {r.value: run.key_for(r) for r in Role if run.key_for(r)}


def verdict(run: RunData):
    return audit(run).verdict


# --- Hugging Face Trainer -----------------------------------------------------------------------

@pytest.fixture(scope="module")
def hf(tmp_path_factory, mlflow_server):
    pytest.importorskip("transformers")
    out = tmp_path_factory.mktemp("hf")
    return framework_runs._child("hf", out, env={"MLAUDIT_TEST_REPORT_TO": "mlflow,tensorboard,wandb",
                                                 "MLFLOW_TRACKING_URI": mlflow_server["url"]})


def test_hf_mlflow_per_step_loss_wins_over_the_summary_point(hf, mlflow_server):
    """MLflowCallback logs ``loss`` per logging step and one ``train_loss`` point at the end; the
    series plays the training loss, so the diverging run is called diverged (issue 14: it was
    'overfit' on the one summary point)."""
    from integrations.mlaudit_mlflow.loader import load_run

    run = load_run(hf["healthy"]["mlflow_run_id"], mlflow_server["url"])
    assert run.metrics.count("train_loss") == 1 and run.metrics.count("loss") > 10
    r = roles(run)
    assert r["train_loss"] == "loss" and r["val_loss"] == "eval_loss" and r["val_accuracy"] == "eval_accuracy"
    assert r["learning_rate"] == "learning_rate" and r["epoch"] == "epoch"
    assert r.get("throughput") != "eval_samples_per_second"  # evaluation speed is not training throughput
    v = verdict(run)
    assert (v.outcome.value, v.cause.value) == ("succeeded", "healthy"), v.summary

    bad = load_run(hf["diverging"]["mlflow_run_id"], mlflow_server["url"])
    assert roles(bad)["train_loss"] == "loss"
    v = verdict(bad)
    assert v.outcome.value == "diverged" and v.cause.value == "model_convergence", v.summary


def test_hf_tensorboard_names(hf):
    run = load(hf["healthy"]["tensorboard"])
    r = roles(run)
    assert r["train_loss"] == "train/loss" and r["val_loss"] == "eval/loss" and r["val_accuracy"] == "eval/accuracy"
    assert r["learning_rate"] == "train/learning_rate" and r["grad_norm"] == "train/grad_norm"
    v = verdict(run)
    assert (v.outcome.value, v.cause.value) == ("succeeded", "healthy"), v.summary
    v = verdict(load(hf["diverging"]["tensorboard"]))
    assert v.outcome.value == "diverged" and v.cause.value == "model_convergence", v.summary


def test_hf_wandb_offline_names(hf):
    run = load(hf["healthy"]["wandb"])
    r = roles(run)
    assert r["train_loss"] == "train/loss" and r["val_loss"] == "eval/loss"
    v = verdict(run)
    assert (v.outcome.value, v.cause.value) == ("succeeded", "healthy"), v.summary
    v = verdict(load(hf["diverging"]["wandb"]))
    assert v.outcome.value == "diverged", v.summary


def test_hf_trainer_state(hf):
    run = load(hf["diverging"]["trainer_state"])
    assert roles(run)["train_loss"] == "loss"
    assert verdict(run).outcome.value == "diverged"
    assert verdict(load(hf["healthy"]["trainer_state"])).outcome.value == "succeeded"


# --- PyTorch Lightning --------------------------------------------------------------------------

@pytest.fixture(scope="module")
def lightning(tmp_path_factory):
    pytest.importorskip("lightning")
    return framework_runs._child("lightning", tmp_path_factory.mktemp("lightning"))


@pytest.mark.parametrize("logger", ["tensorboard", "csv"])
def test_lightning_step_series_and_epoch_metric(lightning, logger):
    """``self.log(..., on_step=True, on_epoch=True)`` writes ``train_loss_step`` and
    ``train_loss_epoch``; the per-step series plays the training loss, ``epoch`` the epoch."""
    run = load(lightning["healthy"][logger])
    assert {"train_loss_step", "train_loss_epoch", "epoch"} <= set(run.metrics.keys)
    r = roles(run)
    assert r["train_loss"] == "train_loss_step" and r["val_loss"] == "val_loss" and r["val_accuracy"] == "val_acc"
    assert r["epoch"] == "epoch"
    v = verdict(run)
    assert (v.outcome.value, v.cause.value) == ("succeeded", "healthy"), v.summary


@pytest.mark.parametrize("logger", ["tensorboard", "csv"])
def test_lightning_lr50_is_not_overfit(lightning, logger):
    """SGD lr=50 (clipped, so finite): the loss bounces at many times the uniform-guess loss; it is
    neither 'overfit' nor a success (issue 14) but a divergence, read against ln 10 from
    ``hparams.yaml`` (CSV) or the classifier bound when only the event file is read."""
    run = load(lightning["lr50"][logger])
    rep = audit(run)
    assert rep.verdict.outcome.value == "diverged", rep.verdict.summary
    op1 = [f for f in rep.findings if f.code == "OP001"]
    assert op1 and op1[0].facts.get("above_chance") and op1[0].facts["times_chance"] > 2, [f.message for f in op1]


@pytest.fixture(scope="module")
def monkeypatch_module():
    mp = pytest.MonkeyPatch()
    yield mp
    mp.undo()


# --- Keras --------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def keras_runs(tmp_path_factory, monkeypatch_module):
    monkeypatch_module.setenv("KERAS_BACKEND", "torch")  # keras 3 picks TensorFlow otherwise (not installed)
    pytest.importorskip("keras")
    return framework_runs._child("keras", tmp_path_factory.mktemp("keras"), env={"KERAS_BACKEND": "torch"})


def test_keras_csvlogger(keras_runs):
    run = load(keras_runs["healthy"]["csv"])
    r = roles(run)
    assert (r["train_loss"], r["val_loss"], r["train_accuracy"], r["val_accuracy"]) == (
        "loss", "val_loss", "accuracy", "val_accuracy")
    v = verdict(run)
    assert (v.outcome.value, v.cause.value) == ("succeeded", "healthy"), v.summary
    bad = verdict(load(keras_runs["lr10"]["csv"]))
    assert bad.outcome.value == "diverged", bad.summary


def test_keras_history_keys(keras_runs):
    """``model.fit(...).history`` saved as users do: the same four keys as CSVLogger."""
    hist = json.loads(Path(keras_runs["healthy"]["history"]).read_text())
    keys, steps, vals = [], [], []
    for k, v in hist.items():
        keys += [k] * len(v)
        steps += list(range(len(v)))
        vals += v
    run = RunData(RunIdentity("keras", "history"), metrics=MetricTable(keys, steps, vals))
    assert roles(run)["train_loss"] == "loss" and roles(run)["val_accuracy"] == "val_accuracy"
    assert verdict(run).outcome.value == "succeeded"


# --- torch.utils.tensorboard (the tutorial's tag names) ----------------------------------------

@pytest.fixture(scope="module")
def torch_tb(tmp_path_factory):
    return framework_runs._child("torch_tb", tmp_path_factory.mktemp("torch_tb"))


def test_torch_tutorial_tag_names(torch_tb):
    run = load(torch_tb["healthy"]["tensorboard"])
    r = roles(run)
    assert (r["train_loss"], r["val_loss"], r["val_accuracy"]) == ("Loss/train", "Loss/test", "Accuracy/test")
    v = verdict(run)
    assert (v.outcome.value, v.cause.value) == ("succeeded", "healthy"), v.summary
    v = verdict(load(torch_tb["lr50"]["tensorboard"]))
    assert v.outcome.value == "diverged", v.summary


# --- names of frameworks that cannot run here, from their real artifacts ------------------------

#: Metric keys exactly as found in labelled real artifacts (source in the tuple).
REAL_KEYS = {
    "yolov5 results.csv / TensorBoard (realworld csv04, tb05)": (
        ["train/box_loss", "train/obj_loss", "train/cls_loss", "metrics/precision", "metrics/recall",
         "metrics/mAP_0.5", "metrics/mAP_0.5:0.95", "val/box_loss", "val/obj_loss", "val/cls_loss", "x/lr0",
         "x/lr1", "x/lr2"],
        {"train_loss": "train/box_loss", "val_loss": "val/box_loss", "val_accuracy": "metrics/mAP_0.5:0.95",
         "learning_rate": "x/lr0"}),
    "yolov8 MLflow callback (realworld mlf01-03; MLflow drops the parentheses)": (
        ["metrics/mAP50-95B", "metrics/recallB", "metrics/mAP50B", "metrics/precisionB", "lr/pg0", "lr/pg1",
         "lr/pg2", "train/dfl_loss", "train/cls_loss", "train/box_loss", "val/dfl_loss", "val/cls_loss",
         "val/box_loss"],
        {"train_loss": "train/box_loss", "val_loss": "val/box_loss", "val_accuracy": "metrics/mAP50-95B",
         "learning_rate": "lr/pg0"}),
    "yolov8 results.csv (Ultralytics writes the parentheses)": (
        ["epoch", "train/box_loss", "train/cls_loss", "train/dfl_loss", "metrics/precision(B)", "metrics/recall(B)",
         "metrics/mAP50(B)", "metrics/mAP50-95(B)", "val/box_loss", "val/cls_loss", "val/dfl_loss", "lr/pg0"],
        {"train_loss": "train/box_loss", "val_accuracy": "metrics/mAP50-95(B)", "learning_rate": "lr/pg0"}),
    "detectron2 TensorBoard (realworld tb01)": (
        ["total_loss", "loss_cls", "loss_box_reg", "loss_rpn_cls", "loss_rpn_loc", "lr", "data_time", "time",
         "eta_seconds", "fast_rcnn/cls_accuracy", "bbox/AP", "bbox/AP50", "bbox/AP75", "bbox/APs"],
        {"train_loss": "total_loss", "val_accuracy": "bbox/AP", "learning_rate": "lr", "data_time": "data_time"}),
    "Keras TensorBoard callback train/ and validation/ (realworld tb07)": (
        ["train/epoch_loss", "train/epoch_accuracy", "validation/epoch_loss", "validation/epoch_accuracy",
         "validation/evaluation_loss_vs_iterations"],
        {"train_loss": "train/epoch_loss", "val_loss": "validation/epoch_loss",
         "train_accuracy": "train/epoch_accuracy", "val_accuracy": "validation/epoch_accuracy"}),
    "nanoGPT console (train loss / val loss / lr)": (
        ["train loss", "val loss", "lr", "mfu", "time"],
        {"train_loss": "train loss", "val_loss": "val loss", "learning_rate": "lr"}),
    "cross-entropy / nll / perplexity names": (
        ["train/cross_entropy", "val/cross_entropy", "eval_perplexity"],
        {"train_loss": "train/cross_entropy", "val_loss": "val/cross_entropy"}),
    "nll and perplexity only": (
        ["train_nll", "val_nll", "perplexity"],
        {"train_loss": "train_nll", "val_loss": "val_nll"}),
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
        assert got[role] is None or not any(w in got[role].lower() for w in ("val", "eval", "test")), got


def test_summary_point_loses_to_series_and_zero_component_loses_to_a_moving_one():
    """HF ``train_loss`` (1 point) vs ``loss`` (series); YOLOv8 ``train/box_loss`` exactly 0
    without boxes (realworld mlf01) vs a moving ``train/cls_loss``."""
    keys = ["train_loss"] + ["loss"] * 20 + ["train/box_loss"] * 5 + ["train/cls_loss"] * 5
    run = RunData(RunIdentity("t", "x"), metrics=MetricTable(
        keys, [100] + list(range(20)) + list(range(5)) * 2, [0.3] + list(np.linspace(2, 1, 20)) + [0.0] * 5
        + [3.0, 2.0, 1.0, 0.5, 0.2]))
    assert run.key_for(Role.TRAIN_LOSS) == "loss"
    only_yolo = RunData(RunIdentity("t", "y"), metrics=MetricTable(
        ["train/box_loss"] * 5 + ["train/cls_loss"] * 5, list(range(5)) * 2, [0.0] * 5 + [3.0, 2.0, 1.0, 0.5, 0.2]))
    assert only_yolo.key_for(Role.TRAIN_LOSS) == "train/cls_loss"


@pytest.mark.parametrize("key,values,percent", [
    ("val_accuracy", [61.2, 70.5, 77.08], True),   # printed in percent (issue 14: 77.08 is not "perfect")
    ("bbox/AP", [23.9, 75.8], True),              # detectron2 writes AP in percent
    ("val_accuracy", [0.61, 0.77], False),
    ("val_loss", [61.2, 70.5], False),             # not accuracy-like: left alone
])
def test_accuracy_in_percent(key, values, percent):
    got, was = as_fraction(key, values)
    assert was is percent
    assert got.max() <= 1.0 or not percent
    if percent:
        assert got[-1] == pytest.approx(values[-1] / 100)
    assert math.isfinite(float(got.sum()))
