"""Any other CSV of metrics with a header: a step (``step``, ``global_step``, ``iteration``,
``iter``) or ``epoch`` column and numeric columns.

The step column is the axis; without one the epoch column is; without either the row
number (said in the notes). Columns whose every cell is text (a path, a timestamp
string) are left out; stray strings in number columns are counted in a warning. A file
whose counter restarts holds appended runs: the last is audited.

Lines of ``name,value`` pairs with no header (``iteration,100,test_loss,2.06,test_accuracy,0.52``,
written by ``f.write(",".join(...))`` loops) are records, not a table: the names at the even
positions of the first line are the columns, the figures after them the values, and a step
name among them (``iteration``, ``step``, ``epoch``) the axis.
"""

from __future__ import annotations

from pathlib import Path

from . import _csv
from ._csvreader import load_csv

NAME = "generic_csv"
DETECTS = "CSV with a header and a step/epoch column (or a TSV header over rows of numbers)"


def sniff(path: Path) -> float:
    if path.is_dir() or path.suffix.lower() not in (".csv", ".tsv", ".log", ".txt"):
        return 0.0
    names = _csv.header(path)
    if not names or len(names) < 2 or _csv.looks_numeric_header(names):
        return 0.0
    if _pairs(names):
        return 0.55 if {n.lower() for n in names[::2]} & (set(_csv.STEP_NAMES) | {"epoch"}) else 0.3
    low = {n.lower() for n in names}
    if low & set(_csv.STEP_NAMES) or low & {"epoch", "epochs"}:
        # a header over rows that are all numbers in as many cells is a table whatever its name
        # (``training.log`` written with csv.writer): above the console reader's 0.6, which also
        # reads such rows but without the header's column names as the CSV reader keeps them
        sep = _csv.delimiter(path)
        if sep in (",", "\t") and _csv._numeric_head(path, len(names), sep=sep):
            return 0.65
        return 0.55
    if path.suffix.lower() == ".csv":
        return 0.3
    # a tab-separated header of names over rows of numbers in as many cells (``total loss<TAB>ctc loss``
    # then one row per logging step, no step column): a table, the row number is the step
    if _csv.delimiter(path) == "\t" and _csv._numeric_head(path, len(names), sep="\t"):
        return 0.5
    return 0.0


def _pairs(names: list[str]) -> bool:
    """True when a first line alternates name, number (a ``name,value`` record, not a header)."""
    if len(names) % 2 or len(names) < 4:
        return False
    return _csv.looks_numeric_header(names[1::2]) and not any(
        _csv.looks_numeric_header([n]) for n in names[::2]
    )


def _load_pairs(path: Path):
    """A run from ``name,value`` record lines (module docstring); a line whose names differ from
    the first line's is read by its own names."""
    import csv

    import numpy as np

    from ..errors import InputError
    from ._common import wide_run

    sep = _csv.delimiter(path) or ","
    try:  # as many cells as the first line; a longer line is skipped, a shorter one padded
        with open(path, encoding="utf-8", errors="replace", newline="") as fh:
            lines = [r for r in csv.reader(fh, delimiter=sep) if r]
    except (csv.Error, OSError) as exc:
        raise InputError(f"{path}: not readable as name,value records ({str(exc)[:120]})") from None
    width = len(lines[0]) if lines else 0
    raw = [r + [""] * (width - len(r)) for r in lines if len(r) <= width]
    cols: dict[str, np.ndarray] = {}
    n = len(raw)
    for j in range(0, width - 1, 2):
        for i, row in enumerate(raw):
            name = row[j].strip()
            if not name:
                continue
            if name not in cols:
                cols[name] = np.full(n, np.nan)
            cols[name][i] = _csv._number(row[j + 1].strip()) if row[j + 1].strip() else np.nan
    low = {k.lower(): k for k in cols}
    step_key = next((low[s] for s in (*_csv.STEP_NAMES, "epoch", "epochs") if s in low), None)
    notes = [f"{path.name} holds name,value records (no header): the names are the columns"]
    if step_key is None:
        steps = np.arange(n, dtype=np.float64)
        notes.append(f"{path.name} names no step or epoch: the row number is the step")
        axis = "step"
    else:
        steps = cols.pop(step_key)
        axis = "epoch" if step_key.lower().startswith("epoch") else "step"
    return wide_run(path, cols, steps, tracker="csv", axis=axis, notes=notes, what="CSV log")


def load(path: Path):
    names = _csv.header(path)
    if names and _pairs(names):
        return _load_pairs(path)
    return load_csv(path, tracker="csv", what="CSV log", axis_pref="step")
