"""The compact form for agents (issue 20): ``--format compact`` and the MCP tools' ``format:
"compact"`` give the verdict, cause, confidence, top evidence with file:line and next actions
within a token budget.

Inputs: the real public failure cases under ``tests/data/cases/`` and real artifacts of the
labelled corpus under ``tests/data/realworld/`` (their reports, not hand-made ones). The MCP part
drives ``mlaudit mcp`` with the official SDK's client over stdio; the client validates the
structured result against the tool's published output schema.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mlaudit_core.agent.compact import CHARS_PER_TOKEN, COMPACT_SCHEMA, compact_report
from mlaudit_core.audit import audit
from mlaudit_core.formats import load_path
from mlaudit_core.formats.consolelog import load_logs

DATA = Path(__file__).parent / "data"
CASES = DATA / "cases"
MLAUDIT = str(Path(sys.executable).parent / "mlaudit")


def _reports():
    out = {}
    for case in (
        "oom-in-evaluation",
        "fp16-true-nan-after-first-step",
        "overfit-small-data",
        "resume-counter-reset",
    ):
        logs = sorted((CASES / case).glob("*.log"))
        out[case] = audit(load_logs(logs))
    labels = json.loads((DATA / "realworld" / "labels.json").read_text())
    for item in labels[:6]:
        loaded = load_path(DATA / "realworld" / item["path"])
        out[item["id"]] = audit(loaded.runs[0][1])
    return out


@pytest.fixture(scope="module")
def reports():
    return _reports()


@pytest.mark.parametrize("budget", [200, 400, 1000])
def test_within_budget_and_faithful_to_the_report(reports, budget):
    jsonschema = pytest.importorskip("jsonschema")
    for name, rep in reports.items():
        c = compact_report(rep, budget)
        jsonschema.validate(c, COMPACT_SCHEMA)
        assert (
            len(json.dumps(c, separators=(",", ":"), ensure_ascii=False))
            <= budget * CHARS_PER_TOKEN
        ), name
        v = rep.verdict
        assert (c["verdict"], c["cause"], c["confidence"]) == (
            v.outcome.value,
            v.cause.value,
            round(v.confidence, 2),
        ), name
        serious = sorted(
            (f for f in rep.findings if f.severity.rank >= 1), key=lambda f: -f.severity.rank
        )
        # the most severe findings, in order, and a count of the rest
        assert [e["code"] for e in c["evidence"]] == [f.code for f in serious][: len(c["evidence"])]
        assert len(c["evidence"]) + c["omitted"].get("findings", 0) == len(serious), name
        assert len(c["next_actions"]) + c["omitted"].get("next_actions", 0) == len(
            rep.next_actions
        ), name
        if budget >= 400:  # room for the top finding and the first action
            assert not serious or c["evidence"], name
            assert not rep.next_actions or c["next_actions"], name


def test_log_evidence_is_cited_by_file_and_line(reports):
    c = compact_report(reports["oom-in-evaluation"], 400)
    top = c["evidence"][0]
    file, line = top["cite"].rsplit(":", 1)
    assert file == "traceback.log"
    text = (CASES / "oom-in-evaluation" / file).read_text().splitlines()[int(line) - 1]
    assert "out of memory" in text.lower()
    series = compact_report(reports["fp16-true-nan-after-first-step"], 400)["evidence"][0]
    assert series["code"] == "LI001" and series["cite"].startswith("train/loss@step")


def test_cli_compact_equals_the_json_report_compacted(tmp_path):
    log = CASES / "oom-in-evaluation" / "traceback.log"
    env = dict(os.environ, MLAUDIT_COMPACT_TOKENS="300")
    full = subprocess.run(
        [MLAUDIT, "logs", str(log), "-f", "json"],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    comp = subprocess.run(
        [MLAUDIT, "logs", str(log), "-f", "compact"],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert full.returncode in (0, 1) and comp.returncode == full.returncode, comp.stderr
    from mlaudit_core.report import AuditReport

    assert comp.stdout.count("\n") == 1 and len(comp.stdout.strip()) <= 300 * CHARS_PER_TOKEN
    assert json.loads(comp.stdout) == compact_report(
        AuditReport.model_validate_json(full.stdout), 300
    )
    bad = subprocess.run(
        [MLAUDIT, "logs", str(log), "-f", "compact"],
        capture_output=True,
        text=True,
        timeout=120,
        env=dict(env, MLAUDIT_COMPACT_TOKENS="9"),
    )
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1
    assert "MLAUDIT_COMPACT_TOKENS='9'" in bad.stderr


def test_mcp_tools_give_the_compact_form_under_their_output_schema(tmp_path):
    pytest.importorskip("mcp")
    import anyio
    from mcp import Client, StdioServerParameters

    root = tmp_path / "root"
    (root / "case").mkdir(parents=True)
    log = root / "case" / "traceback.log"
    log.write_bytes((CASES / "oom-in-evaluation" / "traceback.log").read_bytes())
    (root / "ts").mkdir()  # a real HF trainer_state.json of the labelled corpus
    (root / "ts" / "trainer_state.json").write_bytes(
        (
            DATA
            / "realworld"
            / "runs"
            / "P4P4N1CK--whisper-large-v2-japanese-5k-steps"
            / "trainer_state.json"
        ).read_bytes()
    )

    async def main():
        params = StdioServerParameters(
            command=MLAUDIT, args=["mcp", "--root", str(root)], cwd=str(root), env=dict(os.environ)
        )
        async with Client(params) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            a = await client.call_tool(
                "audit_logs",
                {"paths": ["case/traceback.log"], "format": "compact", "budget_tokens": 300},
            )
            b = await client.call_tool("audit_path", {"path": "ts", "format": "compact"})
            b_full = await client.call_tool("audit_path", {"path": "ts"})
            full = await client.call_tool("audit_logs", {"paths": ["case/traceback.log"]})
            return tools, a, b, b_full, full

    tools, a, b, b_full, full = anyio.run(main)
    for name in ("audit_run", "audit_path", "audit_logs", "audit_ci"):
        props = tools[name].input_schema["properties"]
        assert props["format"]["enum"] == ["report", "compact"] and "budget_tokens" in props
    assert not a.is_error and a.structured_content["schema"] == "mlaudit-compact/1"
    assert len(a.content[0].text) <= 300 * CHARS_PER_TOKEN
    assert a.structured_content["evidence"][0]["cite"].startswith("traceback.log:")
    assert full.structured_content["verdict"]["outcome"] == a.structured_content["verdict"]
    assert not b.is_error, b.content[0].text
    [entry] = b.structured_content["runs"]
    assert entry["report"]["schema"] == "mlaudit-compact/1"
    [whole] = b_full.structured_content["runs"]
    assert entry["report"]["verdict"] == whole["report"]["verdict"]["outcome"]
    assert entry["report"]["cause"] == whole["report"]["verdict"]["cause"]
