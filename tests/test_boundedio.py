"""``mlaudit_core.boundedio``: run-folder readers open regular files only, with a byte budget
(issue 33, finding 6). A real W&B offline run (the wandb SDK in a subprocess) whose
``logs/debug.log`` is replaced by a link to ``/dev/zero`` (before: the reader read it to EOF,
3 GB in 25 s) or a FIFO (before: ``open`` blocked forever), and whose ``.wandb`` run file is
replaced by a FIFO: ``mlaudit PATH`` finishes, and says so in one line where it cannot read.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from mlaudit_core.boundedio import NotRegularFile, read_regular

MLAUDIT = str(Path(sys.executable).parent / "mlaudit")

_TRAIN = r"""
import wandb
r = wandb.init(project="bounded", config={"lr": 3e-4})
for i in range(300):
    r.log({"train_loss": 2.0 / (i + 1)})
r.finish()
"""


@pytest.fixture(scope="module")
def wandb_run(tmp_path_factory) -> Path:
    pytest.importorskip("wandb")
    root = tmp_path_factory.mktemp("wandb-bounded")
    env = dict(os.environ, WANDB_MODE="offline", WANDB_DIR=str(root), WANDB_SILENT="true")
    p = subprocess.run(
        [sys.executable, "-c", _TRAIN], env=env, cwd=root, capture_output=True, timeout=300
    )
    assert p.returncode == 0, p.stderr.decode()[-2000:]
    (d,) = (root / "wandb").glob("offline-run-*")
    return d


def test_read_regular_refuses_devices_and_fifos_and_keeps_to_its_budget(tmp_path):
    f = tmp_path / "f.log"
    f.write_bytes(b"0123456789" * 10)
    assert read_regular(f, 5) == b"01234" and read_regular(f, 5, tail=True) == b"56789"
    link = tmp_path / "zero.log"
    link.symlink_to("/dev/zero")
    fifo = tmp_path / "fifo.log"
    os.mkfifo(fifo)
    for p in (link, fifo):
        with pytest.raises(NotRegularFile):
            read_regular(p, 1 << 20)  # returns at once: no read of /dev/zero, no open block


def _copy(run: Path, dst: Path) -> Path:
    shutil.copytree(run, dst, symlinks=False, ignore=shutil.ignore_patterns("debug*.log"))
    (dst / "logs").mkdir(exist_ok=True)
    return dst


@pytest.mark.e2e
@pytest.mark.parametrize("kind", ["dev_zero", "fifo"])
def test_wandb_folder_reader_debug_log_that_is_not_a_file(wandb_run, tmp_path, kind):
    d = _copy(wandb_run, tmp_path / "run")
    debug = d / "logs" / "debug.log"
    if kind == "dev_zero":
        debug.symlink_to("/dev/zero")
    else:
        os.mkfifo(debug)
    p = subprocess.run([MLAUDIT, str(d), "-f", "json"], capture_output=True, text=True, timeout=120)
    assert p.returncode in (0, 1), p.stderr
    assert '"verdict"' in p.stdout


@pytest.mark.e2e
def test_wandb_run_file_that_is_a_fifo_is_one_error_line(wandb_run, tmp_path):
    d = _copy(wandb_run, tmp_path / "run")
    (wb,) = d.glob("run-*.wandb")
    wb.unlink()
    os.mkfifo(wb)
    p = subprocess.run(
        [MLAUDIT, "wandb", "--offline", str(d)], capture_output=True, text=True, timeout=120
    )
    assert p.returncode not in (0, 1) and "not a regular file" in p.stderr, p.stderr
    assert len(p.stderr.strip().splitlines()) == 1, p.stderr
