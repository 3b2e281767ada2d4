"""Rule V06c (verdict/policy._blown_up_few): a classifier's loss far above any uniform guess at its one or two
logged points, at a learning rate far above typical, is a blow-up at the start."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from mlaudit.cli import app
from mlaudit_core import audit
from mlaudit_core.formats.consolelog import load_logs

REPORTS = Path(__file__).resolve().parent / "data" / "reports"


def test_opennmt_xent_6776_at_adam_lr_2_is_a_blown_up_start():
    """Real report b13-09 (OpenNMT-py Transformer without the noam schedule, so -learning_rate 2 is Adam's
    step size: 'acc: 0.00; ppl: 2.7e43; xent: 6776.20; lr: 2.00000' at steps 50 and 100 of 1e8): before,
    the paste's end at step 100 was read as a stop (crashed/inconclusive)."""
    (case,) = REPORTS.glob("b13-09-*")
    args = ["logs", *map(str, sorted(case.glob("*.log"))), "--config", str(case / "context.txt")]
    v = json.loads(CliRunner().invoke(app, [*args, "--format", "json"]).stdout)["verdict"]
    assert (v["outcome"], v["cause"]) == ("diverged", "model_convergence"), v["summary"]


def _two_records(tmp_path, lr: str, xent: str):
    p = tmp_path / "train.log"
    p.write_text(
        "".join(
            f"[2018-08-01 18:29:48,221 INFO] Step {s}/100000; acc:   {a}; xent: {xent}; lr: {lr}; 52 sec\n"
            for s, a in ((50, "0.00"), (100, "0.06"))
        )
    )
    return audit(load_logs([p])).verdict


def test_a_typical_rate_or_a_loss_near_the_guess_is_not_a_blow_up(tmp_path):
    assert _two_records(tmp_path, "0.00100", "6776.20").rule != "V06c"
    assert _two_records(tmp_path, "2.00000", "4.61").rule != "V06c"
    assert _two_records(tmp_path, "2.00000", "6776.20").rule == "V06c"
