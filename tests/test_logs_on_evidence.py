"""``mlaudit logs`` is built on the evidence pass (issue 20, item 3): one read of the files, the
same collection as ``mlaudit evidence``, and the same run (so the same verdict) as the console
reader alone.

Inputs are the real public failure cases shipped under ``tests/data/cases/`` (copies of
``shared/cases``): an OOM traceback and a NaN-after-first-step fp16 run.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mlaudit.cli import app
from mlaudit_core.audit import audit
from mlaudit_core.evidence import collect
from mlaudit_core.formats.consolelog import load_logs

CASES = Path(__file__).parent / "data" / "cases"
BIN = Path(sys.executable).parent


def _report(args: list[str]) -> dict:
    res = CliRunner().invoke(app, ["logs", *args, "-f", "json", "--fail-on", "never"])
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


@pytest.mark.parametrize("case", ["oom-in-evaluation", "fp16-true-nan-after-first-step"])
def test_same_run_and_verdict_as_the_console_reader_and_same_evidence_as_mlaudit_evidence(
    case, tmp_path
):
    logs = sorted((CASES / case).glob("*.log"))
    assert logs
    ev = collect(None, logs, value_files=False)
    alone = load_logs(logs)
    # the run the evidence pass hands to the audit is the console reader's run, point for point
    assert ev.run.metrics.keys == alone.metrics.keys
    for k in alone.metrics.keys:
        a, b = alone.metrics.series(k), ev.run.metrics.series(k)
        assert (a.steps == b.steps).all() and (
            (a.values == b.values) | (a.values != a.values)
        ).all()
    assert [(c.lineno, c.text) for c in ev.run.console] == [
        (c.lineno, c.text) for c in alone.console
    ]
    v_alone = audit(alone).verdict
    report = _report([*map(str, logs), "--evidence", str(tmp_path / "ev.json")])
    assert (report["verdict"]["outcome"], report["verdict"]["cause"]) == (
        v_alone.outcome.value,
        v_alone.cause.value,
    )
    assert report["verdict"]["confidence"] == pytest.approx(v_alone.confidence)

    # --evidence is the very collection `mlaudit evidence --logs` writes for these files
    written = json.loads((tmp_path / "ev.json").read_text())
    res = subprocess.run(
        [str(BIN / "mlaudit"), "evidence", "--logs", *map(str, logs)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert res.returncode == 0, res.stderr
    assert written == json.loads(res.stdout)
    cited = (
        written["failure_lines"]
        + written["exceptions"]
        + written["infra"]
        + written["metric_lines"]
    )
    if case == "oom-in-evaluation":  # the NaN case prints no failure line (litgpt 'iter' lines)
        assert cited
    assert all(c["file"] in map(str, logs) and c["line"] >= 1 for c in cited)
    for c in cited:  # file:line points at the text quoted
        text = Path(c["file"]).read_text(errors="replace").splitlines()[c["line"] - 1]
        assert text.strip() == c["text"]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are POSIX")
def test_the_files_are_read_once(tmp_path):
    """A named pipe can be read only once: the evidence lines and the audited run both come
    from that single read."""
    src = (CASES / "oom-in-evaluation" / "traceback.log").read_bytes()
    fifo = tmp_path / "train.log"
    os.mkfifo(fifo)

    def feed() -> None:
        with open(fifo, "wb") as f:
            f.write(src)

    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    report = _report([str(fifo), "--evidence", str(tmp_path / "ev.json")])
    writer.join(5)
    ev = json.loads((tmp_path / "ev.json").read_text())
    assert report["verdict"]["outcome"] == "crashed"
    assert any(
        "OutOfMemoryError" in x["text"] or "out of memory" in x["text"].lower()
        for x in ev["exceptions"] + ev["infra"] + ev["failure_lines"]
    )
