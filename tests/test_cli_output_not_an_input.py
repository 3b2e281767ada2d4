"""An output file that is one of the input files is refused.

``mlaudit logs train.txt --out train.txt`` replaced the user's console log with the markdown
report, and ``--evidence train.log`` (``mlaudit logs``) or ``mlaudit evidence --logs train.log
--out train.log`` with the evidence JSON (exit 0). Bad input: one error line naming the option
and the file, exit 2, the log untouched. Runs the real console script.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

LOG = "".join(f"step {s}: loss {2.0 - 0.1 * s:.2f}\n" for s in range(1, 11))
MLAUDIT = str(Path(sys.executable).with_name("mlaudit"))


@pytest.mark.parametrize(
    "args",
    [
        ["logs", "train.txt", "--out", "train.txt"],
        ["logs", "train.txt", "--evidence", "./train.txt"],
        ["evidence", "--logs", "train.txt", "--out", "train.txt"],
        ["train.txt", "--no-write", "--out", "train.txt"],
    ],
)
def test_output_over_an_input_is_refused(tmp_path, args):
    log = tmp_path / "train.txt"
    log.write_text(LOG)
    proc = subprocess.run(
        [MLAUDIT, *args], cwd=tmp_path, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 2, proc.stderr
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and "train.txt" in lines[0] and "input" in lines[0], proc.stderr
    assert log.read_text() == LOG


def test_a_different_output_is_still_written(tmp_path):
    log = tmp_path / "train.txt"
    log.write_text(LOG)
    proc = subprocess.run(
        [MLAUDIT, "logs", "train.txt", "--out", "report.md"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    assert log.read_text() == LOG and (tmp_path / "report.md").read_text().startswith("# mlaudit")
