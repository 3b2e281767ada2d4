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
    section = text[text.index("## Add a tracker plugin, with its commands"):]
    section = section[:section.index("\n## ", 5)] if "\n## " in section[5:] else section
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
    (info / "entry_points.txt").write_text(eps.replace('"mlaudit.trackers"', "mlaudit.trackers")
                                           .replace("[project.entry-points.", "[")
                                           .replace('"', ""))
    store = tmp_path / "store"
    store.mkdir()
    good = [2.0 * math.exp(-i / 25) + 0.1 + 0.01 * math.sin(i) for i in range(200)]
    bad = [2.0 * math.exp(-i / 25) + 0.1 for i in range(80)] + [0.5 * math.exp(i / 6) for i in range(60)]
    for ref, status, loss in (("good", "finished", good), ("bad", "finished", bad + ["nan"] * 5),
                              ("busy", "running", good[:40])):
        (store / f"{ref}.json").write_text(json.dumps({
            "status": status, "ended": None if status == "running" else "2026-11-30T10:00:00+00:00",
            "metrics": {"train/loss": loss}}))
    env = dict(os.environ, PYTHONPATH=str(dist), JSONSTORE=str(store), COLUMNS="200")

    def mlaudit(*args):
        return subprocess.run([sys.executable, "-c", "from mlaudit.cli import main; main()", *args],
                              capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)

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
    tags = {ref: json.loads((store / f"{ref}.json").read_text()).get("tags", {})
            for ref in ("good", "bad", "busy")}
    assert tags["bad"]["mlaudit.verdict"] == "diverged" and "mlaudit.verdict" in tags["good"]
    assert tags["busy"] == {}
    r = mlaudit("batch", "jsonstore", "--format", "json", "--state", str(tmp_path / "b.db"))
    assert r.returncode == 0, r.stderr
    rows = {row["id"]: row for row in json.loads(r.stdout)["rows"]}
    assert set(rows) == {"good", "bad"} and rows["bad"]["outcome"] == "diverged"
