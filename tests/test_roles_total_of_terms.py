"""Roles (roles.py ``total_of_terms``, ``_split_alone_is_loss``): the objective of a run that names no
loss.

Real input from the own corpus (tests/data/realworld, batch f17b2, scored at session 14's first run):
f17b2-09 prints ``total=3355.6111 pose=3355.3748 gaze=0.2364`` per batch and ``[Val] Epoch 1:
total=...`` per epoch (total = pose + gaze); f17b2-15 prints ``total=2.192192 det=1.932989
kd=0.518404`` (total = det + 0.5 * kd); f17b2-11 prints ``Ép 1 | train 2.8312 | val 2.1483 | Acc
0.8693 | ... | F1 0.2067`` (the losses named by their split alone). All three were read with no
training loss ("no learning detector could run").
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from mlaudit_core.formats import load_path
from mlaudit_core.roles import Role, roles_of, total_of_terms
from mlaudit_core.rundata import MetricTable

REAL = Path(__file__).resolve().parent / "data" / "realworld"
LABELS = json.loads((REAL / "labels.json").read_text())


def _run(prefix: str):
    (path,) = [REAL / x["path"] for x in LABELS if x["id"].startswith(prefix)]
    ((_, run),) = load_path(path).runs
    return run


def test_total_of_pose_and_gaze_terms_is_the_training_and_held_out_loss():
    run = _run("f17b2-09-")
    assert run.key_for(Role.TRAIN_LOSS) == "train/total"
    assert run.key_for(Role.VAL_LOSS) == "val/total"
    assert len(run.series(Role.VAL_LOSS).finite()) >= 25  # one ``[Val] Epoch N`` record per epoch


def test_weighted_total_of_detection_and_distillation_terms_is_the_training_loss():
    run = _run("f17b2-15-")
    assert run.key_for(Role.TRAIN_LOSS) == "train/total"
    assert len(run.series(Role.TRAIN_LOSS).finite()) == 64


def test_a_total_that_is_not_the_sum_of_its_siblings_plays_no_role():
    steps = np.arange(10)
    rng = np.random.default_rng(0)
    cols = {"train/total": rng.uniform(1, 2, 10), "train/a": rng.uniform(0, 1, 10)}
    cols["train/b"] = rng.uniform(0, 1, 10)
    names = list(cols)
    codes = np.repeat(np.arange(3), 10)
    table = MetricTable(
        codes, np.tile(steps, 3), np.concatenate(list(cols.values())), None, names=names
    )
    assert total_of_terms(table) == {}


def test_figures_named_by_their_split_alone_are_the_losses_beside_a_named_accuracy():
    run = _run("f17b2-11-")
    assert run.key_for(Role.TRAIN_LOSS) == "train/train"
    assert run.key_for(Role.VAL_LOSS) == "train/val"
    assert len(run.series(Role.VAL_LOSS).finite()) == 20
    # without a named accuracy or score, a figure named by its split alone says nothing
    assert roles_of(["train", "val"]) == {"train": (), "val": ()}
