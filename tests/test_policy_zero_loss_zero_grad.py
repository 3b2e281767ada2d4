"""verdict.policy._zero_loss: a training loss and a grad norm both exactly 0 from the first logged
point is a loss that sends no gradient (underfit, correctness_bug), not a data artefact.

Real input: own corpus f20b2-13, an HF trainer_state.json (Qwen2.5-VL LoRA, checkpoint 250 of 500)
with loss 0.0 and grad_norm 0.0 at all 25 logs.
"""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from mlaudit.cli import app

STATE = (
    Path(__file__).resolve().parent
    / "data/realworld/runs/shantipriyap--Odia-OCR/checkpoint-250/trainer_state.json"
)


def test_zero_loss_with_zero_grad_norm_is_a_code_fault():
    out = CliRunner().invoke(app, ["audit", str(STATE), "--format", "json"]).stdout
    v = json.loads(out[out.index("{") :])["verdict"]
    assert (v["outcome"], v["cause"]) == ("underfit", "correctness_bug"), v["summary"]
    assert "grad_norm" in v["summary"]


def test_zero_loss_with_moving_grad_norm_keeps_the_data_reading(tmp_path):
    """The same state with a nonzero grad norm: the zero loss stays a data/loss check."""
    state = json.loads(STATE.read_text())
    for i, r in enumerate(state["log_history"]):
        if "grad_norm" in r:
            r["grad_norm"] = 0.1 + 0.01 * i
    p = tmp_path / "trainer_state.json"
    p.write_text(json.dumps(state))
    out = CliRunner().invoke(app, ["audit", str(p), "--format", "json"]).stdout
    v = json.loads(out[out.index("{") :])["verdict"]
    assert v["cause"] == "data_config", v["summary"]
