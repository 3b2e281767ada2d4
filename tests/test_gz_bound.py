"""A ``.gz`` console log is read up to 50 times its compressed size (at least 16 MiB): a small
archive of metric lines that expands to hundreds of MiB (break-it pass 3: no time bound) is read
to the cap, and the report says the rest was not read (issue 33, low finding)."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

import pytest

from mlaudit_core.formats.consolelog.reader import GZ_MAX_RATIO, GZ_MIN_BYTES, LineReader

MLAUDIT = str(Path(sys.executable).parent / "mlaudit")
LINE = b"step 100 | loss 0.5000 | lr 0.0003\n"


def _bomb(path: Path, mib: int) -> Path:
    with gzip.open(path, "wb", compresslevel=9) as f:
        block = LINE * ((1 << 20) // len(LINE) + 1)
        for _ in range(mib):
            f.write(block[: 1 << 20])
    return path


def test_line_reader_caps_a_gz_bomb(tmp_path):
    p = _bomb(tmp_path / "train.log.gz", 200)
    cap = max(GZ_MIN_BYTES, GZ_MAX_RATIO * p.stat().st_size)
    assert p.stat().st_size < (200 << 20) // GZ_MAX_RATIO  # expands past the ratio
    r = LineReader(p)
    read = sum(len(text) + 1 for _, text in r)
    assert read <= cap + len(LINE)
    assert any("decompressed past" in w and "not read" in w for w in r.warnings), r.warnings


def test_line_reader_reads_an_ordinary_gz_whole(tmp_path):
    p = tmp_path / "train.log.gz"
    text = "".join(
        f"step {i} | loss {2.0 / i:.5f} | lr 0.0003 | grad_norm {1 + i % 7}\n"
        for i in range(1, 20000)
    )
    p.write_bytes(gzip.compress(text.encode()))
    r = LineReader(p)
    assert sum(1 for _ in r) == 19999 and not r.warnings


@pytest.mark.e2e
def test_mlaudit_logs_on_a_small_gz_bomb_says_what_was_not_read(tmp_path):
    p = _bomb(tmp_path / "train.log.gz", 40)  # 40 MiB of lines in a few KB: capped at 16 MiB
    out = subprocess.run(
        [MLAUDIT, "logs", str(p), "-f", "json"], capture_output=True, text=True, timeout=600
    )
    assert out.returncode in (0, 1), out.stderr
    doc = json.loads(out.stdout)
    assert any("decompressed past" in w for w in doc.get("warnings", [])), doc.get("warnings")
