"""The console script's usage errors: one line on stderr naming the command and the problem,
exit 2; help and --version unchanged; audit exit codes pass through."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

MLAUDIT = str(Path(sys.executable).with_name("mlaudit"))
CASE = Path(__file__).parent / "data" / "cases" / "oom-in-evaluation" / "traceback.log"


def _run(*args: str, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([MLAUDIT, *args], capture_output=True, text=True, timeout=120, cwd=cwd)


@pytest.mark.parametrize("args, message", [
    (["mlflow", "--format", "bogus", "r"], "mlaudit mlflow: Invalid value for '--format'"),
    (["mlflow"], "mlaudit mlflow: Missing argument"),
    (["nosuch"], "mlaudit: No such command 'nosuch'"),
    (["logs", "--bogus", "x"], "mlaudit logs: No such option: --bogus"),
    (["watch", "mlflow", "--poll-interval", "0"], "mlaudit watch mlflow: Invalid value"),
    (["logs", str(CASE), "--out", "report.pdf"], "mlaudit logs: Invalid value for '--out'"),
    (["logs", str(CASE), "--out", "report"], "mlaudit logs: Invalid value for '--out'"),
])
def test_usage_errors_are_one_line_exit_2(args, message, tmp_path):
    p = _run(*args, cwd=tmp_path)
    assert p.returncode == 2, p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(message), p.stderr
    assert "--help" in lines[0] and "╭" not in p.stderr and p.stdout == ""
    assert list(tmp_path.iterdir()) == []


def test_help_version_and_audit_exit_codes_pass_through(tmp_path):
    assert _run("--version").stdout.startswith("mlaudit ")
    bare = _run()
    assert "Usage" in bare.stdout + bare.stderr and "Commands" in bare.stdout + bare.stderr
    assert _run("logs", "--help").returncode == 0
    assert _run("logs", str(CASE), "--fail-on", "info", "--format", "json",
                "--out", str(tmp_path / "r.json")).returncode == 1
    assert _run("logs", str(CASE), "--fail-on", "never", "--format", "json",
                "--out", str(tmp_path / "r.json")).returncode == 0
    assert _run("logs", str(tmp_path / "missing.log")).returncode == 2


@pytest.mark.parametrize("value, message", [
    ("nan", "factor: Input should be a finite number"),
    ("inf", "factor: Input should be a finite number"),
    ("-1", "factor must be >= 0 (got -1.0)"),
    ('"big"', "factor: Input should be a valid number, unable to parse string as a number"),
])
def test_out_of_range_detector_parameters_are_one_line_exit_2(value, message, tmp_path):
    (tmp_path / "mlaudit.toml").write_text(f"[tool.mlaudit.detectors.OP001]\nfactor = {value}\n")
    p = _run("logs", str(CASE), "--format", "json", cwd=tmp_path)
    assert p.returncode == 2 and p.stdout == ""
    assert p.stderr.strip() == (f"mlaudit: error: {tmp_path / 'mlaudit.toml'}: "
                                f"[tool.mlaudit.detectors.OP001] {message}")


def test_missing_default_mlflow_store_names_the_option(tmp_path):
    """With no --tracking-uri and no MLFLOW_TRACKING_URI, MLflow's default store (a path the
    user never gave) is missing: the line says how to name the store, and nothing is made."""
    import os

    env = {k: v for k, v in os.environ.items() if k != "MLFLOW_TRACKING_URI"}
    p = subprocess.run([MLAUDIT, "mlflow", "0123abcd"], capture_output=True, text=True,
                       timeout=120, cwd=tmp_path, env=env)
    assert p.returncode == 2
    assert p.stderr.strip().endswith("no such MLflow database file (MLflow's default store for "
                                     "this directory: give --tracking-uri/-u or set "
                                     "MLFLOW_TRACKING_URI)")
    assert list(tmp_path.iterdir()) == []
