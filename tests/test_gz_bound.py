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


def _bomb(path: Path, mib: int, line: bytes = LINE, head: bytes = b"") -> Path:
    """``head``, then ``mib`` MiB of ``line`` repeated, gzip level 9 (a few KB per 40 MiB)."""
    with gzip.open(path, "wb", compresslevel=9) as f:
        f.write(head)
        block = line * ((1 << 20) // len(line) + 1)
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
    """The CLI reads a bomb to the cap and its JSON report says the rest was not read. The bomb
    is 2,000 metric lines, then 8 KiB filler lines (40 MiB in a few KB, capped at 16 MiB): the
    CLI parses a run from it; 16 MiB of metric lines (the reader's cap on them is the test
    above) cost it 51 s of CPU against 13 s for this shape, for the same warning."""
    head = b"".join(b"step %d | loss %.4f | lr 0.0003\n" % (i, 2.0 / i) for i in range(1, 2001))
    p = _bomb(tmp_path / "train.log.gz", 40, line=b"." * 8191 + b"\n", head=head)
    out = subprocess.run(
        [MLAUDIT, "logs", str(p), "-f", "json"], capture_output=True, text=True, timeout=600
    )
    assert out.returncode in (0, 1), out.stderr
    doc = json.loads(out.stdout)
    assert any("decompressed past" in w for w in doc.get("warnings", [])), doc.get("warnings")
