"""Docs examples a new user copies: no path of the machine the docs were written on, and the files
an example command reads exist in a clone (NOTES 2026-12-01 17:58: docs/agents.md showed
/work/main/.venv/bin/mlaudit; docs/ci.md ran on case/ files nobody has)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"


def test_no_doc_shows_the_development_checkout_path():
    dev = re.compile(r"(?<![\w/])/work/(?:main|shared|coord)\b|" + re.escape(str(ROOT)))
    hits = [
        f"{p.relative_to(ROOT)}:{i}"
        for p in DOCS.rglob("*.md")
        for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
        if dev.search(line)
    ]
    assert hits == []


def test_the_ci_golden_drift_example_reads_files_of_the_repository():
    text = (DOCS / "ci.md").read_text(encoding="utf-8")
    block = text[text.index("## Example: golden drift") :]
    case = re.search(r"^C=(\S+)$", block, re.M)
    assert case, "the example names where its case lives"
    files = re.findall(r"\$C/([\w.-]+)", block[: block.index("```", block.index("mlaudit ci"))])
    assert {"ci_failure.txt", "artifact_refs.txt", "golden_vs_new_h100.csv"} <= set(files)
    for name in files:
        assert (ROOT / case.group(1) / name).is_file(), name
