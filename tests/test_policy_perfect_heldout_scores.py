"""verdict.policy V19b (perfect_heldout_scores): every held-out score perfect, no curve -> leak suspicion.

The real input is the DIRE report of tests/data/reports (b2-10: ``ACC: 1.00000`` ``AP: 1.00000``
``R_ACC: 1.00000`` ``F_ACC: 1.00000`` on the test set; the maintainers traced it to train/test
overlap), run as ``benchmarks/diagnosis_eval.py`` runs it. The other logs print the same summary
lines with one score below its ceiling, and perfect training scores only.
"""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from mlaudit.cli import app

DATA = Path(__file__).resolve().parent / "data"


def _verdict(path: Path) -> dict:
    res = CliRunner().invoke(app, ["logs", str(path), "--format", "json"])
    return json.loads(res.stdout)["verdict"]


def test_perfect_scores_on_every_test_metric_are_a_leak_suspicion():
    (case,) = (DATA / "reports").glob("b2-10-*")
    v = _verdict(case / "eval.log")
    assert (v["rule"], v["outcome"], v["cause"]) == ("V19b", "unknown", "data_config")
    assert "ACC 1" in v["summary"] and "overlap" in v["summary"]


def test_one_score_below_its_ceiling_or_training_scores_only_are_not(tmp_path):
    p = tmp_path / "eval.log"
    p.write_text(
        "'test_model:lsun_adm' model testing on...\nlsun_adm_data:\nACC: 1.00000\nAP: 0.93120\n"
    )
    assert _verdict(p)["rule"] != "V19b"
    p.write_text("training done\ntrain_acc: 1.00000\ntrain_f1: 1.00000\n")
    assert _verdict(p)["rule"] != "V19b"
