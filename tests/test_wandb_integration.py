"""W&B integration: real SDK offline runs, the real public API against a local fake server.

The same trainings (examples/regimes.py, logged to MLflow) are replayed into W&B
offline (by the real SDK in a subprocess) and into the local W&B server, and
must get the same verdict through all three loaders.
"""

from __future__ import annotations

import json
import os
import socket
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import pytest
from typer.testing import CliRunner

pytest.importorskip("wandb")

from wandb_fake_server import FakeRun, FakeWandbServer
from wandb_helpers import mlflow_run_as_rows

from mlaudit.cli import app
from mlaudit_core.audit import audit
from mlaudit_core.render.html import report_json_from_html
from mlaudit_core.rundata import RunStatus
from mlaudit_core.writeback import BEGIN

REPO = Path(__file__).resolve().parents[1]
KEY = "k" * 40
ENTITY, PROJECT = "ent", "regimes"
REGIMES = ("healthy", "high_lr")

_REPLAY = r"""
import json, sys
import wandb
spec = json.load(open(sys.argv[1]))
for name, run in spec.items():
    r = wandb.init(project="regimes", id=run["id"], name=name, config=run["params"],
                   tags=["regimes"], group="digits", settings=wandb.Settings(x_disable_stats=True))
    for row in run["rows"]:
        step = row.pop("_step")
        r.log(row, step=step)
    print(run["console"], end="", flush=True)
    r.finish(exit_code=0)
    print(r.dir)
"""


# --------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """Train two regimes into a sqlite MLflow store; return their MLflow runs as replayable rows."""
    pytest.importorskip("mlflow")
    pytest.importorskip("sklearn")
    import mlflow
    from mlflow.tracking import MlflowClient

    sys.path.insert(0, str(REPO / "examples"))
    import regimes

    root = tmp_path_factory.mktemp("regimes")
    uri = f"sqlite:///{root / 'mlflow.db'}"
    mlflow.set_tracking_uri(uri)
    mlflow.set_experiment("regimes")
    client = MlflowClient(uri)
    out = {}
    for name in REGIMES:
        res = regimes.train(name, seed=0, verbose=False)
        run_id = res["run_id"]
        out[name] = {
            "mlflow_id": run_id,
            "id": f"{name.replace('_', '')}0",
            **mlflow_run_as_rows(client, run_id, root),
        }
    mlflow.set_tracking_uri(None)
    return {"uri": uri, "runs": out}


@pytest.fixture(scope="module")
def offline_dirs(trained, tmp_path_factory):
    """The same rows logged by the real wandb SDK in offline mode (one subprocess, two runs)."""
    root = tmp_path_factory.mktemp("wandb-offline")
    spec = root / "spec.json"
    spec.write_text(
        json.dumps(
            {
                n: {k: r[k] for k in ("id", "params", "rows", "console")}
                for n, r in trained["runs"].items()
            }
        )
    )
    env = dict(os.environ, WANDB_MODE="offline", WANDB_DIR=str(root), WANDB_SILENT="true")
    env.pop("WANDB_BASE_URL", None)
    subprocess.run(
        [sys.executable, "-c", _REPLAY, str(spec)],
        env=env,
        check=True,
        capture_output=True,
        timeout=120,
    )
    dirs = {}
    for name, r in trained["runs"].items():
        (d,) = (root / "wandb").glob(f"offline-run-*-{r['id']}")
        dirs[name] = d
    return dirs


@pytest.fixture(scope="module")
def server(trained):
    """The local W&B server holding the same runs, with the SDK pointed at it."""
    mp = pytest.MonkeyPatch()
    with FakeWandbServer(api_key=KEY, entity=ENTITY) as srv:
        for name, r in trained["runs"].items():
            rows = [
                dict(row, _runtime=row["_timestamp"] - r["rows"][0]["_timestamp"])
                for row in r["rows"]
            ]
            srv.add_run(
                FakeRun(
                    ENTITY,
                    PROJECT,
                    r["id"],
                    display_name=name,
                    config=dict(r["params"]),
                    tags=["regimes", "keep-me"],
                    notes="user notes",
                    group="digits",
                    history=rows,
                    files={"output.log": r["console"].encode()},
                    summary={k: v for k, v in rows[-1].items() if not k.startswith("_")},
                )
            )
        mp.setenv("WANDB_BASE_URL", srv.base_url)
        mp.setenv("WANDB_API_KEY", KEY)
        mp.setenv("WANDB_SILENT", "true")
        mp.delenv("WANDB_MODE", raising=False)
        yield srv
    mp.undo()


