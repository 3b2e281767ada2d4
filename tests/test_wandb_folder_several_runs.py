"""W&B run folders that hold more than their own run (integrations/mlaudit_wandb/offline.py
``find_log``/``several_logs``, local_format.py ``_is_run``).

Made with the real wandb SDK in offline mode (two runs of one script in one ``WANDB_DIR``, in a
subprocess), then gathered the ways the corpus shows them: a ``latest-run`` link committed or
copied as a folder over an earlier run's files, so one folder holds two ``run-<id>.wandb`` files
(realworld f12b2-08), and a synced run's copy (``latest-run``) whose ``.wandb`` was left out of
the snapshot (realworld f6b2-04). Before, the first was refused ("several .wandb files; pass the one to
audit") and the second was not recognised as a W&B folder (its ``logs/debug.log`` was read as a
console).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from mlaudit_core.formats import load_path

pytest.importorskip("wandb")

_TRAIN = r"""
import sys, wandb
slope = float(sys.argv[1])
r = wandb.init(project="two-runs", config={"slope": slope})
for i in range(50):
    r.log({"train_loss": 1.0 - slope * i, "val_acc": 0.5 + slope * i / 2})
r.finish()
"""


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory) -> tuple[Path, Path]:
    """Two finished offline runs of one project (the second one started last)."""
    root = tmp_path_factory.mktemp("wandb-two")
    env = dict(os.environ, WANDB_MODE="offline", WANDB_DIR=str(root), WANDB_SILENT="true")
    made: list[Path] = []
    for slope in ("0.001", "0.01"):
        p = subprocess.run(
            [sys.executable, "-c", _TRAIN, slope],
            env=env,
            cwd=root,
            capture_output=True,
            timeout=600,
        )
        assert p.returncode == 0, p.stderr.decode()[-2000:]
        # the folder this run made (two runs started in one second sort by their random ids)
        (new,) = set((root / "wandb").glob("offline-run-*")) - set(made)
        made.append(new)
    first, second = made
    return first, second


def _with_other_log(src: Path, other: Path, dst: Path) -> Path:
    shutil.copytree(src, dst)
    (log,) = other.glob("*.wandb")
    shutil.copy2(log, dst / log.name)
    return dst


def _run_id(run_dir: Path) -> str:
    return run_dir.name.rsplit("-", 1)[-1]


def test_run_folder_with_another_runs_log_audits_its_own(two_runs, tmp_path):
    """A run folder named ``offline-run-<date>-<id>`` holding a second run's ``.wandb``: the run
    read is the one whose id ends the folder's name, and the notes name the file left out."""
    first, second = two_runs
    d = _with_other_log(first, second, tmp_path / first.name)
    ((_, run),) = load_path(d).runs
    assert run.identity.id == _run_id(first)
    assert run.metrics.series("train_loss").values[-1] == pytest.approx(1.0 - 0.001 * 49)
    (note,) = [n for n in run.notes if "W&B run files in one folder" in n]
    assert f"run-{_run_id(second)}.wandb" in note and "folder's name" in note


def test_latest_run_copy_with_two_logs_audits_the_run_its_debug_log_names(two_runs, tmp_path):
    """``latest-run`` copied as a folder (the SDK's link to the second run) over the first run's
    folder: both ``.wandb`` files lie in it and the folder's name has no id; ``logs/debug.log``
    (the second run's) names its run folder, so the second run is audited."""
    first, second = two_runs
    d = tmp_path / "wandb" / "latest-run"
    shutil.copytree(first, d)
    shutil.copytree(second, d, dirs_exist_ok=True)  # the link's target copied over it
    assert len(list(d.glob("*.wandb"))) == 2
    ((_, run),) = load_path(d).runs
    assert run.identity.id == _run_id(second)
    assert run.metrics.series("train_loss").values[-1] == pytest.approx(1.0 - 0.01 * 49)
    assert any("logs/debug.log" in n and f"run-{_run_id(first)}.wandb" in n for n in run.notes)


def test_synced_run_copy_under_any_name_is_a_wandb_folder(two_runs, tmp_path):
    """A synced run's ``files/`` hold ``wandb-summary.json`` (written here from the run's own
    summary records, as ``wandb sync`` leaves it; offline runs leave it to the sync), a name only
    W&B writes: the folder is a W&B run whatever it is called, with or without its ``.wandb``."""
    import json

    from mlaudit_wandb.offline import load_offline

    _, second = two_runs
    d = tmp_path / "copy_of_my_run"
    shutil.copytree(second, d)
    summary = json.loads(load_offline(d).environment["summary"])
    (d / "files" / "wandb-summary.json").write_text(json.dumps(summary))
    for log in d.glob("*.wandb"):
        log.unlink()
    loaded = load_path(d)
    assert loaded.reader == "wandb_dir" and len(loaded.runs) == 1
