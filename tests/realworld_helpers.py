"""Shared access to the own real-world corpus (tests/data/realworld) for tests that audit one entry."""

from __future__ import annotations

import json
from pathlib import Path

from mlaudit_core.formats import load_path

OWN = Path(__file__).resolve().parent / "data" / "realworld"


def own_label(prefix: str) -> dict:
    """The labels.json entry whose id starts with ``prefix``; StopIteration when none does."""
    return next(
        x for x in json.loads((OWN / "labels.json").read_text()) if x["id"].startswith(prefix)
    )


def last_run(path: Path):
    """The last run :func:`mlaudit_core.formats.load_path` reads from ``path`` (the one the eval judges);
    AssertionError when it reads none."""
    runs = load_path(path).runs
    assert runs, path
    return runs[-1][1]


def own_run(prefix: str):
    """The last run read from the entry whose id starts with ``prefix`` (the one the eval judges)."""
    lab = own_label(prefix)
    runs = load_path(OWN / lab["path"]).runs
    assert runs, lab["path"]
    return runs[-1][1]
