"""A third-party tracker plugin adds its own commands (issue 22): ``mlaudit fake RUN``,
``mlaudit watch fake`` and ``mlaudit batch fake``, without touching the core or the CLI.

The plugin (tests/fake_plugin/mlaudit_fake) is installed the way any distribution is: a real
``mlaudit_fake-0.1.dist-info`` with ``entry_points.txt`` naming it in ``mlaudit.trackers``,
found by ``importlib.metadata`` because its folder is on ``PYTHONPATH``. Every command runs
the real ``mlaudit`` console script in a subprocess; the verdicts come from the real audit of
runs the test writes into the fake store (one healthy, one that blows up to NaN, one still
running).
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
DIST = HERE / "fake_plugin"
ROOT = HERE.parent


def _mlaudit(*args, store: Path, plugin: bool = True, cwd: Path | None = None):
    env = dict(os.environ, COLUMNS="200", MLAUDIT_FAKE_STORE=str(store))
    env.pop("PYTHONPATH", None)
    if plugin:
        env["PYTHONPATH"] = str(DIST)
    return subprocess.run(
        [sys.executable, "-c", "from mlaudit.cli import main; main()", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=300,
    )


@pytest.fixture()
def store(tmp_path):
    s = tmp_path / "store"
    s.mkdir()
    healthy = [2.0 * math.exp(-i / 25) + 0.1 + 0.01 * math.sin(i) for i in range(200)]
    blowup = (
        [2.0 * math.exp(-i / 25) + 0.1 for i in range(80)]
        + [0.5 * math.exp(i / 6) for i in range(60)]
        + ["nan"] * 10
    )
    runs = {
        "healthy": ("finished", "2026-11-30T10:00:00+00:00", healthy),
        "blowup": ("finished", "2026-11-30T11:00:00+00:00", blowup),
        "live": ("running", None, healthy[:50]),
    }
    for ref, (status, ended, loss) in runs.items():
        (s / f"{ref}.json").write_text(
            json.dumps(
                {"name": ref, "status": status, "ended": ended, "metrics": {"train/loss": loss}}
            )
        )
    return s


def _tags(store: Path, ref: str) -> dict:
    return json.loads((store / f"{ref}.json").read_text()).get("tags", {})


def test_help_lists_the_plugin_commands_and_imports_no_sdk(store):
    root = _mlaudit("--help", store=store)
    assert root.returncode == 0, root.stderr
    assert "fake " in root.stdout and "Audit a fake run" in root.stdout
    for group in ("watch", "batch"):
        r = _mlaudit(group, "--help", store=store)
        assert r.returncode == 0 and "fake " in r.stdout, (group, r.stdout, r.stderr)
    env = dict(os.environ, PYTHONPATH=str(DIST))
    code = (
        "import sys\nfrom typer.testing import CliRunner\nfrom mlaudit.cli import app\n"
        "assert CliRunner().invoke(app, ['--help']).exit_code == 0\n"
        "print(sorted(m for m in ('mlflow', 'wandb', 'clearml', 'tensorboard') "
        "if m in sys.modules))\n"
    )
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert p.returncode == 0 and p.stdout.strip() == "[]", p.stdout + p.stderr


def test_without_the_distribution_there_is_no_fake_command(store):
    r = _mlaudit("fake", "blowup", store=store, plugin=False)
    assert r.returncode == 2 and "No such command 'fake'" in r.stderr, r.stderr
    assert "fake" not in _mlaudit("watch", "--help", store=store, plugin=False).stdout


def test_run_command_audits_and_writes_back(store, tmp_path):
    r = _mlaudit("fake", "blowup", "--format", "json", store=store)
    assert r.returncode in (0, 1), r.stderr
    report = json.loads(r.stdout)
    assert report["run"]["tracker"] == "fake" and report["verdict"]["outcome"] == "diverged"
    assert _tags(store, "blowup")["mlaudit.verdict"] == "diverged"
    assert (store / "blowup.report.md").is_file()
    r = _mlaudit("fake", "nope", store=store)  # bad input: one line, exit 2, nothing written
    assert r.returncode == 2 and "fake run 'nope': not found" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


def test_watch_fake_audits_the_ended_runs_once(store, tmp_path):
    state = tmp_path / "watch.sqlite"
    r = _mlaudit("watch", "fake", "--once", "--since", "all", "--state", str(state), store=store)
    assert r.returncode == 0, r.stderr
    assert _tags(store, "blowup")["mlaudit.verdict"] == "diverged"
    assert _tags(store, "healthy")["mlaudit.verdict"] != "diverged"
    assert _tags(store, "live") == {}  # still running: not listed
    assert "2 newly finished run(s)" in r.stderr
    again = _mlaudit("watch", "fake", "--once", "--state", str(state), store=store)
    assert again.returncode == 0 and "newly finished" not in again.stderr, again.stderr


def test_batch_fake_audits_every_ended_run(store, tmp_path):
    r = _mlaudit(
        "batch", "fake", "--format", "csv", "--state", str(tmp_path / "b.sqlite"), store=store
    )
    assert r.returncode == 0, r.stderr
    rows = {line.split(",")[0]: line.split(",") for line in r.stdout.strip().splitlines()[1:]}
    assert set(rows) == {"blowup", "healthy"}
    assert rows["blowup"][2:4] == ["audited", "diverged"]


def test_the_fake_plugin_is_named_nowhere_in_mlaudit():
    for pkg in ("mlaudit", "mlaudit_core", "integrations"):
        for path in (ROOT / pkg).rglob("*.py"):
            assert "mlaudit_fake" not in path.read_text(encoding="utf-8"), path
    assert "mlaudit_fake" not in (ROOT / "pyproject.toml").read_text()


def test_a_plugin_whose_commands_are_broken_warns_and_mlaudit_keeps_working(tmp_path):
    """A plugin whose ``cli`` names a module that fails to import, and one whose ``register``
    raises: each is one warning on stderr, every other command still works."""
    (tmp_path / "mlaudit_broken_cli.py").write_text(
        "class Missing:\n    name = 'missingcli'\n    cli = 'mlaudit_no_such_module:register'\n\n"
        "class Raising:\n    name = 'raisingcli'\n    cli = 'mlaudit_broken_cli:register'\n\n"
        "def register(app):\n    raise RuntimeError('boom at registration')\n"
    )
    info = tmp_path / "mlaudit_broken_cli-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: mlaudit-broken-cli\nVersion: 0.1\n"
    )
    (info / "entry_points.txt").write_text(
        "[mlaudit.trackers]\nmissingcli = mlaudit_broken_cli:Missing\n"
        "raisingcli = mlaudit_broken_cli:Raising\n"
    )
    env = dict(os.environ, PYTHONPATH=str(tmp_path), COLUMNS="200")
    r = subprocess.run(
        [sys.executable, "-c", "from mlaudit.cli import main; main()", "rules", "--format", "json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert r.returncode == 0 and '"OP001"' in r.stdout, r.stderr
    assert "'missingcli': its commands failed to load" in r.stderr, r.stderr
    assert "'raisingcli': its commands failed to register: boom at registration" in r.stderr
