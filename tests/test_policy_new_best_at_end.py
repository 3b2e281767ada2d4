"""verdict.policy ``new_best_at_end`` (V14b): a held-out metric still setting new bests at the end of
the run has not plateaued.

Real input from the own corpus (tests/data/realworld, scored earlier): a CLIP fine-tune whose
validation loss set its last best at its last of 50 epochs (f7b2-05) and a CatBoost run whose
validation logloss is at its best at iteration 1000 of 1000 (f5b2-03), both labelled healthy and
both called plateaued before; a Keras run whose validation loss reached its minimum at epoch 42 of
100 and sat above it after (csv06, labelled plateaued) stays a plateau.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mlaudit.cli import app

RUNS = Path(__file__).resolve().parent / "data" / "realworld" / "runs"
LABELS = json.loads((RUNS.parent / "labels.json").read_text())


def _path(ident: str) -> Path:
    (lab,) = [x for x in LABELS if x["id"].startswith(ident)]
    return RUNS.parent / lab["path"]


def _verdict(path: Path) -> dict:
    res = CliRunner().invoke(app, ["audit", str(path), "--format", "json", "--no-write"])
    return json.loads(res.stdout)["verdict"]


@pytest.mark.parametrize("ident", ["f7b2-05-", "f5b2-03-"])
def test_a_best_at_the_last_evaluations_is_no_plateau(ident):
    v = _verdict(_path(ident))
    assert (v["outcome"], v["cause"]) == ("succeeded", "healthy"), v["summary"]


def test_a_best_long_before_the_end_stays_a_plateau():
    v = _verdict(_path("csv06-"))
    assert (v["rule"], v["outcome"]) == ("V14b", "plateaued"), v["summary"]
