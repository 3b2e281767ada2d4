"""docs/extending.md's tracker-plugin walk-through is a working plugin (issue 22).

The three code blocks of "Add a tracker plugin, with its commands" (the entry point, the
plugin, its commands) are written out as a real distribution (module files plus a
``.dist-info`` whose ``entry_points.txt`` is the block's entry point) on ``PYTHONPATH``; the
real ``mlaudit`` then runs ``jsonstore RUN``, ``watch jsonstore`` and ``batch jsonstore`` in
subprocesses on runs the test writes. The example must also stay under 100 lines.
"""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "extending.md"


def _blocks() -> dict[str, str]:
    text = DOC.read_text()
    section = text[text.index("## Add a tracker plugin, with its commands") :]
    section = section[: section.index("\n## ", 5)] if "\n## " in section[5:] else section
    out = {}
    for lang, body in re.findall(r"```(toml|python)\n(.*?)```", section, re.DOTALL):
        first = body.splitlines()[0]
        out["pyproject" if lang == "toml" else first.lstrip("# ").strip()] = body
    return out


def test_the_walkthrough_is_short():
    blocks = _blocks()
    assert set(blocks) == {"pyproject", "mlaudit_jsonstore/plugin.py", "mlaudit_jsonstore/cli.py"}
    assert sum(len(b.splitlines()) for b in blocks.values()) < 100


def test_the_walkthrough_plugin_adds_its_commands(tmp_path):
    blocks = _blocks()
    dist = tmp_path / "dist"
    (dist / "mlaudit_jsonstore").mkdir(parents=True)
    (dist / "mlaudit_jsonstore" / "__init__.py").write_text("")
    for name in ("mlaudit_jsonstore/plugin.py", "mlaudit_jsonstore/cli.py"):
        (dist / name).write_text(blocks[name])
    info = dist / "mlaudit_jsonstore-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: mlaudit-jsonstore\nVersion: 0.1\n")
    eps = "\n".join(line for line in blocks["pyproject"].splitlines() if not line.startswith("#"))
    (info / "entry_points.txt").write_text(
        eps.replace('"mlaudit.trackers"', "mlaudit.trackers")
        .replace("[project.entry-points.", "[")
        .replace('"', "")
    )
    store = tmp_path / "store"
    store.mkdir()
    good = [2.0 * math.exp(-i / 25) + 0.1 + 0.01 * math.sin(i) for i in range(200)]
    bad = [2.0 * math.exp(-i / 25) + 0.1 for i in range(80)] + [
        0.5 * math.exp(i / 6) for i in range(60)
    ]
    for ref, status, loss in (
        ("good", "finished", good),
        ("bad", "finished", bad + ["nan"] * 5),
        ("busy", "running", good[:40]),
    ):
        (store / f"{ref}.json").write_text(
            json.dumps(
                {
                    "status": status,
                    "ended": None if status == "running" else "2026-11-30T10:00:00+00:00",
                    "metrics": {"train/loss": loss},
                }
            )
        )
    env = dict(os.environ, PYTHONPATH=str(dist), JSONSTORE=str(store), COLUMNS="200")

    def mlaudit(*args):
        return subprocess.run(
            [sys.executable, "-c", "from mlaudit.cli import main; main()", *args],
            capture_output=True,
            text=True,
            env=env,
            cwd=tmp_path,
            timeout=300,
        )

    r = mlaudit("--help")
    assert r.returncode == 0 and "jsonstore" in r.stdout, r.stdout + r.stderr
    r = mlaudit("jsonstore", "bad", "--format", "json", "--no-write")
    assert r.returncode in (0, 1), r.stderr
    assert json.loads(r.stdout)["verdict"]["outcome"] == "diverged"
    assert "tags" not in json.loads((store / "bad.json").read_text())  # --no-write
    r = mlaudit("jsonstore", "missing")
    assert r.returncode == 2 and r.stderr.strip().endswith("not found in " + str(store)), r.stderr
    r = mlaudit("watch", "jsonstore", "--once", "--since", "all", "--state", str(tmp_path / "w.db"))
    assert r.returncode == 0, r.stderr
    tags = {
        ref: json.loads((store / f"{ref}.json").read_text()).get("tags", {})
        for ref in ("good", "bad", "busy")
    }
    assert tags["bad"]["mlaudit.verdict"] == "diverged" and "mlaudit.verdict" in tags["good"]
    assert tags["busy"] == {}
    r = mlaudit("batch", "jsonstore", "--format", "json", "--state", str(tmp_path / "b.db"))
    assert r.returncode == 0, r.stderr
    rows = {row["id"]: row for row in json.loads(r.stdout)["rows"]}
    assert set(rows) == {"good", "bad"} and rows["bad"]["outcome"] == "diverged"


