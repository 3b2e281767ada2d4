"""mlaudit.cli: ``mlaudit --version`` and ``mlaudit --help`` start without the heavy modules.

Each case runs the console-script entry point (:func:`mlaudit.cli.main`) in a fresh
interpreter and lists the modules it loaded; the wall time is measured by
``benchmarks/cli_import_time.py``, not here.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from mlaudit_core import __version__

pytestmark = pytest.mark.e2e  # each case starts a fresh interpreter

PROBE = """
import json, sys
sys.argv = ["mlaudit", *json.loads(sys.argv[1])]
import mlaudit.cli
try:
    mlaudit.cli.main()
except SystemExit as exc:
    code = exc.code
sys.stderr.write(json.dumps({"code": code, "modules": sorted(sys.modules)}) + "\\n")
"""
#: Never loaded to print the version or the command list.
HEAVY = (
    "pandas",
    "scipy",
    "matplotlib",
    "pyarrow",
    "mlflow",
    "wandb",
    "clearml",
    "tensorboard",
    "torch",
    "tensorflow",
    "tbparse",
)


def _start(*args: str) -> tuple[str, int, set[str]]:
    p = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(list(args))],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    info = json.loads(p.stderr.strip().splitlines()[-1])
    return p.stdout, info["code"], set(info["modules"])


def test_version_loads_no_command_module_and_no_analysis():
    out, code, mods = _start("--version")
    assert (out, code) == (f"mlaudit {__version__}\n", 0)
    assert not [m for m in mods if m.split(".")[0] in (*HEAVY, "numpy", "mlaudit_core")]
    assert not [m for m in mods if m.startswith("mlaudit.cli.") or m.startswith("mlaudit_")]


@pytest.mark.parametrize("args", [("--help",), ("-h",)])
def test_help_lists_every_command_without_pandas_scipy_or_tracker_sdks(args):
    out, code, mods = _start(*args)
    assert code == 0
    for cmd in ("audit", "batch", "watch", "mlflow", "tensorboard"):
        assert f" {cmd} " in out
    assert sorted(m for m in mods if m.split(".")[0] in HEAVY) == []
