"""timm ``train.py`` output: ``output/train/<run>/summary.csv`` (+ ``args.yaml``).

Detected by ``epoch``, ``train_loss`` and ``eval_*`` columns (``eval_loss``,
``eval_top1``, ``eval_top5``; ``lr`` since timm 0.9). One row per epoch: the epoch is
the step axis; ``args.yaml`` (the run's arguments: ``epochs``, ``lr``, ``sched``...)
becomes params.
"""

from __future__ import annotations

from pathlib import Path

from . import _csv
from ._csvreader import load_csv

NAME = "timm_csv"
DETECTS = "timm summary.csv (epoch, train_loss, eval_* columns)"


def _file_conf(p: Path) -> float:
    names = _csv.header(p)
    if not names:
        return 0.0
    low = {n.lower() for n in names}
    if "epoch" in low and "train_loss" in low and any(n.startswith("eval_") for n in low):
        return 0.9 if (p.name == "summary.csv" or "eval_top1" in low) else 0.7
    return 0.0


def sniff(path: Path) -> float:
    if path.is_dir():
        f = path / "summary.csv"
        return _file_conf(f) if f.is_file() else 0.0
    return _file_conf(path) if path.suffix.lower() == ".csv" else 0.0


def load(path: Path):
    if path.is_dir():
        path = path / "summary.csv"
    return load_csv(
        path,
        tracker="timm",
        what="timm summary.csv",
        axis_pref="epoch",
        sidecars=("args.yaml",),
        axis_why="timm writes one row per epoch",
    )
