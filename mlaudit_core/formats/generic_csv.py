"""Any other CSV of metrics with a header: a step (``step``, ``global_step``, ``iteration``,
``iter``) or ``epoch`` column and numeric columns.

The step column is the axis; without one the epoch column is; without either the row
number (said in the notes). Columns whose every cell is text (a path, a timestamp
string) are left out; stray strings in number columns are counted in a warning. A file
whose counter restarts holds appended runs: the last is audited.
"""

from __future__ import annotations

from pathlib import Path

from . import _csv
from ._csvreader import load_csv

NAME = "generic_csv"
DETECTS = "CSV with a header and a step/epoch column"


def sniff(path: Path) -> float:
    if path.is_dir() or path.suffix.lower() not in (".csv", ".tsv", ".log", ".txt"):
        return 0.0
    names = _csv.header(path)
    if not names or len(names) < 2 or _csv.looks_numeric_header(names):
        return 0.0
    low = {n.lower() for n in names}
    if low & set(_csv.STEP_NAMES) or low & {"epoch", "epochs"}:
        return 0.55
    return 0.3 if path.suffix.lower() == ".csv" else 0.0


def load(path: Path):
    return load_csv(path, tracker="csv", what="CSV log", axis_pref="step")
