"""``mlaudit mcp`` driven by the official MCP SDK's own client, over stdio in a subprocess (and once
over streamable HTTP), on real inputs: runs in a real ``mlflow server`` on 127.0.0.1, a
TensorBoard logdir written by tensorboardX's SummaryWriter, and a fixture CI repository whose
job (train, then pytest) really ran. Structured results are validated against
docs/schema/report.schema.json, and each verdict is compared with the CLI's for the same input.
"""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

mcp = pytest.importorskip("mcp")
mlflow = pytest.importorskip("mlflow")
tbx = pytest.importorskip("tensorboardX")
jsonschema = pytest.importorskip("jsonschema")

import anyio  # noqa: E402
from ci_fixture_repo import GOOD, make_repo, run_ci_job  # noqa: E402
from conftest import free_port  # noqa: E402
from mcp import Client, StdioServerParameters  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402

from mlaudit_core.agent.tools import TOOL_NAMES  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
MLAUDIT = str(Path(sys.executable).parent / "mlaudit")
REPORT_SCHEMA = json.loads((REPO / "docs" / "schema" / "report.schema.json").read_text())
SPIKE_STEP = 1234


def validate_report(doc: dict) -> None:
    jsonschema.Draft202012Validator(REPORT_SCHEMA).validate(doc)


def session(root: Path, fn, *extra: str):
    """Start ``mlaudit mcp --root ROOT`` as a subprocess, connect the SDK client, run ``fn``."""

    async def main():
        params = StdioServerParameters(
            command=MLAUDIT,
            args=["mcp", "--root", str(root), *extra],
            cwd=str(root),
            env=dict(os.environ),
        )
        async with Client(params) as client:
            return await fn(client)

    return anyio.run(main)


def cli_json(*args: str, cwd: Path) -> dict:
    out = subprocess.run(
        [MLAUDIT, *args, "-f", "json"],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        env=dict(os.environ),
    )
    assert out.returncode in (0, 1), out.stderr
    return json.loads(out.stdout)


def same_verdict(a: dict, b: dict) -> None:
    for k in ("outcome", "cause", "confidence"):
        assert a["verdict"][k] == b["verdict"][k], k
    assert sorted(f["code"] for f in a["findings"]) == sorted(f["code"] for f in b["findings"])


# --- inputs --------------------------------------------------------------------------------------


def log_runs(url: str) -> dict:
    """A diverging run with one spike, and a run that is worse than three baseline seeds."""
    from mlflow.entities import Metric, Param

    client = mlflow.MlflowClient(url)
    out = {}
    exp = client.create_experiment(f"mcp-div-{time.time_ns()}")
    rid = client.create_run(exp, run_name="diverge").info.run_id
    ms = []
    for i in range(1, 2001):
        loss = 2.3 * math.exp(-i / 300) + 0.2 if i < 1500 else 0.25 + (i - 1500) * 0.01
        if i == SPIKE_STEP:
            loss = 40.0  # one point: get_series must keep it at any max_points
        if i > 1980:
            loss = float("nan")
        ms.append(Metric("train/loss", loss, 1_700_000_000_000 + i, i))
    for k in range(0, len(ms), 900):
        client.log_batch(rid, metrics=ms[k : k + 900])
    client.log_batch(rid, params=[Param("lr", "0.3")])
    client.set_terminated(rid, "FAILED")
    out["diverged"] = rid

    exp = client.create_experiment(f"mcp-cmp-{time.time_ns()}")
    ids = []
    for seed, offset in ((1, 0.0), (2, 0.004), (3, -0.003), (4, 0.35)):
        r = client.create_run(exp, run_name=f"seed{seed}").info.run_id
        rng = np.random.default_rng(seed)
        ms = [
            Metric(
                "val/loss",
                1.5 * math.exp(-i / 40) + 0.4 + offset + float(rng.normal(0, 0.002)),
                1_700_000_000_000 + i,
                i,
            )
            for i in range(1, 201)
        ]
        client.log_batch(r, metrics=ms, params=[Param("lr", "0.001"), Param("seed", str(seed))])
        client.set_terminated(r)
        ids.append(r)
    out["baselines"], out["worse"] = ids[:3], ids[3]
    return out


