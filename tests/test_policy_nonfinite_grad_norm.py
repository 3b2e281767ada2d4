"""verdict.policy V05c (_nonfinite_grad_norm) and the precision setting given as a command-line flag.

The real input is the GLM-4 LoRA report of tests/data/reports (b1-10: HF Trainer dict lines, loss
3.5967 with grad_norm 7.33, then 63.3672 with grad_norm nan, then 0.0 with grad_norm nan; the
reporter's context names ``--fp16`` on V100s), run as ``benchmarks/diagnosis_eval.py`` runs it
(``mlaudit logs FILE --config context.txt``). The other logs are HF Trainer's dict lines as
``Trainer.log`` prints them.
"""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from mlaudit.cli import app

DATA = Path(__file__).resolve().parent / "data"


def _verdict(*args: str) -> dict:
    res = CliRunner().invoke(app, ["logs", *args, "--format", "json"])
    return json.loads(res.stdout)["verdict"]


def _hf(tmp_path: Path, rows: list[tuple[float, float]]) -> Path:
    p = tmp_path / "train.log"
    p.write_text(
        "".join(
            f"{{'loss': {loss!r}, 'grad_norm': {g!r}, 'learning_rate': 5e-05, 'epoch': {0.01 * (i + 1):.2f}}}\n"
            for i, (loss, g) in enumerate(rows)
        )
    )
    return p


def test_nan_grad_norm_to_the_end_after_a_loss_jump_is_a_divergence_and_fp16_names_the_precision():
    (case,) = (DATA / "reports").glob("b1-10-*")
    v = _verdict(str(case / "train.log"), "--config", str(case / "context.txt"))
    assert (v["rule"], v["outcome"], v["cause"]) == ("V05c", "diverged", "data_config")
    assert "--fp16" in v["summary"]
    v = _verdict(str(case / "train.log"))
    assert (v["outcome"], v["cause"]) == ("diverged", "model_convergence")


def test_one_nan_grad_norm_that_comes_back_finite_is_a_skipped_step(tmp_path):
    nan = float("nan")
    rows = [(3.6, 7.3), (3.5, nan), (3.4, 6.8), (3.3, 6.5), (3.2, 6.4)]
    v = _verdict(str(_hf(tmp_path, rows)))
    assert v["rule"] != "V05c" and v["outcome"] != "diverged"
