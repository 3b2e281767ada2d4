"""verdict.policy._too_early_for_underfit: a training loss that did not fall over less than a tenth of
one epoch of a multi-epoch plan is no underfitting evidence, on a real report's pasted log (tests/data/
reports b13-17, the DALI ResNet-50 ImageNet example at iterations 0-140 of 5005, epoch 1 of 30)."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from mlaudit.cli import app

REPORTS = Path(__file__).resolve().parent / "data" / "reports"


def _verdict(log: Path, *configs: Path) -> dict:
    args = ["logs", str(log), *[x for c in configs for x in ("--config", str(c))]]
    return json.loads(CliRunner().invoke(app, [*args, "--format", "json"]).stdout)["verdict"]


def test_a_data_wait_decides_when_the_loss_covers_three_percent_of_the_first_epoch():
    """Before: V13 underfit/model_convergence from 8 per-batch losses (1.09 -> 1.60) outranked the data
    wait that grows 0.045 -> 8.6 s (SY002)."""
    (case,) = REPORTS.glob("b13-17-*")
    v = _verdict(case / "train.log", case / "context.txt")
    assert (v["outcome"], v["cause"]) == ("slow", "infra_runtime"), v["summary"]


def test_the_same_loss_over_most_of_an_epoch_is_still_judged(tmp_path):
    """The same lines with a plan of 200 iterations an epoch: 140 iterations are 70% of the epoch,
    so the loss that never fell is judged by the learning rules as before (not deferred)."""
    (case,) = REPORTS.glob("b13-17-*")
    log = tmp_path / "train.log"
    log.write_text((case / "train.log").read_text().replace("/5005]", "/200]"))
    v = _verdict(log, case / "context.txt")
    assert v["outcome"] == "underfit", v["summary"]