@pytest.fixture(scope="module")
def runs(mlflow_server):
    return log_runs(mlflow_server["url"])


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    """The server's only root: a TensorBoard logdir, a CI repository with its job log."""
    base = tmp_path_factory.mktemp("mcp-root")
    w = tbx.SummaryWriter(str(base / "tb" / "run1"))
    for i in range(1, 301):  # train loss keeps falling, val loss turns up after step 120: overfit
        w.add_scalar("train/loss", 2.3 * np.exp(-i / 60) + 0.05, i)
        if i % 10 == 0:
            w.add_scalar(
                "val/loss",
                0.6 + 0.00002 * (i - 120) ** 2 + (0.0 if i > 120 else 0.004 * (120 - i)),
                i,
            )
    w.close()
    ci = base / "ci"
    ci.mkdir()
    repo = make_repo(ci, loss_rtol=0.01)
    run_ci_job(repo, dict(GOOD, lr=0.45))  # a changed learning rate: the loss gate fails
    return base


# --- tests ---------------------------------------------------------------------------------------


def test_tools_listed_with_schemas_and_help_does_not_import_mcp(root):
    async def fn(c):
        return (await c.list_tools()).tools

    tools = session(root, fn)
    assert {t.name for t in tools} == set(TOOL_NAMES)
    for t in tools:
        jsonschema.Draft202012Validator.check_schema(t.input_schema)
        jsonschema.Draft202012Validator.check_schema(t.output_schema)
        assert t.input_schema["type"] == "object" and t.description
    by = {t.name: t for t in tools}
    # the full report, or its compact form with format 'compact' (tests/test_compact.py)
    out = by["audit_run"].output_schema
    assert (
        out["type"] == "object" and out["$defs"]["AuditReport"]["title"] == REPORT_SCHEMA["title"]
    )
    assert out["anyOf"] == [{"$ref": "#/$defs/AuditReport"}, {"$ref": "#/$defs/CompactReport"}]
    assert by["audit_run"].input_schema["properties"]["write_back"]["default"] is False
    assert set(by["audit_run"].input_schema["required"]) == {"tracker", "run_ref"}
    code = (
        "import sys; sys.argv = ['mlaudit', '--help']\nfrom mlaudit.cli import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "print('IMPORTED', sorted(m for m in sys.modules if m == 'mcp' or m.startswith('mcp.')"
        " or m.startswith('mlaudit_core.agent')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.stdout.strip().splitlines()[-1] == "IMPORTED []"


def test_mlflow_run_same_verdict_as_cli_write_back_only_when_asked(root, runs, mlflow_server):
    url, rid = mlflow_server["url"], runs["diverged"]
    client = mlflow.MlflowClient(url)
    progress: list[tuple] = []

    async def fn(c):
        async def on_progress(p, total, message):
            progress.append((p, total, message))

        first = await c.call_tool(
            "audit_run",
            {"tracker": "mlflow", "run_ref": rid, "tracking_uri": url, "baselines": []},
            progress_callback=on_progress,
        )
        tags_between = dict(client.get_run(rid).data.tags)
        second = await c.call_tool(
            "audit_run",
            {
                "tracker": "mlflow",
                "run_ref": rid,
                "tracking_uri": url,
                "baselines": [],
                "write_back": True,
            },
        )
        return first, tags_between, second

    first, tags_between, second = session(root, fn, "--tracking-uri", mlflow_server["url"])
    assert not first.is_error and not second.is_error
    rep = first.structured_content
    validate_report(rep)
    assert rep["verdict"]["outcome"] == "diverged"
    assert not any(k.startswith("mlaudit.") for k in tags_between)  # nothing written by default
    assert any("nothing written back" in c.text for c in first.content)
    tags = client.get_run(rid).data.tags
    assert tags["mlaudit.verdict"] == second.structured_content["verdict"]["outcome"]
    assert tags["mlaudit.cause"] == second.structured_content["verdict"]["cause"]
    # progress notifications arrived for the stages, ending at total
    assert len(progress) >= 3 and progress[-1][0] == progress[-1][1]
    assert any("loading" in m for _, _, m in progress) and any(
        "auditing" in m for _, _, m in progress
    )
    cli = cli_json("mlflow", rid, "-u", url, "--no-write", "--no-baselines", cwd=root)
    same_verdict(rep, cli)


def test_missing_run_is_a_one_line_tool_error_like_the_cli(root, mlflow_server):
    url, missing = mlflow_server["url"], "0" * 32

    async def fn(c):
        return await c.call_tool(
            "audit_run", {"tracker": "mlflow", "run_ref": missing, "tracking_uri": url}
        )

    res = session(root, fn, "--tracking-uri", mlflow_server["url"])
    assert res.is_error and res.structured_content is None
    text = res.content[0].text
    assert "\n" not in text and missing in text
    cli = subprocess.run(
        [MLAUDIT, "mlflow", missing, "-u", url, "--no-write"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=120,
        env=dict(os.environ),
    )
    assert cli.returncode == 2
    assert text == cli.stderr.strip()


def test_tensorboard_ci_logs_same_verdicts_as_cli(root):
    tb = root / "tb" / "run1"
    repo, log = root / "ci" / "repo", root / "ci" / "ci.log"

    async def fn(c):
        return (
            await c.call_tool("audit_path", {"path": "tb"}),
            await c.call_tool("audit_ci", {"repo": "ci/repo", "logs": ["ci/ci.log"]}),
            await c.call_tool("audit_logs", {"paths": [str(log)]}),
            await c.call_tool("collect_evidence", {"repo": "ci/repo", "logs": ["ci/ci.log"]}),
        )

    tb_res, ci_res, logs_res, ev_res = session(root, fn)
    for r in (tb_res, ci_res, logs_res, ev_res):
        assert not r.is_error, r.content[0].text
    runs_found = tb_res.structured_content["runs"]
    assert len(runs_found) == 1 and runs_found[0]["reader"] == "tensorboard"
    tb_rep = runs_found[0]["report"]
    validate_report(tb_rep)
    same_verdict(tb_rep, cli_json(str(tb), "--no-write", cwd=root))
    assert not (tb / "mlaudit").exists() and not any("mlaudit" in p.name for p in tb.rglob("*"))

    validate_report(ci_res.structured_content)
    same_verdict(
        ci_res.structured_content, cli_json("ci", "--repo", str(repo), "--logs", str(log), cwd=root)
    )
    validate_report(logs_res.structured_content)
    same_verdict(logs_res.structured_content, cli_json("logs", str(log), cwd=root))

    ev = ev_res.structured_content
    cli_ev = json.loads(
        subprocess.run(
            [MLAUDIT, "evidence", "--repo", str(repo), "--logs", str(log)],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        ).stdout
    )
    assert ev["failure_lines"] == cli_ev["failure_lines"] and ev["gates"] == cli_ev["gates"]
    assert ev["recomputed"] and ev["recomputed"][0]["checks"]


def test_paths_outside_the_roots_are_refused(root, tmp_path, mlflow_server):
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "trainer_state.json").write_text('{"log_history": []}')

    async def fn(c):
        return [
            await c.call_tool(name, args)
            for name, args in (
                ("audit_path", {"path": str(outside)}),
                ("audit_path", {"path": "../" + outside.name}),
                ("audit_logs", {"paths": ["/etc/passwd"]}),
                ("audit_ci", {"repo": str(outside), "logs": ["ci/ci.log"]}),
                ("collect_evidence", {"logs": [str(outside / "trainer_state.json")]}),
                ("get_series", {"source": "path", "run_ref": str(outside), "metric": "loss"}),
                (
                    "audit_run",
                    {
                        "tracker": "mlflow",
                        "run_ref": "x",
                        "tracking_uri": f"sqlite:///{outside}/mlflow.db",
                    },
                ),
            )
        ]

    for res in session(root, fn):
        assert res.is_error
        text = res.content[0].text
        assert "outside the allowed roots" in text and "\n" not in text, text
    assert not (outside / "mlflow.db").exists()


def test_series_keeps_the_spike_compare_runs_band_and_rules(root, runs, mlflow_server):
    url = mlflow_server["url"]

    async def fn(c):
        return (
            await c.call_tool(
                "get_series",
                {
                    "source": "mlflow",
                    "run_ref": runs["diverged"],
                    "tracking_uri": url,
                    "metric": "train_loss",
                    "max_points": 100,
                },
            ),
            await c.call_tool(
                "get_series",
                {
                    "source": "mlflow",
                    "run_ref": runs["diverged"],
                    "tracking_uri": url,
                    "metric": "train/loss",
                    "start": 1200,
                    "end": 1300,
                },
            ),
            await c.call_tool(
                "get_series",
                {
                    "source": "mlflow",
                    "run_ref": runs["diverged"],
                    "tracking_uri": url,
                    "metric": "nope",
                },
            ),
            await c.call_tool(
                "compare_runs",
                {
                    "source": "mlflow",
                    "run": runs["worse"],
                    "baselines": runs["baselines"],
                    "tracking_uri": url,
                },
            ),
            await c.call_tool(
                "compare_runs",
                {
                    "source": "mlflow",
                    "run": runs["baselines"][0],
                    "baselines": runs["baselines"][1:],
                    "tracking_uri": url,
                },
            ),
            await c.call_tool("list_rules", {}),
            await c.call_tool("explain_rule", {"code": "op001"}),
            await c.call_tool("explain_rule", {"code": "ZZ999"}),
            await c.call_tool("audit_run", {"tracker": "mlflow", "run_ref": 5}),
        )

    s, window, missing, worse, same, rules, rule, bad_rule, bad_args = session(
        root, fn, "--tracking-uri", mlflow_server["url"]
    )
    d = s.structured_content
    assert d["key"] == "train/loss" and d["points_total"] == 2000 and d["points_finite"] == 1980
    assert d["downsampled"] and d["points_returned"] <= 100
    assert SPIKE_STEP in d["steps"] and max(d["values"]) == 40.0  # the spike is never hidden
    assert d["max"] == 40.0 and d["max_step"] == SPIKE_STEP
    assert d["nonfinite"]["count"] == 20 and d["nonfinite"]["steps"][0] == 1981
    w = window.structured_content
    assert w["steps"][0] == 1200 and w["steps"][-1] == 1300 and not w["downsampled"]
    assert missing.is_error and "train/loss" in missing.content[0].text
    cw = {c["key"]: c for c in worse.structured_content["comparisons"]}
    assert cw["val/loss"]["verdict"] == "worse" and cw["val/loss"]["n_baselines"] == 3
    assert sorted(cw["val/loss"]["baseline_ids"]) == sorted(runs["baselines"])
    cs = {c["key"]: c for c in same.structured_content["comparisons"]}
    assert cs["val/loss"]["verdict"] in ("within_noise", "insufficient_seeds")
    codes = {r["code"] for r in rules.structured_content["rules"]}
    assert "OP001" in codes and len(codes) > 20
    assert rule.structured_content["code"] == "OP001" and rule.structured_content["doc"]
    assert bad_rule.is_error and "ZZ999" in bad_rule.content[0].text
    assert bad_args.is_error and "run_ref" in bad_args.content[0].text


def test_streamable_http_on_localhost(root):
    port = free_port()
    proc = subprocess.Popen(
        [MLAUDIT, "mcp", "--root", str(root), "--http", str(port)],
        cwd=root,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "MLAUDIT_MCP_TOKEN": "test-token-0123456789abcdef"},
    )
    try:
        assert "127.0.0.1" in proc.stderr.readline()

        async def main():
            for _ in range(100):
                try:
                    from mcp.shared._httpx_utils import create_mcp_http_client

                    http = create_mcp_http_client(
                        headers={"Authorization": "Bearer test-token-0123456789abcdef"}
                    )
                    async with (
                        http,
                        Client(
                            streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=http)
                        ) as c,
                    ):
                        return (await c.list_tools()).tools, await c.call_tool(
                            "audit_path", {"path": "tb/run1"}
                        )
                except Exception:  # noqa: BLE001 - not listening yet
                    await anyio.sleep(0.2)
            raise AssertionError("the HTTP server did not answer")

        tools, res = anyio.run(main)
        assert {t.name for t in tools} == set(TOOL_NAMES)
        validate_report(res.structured_content["runs"][0]["report"])
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_print_config_and_skill_tool_names():
    out = subprocess.run(
        [MLAUDIT, "mcp", "--print-config", "--root", str(REPO)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout
    blocks = [b for b in re.split(r"^# .*$", out, flags=re.M) if b.strip().startswith("{")]
    assert len(blocks) == 3  # Claude Desktop, VS Code, Cursor
    for b in blocks:
        cfg = json.loads(b)
        entry = (cfg.get("mcpServers") or cfg["servers"])["mlaudit"]
        assert entry["args"][:1] == ["mcp"] and str(REPO) in entry["args"]
        assert Path(entry["command"]).is_absolute()
    assert "claude mcp add mlaudit -- " in out

    import yaml

    text = (REPO / "docs" / "agents" / "SKILL.md").read_text()
    m = re.match(r"^---\n(.*?)\n---\n", text, re.S)
    assert m, "SKILL.md starts with YAML front matter"
    front = yaml.safe_load(m.group(1))
    assert front["name"] == "mlaudit" and len(front["description"]) > 40
    named = set(re.findall(r"`([a-z]+_[a-z_]+)`", text))
    tools_named = {
        n
        for n in named
        if n.split("_")[0] in ("audit", "get", "compare", "explain", "list", "collect")
    }
    assert tools_named and tools_named <= set(TOOL_NAMES), tools_named - set(TOOL_NAMES)
    assert {"audit_run", "audit_path", "audit_ci", "get_series"} <= tools_named


def _abridge(obj, depth: int = 0):
    """Long lists cut to their first items (with a count) for the transcript; values unchanged."""
    if isinstance(obj, dict):
        return {k: _abridge(v, depth + 1) for k, v in obj.items()}
    if isinstance(obj, list) and len(obj) > 4:
        return [_abridge(v, depth + 1) for v in obj[:3]] + [f"... {len(obj) - 3} more"]
    if isinstance(obj, list):
        return [_abridge(v, depth + 1) for v in obj]
    return obj


def test_worked_example_transcript(root, runs, mlflow_server):
    """The transcript in docs/agents.md: an agent's session, as the SDK client saw it.

    With ``MLAUDIT_TRANSCRIPT=FILE`` the Markdown is written to FILE (how the doc's copy was made).
    """
    url, rid = mlflow_server["url"], runs["diverged"]
    steps: list[tuple[str, dict, object]] = []

    async def fn(c):
        tools = (await c.list_tools()).tools
        steps.append(("tools/list", {}, [t.name for t in tools]))
        args = {"tracker": "mlflow", "run_ref": rid, "tracking_uri": url}
        rep = (await c.call_tool("audit_run", args)).structured_content
        steps.append(("audit_run", args, rep))
        top = next(f for f in rep["findings"] if any("step_start" in e for e in f["evidence"]))
        ev = next(e for e in top["evidence"] if "step_start" in e)
        sargs = {
            "source": "mlflow",
            "run_ref": rid,
            "tracking_uri": url,
            "metric": ev["metric"],
            "start": max(0, int(ev["step_start"]) - 50),
            "max_points": 20,
        }
        steps.append(
            ("get_series", sargs, (await c.call_tool("get_series", sargs)).structured_content)
        )
        eargs = {"code": top["code"]}
        steps.append(
            ("explain_rule", eargs, (await c.call_tool("explain_rule", eargs)).structured_content)
        )
        return rep

    rep = session(root, fn, "--tracking-uri", mlflow_server["url"])
    validate_report(rep)
    assert steps[2][2]["key"] == "train/loss" and steps[2][2]["points_returned"] <= 20
    assert steps[3][2]["code"] in {f["code"] for f in rep["findings"]}
    md = []
    for name, args, result in steps:
        if name == "tools/list":
            md += ["**tools/list** ->", "", "```json", json.dumps(result), "```", ""]
            continue
        if name == "audit_run":
            result = {
                k: result[k]
                for k in ("verdict", "findings", "hypotheses", "unknowns", "next_actions")
            }
            result["findings"] = [
                {k: f[k] for k in ("code", "severity", "message", "evidence")}
                for f in result["findings"]
            ]
        if name == "explain_rule":
            result = {**result, "doc": result["doc"].split("\n\n")[0]}
        md += [
            f"**tools/call `{name}`**",
            "",
            "```json",
            json.dumps(args, indent=1),
            "```",
            "",
            "structuredContent (lists abridged to 3 items):",
            "",
            "```json",
            json.dumps(_abridge(result), indent=1),
            "```",
            "",
        ]
    text = "\n".join(md)
    assert rid in text and rep["verdict"]["outcome"] in text
    if os.environ.get("MLAUDIT_TRANSCRIPT"):
        Path(os.environ["MLAUDIT_TRANSCRIPT"]).write_text(text, encoding="utf-8")


_WANDB_RUN = r"""
import math, wandb
r = wandb.init(project="mcp", name="offline-diverge", config={"lr": 0.5},
               settings=wandb.Settings(x_disable_stats=True))
for i in range(1, 401):
    loss = 2.3 * math.exp(-i / 50) + 0.1 if i <= 250 else 0.1 * math.exp((i - 250) / 25)
    r.log({"train/loss": loss}, step=i)
r.finish(exit_code=1)
"""


def test_wandb_and_clearml_offline_runs_same_verdict_as_cli(root):
    """Offline runs made by the real wandb and clearml SDKs (no server can run here), audited
    through audit_run with the run folder / session zip as run_ref; write-back is refused."""
    pytest.importorskip("wandb")
    pytest.importorskip("clearml")
    env = dict(os.environ, WANDB_MODE="offline", WANDB_DIR=str(root), WANDB_SILENT="true")
    env.pop("WANDB_BASE_URL", None)
    subprocess.run(
        [sys.executable, "-c", _WANDB_RUN], env=env, check=True, capture_output=True, timeout=180
    )
    (wb_dir,) = (root / "wandb").glob("offline-run-*")
    env = {k: v for k, v in os.environ.items() if not k.startswith("CLEARML_")}
    p = subprocess.run(
        [
            sys.executable,
            str(REPO / "tests" / "clearml_helpers.py"),
            "offline",
            "--out",
            str(root / "clearml"),
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
        check=True,
    )
    zipped = json.loads(p.stdout.strip().splitlines()[-1])["zip"]

    async def fn(c):
        return (
            await c.call_tool("audit_run", {"tracker": "wandb", "run_ref": str(wb_dir)}),
            await c.call_tool("audit_run", {"tracker": "clearml", "run_ref": zipped}),
            await c.call_tool(
                "audit_run", {"tracker": "wandb", "run_ref": str(wb_dir), "write_back": True}
            ),
        )

    wb, cl, wb_write = session(root, fn)
    for r in (wb, cl):
        assert not r.is_error, r.content[0].text
        validate_report(r.structured_content)
    assert wb.structured_content["verdict"]["outcome"] == "diverged"
    same_verdict(wb.structured_content, cli_json("wandb", "--offline", str(wb_dir), cwd=root))
    same_verdict(cl.structured_content, cli_json("clearml", "--offline", zipped, cwd=root))
    assert wb_write.is_error and "offline" in wb_write.content[0].text
