"""JSON nested past Python's decoder stack inside run files: a named problem, never an internal error.

``json.loads`` raises ``RecursionError`` (not ``ValueError``) on ~100k nested brackets; four
readers caught only ``ValueError`` and ``mlaudit audit`` ended with "internal error ...
RecursionError", exit 3:

* a W&B run folder whose ``files/wandb-summary.json`` is nested that deep (with and without
  its ``run-<id>.wandb``): now the run is audited and a warning names the summary file;
* a ClearML offline session whose ``task.json`` is: now one line naming the file, exit 2;
  a ``metrics.jsonl`` line nested that deep: skipped with the line number, the rest read;
* a TensorBoard text summary holding such a JSON document (read for hyperparameters): now
  passed over like any text that is not a JSON object.

Real writers: a wandb offline run (subprocess), tensorboardX; the ClearML session is the
offline zip layout (task.json + metrics.jsonl) as tests/test_clearml.py builds it.
"""

from __future__ import annotations

import math
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

MLAUDIT = str(Path(sys.executable).with_name("mlaudit"))
DEEP = "[" * 200_000 + "]" * 200_000


def _audit(path: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [MLAUDIT, "audit", str(path), "--no-write"],
        capture_output=True,
        text=True,
        timeout=300,
        env=dict(os.environ, COLUMNS="200"),
    )


@pytest.fixture(scope="module")
def wandb_run(tmp_path_factory) -> Path:
    pytest.importorskip("wandb")
    root = tmp_path_factory.mktemp("wandb-deep")
    code = (
        "import math, wandb\nr = wandb.init(project='deep', config={'lr': 0.01})\n"
        "for i in range(120): r.log({'train_loss': 2 * math.exp(-i / 30) + 0.1})\n"
        "r.finish()\n"
    )
    env = dict(os.environ, WANDB_MODE="offline", WANDB_DIR=str(root), WANDB_SILENT="true")
    p = subprocess.run(
        [sys.executable, "-c", code], env=env, cwd=root, capture_output=True, text=True, timeout=300
    )
    assert p.returncode == 0, p.stderr[-2000:]
    (d,) = (root / "wandb").glob("offline-run-*")
    (d / "files" / "wandb-summary.json").write_text('{"train_loss": 0.1, "x": ' + DEEP + "}")
    return d


@pytest.mark.parametrize("keep_history", [True, False])
def test_wandb_folder_with_a_too_deep_summary_is_audited(wandb_run, tmp_path, keep_history):
    d = tmp_path / wandb_run.name
    shutil.copytree(wandb_run, d)
    if not keep_history:
        for f in d.glob("run-*.wandb"):
            f.unlink()
        (d / "files" / "output.log").write_text(
            "".join(f"epoch {i} loss {2 * math.exp(-i / 10) + 0.1:.4f}\n" for i in range(40))
        )
    p = _audit(d)
    assert p.returncode in (0, 1), p.stderr
    assert "internal error" not in p.stderr and "Traceback" not in p.stderr
    if not keep_history:
        assert "wandb-summary.json: not valid JSON" in " ".join(p.stdout.split())


def _session(path: Path, task: str, metrics: str) -> Path:
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("task.json", task)
        z.writestr("metrics.jsonl", metrics)
    return path


def _scalars(n: int) -> str:
    import json

    return "".join(
        json.dumps(
            [
                {
                    "type": "training_stats_scalar",
                    "task": "t1",
                    "iter": i,
                    "metric": "train",
                    "variant": "loss",
                    "value": 2.0 / (i + 1),
                    "timestamp": 1.7e12 + i,
                }
            ]
        )
        + "\n"
        for i in range(n)
    )


def test_clearml_offline_session_with_too_deep_json(tmp_path):
    bad_task = _audit(_session(tmp_path / "a.zip", '{"id": "t1", "x": ' + DEEP + "}", _scalars(30)))
    assert bad_task.returncode == 2
    [line] = bad_task.stderr.strip().splitlines()[-1:]
    assert line.startswith("mlaudit: error:") and "task.json is not valid JSON" in line
    assert "internal error" not in bad_task.stderr
    bad_line = _audit(
        _session(
            tmp_path / "b.zip",
            '{"id": "t1", "name": "deep"}',
            _scalars(30) + DEEP + "\n" + _scalars(30),
        )
    )
    assert bad_line.returncode in (0, 1), bad_line.stderr
    out = " ".join(bad_line.stdout.split())
    assert "1 line(s) that are not JSON skipped (first at line 31)" in out, out


def test_tensorboard_text_summary_with_too_deep_json_is_passed_over(tmp_path):
    tbx = pytest.importorskip("tensorboardX")
    w = tbx.SummaryWriter(str(tmp_path / "run1"))
    w.add_text("hparams", '{"a": ' + DEEP + "}", 0)
    for i in range(50):
        w.add_scalar("train/loss", 2 * math.exp(-i / 10) + 0.1, i)
    w.close()
    p = _audit(tmp_path)
    assert p.returncode in (0, 1), p.stderr
    assert "internal error" not in p.stderr and "Traceback" not in p.stderr
