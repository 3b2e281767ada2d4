"""Ultralytics YOLOv5/v8/11 ``runs/train/exp*/results.csv`` (+ ``opt.yaml``/``args.yaml``/``hyp.yaml``).

Detected by a ``results.csv`` whose (space-padded) header has ``train/box_loss`` or
``metrics/mAP*`` columns, or a folder holding one. Names are stripped of the padding;
the epoch is the step axis (YOLOv5 counts from 0, YOLOv8 from 1); the run's
``opt.yaml`` (v5) or ``args.yaml`` (v8) gives the planned ``epochs``, ``patience`` and
learning rates as params, ``hyp.yaml`` the hyperparameters.
"""

from __future__ import annotations

from pathlib import Path

from . import _csv
from ._csvreader import load_csv

NAME = "ultralytics"
DETECTS = "Ultralytics YOLO results.csv (train/box_loss, metrics/mAP columns)"


def _file_conf(p: Path) -> float:
    names = _csv.header(p)
    if not names:
        return 0.0
    if any(
        n.startswith(("train/box_loss", "metrics/mAP", "train/obj_loss", "val/box_loss"))
        for n in names
    ):
        return 0.95
    return 0.0


def sniff(path: Path) -> float:
    if path.is_dir():
        f = path / "results.csv"
        return _file_conf(f) if f.is_file() else 0.0
    return _file_conf(path) if path.suffix.lower() == ".csv" else 0.0


def load(path: Path):
    if path.is_dir():
        path = path / "results.csv"
    return load_csv(
        path,
        tracker="ultralytics",
        what="Ultralytics results.csv",
        axis_pref="epoch",
        sidecars=("opt.yaml", "args.yaml", "hyp.yaml"),
        axis_why="Ultralytics writes one row per epoch",
    )
