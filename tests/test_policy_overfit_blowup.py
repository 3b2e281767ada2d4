"""verdict.policy V12 (``OVERFIT_MAX_RATIO``): a held-out loss that ends an order of magnitude above
its best is instability, not an overfit.

Real input from the own corpus (tests/data/realworld, scored in session 7): a W&B run of a graph
network whose validation loss ended 17x its best while its training loss sat flat (f7b3-14, labelled
unstable/diverged, called overfit before), and a fastai CSVLogger run whose validation loss tripled
(0.23 -> 0.69, f7b2-14, labelled overfit), which stays an overfit.
"""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from mlaudit.cli import app

REAL = Path(__file__).resolve().parent / "data" / "realworld"
LABELS = json.loads((REAL / "labels.json").read_text())


def _verdict(ident: str) -> dict:
    (lab,) = [x for x in LABELS if x["id"].startswith(ident)]
    res = CliRunner().invoke(
        app, ["audit", str(REAL / lab["path"]), "--format", "json", "--no-write"]
    )
    return json.loads(res.stdout)["verdict"]


def test_a_validation_loss_ten_times_its_best_is_unstable():
    v = _verdict("f7b3-14-")
    assert (v["rule"], v["outcome"], v["cause"]) == ("V12", "unstable", "model_convergence")
    assert "17x its best" in v["summary"]


def test_a_validation_loss_that_tripled_stays_an_overfit():
    v = _verdict("f7b2-14-")
    assert (v["rule"], v["outcome"]) == ("V12", "overfit"), v["summary"]
