"""verdict.policy V19c (_routine_loss_scaling): benign fp16 overflow skips, no curve -> routine loss scaling.

Real reports of tests/data/reports, run as ``benchmarks/diagnosis_eval.py`` runs them: b2-02 (one apex
``Gradient overflow. Skipping step ... reducing loss scale to 131072.0`` in a healthy Swin run) and
b6-08 (apex skips 1024 -> 512 -> 256, the maintainer: normal); b1-06 (DeepSpeed's loss-scale floor
exception) must not be called routine.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mlaudit.cli import app

REPORTS = Path(__file__).resolve().parent / "data" / "reports"


def _verdict(prefix: str) -> dict:
    (case,) = REPORTS.glob(prefix + "*")
    args = ["logs", *map(str, sorted(case.glob("*.log")))]
    for cfg in sorted(case.glob("*.txt")):
        args += ["--config", str(cfg)]
    res = CliRunner().invoke(app, [*args, "--format", "json"])
    return json.loads(res.stdout)["verdict"]


@pytest.mark.parametrize("prefix", ["b2-02-", "b6-08-"])
def test_benign_overflow_skips_are_routine_loss_scaling(prefix):
    v = _verdict(prefix)
    assert (v["rule"], v["outcome"], v["cause"]) == ("V19c", "unknown", "healthy")


def test_the_loss_scale_floor_is_not_routine():
    v = _verdict("b1-06-")
    assert v["rule"] != "V19c" and v["cause"] != "healthy"
