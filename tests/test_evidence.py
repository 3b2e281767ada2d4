"""``mlaudit evidence`` on a fixture CI repository whose job (train, then pytest) really ran.

Every cited item is checked against the file it cites; the recomputed figures against an
independent recomputation from the repo's golden file and the job's metrics; and ``mlaudit ci``
is checked to decide on this very collection (its figures equal the evidence's).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from ci_fixture_repo import GOOD, make_repo, run_ci_job

MLAUDIT = str(Path(sys.executable).parent / "mlaudit")


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [MLAUDIT, *args], cwd=cwd, capture_output=True, text=True, timeout=300, env=dict(os.environ)
    )


@pytest.fixture(scope="module")
def job(tmp_path_factory):
    base = tmp_path_factory.mktemp("evidence")
    repo = make_repo(base, loss_rtol=0.01)
    log = run_ci_job(repo, dict(GOOD, lr=0.45))  # changed learning rate: the loss gate fails
    return base, repo, log


def lines_of(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").split("\n")


def test_every_item_cites_its_file_and_line(job):
    base, repo, log = job
    out = base / "out" / "evidence.json"
    res = run("evidence", "--repo", str(repo), "--logs", str(log), "--out", str(out), cwd=base)
    assert res.returncode == 0, res.stderr
    assert "wrote" in res.stderr and res.stdout == ""
    ev = json.loads(out.read_text())
    assert ev["schema"] == "mlaudit-evidence/1"
    assert "verdict" not in ev and "cause" not in json.dumps(list(ev))  # no judgement in it
    log_lines = lines_of(log)
    assert ev["failure_lines"] and ev["pass_lines"] and ev["metric_lines"]
    for kind in ("failure_lines", "pass_lines", "metric_lines"):
        for item in ev[kind]:
            assert log_lines[item["line"] - 1].strip() == item["text"].strip(), item
            if kind != "metric_lines":  # metric lines come without a window (there are many)
                assert any(c.startswith(f"{item['line']}: ") for c in item["context"])
    assert any(
        "FAILED" in x["text"] and "test_loss_matches_golden" in x["text"]
        for x in ev["failure_lines"]
    )
    assert any("PASSED" in x["text"] for x in ev["pass_lines"])
    outcomes = {t["test"].split("::")[-1]: t["outcome"] for t in ev["tests"]}
    assert outcomes["test_loss_matches_golden"] == "failed"
    assert outcomes["test_val_accuracy_matches_golden"] == "passed"
    # gates: each expression is on the cited line of the cited repo file
    assert ev["gates"]
    for g in ev["gates"]:
        src = lines_of(repo / g["file"])
        assert g["expr"].split("(")[0].strip() in src[g["line"] - 1], g
    approx = next(g for g in ev["gates"] if g["kind"] == "approx" and g["metric"] == "loss")
    assert approx["rtol"] == 0.01
    for item in ev["source_candidates"]:
        assert lines_of(repo / item["file"])[item["line"] - 1].strip() == item["text"]
    assert "golden_values.json" in ev["golden_files"]


def test_recomputed_values_match_an_independent_recomputation(job):
    base, repo, log = job
    ev = json.loads(run("evidence", "--repo", str(repo), "--logs", str(log), cwd=base).stdout)
    golden = json.loads((repo / "golden_values.json").read_text())["loss"]["values"]
    actual = json.loads((repo / "metrics.json").read_text())["loss"]
    g = np.array([golden[str(s)] for s in range(1, len(actual) + 1)])
    a = np.array(actual)
    rel = np.abs(a - g) / np.abs(g)
    rec = next(r for r in ev["recomputed"] if r["metric"] == "loss")
    assert rec["max_rel"] == pytest.approx(rel.max(), rel=1e-9)
    check = next(c for c in rec["checks"] if c["gate"]["kind"] == "approx")
    assert check["passed"] is False
    assert check["n_exceed"] == int((np.abs(a - g) > np.maximum(0.01 * np.abs(g), 1e-12)).sum())
    assert check["gate"]["file"] == "tests/test_train.py"

    # mlaudit ci decides on this same collection: its figures are the evidence's
    rep = json.loads(
        run("ci", "--repo", str(repo), "--logs", str(log), "-f", "json", cwd=base).stdout
    )
    km = rep["key_metrics"]["loss"]
    assert km["max_rel"] == rec["max_rel"] and km["max_abs"] == rec["max_abs"]


def test_logs_only_and_bad_input(job, tmp_path):
    base, repo, log = job
    res = run("evidence", "--logs", str(log), cwd=base)
    assert res.returncode == 0, res.stderr
    ev = json.loads(res.stdout)
    assert ev["repo"] is None and ev["gates"] == [] and ev["failure_lines"]
    assert any("no repository" in n for n in ev["notes"])
    bad = run("evidence", "--repo", str(tmp_path / "nope"), "--logs", str(log), cwd=base)
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1
    assert "nope" in bad.stderr
    missing = run("evidence", "--repo", str(repo), "--logs", str(tmp_path / "x.log"), cwd=base)
    assert missing.returncode == 2 and "x.log" in missing.stderr
