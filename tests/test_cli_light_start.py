"""mlaudit.cli: ``mlaudit --version`` and ``mlaudit --help`` start without the heavy modules.

Each case runs the console-script entry point (:func:`mlaudit.cli.main`) in a fresh
interpreter and lists the modules it loaded; the wall time is measured by
``benchmarks/cli_import_time.py``, not here.
"""

from __future__ import annotations

import json
import os
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
    # the list comes from mlaudit.cli._help_manifest: no command module, plugin or numpy
    assert not [m for m in mods if m.split(".")[0] in ("numpy", "mlaudit_core")]
    assert not [m for m in mods if m.startswith("mlaudit_") or m.startswith("mlaudit.cli.cmd_")]


FULL_HELP = """
import sys
sys.argv = ["mlaudit", "--help"]
import mlaudit.cli
try:
    mlaudit.cli._full_app()(args=["--help"])
except SystemExit:
    pass
"""


def test_help_from_the_manifest_is_the_built_trees_help():
    env = dict(os.environ, COLUMNS="100", TERM="dumb")
    light = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(["--help"])],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
        env=env,
    )
    full = subprocess.run(
        [sys.executable, "-c", FULL_HELP],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
        env=env,
    )
    assert light.stdout and light.stdout == full.stdout


def test_help_manifest_is_up_to_date():
    from mlaudit.cli import _help_manifest, entry_point_names, help_rows

    stale = "mlaudit/cli/_help_manifest.py is stale: run `python -m mlaudit.cli._help_manifest`"
    assert _help_manifest.ENTRY_POINTS == entry_point_names(), stale
    assert _help_manifest.COMMANDS == help_rows(), stale


def test_help_builds_the_tree_when_the_plugins_differ_from_the_manifest(monkeypatch):
    import mlaudit.cli as cli

    assert cli._light_help_app() is not None
    monkeypatch.setattr(cli, "entry_point_names", lambda: ["mlaudit.commands:someone-elses"])
    assert cli._light_help_app() is None