def _plugin():
    from mlaudit_wandb.plugin import WandbPlugin

    return WandbPlugin()


# --------------------------------------------------------------------------- offline


def test_offline_reads_every_point_config_console_and_exit(trained, offline_dirs):
    from mlaudit_wandb.offline import load_offline

    r = trained["runs"]["healthy"]
    run = load_offline(offline_dirs["healthy"])
    assert run.identity.id == r["id"] and run.identity.tracker == "wandb"
    assert run.status is RunStatus.FINISHED and run.environment["exit_code"] == "0"
    loss = run.metrics.series("train/loss")
    want = [row["train/loss"] for row in r["rows"] if "train/loss" in row]
    assert len(loss) == len(want) and list(loss.values) == want  # full fidelity, exact values
    assert list(loss.steps) == [row["_step"] for row in r["rows"] if "train/loss" in row]
    assert run.params["lr"] == r["params"]["lr"]
    assert [c.text for c in run.console] == r["console"].splitlines()
    out_log = (offline_dirs["healthy"] / "files" / "output.log").read_text().splitlines()
    assert [c.text for c in run.console] == out_log  # records agree with the SDK's own output.log
    assert run.tags["wandb.group"] == "digits" and "regimes" in run.tags
    assert not run.warnings


def test_a_wandb_folder_audits_its_latest_run_and_says_so(offline_dirs):
    """``mlaudit wandb --offline wandb/`` follows ``latest-run`` and names the run it chose."""
    wandb_dir = next(iter(offline_dirs.values())).parent
    latest = (wandb_dir / "latest-run").resolve()
    res = CliRunner().invoke(app, ["wandb", "--offline", str(wandb_dir), "--format", "json"])
    assert res.exit_code == 0, res.output
    n = len(offline_dirs)
    assert (
        f"{wandb_dir}: auditing the latest run, {latest.name} ({n} run directories there; "
        "give one to audit another)"
    ) in " ".join(res.output.split())
    assert (
        json.loads(res.stdout[res.stdout.index("{") :])["run"]["id"]
        == latest.name.rsplit("-", 1)[1]
    )


