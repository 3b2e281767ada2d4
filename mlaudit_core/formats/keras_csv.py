"""Keras ``CSVLogger`` files (often ``training.log`` or ``*.csv``): one row per epoch.

Detected by a first column named ``epoch``, no step column, and Keras' metric names
(``loss``, ``val_*``). The epoch is the step axis. A file written with
``CSVLogger(append=True)`` by several ``fit()`` calls holds several runs (the epoch counter
restarts, no second header): the last is audited and the earlier ones are named in the
notes.
"""

from __future__ import annotations

from pathlib import Path

from . import _csv
from ._csvreader import load_csv

NAME = "keras_csv"
DETECTS = "Keras CSVLogger file (epoch first, loss/val_* columns, one row per epoch)"


def sniff(path: Path) -> float:
    if path.is_dir() or path.suffix.lower() not in (".csv", ".log", ".txt", ".tsv", ""):
        return 0.0
    names = _csv.header(path)
    if not names or names[0] != "epoch":
        return 0.0
    low = [n.lower() for n in names[1:]]
    if any(n in _csv.STEP_NAMES for n in low):
        return 0.0
    if "loss" in low or any(n.startswith("val_") for n in low):
        return 0.85
    return 0.0


def load(path: Path):
    return load_csv(
        path,
        tracker="keras",
        what="Keras CSVLogger file",
        axis_pref="epoch",
        axis_why="Keras CSVLogger writes one row per epoch",
    )
