"""Rule V19g (verdict/policy._overflow_grad_norm): non-finite gradient norms under reduced precision while the
loss stays finite and falls are a loss scaler's skipped overflow steps."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mlaudit.cli import app
from mlaudit_core import audit
from mlaudit_core.formats.consolelog import load_logs

REPORTS = Path(__file__).resolve().parent / "data" / "reports"


@pytest.mark.parametrize("prefix", ["b12-01-", "b12-06-"])
def test_grad_norm_nan_under_fp16_with_a_falling_loss_is_routine(prefix):
    """Real reports b12-01 (TableMASTER on mmocr's fp16 hook: grad_norm nan at iteration 100, then 3.98, loss
    1.91 -> 0.92; the author: 'caused by mixed precision training') and b12-06 (xtuner QLoRA with the fp16
    AMP wrapper: grad_norm nan from iteration 240 while the loss goes 2.75 -> 2.46): before, unknown /
    inconclusive."""
    (case,) = REPORTS.glob(prefix + "*")
    args = ["logs", *map(str, sorted(case.glob("*.log"))), "--config", str(case / "context.txt")]
    v = json.loads(CliRunner().invoke(app, [*args, "--format", "json"]).stdout)["verdict"]
    assert (v["outcome"], v["cause"]) == ("unknown", "healthy"), v["summary"]


def _mmengine(tmp_path, losses, norms, fp16: bool):
    lines = ["optim_wrapper = dict(type='AmpOptimWrapper', loss_scale='dynamic')"] if fp16 else []
    for i, (loss, gn) in enumerate(zip(losses, norms), 1):
        lines.append(
            f"10/30 22:18:02 - mmengine - INFO - Epoch(train) [1][{10 * i}/735]  lr: 1.9870e-04  "
            f"time: 2.8906  data_time: 0.0042  memory: 10762  loss: {loss}  grad_norm: {gn}"
        )
    p = tmp_path / "train.log"
    p.write_text("\n".join(lines) + "\n")
    return audit(load_logs([p])).verdict


def test_no_reduced_precision_or_a_rising_loss_is_not_loss_scaling(tmp_path):
    falling, norms = ["2.75", "2.61", "2.51", "2.45"], ["3.06", "2.76", "nan", "nan"]
    assert _mmengine(tmp_path, falling, norms, fp16=True).rule == "V19g"
    assert _mmengine(tmp_path, falling, norms, fp16=False).rule != "V19g"
    assert _mmengine(tmp_path, falling[::-1], norms, fp16=True).rule != "V19g"