def test_truncated_log_keeps_records_and_warns(offline_dirs, tmp_path):
    from mlaudit_wandb.offline import find_log, load_offline

    full = find_log(offline_dirs["high_lr"]).read_bytes()
    cut = tmp_path / "run-cut.wandb"
    cut.write_bytes(full[: len(full) * 2 // 3])
    run = load_offline(cut)
    n_full = len(load_offline(offline_dirs["high_lr"]).metrics.series("train/loss"))
    assert 0 < len(run.metrics.series("train/loss")) < n_full
    assert any("truncated" in w for w in run.warnings)
    assert run.status is RunStatus.RUNNING  # no exit record: inconclusive, never "healthy"
    report = audit(run)
    assert report.verdict.outcome.value == "running" and report.warnings


def test_reader_joins_multi_block_records_and_stops_at_bad_checksum(tmp_path):
    from mlaudit_wandb.records import (
        BLOCK_LEN,
        FIRST,
        FULL,
        LAST,
        MIDDLE,
        ScanResult,
        iter_payloads,
    )

    def chunk(kind, data):
        return (
            struct.pack("<IHB", zlib.crc32(data, zlib.crc32(bytes([kind]))), len(data), kind) + data
        )

    big = bytes(range(256)) * 300  # 76,800 bytes: spans three blocks
    head = b":W&B" + struct.pack("<HB", 0xBEE1, 0)
    a = BLOCK_LEN - len(head) - 7
    b = BLOCK_LEN - 7
    body = chunk(FIRST, big[:a]) + chunk(MIDDLE, big[a : a + b]) + chunk(LAST, big[a + b :])
    good = chunk(FULL, b"small")
    bad = bytearray(chunk(FULL, b"corrupt"))
    bad[-1] ^= 0xFF
    data = head + body + good + bytes(bad) + chunk(FULL, b"after")
    res = ScanResult(tmp_path / "x.wandb")
    got = list(iter_payloads(data, res.path, res))
    assert got == [big, b"small"]
    assert len(res.warnings) == 1 and "checksum mismatch" in res.warnings[0]


def test_not_a_wandb_file_is_one_clear_line(tmp_path):
    bogus = tmp_path / "run-x.wandb"
    bogus.write_bytes(b"hello world, not a run")
    res = CliRunner().invoke(app, ["wandb", "--offline", str(bogus)])
    assert res.exit_code == 2
    assert "not a W&B run file" in res.output and "Traceback" not in res.output


# --------------------------------------------------------------------------- online


def test_online_reads_full_history_and_console(trained, server):
    r = trained["runs"]["high_lr"]
    run = _plugin().load(f"{ENTITY}/{PROJECT}/{r['id']}")
    assert run.status is RunStatus.FINISHED and run.identity.project == f"{ENTITY}/{PROJECT}"
    loss = run.metrics.series("train/loss")
    want = [row["train/loss"] for row in r["rows"] if "train/loss" in row]
    assert len(loss) == len(want)  # every point (healthy: 615 rows, see the live-tail test)
    assert [str(x) for x in loss.values] == [str(x) for x in want]  # NaN/inf survive
    assert [c.text for c in run.console] == r["console"].splitlines()
    assert "RunParquetHistory" in server.operations  # full-fidelity path, not sampledHistory
    assert "RunSampledHistory" not in server.operations
    assert {a.path for a in run.artifacts} >= {"output.log"}


def test_live_tail_overlap_is_read_once(trained, server):
    r = trained["runs"]["healthy"]
    server.live_rows = 7  # wandb-core re-reads the page holding the live tail
    try:
        run = _plugin().load(f"{ENTITY}/{PROJECT}/{r['id']}")
    finally:
        server.live_rows = 0
    steps = run.metrics.series("train/loss").steps
    assert len(steps) == len(set(steps.tolist())) == sum("train/loss" in x for x in r["rows"])


def test_same_verdict_mlflow_offline_online(trained, offline_dirs, server):
    from mlaudit_wandb.offline import load_offline

    from mlaudit_core.plugins import get_plugin

    mlflow_plugin = get_plugin("mlflow", tracking_uri=trained["uri"])
    outcomes = {}
    for name, r in trained["runs"].items():
        v_mlflow = audit(mlflow_plugin.load(r["mlflow_id"])).verdict
        v_off = audit(load_offline(offline_dirs[name])).verdict
        v_on = audit(_plugin().load(f"{ENTITY}/{PROJECT}/{r['id']}")).verdict
        got = {(v.outcome, v.cause) for v in (v_mlflow, v_off, v_on)}
        assert len(got) == 1, f"{name}: mlflow {v_mlflow}, offline {v_off}, online {v_on}"
        outcomes[name] = v_mlflow.outcome.value
    assert outcomes["high_lr"] == "diverged" and outcomes["healthy"] != "diverged"


def test_writeback_visible_through_public_api_and_idempotent(trained, server):
    import wandb

    r = trained["runs"]["high_lr"]
    ref = f"{ENTITY}/{PROJECT}/{r['id']}"
    for _ in range(2):
        res = CliRunner().invoke(app, ["wandb", ref, "--no-panel", "-f", "json"])
        assert res.exit_code == 0, res.output
    api = wandb.Api()
    wrun = api.run(ref)
    assert [t for t in wrun.tags if t.startswith("mlaudit:")] == ["mlaudit:diverged"]
    assert {"regimes", "keep-me"} <= set(wrun.tags)
    assert wrun.summary["mlaudit/verdict"] == "diverged"
    assert wrun.summary["mlaudit/run_state"] == "finished"
    assert set(wrun.summary.keys()) >= {
        "mlaudit/cause",
        "mlaudit/confidence",
        "mlaudit/codes",
        "mlaudit/version",
    }
    assert wrun.notes.startswith("user notes") and wrun.notes.count(BEGIN) == 1
    names = [f.name for f in wrun.files()]
    assert names.count("mlaudit/report.html") == 1  # the page carries the JSON report
    page = server.run(ENTITY, PROJECT, r["id"]).files["mlaudit/report.html"].decode()
    report = json.loads(report_json_from_html(page) or "null")
    assert report["verdict"]["outcome"] == "diverged"
    assert KEY not in json.dumps(report) and KEY not in wrun.notes


def test_dry_run_writes_nothing(trained, server):
    r = trained["runs"]["healthy"]
    before = server.run(ENTITY, PROJECT, r["id"])
    tags, notes = list(before.tags), before.notes
    res = CliRunner().invoke(
        app, ["wandb", f"{ENTITY}/{PROJECT}/{r['id']}", "--dry-run", "-f", "json"]
    )
    assert res.exit_code == 0, res.output
    assert "would write" in res.output
    after = server.run(ENTITY, PROJECT, r["id"])
    assert after.tags == tags and after.notes == notes and "mlaudit/report.html" not in after.files


def test_running_run_gives_inconclusive_report(trained, server):
    r = trained["runs"]["healthy"]
    server.add_run(
        FakeRun(
            ENTITY,
            PROJECT,
            "live1",
            state="running",
            history=r["rows"][:100],
            config=dict(r["params"]),
        )
    )
    res = CliRunner().invoke(
        app, ["wandb", f"{ENTITY}/{PROJECT}/live1", "--no-write", "-f", "json"]
    )
    assert res.exit_code == 0, res.output
    report = json.loads(res.stdout)
    assert report["verdict"]["outcome"] == "running"
    assert report["verdict"]["confidence"] <= 0.5


@pytest.mark.parametrize("case", ["deleted", "wrong_key", "unreachable", "bad_ref"])
def test_bad_online_input_is_one_line_exit_2(server, monkeypatch, case):
    ref = f"{ENTITY}/{PROJECT}/gone1"
    if case == "deleted":
        server.add_run(FakeRun(ENTITY, PROJECT, "gone1", deleted=True))
    elif case == "wrong_key":
        monkeypatch.setenv("WANDB_API_KEY", "w" * 40)
    elif case == "unreachable":
        # a port held bound and not listening for the whole call: nobody answers on it (a port that
        # was only free a moment ago was taken by another process's fake server once, in CI)
        closed = socket.socket()
        closed.bind(("127.0.0.1", 0))
        monkeypatch.setenv("WANDB_BASE_URL", f"http://127.0.0.1:{closed.getsockname()[1]}")
    else:
        ref = "just-a-run-id"
    try:
        res = CliRunner().invoke(app, ["wandb", ref, "--timeout", "3"])
    finally:
        if case == "unreachable":
            closed.close()
    assert res.exit_code == 2, res.output
    lines = [x for x in res.output.splitlines() if x.strip()]
    assert len(lines) == 1 and lines[0].startswith("mlaudit: error:"), res.output
    assert "Traceback" not in res.output and "w" * 40 not in res.output
    expect = {
        "deleted": "no such run",
        "wrong_key": "rejected the API key",
        "unreachable": "cannot reach",
        "bad_ref": "ENTITY/PROJECT/RUN_ID",
    }[case]
    assert expect in lines[0]


@pytest.mark.parametrize(
    "ref", ["not/a valid/ref/extra", "justone", "a b/proj/run1", "https://wandb.ai/ent/proj"]
)
def test_malformed_ref_is_rejected_before_login(tmp_path, monkeypatch, ref):
    # no key and no server: a shape check must answer before any login or request
    monkeypatch.delenv("WANDB_API_KEY", raising=False)
    monkeypatch.setenv("WANDB_BASE_URL", "http://127.0.0.1:9")
    monkeypatch.setenv("NETRC", str(tmp_path / "no-netrc"))
    monkeypatch.chdir(tmp_path)
    res = CliRunner().invoke(app, ["wandb", ref, "--timeout", "3"])
    assert res.exit_code == 2, res.output
    lines = [x for x in res.output.splitlines() if x.strip()]
    assert len(lines) == 1 and lines[0].startswith("mlaudit: error:"), res.output
    assert repr(ref) in lines[0] and "ENTITY/PROJECT/RUN_ID" in lines[0]
    assert "login" not in lines[0] and "Traceback" not in res.output
    assert list(tmp_path.iterdir()) == []


def test_find_baselines_group_and_config_except_seed(trained, server):
    r = trained["runs"]["healthy"]
    server.add_run(FakeRun(ENTITY, PROJECT, "seed1", config=dict(r["params"], seed="1")))
    server.add_run(FakeRun(ENTITY, PROJECT, "other1", config=dict(r["params"], lr="9")))
    found = {
        b.path.rsplit("/", 1)[1]: b.reason
        for b in _plugin().find_baselines(f"{ENTITY}/{PROJECT}/{r['id']}")
    }
    assert found[trained["runs"]["high_lr"]["id"]] == "group"
    assert found["seed1"] == "config"
    assert "other1" not in found and r["id"] not in found


# auto-triage (webhook receiver, watch wandb): tests/test_wandb_triage.py


def test_wandb_system_metric_names_play_roles():
    from mlaudit_wandb.mapping import system_key

    from mlaudit_core.roles import AliasTable, Role

    keys = [system_key(k) for k in ("gpu.0.gpu", "gpu.0.memoryAllocated", "gpu.0.memory", "cpu")]
    t = AliasTable()
    assert t.resolve(Role.GPU_UTIL, keys) == "system.gpu.0.gpu"
    assert t.resolve(Role.GPU_MEMORY, keys) == "system.gpu.0.memoryAllocated"
    assert t.resolve(Role.CPU_UTIL, keys) == "system.cpu"
