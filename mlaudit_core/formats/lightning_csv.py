"""PyTorch Lightning ``CSVLogger``: ``lightning_logs/version_N/metrics.csv`` (+ ``hparams.yaml``).

Detected by the file name ``metrics.csv`` with ``epoch`` and ``step`` columns (Lightning
writes both on every row), or a folder holding one. The step axis is Lightning's global
``step``; when every series is logged at most once per epoch (only ``*_epoch`` and
validation metrics) the epoch is the axis instead. ``hparams.yaml`` becomes params.
"""

from __future__ import annotations

from pathlib import Path

from . import _csv
from ._csvreader import load_csv

NAME = "lightning_csv"
DETECTS = "Lightning CSVLogger metrics.csv (epoch and step columns)"


def _file_conf(p: Path) -> float:
    names = _csv.header(p)
    if not names:
        return 0.0
    low = {n.lower() for n in names}
    if {"epoch", "step"} <= low:
        score = 0.9 if p.name == "metrics.csv" else 0.5
        if any(n.endswith(("_step", "_epoch")) for n in low):
            score = max(score, 0.8)
        return score
    return 0.0


def sniff(path: Path) -> float:
    if path.is_dir():
        f = path / "metrics.csv"
        return _file_conf(f) if f.is_file() else 0.0
    return _file_conf(path) if path.suffix.lower() == ".csv" else 0.0


def load(path: Path):
    if path.is_dir():
        path = path / "metrics.csv"
    return load_csv(
        path,
        tracker="lightning",
        what="Lightning metrics.csv",
        axis_pref="auto",
        sidecars=("hparams.yaml",),
    )
