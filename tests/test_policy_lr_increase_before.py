"""verdict.policy.lr_increase_before: a NaN while the learning rate is still rising, seen through a short window.

The real input is the TF2 YOLOv3 report of tests/data/reports (b2-04: ``=> STEP 748 lr: 0.000598 ...
total_loss: 8.31`` .. ``STEP 750 lr: 0.000600 ... total_loss: nan``; the maintainer: the warm-up of
12,500 steps never ended), run as ``benchmarks/diagnosis_eval.py`` runs it. The other logs use the
same line format with a constant and a falling learning rate.
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


def _log(tmp_path: Path, lrs: list[float]) -> Path:
    losses = ["8.31", "9.07", "nan", "nan", "nan"]
    p = tmp_path / "train.log"
    p.write_text(
        "".join(
            f"=> STEP  {748 + i}   lr: {lr:.6f}   total_loss: {loss}\n"
            for i, (lr, loss) in enumerate(zip(lrs, losses))
        )
    )
    return p


def test_nan_in_the_pasted_window_of_a_linear_warm_up_is_the_learning_rate():
    (case,) = (DATA / "reports").glob("b2-04-*")
    v = _verdict(case / "train.log")
    assert (v["outcome"], v["cause"]) == ("diverged", "model_convergence")
    assert "learning-rate ramp" in v["summary"]


def test_the_same_nan_with_a_constant_or_falling_lr_is_not_a_ramp(tmp_path):
    v = _verdict(_log(tmp_path, [0.000598, 0.000599, 0.000600, 0.000601, 0.000602]))
    assert (v["outcome"], v["cause"]) == (
        "diverged",
        "model_convergence",
    )  # rising at every point: the ramp
    assert "learning-rate ramp" in v["summary"]
    for lrs in ([0.0006] * 5, [0.000602, 0.000601, 0.000600, 0.000599, 0.000598]):
        v = _verdict(_log(tmp_path, lrs))
        assert v["outcome"] == "diverged" and "ramp" not in v["summary"], lrs
        # no ramp; a NaN with no loss growth before it, no reduced precision and a learning rate at
        # or below the optimiser's default points at the inputs (V03), not the update size
        assert v["cause"] == "data_config" and "no reduced precision" in v["summary"], v["summary"]
        assert "at or below the optimiser's default" in v["summary"], v["summary"]
