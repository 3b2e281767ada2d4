"""RT011 (launch-failed) and policy rule V07c: a console that ends on the shell's or the argument
parser's error is a launch that failed before training (crashed, data_config), not a run with "no
metric logged", on real input from the own corpus (tests/data/realworld, labelled before any
mlaudit run):

- f13b1-13: a 205-byte nohup capture whose last line is ``run_deepspeed.sh: line 9: PYTHONPATH:
  unbound variable`` (the launch script runs under ``set -u``); was unknown/inconclusive;
- f7b3-07, f13b2-20: the whole capture is argparse's usage block and ``train.py: error:
  unrecognized arguments: ...`` (labels accept crashed/data_config).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from mlaudit_core.audit import audit
from mlaudit_core.formats import load_path

RUNS = Path(__file__).parent.parent / "data" / "realworld" / "runs"


@pytest.mark.parametrize(
    ("rel", "signature"),
    [
        ("2Elian--Drug-Recommend/train.log", "shell-unbound-variable"),
        ("amazingvince--nanoVLM/train_output.log", "argparse-error"),
        ("X-7D1C11010--Dual_D/nohup.out", "argparse-error"),
    ],
)
def test_console_ending_on_a_launch_error_is_a_launch_failure(rel, signature):
    rep = audit(list(load_path(RUNS / rel).runs)[-1][1])
    rt011 = [f for f in rep.findings if f.code == "RT011"]
    assert rt011 and rt011[0].facts["signature"] == signature, [f.code for f in rep.findings]
    v = rep.verdict
    assert (v.outcome.value, v.cause.value) == ("crashed", "data_config"), v.summary
    assert "launch failed before training" in v.summary
