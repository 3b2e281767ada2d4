"""Signatures for what reports paste without a curve (mlaudit_core.signatures): a loss printed or reported
as NaN (``loss-printed-nan``), torch.multiprocessing.spawn's child killed by SIGKILL (``sigkill``), a
cloud's preemption notice (``cloud-preemption-notice``); and V07 for a NaN reported after a finite window
inside the learning-rate warm-up, or with reduced precision stated and at most two loss records (b10-08);
a SIGKILL reported as a return code of -9 or an exit status of 137 (b10-01, b11-12).

Real input: reports of tests/data/reports (b7-03, b7-12, b7-13, b8-15, b9-05, b9-06) run as
``benchmarks/diagnosis_eval.py`` runs them, a tensor printed by the installed torch, and a
``torch.multiprocessing.spawn`` job whose worker is killed with SIGKILL.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mlaudit.cli import app
from mlaudit_core.signatures import match_line

REPORTS = Path(__file__).resolve().parent / "data" / "reports"


def _verdict(prefix: str) -> dict:
    (case,) = REPORTS.glob(prefix + "*")
    args = ["logs", *map(str, sorted(case.glob("*.log")))]
    for cfg in sorted(case.glob("*.txt")):
        args += ["--config", str(cfg)]
    return json.loads(CliRunner().invoke(app, [*args, "--format", "json"]).stdout)["verdict"]


@pytest.mark.parametrize(
    ("prefix", "outcome", "cause"),
    [
        ("b8-15-", "diverged", "model_convergence"),  # 'discrim_loss nan'
        ("b9-05-", "diverged", "model_convergence"),  # 'cls:nan, loc:nan, reg:nan, loss: nan'
        ("b9-06-", "diverged", "model_convergence"),  # 'the training cost goes up to nan'
        (
            "b7-12-",
            "diverged",
            "model_convergence",
        ),  # tensor(nan) after iterations whose LR still rose
        ("b7-03-", "crashed", "infra_runtime"),  # 'process 1 terminated with signal SIGKILL'
        ("b10-01-", "crashed", "infra_runtime"),  # DIGITS 'ERROR: error code -9'
        (
            "b11-12-",
            "crashed",
            "infra_runtime",
        ),  # 'exit code 137 (interrupted by signal 9: SIGKILL)'
        (
            "b10-08-",
            "diverged",
            "data_config",
        ),  # 'Loss is nan' after one record, autocast fp16 stated
        (
            "b7-13-",
            "crashed",
            "infra_runtime",
        ),  # 'GCP Metadata Service says termination is imminent'
    ],
)
def test_reports_without_a_curve_are_judged_from_their_messages(prefix, outcome, cause):
    v = _verdict(prefix)
    assert (v["outcome"], v["cause"]) == (outcome, cause), v["summary"]


def test_a_loss_tensor_printed_by_torch_as_nan_is_read():
    torch = pytest.importorskip("torch")
    line = str({"loss_cls": torch.tensor(float("nan")), "loss_box_reg": torch.tensor(1310.07)})
    assert "tensor(nan)" in line
    assert [s.id for s, _ in match_line(line)] == ["loss-printed-nan"]


@pytest.mark.parametrize(
    "line",
    [
        "[Epoch 1] loss 3.2572 (3.3279) grad_norm 1.0323 (nan)",  # the loss's own value is finite
        "loss_scale: nan",  # a loss scale is not a loss
        "Epoch 3 | loss 0.5321 | nan_count 0",
    ],
)
def test_a_nan_that_is_not_the_losss_value_is_not_read(line):
    assert "loss-printed-nan" not in [s.id for s, _ in match_line(line)]


def test_a_spawned_worker_killed_by_sigkill_is_infra(tmp_path):
    pytest.importorskip("torch")
    script = tmp_path / "train.py"
    script.write_text(
        "import os, signal\nimport torch.multiprocessing as mp\n"
        "def work(rank):\n    os.kill(os.getpid(), signal.SIGKILL)\n"
        "if __name__ == '__main__':\n    mp.spawn(work, nprocs=1)\n"
    )
    log = tmp_path / "train.log"
    with log.open("w") as fh:
        subprocess.run(
            [sys.executable, str(script)], stdout=fh, stderr=subprocess.STDOUT, check=False
        )
    assert "terminated with signal SIGKILL" in log.read_text()
    v = json.loads(CliRunner().invoke(app, ["logs", str(log), "--format", "json"]).stdout)[
        "verdict"
    ]
    assert (v["outcome"], v["cause"]) == ("crashed", "infra_runtime"), v["summary"]


def test_a_sigkilled_child_as_python_and_the_shell_report_it():
    """The conventions the ``sigkill`` signature reads: Python's returncode of a child ended by SIGKILL is -9,
    the shell's exit status 137 (128 + 9); both lines, as a launcher and a run console print them, match."""
    kill = "import os, signal; os.kill(os.getpid(), signal.SIGKILL)"
    rc = subprocess.run([sys.executable, "-c", kill], check=False).returncode
    assert rc == -9
    out = subprocess.run(
        ["bash", "-c", f'"{sys.executable}" -c "{kill}" 2>/dev/null; echo "exit code $?"'],
        capture_output=True,
        text=True,
        check=False,
    ).stdout.strip()
    assert out == "exit code 137"
    for line in (
        f"ERROR: error code {rc}",
        f"Process finished with {out} (interrupted by signal 9: SIGKILL)",
    ):
        assert "sigkill" in {sig.id for sig, _ in match_line(line)}, line
