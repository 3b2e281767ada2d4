"""``mlaudit PATH`` on a FIFO and on a log with a NUL tail (issue 33, low findings).

A FIFO given as the run (or found in a run folder) blocked ``mlaudit PATH`` forever: its
``open`` waits for a writer. Now it is one error line (exit 2) or passed over. A console log
or CSV that ends in NUL padding (a preallocated log, a file cut by a crash) was refused as
binary by ``mlaudit PATH`` although ``mlaudit logs`` audits it; both audit it now, alike.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e  # real processes and servers throughout

MLAUDIT = str(Path(sys.executable).parent / "mlaudit")


def _run(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([MLAUDIT, *args], cwd=cwd, capture_output=True, text=True, timeout=120)


def test_plan_refuses_a_fifo_and_passes_one_over_in_a_folder(tmp_path):
    os.mkfifo(tmp_path / "train.log")
    p = _run("train.log", cwd=tmp_path)
    assert p.returncode == 2 and "not a regular file or folder" in p.stderr, p.stderr
    assert len(p.stderr.strip().splitlines()) == 1
    (tmp_path / "metrics.csv").write_text(
        "step,loss\n" + "".join(f"{i},{2.0 / i}\n" for i in range(1, 80))
    )
    p = _run(".", "-f", "json", cwd=tmp_path)
    assert p.returncode in (0, 1), p.stderr
    assert json.loads(p.stdout)["verdict"]["outcome"]


def _dict_lines(n: int) -> str:
    return "".join(
        f"{{'loss': {2.0 / i:.4f}, 'learning_rate': 0.0003, 'epoch': {i / 100}}}\n"
        for i in range(1, n)
    )


def test_console_sniff_reads_a_log_with_a_nul_tail_like_mlaudit_logs(tmp_path):
    (tmp_path / "train.log").write_bytes(_dict_lines(200).encode() + b"\x00" * 4096)
    (tmp_path / "metrics.csv").write_bytes(
        ("step,loss\n" + "".join(f"{i},{2.0 / i}\n" for i in range(1, 80))).encode() + b"\x00" * 512
    )
    path = _run("train.log", "-f", "json", cwd=tmp_path)
    logs = _run("logs", "train.log", "-f", "json", cwd=tmp_path)
    assert path.returncode in (0, 1) and logs.returncode in (0, 1), path.stderr + logs.stderr
    a, b = json.loads(path.stdout), json.loads(logs.stdout)
    assert a["verdict"]["outcome"] == b["verdict"]["outcome"]
    assert {f["code"] for f in a["findings"]} == {f["code"] for f in b["findings"]}
    csv = _run("metrics.csv", "-f", "json", cwd=tmp_path)
    assert csv.returncode in (0, 1), csv.stderr
    assert json.loads(csv.stdout)["verdict"]["outcome"]
