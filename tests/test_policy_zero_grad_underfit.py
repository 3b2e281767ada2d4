"""verdict.policy V13 (_underfit): a loss that barely moved while the logged grad norm is exactly 0 is a
code path that never reaches the weights (correctness_bug), not a convergence problem.

Real input: own corpus f6b3-02 (OLMo 20M, ``optim/total_grad_norm=0`` at every logged step, the
cross-entropy flat at ln(vocab)); and shared/realworld ts04 (CamemBERT NLI stuck at chance with non-zero
gradients) stays model_convergence.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mlaudit.cli import app

OLMO = (
    Path(__file__).resolve().parent
    / "data/realworld/runs/AntonioLopardo--OLMo/checkpoints/OLMo-20M-tied-emb-1000/train_fresh.log"
)


def test_flat_loss_with_zero_grad_norm_is_a_code_bug():
    v = json.loads(CliRunner().invoke(app, ["logs", str(OLMO), "--format", "json"]).stdout)[
        "verdict"
    ]
    assert (v["rule"], v["outcome"], v["cause"]) == ("V13", "underfit", "correctness_bug"), v[
        "summary"
    ]
    assert "exactly 0" in v["summary"]


@pytest.mark.parametrize("grad", [(0.0, 0.0, 0.0, 0.0, 0.0), (0.0, 0.4, 0.3, 0.2, 0.3)])
def test_the_rule_needs_zero_at_nearly_every_point(tmp_path, grad):
    """Five HF-Trainer records at chance (ln 10) with the given grad norms: all zero -> code; a zero at
    the first record only (logged before the first backward) -> the convergence reading."""
    lines = [
        f"{{'loss': {2.3026 - 0.001 * i:.4f}, 'grad_norm': {g}, 'learning_rate': 1e-05, "
        f"'epoch': {0.2 * (i + 1):.1f}}}"
        for i, g in enumerate(grad * 4)
    ]
    log = tmp_path / "train.log"
    log.write_text("\n".join(lines) + "\n")
    v = json.loads(CliRunner().invoke(app, ["logs", str(log), "--format", "json"]).stdout)[
        "verdict"
    ]
    if all(g == 0 for g in grad):
        assert v["cause"] == "correctness_bug", v["summary"]
    else:
        assert v["cause"] != "correctness_bug", v["summary"]
