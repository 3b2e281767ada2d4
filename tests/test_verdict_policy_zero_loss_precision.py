"""verdict.policy._zero_loss (V08b) on a real report whose loss snaps to exactly 0 under fp16
(tests/data/reports b18-02: Qwen-VL fine-tuning on a V100 in fp16, HF Trainer 'loss': 3.8462 at the first
logged step, then exactly 0.0 at every step; the thread: bf16 on an A100 trains)."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from mlaudit.cli import app

REPORTS = Path(__file__).resolve().parent / "data" / "reports"


def _verdict(case: Path, context: Path) -> dict:
    args = ["logs", *map(str, sorted(case.glob("*.log"))), "--config", str(context)]
    return json.loads(CliRunner().invoke(app, [*args, "--format", "json"]).stdout)["verdict"]


def test_a_loss_that_snaps_to_exactly_zero_under_fp16_diverged(tmp_path):
    """Before: succeeded/data_config. Without any precision named (the context's precision line and the
    thread's sentences left out) the same curve keeps the earlier reading (not diverged)."""
    (case,) = REPORTS.glob("b18-02-*")
    v = _verdict(case, case / "context.txt")
    assert (v["rule"], v["outcome"], v["cause"]) == ("V08b", "diverged", "data_config")
    assert "3.846 to exactly 0" in v["summary"]
    ctx = tmp_path / "context.txt"
    ctx.write_text("task: Qwen-VL fine-tuning with the repository's script\n")
    assert _verdict(case, ctx)["outcome"] != "diverged"
