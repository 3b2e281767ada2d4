"""verdict.policy._early_stopped_gap (V19h) on a real report's pasted Keras lines (tests/data/reports
b14-10: YOLOv3 on 100 images, 'Epoch 00046: early stopping' after loss 18.65, val_loss 50.89)."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from mlaudit.cli import app

REPORTS = Path(__file__).resolve().parent / "data" / "reports"


def _verdict(log: Path, context: Path) -> dict:
    args = ["logs", str(log), "--config", str(context), "--format", "json"]
    return json.loads(CliRunner().invoke(app, args).stdout)["verdict"]


def test_an_early_stop_with_the_held_out_loss_far_above_the_training_loss_is_overfit(tmp_path):
    """Before: unknown ('too few points'). The same lines without the early-stopping line are not
    judged by this rule (nothing says the held-out loss had stopped improving)."""
    (case,) = REPORTS.glob("b14-10-*")
    v = _verdict(case / "train.log", case / "context.txt")
    assert (v["rule"], v["outcome"], v["cause"]) == ("V19h", "overfit", "model_convergence")
    log = tmp_path / "train.log"
    log.write_text((case / "train.log").read_text().replace("Epoch 00046: early stopping", ""))
    assert _verdict(log, case / "context.txt")["rule"] != "V19h"
