"""Hostile-but-realistic input to ``mlaudit audit PATH`` (breaker findings).

Each test runs the real CLI in a subprocess on files written here; no mocks.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

MLAUDIT = [str(Path(sys.executable).with_name("mlaudit"))]


def _run(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([*MLAUDIT, *args], cwd=cwd, capture_output=True, timeout=300)


def _csv(path: Path, n: int = 40) -> None:
    path.write_text("step,loss\n" + "".join(f"{i},{1 / (i + 1)}\n" for i in range(n)))


def test_escape_codes_in_a_file_name_never_reach_the_terminal(tmp_path):
    """A run file named with ESC/BEL (an OSC retitle, a colour) is shown as \\xNN on every line."""
    _csv(tmp_path / "run\x1b]0;owned\x07\x1b[31m.csv")
    for args in (["audit", "."], ["audit", ".", "--list"]):
        p = _run(*args, cwd=tmp_path)
        both = p.stdout + p.stderr
        assert b"\x1b" not in both and b"\x07" not in both, (args, both[:400])
        assert b"\\x1b" in both, (args, both[:400])
