"""verdict.evidence: the shell's report of a fatal signal (``Segmentation fault``, ``Aborted``, with or
without ``(core dumped)``) is how the run ended: crashed, not "no metric".

The line is produced for real: a Python process that dereferences address 0 under bash, whose output is
captured as a user captures a job's (``bash -c '...' > log 2>&1``).
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys

from typer.testing import CliRunner

from mlaudit.cli import app


def test_a_segfault_reported_by_the_shell_is_a_crash(tmp_path):
    log = tmp_path / "train.log"
    script = f'echo "epoch 1 loss 2.31"; {shlex.quote(sys.executable)} -c "import ctypes; ctypes.string_at(0)"; true'
    with log.open("w") as fh:
        subprocess.run(["bash", "-c", script], stdout=fh, stderr=subprocess.STDOUT, check=False)
    assert "Segmentation fault" in log.read_text()
    v = json.loads(CliRunner().invoke(app, ["logs", str(log), "--format", "json"]).stdout)[
        "verdict"
    ]
    assert v["outcome"] == "crashed" and "Segmentation fault" in v["summary"]
