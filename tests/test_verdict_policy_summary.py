"""Rule V19f (verdict/policy._summary_at_uniform_guess): only summary values, at a K-class model's
uniform guess, on a real report and on evaluation lines as frameworks print them."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from mlaudit.cli import app
from mlaudit_core import audit
from mlaudit_core.formats.consolelog import load_logs

REPORTS = Path(__file__).resolve().parent / "data" / "reports"


def _verdict(case: Path) -> dict:
    args = ["logs", *map(str, sorted(case.glob("*.log"))), "--config", str(case / "context.txt")]
    return json.loads(CliRunner().invoke(app, [*args, "--format", "json"]).stdout)["verdict"]


def test_one_evaluation_at_one_tenth_with_loss_ln_10_is_underfit():
    """Real report b10-10 (BERT on a 10-label task, TF Estimator's 'Saving dict for global step 312:
    eval_accuracy = 0.1, eval_loss = 2.3766909'): the accuracy is 1/10 and the loss ln 10; before, the
    verdict abstained on too few points."""
    (case,) = REPORTS.glob("b10-10-*")
    v = _verdict(case)
    assert (v["outcome"], v["cause"]) == ("underfit", "model_convergence"), v["summary"]
    assert "10-class" in v["summary"]


def _one_eval(tmp_path, line: str):
    p = tmp_path / "eval.log"
    p.write_text(
        "INFO:tensorflow:Finished evaluation at 2019-03-03-09:41:04\n"
        f"INFO:tensorflow:Saving dict for global step 312: {line}\n"
    )
    return audit(load_logs([p])).verdict


def test_a_summary_away_from_the_uniform_guess_is_still_not_judged(tmp_path):
    v = _one_eval(tmp_path, "eval_accuracy = 0.1, eval_loss = 0.41, global_step = 312, loss = 0.4")
    assert v.outcome.value == "unknown"
    v = _one_eval(tmp_path, "eval_accuracy = 0.88, eval_loss = 0.35, global_step = 312, loss = 0.3")
    assert v.outcome.value == "unknown"


def test_held_out_at_chance_while_training_accuracy_is_high_is_the_held_out_data(tmp_path):
    v = _one_eval(
        tmp_path,
        "eval_accuracy = 0.5, eval_loss = 0.6935, train_accuracy = 0.97, global_step = 312, loss = 0.09",
    )
    assert (v.outcome.value, v.cause.value) == ("underfit", "data_config"), v.summary
