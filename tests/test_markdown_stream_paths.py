"""The markdown stream of ``mlaudit FOLDER`` cannot be broken out of by a run's path
Each run's section starts with an HTML comment naming its path; a
folder named ``x--><img src=y onerror=alert(3)>`` closed the comment and left live HTML in
the markdown (rendered by CI summaries and MR comments). Real console script."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

MLAUDIT = str(Path(sys.executable).with_name("mlaudit"))
CSV = "step,loss\n" + "".join(f"{s},{2.0 - 0.1 * s}\n" for s in range(1, 11))


def test_a_path_cannot_close_the_section_comment(tmp_path):
    for name in ("plain", "x--><img src=y onerror=alert(3)>", "y--!><b>z</b>"):
        (tmp_path / "runs" / name).mkdir(parents=True)
        (tmp_path / "runs" / name / "metrics.csv").write_text(CSV)
    proc = subprocess.run(
        [MLAUDIT, "runs", "--no-write", "--format", "markdown"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
    comments = [ln for ln in proc.stdout.splitlines() if ln.startswith("<!--")]
    assert len(comments) == 3
    for ln in comments:  # one comment, closed only at the end of its line
        body = ln[len("<!--") : -len("-->")]
        assert ln.endswith("-->") and "--" not in body, ln
