"""Rule V04 (verdict/policy._nonfinite): a training loss non-finite at its only logged point, on the run's own
step counter past its start, is judged with the learning rate, not as inputs broken before any update."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from mlaudit.cli import app
from mlaudit_core import audit
from mlaudit_core.formats.consolelog import load_logs

REPORTS = Path(__file__).resolve().parent / "data" / "reports"


def test_nan_at_step_682_at_lr_0_4_is_the_learning_rate():
    """Real report b2-05 (CPM keypoints, 'Step: 682/800000 ----- Cur_lr: 0.4000000', then every loss
    nan; the maintainer: the base LR is 0.0002 with warm-up): 681 updates ran before the one logged
    point, at 4x the typical LR; before, 'non-finite from the first step' gave data_config."""
    (case,) = REPORTS.glob("b2-05-*")
    args = ["logs", *map(str, sorted(case.glob("*.log"))), "--config", str(case / "context.txt")]
    v = json.loads(CliRunner().invoke(app, [*args, "--format", "json"]).stdout)["verdict"]
    assert (v["outcome"], v["cause"]) == ("diverged", "model_convergence"), v["summary"]
    assert "681 updates ran before it unseen" in v["summary"]


def _one_point(tmp_path, lr: str, step: int = 682):
    p = tmp_path / "train.log"
    p.write_text(
        f"Step: {step}/800000 ----- Cur_lr: {lr} ----- Time: 0.82 sec.\n"
        "S1 loss:     nan | S2 loss:     nan | Total loss: nan\n"
    )
    return audit(load_logs([p])).verdict


def test_a_typical_learning_rate_or_the_first_step_keeps_the_inputs_first(tmp_path):
    v = _one_point(tmp_path, "0.0002000")
    assert (v.outcome.value, v.cause.value) == ("diverged", "data_config"), v.summary
    v = _one_point(tmp_path, "0.4000000", step=1)
    assert (v.outcome.value, v.cause.value) == ("diverged", "data_config"), v.summary