# --- "Add a detector": one module and one case file --------------------------------------------

_DETECTOR_RUN = r"""
import importlib.util, json, sys
from pathlib import Path
import yaml

module, cases, tests = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
spec = importlib.util.spec_from_file_location("mlaudit_core.detectors.OP099", module)
mod = importlib.util.module_from_spec(spec)
sys.modules[spec.name] = mod
spec.loader.exec_module(mod)  # subclassing Detector registers it: nothing else is edited

sys.path.insert(0, tests)
from test_detector_cases import make_run  # the case runner of tests/detectors
from mlaudit_core import Settings
from mlaudit_core.audit import audit, run_detectors
from mlaudit_core.detectors import registry
from mlaudit_core.render.plots import markers_from_findings

op099 = registry()["OP099"]
out = {"registered": "OP099" in registry(), "doc": op099.summary(), "cases": {},
       "remedies": [r.cost for r in op099.remedies]}
for case in yaml.safe_load(cases.read_text())["cases"]:
    run = make_run(case)
    findings, _ = run_detectors(run, Settings(select=["OP099"]))
    out["cases"][case["name"]] = {"fires": bool(findings), "expected": bool(case["fires"]),
                                  "facts": findings[0].facts if findings else {}}
    if case["fires"]:
        rep = audit(run)
        out["in_report"] = any(f.code == "OP099" for f in rep.findings)
        f = next(f for f in rep.findings if f.code == "OP099")
        out["hypotheses"] = [h.status for h in op099.hypotheses(f, rep.verdict.outcome)]
        out["marked"] = [m.label for m in markers_from_findings(rep) if m.label.startswith("OP099")]
print(json.dumps(out))
"""


def _detector_blocks() -> tuple[str, str]:
    text = DOC.read_text()
    section = text[
        text.index("## Add a detector") : text.index("\n## ", text.index("## Add a detector") + 5)
    ]
    module = next(
        b for b in re.findall(r"```python\n(.*?)```", section, re.DOTALL) if "class " in b
    )
    cases = next(b for b in re.findall(r"```yaml\n(.*?)```", section, re.DOTALL) if "cases:" in b)
    return module, cases


def test_the_detector_walkthrough_is_one_module_and_one_case_file(tmp_path):
    """The detector of docs/extending.md (OP099) and its case file, written out as given and
    nothing else: it registers, carries its remedies and hypotheses, its cases fire and stay quiet
    as they say, an audit reports it and the HTML report marks it on its plot (from its series
    evidence). Run in a fresh
    interpreter so the example never joins this process's registry."""
    module, cases = _detector_blocks()
    (tmp_path / "OP099.py").write_text(module)
    (tmp_path / "OP099.yaml").write_text(cases)
    r = subprocess.run(
        [
            sys.executable,
            "-c",
            _DETECTOR_RUN,
            str(tmp_path / "OP099.py"),
            str(tmp_path / "OP099.yaml"),
            str(ROOT / "tests" / "detectors"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert out["registered"] and out["doc"].startswith("Training loss is exactly constant")
    assert out["cases"] and all(c["fires"] == c["expected"] for c in out["cases"].values()), out
    assert out["cases"]["frozen-after-warmup"]["facts"]["start_step"] == 101
    assert out["in_report"] and out["marked"], out
    assert out["remedies"] == ["minutes"] and out["hypotheses"] == ["supported"], out
