"""verdict.policy V03/V04: a finite loss that turns non-finite with no reduced precision in use -> the LR first.

Real inputs, run as ``benchmarks/diagnosis_eval.py`` runs them: the BiLSTM-CRF report b3-03 (``train
loss:1.10886`` .. ``train loss:nan``; the reporter raised the learning rate from 0.001 to 0.01) and
shared/cases fp16-true-nan-after-first-step (reduced precision in use: numerics stay the first suspect).
"""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from mlaudit.cli import app

ROOT = Path(__file__).resolve().parents[1]


def _verdict(case: Path) -> dict:
    args = ["logs", *map(str, sorted(case.glob("*.log")))]
    for cfg in sorted(case.glob("*.txt")):
        args += ["--config", str(cfg)]
    res = CliRunner().invoke(app, [*args, "--format", "json"])
    return json.loads(res.stdout)["verdict"]


def test_nan_after_finite_points_without_reduced_precision_is_the_learning_rate_first():
    (case,) = (ROOT / "tests" / "data" / "reports").glob("b3-03-*")
    v = _verdict(case)
    assert (v["outcome"], v["cause"]) == ("diverged", "model_convergence")
    assert "no reduced precision" in v["summary"]


def test_the_same_onset_with_fp16_in_use_stays_numerics():
    case = ROOT.parent / "shared" / "cases" / "fp16-true-nan-after-first-step"
    if not case.is_dir():
        import pytest

        pytest.skip("shared/cases is not beside this checkout")
    v = _verdict(case)
    assert (v["outcome"], v["cause"]) == ("diverged", "data_config")


def test_a_framework_nan_message_with_no_loss_history_and_no_reduced_precision_is_the_learning_rate_first():
    (case,) = (ROOT / "tests" / "data" / "reports").glob("b6-06-*")
    v = _verdict(case)
    assert (v["rule"], v["outcome"], v["cause"]) == ("V07", "diverged", "model_convergence")
