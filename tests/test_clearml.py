"""ClearML plugin: the real ClearML SDK against a fake ClearML server on 127.0.0.1, and offline sessions.

``clearml_fake_server`` says what that server implements and why no real ClearML
server is used. Tasks are recorded by the real SDK in child processes
(``clearml_helpers``), the way a training script records them.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("clearml")
mlflow = pytest.importorskip("mlflow")
pytest.importorskip("sklearn")
from clearml_fake_server import FakeClearMLServer  # noqa: E402
from clearml_fake_server import _iso as _fake_iso  # noqa: E402
from clearml_fake_server import _now as _fake_now  # noqa: E402
from typer.testing import CliRunner  # noqa: E402

from mlaudit.cli import app  # noqa: E402
from mlaudit_core import InputError, audit  # noqa: E402
from mlaudit_core.roles import Role  # noqa: E402
from mlaudit_core.rundata import RunStatus  # noqa: E402
from mlaudit_core.writeback import BEGIN  # noqa: E402

HERE = Path(__file__).resolve().parent
HELPERS = str(HERE / "clearml_helpers.py")
MLAUDIT = shutil.which("mlaudit", path=str(Path(sys.executable).parent)) or "mlaudit"
REGIMES = ["healthy", "high_lr", "overfit", "underfit", "starved"]
USER_NOTE = "Sweep 12, lr from the paper. Keep this text."


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """The fake server, a clearml.conf for it, and the environment every SDK user here reads."""
    root = tmp_path_factory.mktemp("clearml")
    srv = FakeClearMLServer().start()
    conf = srv.write_config(root / "clearml.conf")
    env = {
        "CLEARML_CONFIG_FILE": str(conf),
        "CLEARML_CACHE_DIR": str(root / "cache"),
        "CLEARML_LOG_LEVEL": "WARNING",
    }
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    # The SDK binds its log handler to the stream it first sees; create it now, on this process's
    # stream, not on the short-lived stream of the first CliRunner invocation.
    from clearml.debugging.log import LoggerRoot

    LoggerRoot.get_base_logger()
    srv.root = root  # type: ignore[attr-defined]
    yield srv
    for k, v in saved.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v
    srv.stop()


def helper(*args: str, timeout: float = 180) -> dict:
    p = subprocess.run(
        [sys.executable, HELPERS, *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env=dict(os.environ),
    )
    assert p.returncode == 0, p.stdout[-2000:] + p.stderr[-3000:]
    return json.loads(p.stdout.strip().splitlines()[-1])


def cli(*args: str, env: dict | None = None):
    return CliRunner().invoke(app, list(args), env=env)


def cli_proc(*args: str) -> subprocess.CompletedProcess:
    """``mlaudit`` in its own process, as a user runs it (the SDK binds its log handlers to the
    streams it first sees, so write-backs are not run under CliRunner's swapped streams)."""
    return subprocess.run(
        [MLAUDIT, *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=dict(os.environ, COLUMNS="200"),
    )


def one_line(output: str) -> str:
    lines = [ln for ln in output.splitlines() if ln.strip()]
    assert len(lines) == 1, output
    return lines[0]


def sdk_task(task_id: str):
    from clearml import Task

    return Task.get_task(task_id=task_id)


def new_task(project: str, name: str, *, status: str = "completed", steps: int = 120, tags=None):
    """A task made through the SDK: created, started, some scalars, then ``status``."""
    from clearml import Task

    t = Task.create(project_name=project, task_name=name)
    if tags:
        t.add_tags(tags)
    t.mark_started(force=True)
    lg = t.get_logger()
    for i in range(1, steps + 1):
        lg.report_scalar("train", "loss", 2.0 / i + 0.1, iteration=i)
    t.flush(wait_for_uploads=True)
    if status == "completed":
        t.mark_completed(force=True)
    elif status == "failed":
        t.mark_failed(force=True)
    return t


# --------------------------------------------------------------------------- same verdict as MLflow


@pytest.fixture(scope="module")
def trained(server, tmp_path_factory):
    """The five regimes of mlaudit_demo.regimes trained for real into a sqlite MLflow store, then
    replayed point by point into ClearML tasks by the real SDK: regime -> (mlflow run id, task id)."""
    import logging

    from mlaudit_demo import regimes

    logging.getLogger("mlflow").setLevel(logging.WARNING)
    root = tmp_path_factory.mktemp("regimes")
    uri = f"sqlite:///{root / 'mlflow.db'}"
    prev = mlflow.get_tracking_uri()
    mlflow.set_tracking_uri(uri)
    try:
        exp = mlflow.create_experiment("clearml-parity", artifact_location=(root / "art").as_uri())
        mlflow.set_experiment(experiment_id=exp)
        runs = {name: regimes.train(name, seed=0, verbose=False)["run_id"] for name in REGIMES}
    finally:
        mlflow.set_tracking_uri(prev)
    from clearml_helpers import export_mlflow_runs

    export_mlflow_runs(uri, list(runs.values()), str(root / "runs.json"))
    tasks = helper("replay", "--runs", str(root / "runs.json"), "--project", "parity")
    return {"uri": uri, "runs": {name: (rid, tasks[rid]) for name, rid in runs.items()}}


@pytest.mark.parametrize("regime", REGIMES)
def test_same_verdict_as_mlflow(server, trained, regime):
    from mlaudit_mlflow.loader import load_run

    run_id, task_id = trained["runs"][regime]
    mlf_run = load_run(run_id, trained["uri"])
    expected = audit(mlf_run).verdict
    res = cli("clearml", task_id, "--no-write", "--format", "json")
    assert res.exit_code == 0, res.output
    got = json.loads(res.stdout)
    assert (got["verdict"]["outcome"], got["verdict"]["cause"]) == (
        expected.outcome.value,
        expected.cause.value,
    )

    from mlaudit_clearml import ClearMLPlugin

    run = ClearMLPlugin().load(task_id)
    assert run.status is RunStatus.FINISHED and run.identity.project == "parity"
    for key in (
        "train/loss",
        "val/loss",
        "val/accuracy",
        "train/lr",
        "perf/step_time",
        "perf/data_time",
        "perf/throughput",
    ):
        a, b = mlf_run.series(key), run.series(key)
        np.testing.assert_array_equal(a.steps, b.steps)  # every point, not a downsampled curve
        finite = np.isfinite(a.values)
        np.testing.assert_allclose(b.values[finite], a.values[finite], rtol=1e-6)
        assert np.isnan(
            b.values[~finite]
        ).all()  # the SDK stored NaN/inf as 0.0; the console proves them
        assert np.isfinite(b.wall_times).all()
    assert any(c.text.startswith("step ") for c in run.console)
    if regime == "starved":  # long enough for the resource monitor's samples
        assert run.key_for(Role.CPU_UTIL) == ":monitor:machine/cpu_usage"


# --------------------------------------------------------------------------- write-back


def test_writeback_visible_through_sdk_and_idempotent(server, trained):
    import requests

    task_id = trained["runs"]["overfit"][1]
    t = sdk_task(task_id)
    t.set_comment(USER_NOTE)
    t.add_tags(["keep-me"])
    before_scalars = len(server.events[task_id]["training_stats_scalar"])
    import copy

    doc = copy.deepcopy(server.tasks[task_id])
    res = cli("clearml", task_id, "--dry-run")
    assert res.exit_code == 0 and "would write 6 tags: mlaudit.verdict=" in res.output, res.output
    assert f"mlaudit.ended={doc['status_changed']}" in res.output  # the ending audited
    assert server.tasks[task_id] == doc and not any("/mlaudit/" in f for f in server.files)

    for attempt in range(2):
        res = cli("clearml", task_id, "--format", "json")
        assert res.exit_code == 0, res.output
        verdict = json.loads(res.stdout)["verdict"]
        t = sdk_task(task_id)
        labels = t.get_tags()
        assert sorted(labels) == sorted(
            ["keep-me", f"mlaudit:{verdict['outcome']}", f"mlaudit:{verdict['cause']}"]
        )
        props = t.get_user_properties(value_only=True)
        assert (
            props["mlaudit.verdict"] == verdict["outcome"]
            and props["mlaudit.cause"] == verdict["cause"]
        )
        assert float(props["mlaudit.confidence"]) == pytest.approx(verdict["confidence"], abs=0.01)
        assert set(props) >= {"mlaudit.codes", "mlaudit.version"}
        assert props["mlaudit.ended"] == server.tasks[task_id]["status_changed"]
        comment = t.comment
        assert comment.startswith(USER_NOTE) and comment.count(BEGIN) == 1
        samples = t.get_debug_samples("mlaudit", "report")
        assert len(samples) == 1
        page = requests.get(samples[0]["url"], timeout=10).text
        assert verdict["outcome"] in page and "<html" in page.lower()
        # the plots are drawn inline in the page (SVG curves), as in MLflow's artifact viewer
        assert "<svg xmlns=" in page and "<polyline points=" in page
        assert (
            samples[0]["url"].split("/")[-1] in comment
        )  # the report files are linked from the comment
        plots = [p["metric"] + "/" + p["variant"] for p in t.get_reported_plots()]
        assert "mlaudit/loss" in plots and "mlaudit/summary" in plots
        counts = {k: len(v) for k, v in server.events[task_id].items()}
        files = sorted(f for f in server.files if "/mlaudit/" in f)
        if attempt == 0:
            first = (counts, files, len(plots))
    assert (counts, files, len(plots)) == first  # the second audit replaced, nothing accumulated
    assert counts["training_stats_scalar"] == before_scalars  # the panel added no scalars
    assert len(files) == 1  # report.html, with the JSON report in it
    assert (
        "mlaudit/report.html" not in sdk_task(task_id).artifacts
    )  # a completed task takes no artifacts


def test_completed_task_rejects_artifacts_and_the_sdk_hides_it(server):
    t = new_task("status-rules", "done")
    n = sum(1 for e, tid in server.calls if e == "tasks.add_or_update_artifacts" and tid == t.id)
    t.upload_artifact("notes", artifact_object={"a": 1}, wait_on_upload=True)  # no exception ...
    t.reload()
    assert "notes" not in t.artifacts  # ... and no artifact: the server answered 400/110
    assert (
        sum(1 for e, tid in server.calls if e == "tasks.add_or_update_artifacts" and tid == t.id)
        == n + 1
    )

    running = new_task("status-rules", "running", status="in_progress")
    res = cli_proc("clearml", running.id, "--no-baselines")
    assert res.returncode == 0, res.stderr
    running.reload()
    assert "mlaudit/report.html" in running.artifacts


def test_published_task_left_untouched(server):
    t = new_task("status-rules", "published")
    t.set_comment(USER_NOTE)
    t.publish()
    import copy

    doc = copy.deepcopy(server.tasks[t.id])
    events = {k: len(v) for k, v in server.events[t.id].items()}
    files = set(server.files)
    res = cli("clearml", t.id, "--format", "json")
    assert res.exit_code == 2
    line = one_line(res.stderr)
    assert "published" in line and "read-only" in line and "nothing was written" in line
    assert server.tasks[t.id] == doc
    assert {k: len(v) for k, v in server.events[t.id].items()} == events and set(
        server.files
    ) == files
    assert cli("clearml", t.id, "--no-write").exit_code == 0  # reading a published task is fine


# --------------------------------------------------------------------------- errors


def test_unknown_task_wrong_credentials_unreachable_server(server):
    res = cli("clearml", "0" * 32)
    assert res.exit_code == 2 and "no ClearML task" in one_line(res.output)

    res = cli("clearml", "0" * 32, env={"CLEARML_API_SECRET_KEY": "not-the-secret"})
    assert res.exit_code == 2
    line = one_line(res.output)
    assert "rejected the credentials" in line and "not-the-secret" not in res.output
    assert server.secret_key not in res.output

    from conftest import free_port

    t0 = time.time()
    res = cli("clearml", "0" * 32, env={"CLEARML_API_HOST": f"http://127.0.0.1:{free_port()}"})
    elapsed = time.time() - t0
    assert (
        res.exit_code == 2 and "unreachable" in one_line(res.output) and "3 attempts" in res.output
    )
    assert elapsed >= 1.4  # tenacity backed off 0.5 s then 1 s between the three attempts


def test_missing_sdk_prints_install_hint():
    code = (
        "import sys; sys.modules['clearml'] = None\nfrom mlaudit.cli import main\n"
        "sys.argv = ['mlaudit', 'clearml', 'abc']\nmain()\n"
    )
    p = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=dict(os.environ, COLUMNS="200"),
    )
    assert p.returncode == 2
    assert "pip install 'mlaudit[clearml]'" in one_line(p.stderr)


def test_help_imports_no_sdk():
    code = (
        "import sys\nfrom typer.testing import CliRunner\nfrom mlaudit.cli import app\n"
        "for a in (['clearml', '--help'], ['watch', 'clearml', '--help']):\n"
        "    assert CliRunner().invoke(app, a).exit_code == 0\n"
        "sys.exit(1 if 'clearml' in sys.modules else 0)\n"
    )
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert p.returncode == 0, p.stdout + p.stderr


# --------------------------------------------------------------------------- offline sessions


def test_offline_session_folder_and_zip(server, tmp_path):
    from mlaudit_clearml.offline import load_offline

    made = helper("offline", "--out", str(tmp_path))
    folder, zipped = load_offline(made["folder"]), load_offline(made["zip"])
    for run in (folder, zipped):
        assert run.identity.id == made["task_id"] and run.identity.project == "offline-proj"
        assert run.params == {"Args/lr": "0.5", "Args/batch_size": "64"}
        assert run.tags["owner"] == "ml-team" and run.tags["nightly"] == "true"
        loss = run.series("train/loss")
        assert (
            len(loss) == 300 and loss.values[-1] == 123.0
        )  # re-reported point: the last value wins
        assert run.key_for(Role.GPU_UTIL) == ":monitor:gpu/gpu_0_utilization"
        assert run.key_for(Role.GPU_MEMORY) == ":monitor:gpu/gpu_0_mem_usage"
        assert run.status is RunStatus.UNKNOWN and run.start_time < run.end_time
        assert any("CUDA out of memory" in c.text for c in run.console)
    np.testing.assert_array_equal(folder.metrics.to_frame().value, zipped.metrics.to_frame().value)

    res = cli("clearml", "--offline", made["zip"], "--format", "json")
    assert res.exit_code == 0, res.output
    report = json.loads(res.stdout)
    assert (report["verdict"]["outcome"], report["verdict"]["cause"]) == (
        "crashed",
        "infra_runtime",
    )
    assert {"RT001", "OP001", "SY003"} <= {f["code"] for f in report["findings"]}
    # the terminal says where the verdict went (nowhere: an offline session is never written)
    before = sorted((p.relative_to(tmp_path), p.stat().st_mtime_ns) for p in tmp_path.rglob("*"))
    res = cli("clearml", "--offline", made["folder"])
    assert res.exit_code == 0, res.output
    assert "offline session: nothing written back" in res.output
    assert (
        sorted((p.relative_to(tmp_path), p.stat().st_mtime_ns) for p in tmp_path.rglob("*"))
        == before
    )

    res = cli("clearml", "--offline", str(tmp_path / "nope.zip"))
    assert res.exit_code == 2 and "no such offline session" in one_line(res.output)
    res = cli("clearml", "other-id", "--offline", made["folder"])
    assert res.exit_code == 2 and "not other-id" in one_line(res.output)
    with pytest.raises(InputError, match="not a ClearML offline session"):
        load_offline(HELPERS)


def _session_zip(path: Path, metrics: bytes, *, compression=None, log: bytes | None = None) -> Path:
    """A hand-made offline session zip (the layout the SDK writes), with raw member bytes."""
    import zipfile

    task = {"id": "offline-0badc0de", "name": "bad-input", "project_name": "offline-proj"}
    with zipfile.ZipFile(path, "w", compression=compression or zipfile.ZIP_STORED) as z:
        z.writestr("offline-0badc0de/task.json", json.dumps(task))
        z.writestr("offline-0badc0de/metrics.jsonl", metrics)
        if log is not None:
            z.writestr("offline-0badc0de/log.jsonl", log)
    return path


def _scalar(it: int, value, **kw) -> dict:
    return {
        "type": "training_stats_scalar",
        "task": "offline-0badc0de",
        "metric": "train",
        "variant": "loss",
        "iter": it,
        "value": value,
        "timestamp": 1_700_000_000_000 + it,
        **kw,
    }


def test_offline_malformed_lines_are_skipped_with_a_warning(tmp_path):
    from mlaudit_clearml.offline import load_offline

    good = [json.dumps([_scalar(i, 2.0 - i / 100)]) for i in range(50)]
    bad = [
        "5",
        '"text"',
        "{not json",
        "null",
        json.dumps([1, "x", _scalar(99, "not-a-number")]),
        json.dumps([_scalar(98, 1.0, iter="x")]),
    ]
    body = "\n".join(good[:25] + bad + good[25:]).encode()
    log = b"7\n" + json.dumps([{"type": "log", "msg": "epoch done", "timestamp": "soon"}]).encode()
    z = _session_zip(tmp_path / "s.zip", body, log=log)
    run = load_offline(z)
    assert len(run.series("train/loss")) == 50
    assert any("epoch done" in c.text for c in run.console)
    text = " | ".join(run.warnings)
    assert (
        "metrics.jsonl: 3 line(s) that are not a list of events skipped (first at line 26)" in text
    )
    assert "1 line(s) that are not JSON" in text and "2 event(s) that are not JSON objects" in text
    assert "2 scalar event(s) with a non-numeric value" in text and "log.jsonl: 1 line(s)" in text
    res = cli("clearml", "--offline", str(z), "--format", "json", "--fail-on", "never")
    assert res.exit_code == 0, res.output


def _corrupt_crc(path: Path) -> None:
    data = bytearray(path.read_bytes())
    at = data.index(b'{"type": "training_stats_scalar"') + 40
    data[at] ^= 0xFF  # the stored bytes change, the recorded CRC-32 does not
    path.write_bytes(bytes(data))


def _mark_encrypted(path: Path) -> None:
    # set general-purpose bit 0 (encrypted) on metrics.jsonl, in its local and central headers
    data = bytearray(path.read_bytes())
    name = b"offline-0badc0de/metrics.jsonl"
    for sig, flag_at, name_at in ((b"PK\x03\x04", 6, 30), (b"PK\x01\x02", 8, 46)):
        i = data.index(sig)
        while data[i + name_at : i + name_at + len(name)] != name:
            i = data.index(sig, i + 1)
        data[i + flag_at] |= 0x01
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("damage", ["crc", "encrypted", "deflate"])
def test_offline_damaged_zip_is_one_line_exit_2(tmp_path, damage):
    import zipfile

    body = "\n".join(json.dumps([_scalar(i, 1.0)]) for i in range(200)).encode()
    z = tmp_path / "s.zip"
    if damage == "deflate":
        _session_zip(z, body, compression=zipfile.ZIP_DEFLATED)
        data = bytearray(z.read_bytes())
        start = data.index(b"metrics.jsonl") + len(b"metrics.jsonl")
        data[start + 5 : start + 60] = bytes(55)  # garbage in the deflate stream
        z.write_bytes(bytes(data))
    else:
        _session_zip(z, body)
        (_corrupt_crc if damage == "crc" else _mark_encrypted)(z)
    out = tmp_path / "report.json"
    res = cli("clearml", "--offline", str(z), "--out", str(out))
    assert res.exit_code == 2, res.output
    line = one_line(res.output)
    assert line.startswith("mlaudit: error:") and str(z) in line and "metrics.jsonl" in line
    assert ("encrypted" if damage == "encrypted" else "damaged zip member") in line
    assert "Traceback" not in res.output and not out.exists()


def test_offline_zip_bomb_reading_is_bounded(tmp_path, monkeypatch):
    import zipfile

    from mlaudit_clearml import offline

    monkeypatch.setattr(offline, "MAX_SESSION_BYTES", 4 << 20)
    monkeypatch.setattr(offline, "MAX_LINE_BYTES", 64 << 10)
    line = json.dumps([_scalar(0, 1.0)]).encode()
    lines = b"\n".join(json.dumps([_scalar(i, 1.0)]).encode() for i in range(1000))
    body = b"[" + b" " * (1 << 20) + b"]\n" + lines + b"\n" + (line + b"\n") * 100_000  # ~15 MB
    z = _session_zip(tmp_path / "bomb.zip", body, compression=zipfile.ZIP_DEFLATED)
    assert z.stat().st_size < 200_000
    run = offline.load_offline(z)
    assert len(run.series("train/loss")) == 1000  # read up to the cap: a partial run
    text = " | ".join(run.warnings)
    assert "1 line(s) longer than 0 MiB skipped (first at line 1)" in text
    assert "read stopped at" in text and "the run is partial" in text


# --------------------------------------------------------------------------- baselines


def test_find_baselines(server):
    from mlaudit_clearml import ClearMLPlugin

    parent = new_task("elsewhere", "parent", steps=5)
    same_name = new_task("baselines", "exp", steps=5)
    same_label = new_task("baselines", "other", steps=5, tags=["sweep-7"])
    new_task("baselines", "exp", status="failed", steps=5)
    new_task("not-baselines", "exp", steps=5)
    new_task("baselines", "unrelated", steps=5)
    marked = new_task("baselines", "reference", steps=5, tags=["mlaudit.baseline"])
    target = new_task("baselines", "exp", steps=5, tags=["sweep-7"])
    target.set_parent(parent.id)
    plugin = ClearMLPlugin()
    run = plugin.load(target.id)
    assert run.parent_id == parent.id
    found = {r.identity.id for r in plugin.find_baselines(run)}
    assert found == {parent.id, same_name.id, same_label.id, marked.id}


# --------------------------------------------------------------------------- watcher


def _rows(state: Path) -> list[dict]:
    """The runs table of a watcher's state file (read while the watcher may hold it: WAL)."""
    if not state.exists():
        return []
    with sqlite3.connect(str(state)) as db:
        db.row_factory = sqlite3.Row
        if not db.execute("SELECT 1 FROM sqlite_master WHERE name = 'runs'").fetchone():
            return []  # the watcher has opened the file and not yet created its tables
        return [dict(r) for r in db.execute("SELECT * FROM runs ORDER BY seen_at")]


def _wait_row(state: Path, task_id: str, want, what: str, log: Path, timeout: float = 60) -> dict:
    deadline = time.time() + timeout
    while time.time() < deadline:
        rows = [r for r in _rows(state) if r["ref"] == task_id and want(r)]
        if rows:
            return rows[0]
        time.sleep(0.1)
    raise AssertionError(
        f"task {task_id}: not {what} within {timeout} s: {_rows(state)}\n{log.read_text()[-3000:]}"
    )


def _wait_listings(server, n: int, log: Path, timeout: float = 120) -> None:
    """Until the server has answered ``n`` more ``tasks.get_all`` calls (the watcher's trigger
    polls once a call, every --poll-interval), so that at least ``n - 1`` whole polls began after
    this call; a deadline against a hang, never a bound."""

    def listings() -> int:
        return sum(1 for e, _ in list(server.calls) if e == "tasks.get_all")

    want = listings() + n
    deadline = time.time() + timeout
    while listings() < want:
        assert time.time() < deadline, f"no {n} polls in {timeout} s\n{log.read_text()[-3000:]}"
        time.sleep(0.1)


def _write_backs(server, task_id: str) -> int:
    """Write-backs seen by the server: property edits that set ``mlaudit.verdict``."""
    return sum(
        1 for tid, props in server.property_edits if tid == task_id and "mlaudit.verdict" in props
    )


def _ended_property(server, task_id: str) -> str | None:
    prop = server.tasks[task_id].get("hyperparams", {}).get("properties", {}).get("mlaudit.ended")
    return prop and prop.get("value")


def _rerun(task) -> None:
    """Reset the task and run it again to completion (a new ``status_changed``; the labels and
    properties of its earlier audit stay, as on a real server)."""
    task.reset(force=True)
    task.mark_started(force=True)
    task.get_logger().report_scalar("train", "loss", 0.05, iteration=200)
    task.flush(wait_for_uploads=True)
    task.mark_completed(force=True)


def test_watch_source_lists_endings_and_judges_by_the_ending(server):
    """ClearMLWatchSource on the fake server: every ended task of the project (labelled or not) as
    ``(id, status_changed)``; a task counts as audited only for the ending its ``mlaudit.ended``
    names; a task running again is settled without an audit."""
    from mlaudit_clearml.plugin import ClearMLPlugin
    from mlaudit_clearml.watcher import ClearMLWatchSource

    from mlaudit_core.settings import Settings

    since = datetime.now(timezone.utc)
    time.sleep(0.01)
    done, failed = new_task("src", "done"), new_task("src", "failed", status="failed")
    labelled = new_task("src", "labelled", tags=["mlaudit:succeeded"])
    new_task("src", "running", status="in_progress")
    new_task("other-src", "elsewhere")
    plugin = ClearMLPlugin()
    source = ClearMLWatchSource(plugin, "src")
    assert "src" in source.scope and server.api_url in source.scope
    listed = source.list_finished(since)
    assert listed == [
        (t.id, server.tasks[t.id]["status_changed"]) for t in (done, failed, labelled)
    ]
    assert source.list_finished(datetime.now(timezone.utc)) == []
    assert ClearMLWatchSource(plugin, "src", ("failed",)).list_finished(since) == [listed[1]]

    run = source.load(done.id)
    assert not source.is_audited(run) and source.skip_reason(run) is None
    report = audit(run, Settings())
    source.write_back(run, report)
    run = source.load(done.id)
    assert source.is_audited(run) and source.skip_reason(run) == "verdict already present"
    assert run.tags["mlaudit.ended"] == listed[0][1]

    done.reset(force=True)
    done.mark_started(force=True)
    run = source.load(done.id)  # running again: its old verdict and labels are still on it
    assert run.tags["mlaudit.verdict"] and "task is in_progress now" in source.skip_reason(run)
    done.mark_completed(force=True)
    run = source.load(done.id)
    assert not source.is_audited(run) and source.skip_reason(run) is None  # a new ending
    with pytest.raises(InputError, match="no ClearML project named 'nope'"):
        ClearMLWatchSource(plugin, "nope")


class _Watcher:
    """``mlaudit watch clearml`` in its own process (its own session), logging to ``log``."""

    def __init__(self, state: Path, log: Path, *extra: str, env: dict | None = None) -> None:
        self.log = log
        self.proc = subprocess.Popen(
            [
                MLAUDIT,
                "watch",
                "clearml",
                "--project",
                "watched",
                "--poll-interval",
                "1",
                "--state",
                str(state),
                *extra,
            ],
            stdout=log.open("ab"),
            stderr=subprocess.STDOUT,
            env=dict(os.environ, **(env or {})),
            start_new_session=True,
        )

    def wait_up(self, server) -> None:
        """Until the scheduler's service task runs and the watcher logged its start."""
        deadline = time.time() + 60
        while not (
            any(
                t["name"] == "mlaudit watcher: watched" and t["status"] == "in_progress"
                for t in list(server.tasks.values())
            )
            and "INFO watching clearml" in self.log.read_text()
        ):
            assert self.proc.poll() is None and time.time() < deadline, self.log.read_text()
            time.sleep(0.1)

    def stop(self) -> int:
        os.killpg(self.proc.pid, signal.SIGTERM)
        try:
            return self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            raise

    def kill(self) -> None:
        os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=30)


def test_watcher_audits_within_one_interval_once_across_a_kill_and_again_after_a_rerun(
    server, tmp_path
):
    """The real SDK in a watcher process against the fake server: the ClearML Monitor hands a task
    to the shared core within one poll (--poll-interval 1 s; the project listing runs every 10 s,
    so only the trigger is that fast); a watcher SIGKILLed after a write-back and before recording
    it, and a task that ends while no watcher runs, still give one write-back per task; a task reset
    and run again is audited again; SIGTERM exits 0."""
    before = new_task("watched", "before-the-watcher")  # ended before the first start: not audited
    # ...ended 10 minutes ago: a new watcher also audits runs that ended in the START_GRACE_S
    # (2 min) before it started, so "before" must lie further back than that
    long_ago = _fake_iso(_fake_now() - timedelta(minutes=10))
    for field in ("status_changed", "last_update", "last_change"):
        server.tasks[before.id][field] = long_ago
    state, log = tmp_path / "watch.sqlite", tmp_path / "watch.log"
    # every run pauses 60 s after its write-back, before it is recorded done: the kill window
    # (the watcher is killed inside it, so its length costs nothing; a loaded machine can take
    # seconds between the write-back and the check below)
    w = _Watcher(state, log, env={"MLAUDIT_WATCH_TEST_PAUSE": "after_write:60"})
    try:
        w.wait_up(server)
        first = new_task("watched", "first")
        ended = time.time()
        row = _wait_row(state, first.id, lambda r: True, "queued", log, timeout=120)
        assert row["seen_at"] >= ended - 1.0, log.read_text()[-3000:]  # queued for this ending
        assert "queued by the trigger" in log.read_text()  # by the trigger's poll, not a listing
        row = _wait_row(state, first.id, lambda r: r["state"] == "writing", "writing", log)
        deadline = time.time() + 60
        while _ended_property(server, first.id) is None:  # its write-back is complete on the server
            assert time.time() < deadline, log.read_text()[-3000:]
            time.sleep(0.1)
        assert [r["state"] for r in _rows(state) if r["ref"] == first.id] == [
            "writing"
        ]  # not done yet
    finally:
        w.kill()
    while_down = new_task("watched", "while-down")  # ends while no watcher runs
    w = _Watcher(state, log)
    try:
        _wait_row(state, while_down.id, lambda r: r["state"] == "done", "audited", log)
        assert _wait_row(state, first.id, lambda r: r["state"] == "done", "done", log)["wrote"] == 0
        rerun_at = time.time()
        _rerun(first)
        row = _wait_row(
            state, first.id, lambda r: r["seen_at"] >= rerun_at, "queued again", log, timeout=120
        )
        row = _wait_row(
            state, first.id, lambda r: r["state"] == "done" and r["wrote"], "audited again", log
        )
        assert (
            row["ending"]
            == server.tasks[first.id]["status_changed"]
            == _ended_property(server, first.id)
        )
        _wait_listings(server, 4, log)  # the audited tasks' own updates must not queue them again
    finally:
        assert w.stop() == 0, log.read_text()[-3000:]
    text = log.read_text()
    assert f"resuming 1 run(s) left in flight by a previous watcher: {first.id}" in text
    assert "verdict already present, recorded without writing" in text
    assert "Traceback" not in text, text[-3000:]
    rows = {r["ref"]: r for r in _rows(state)}
    assert set(rows) == {first.id, while_down.id} and all(
        r["state"] == "done" for r in rows.values()
    )
    assert (
        _write_backs(server, first.id) == 2
    )  # one per ending, none for the killed watcher's restart
    assert _write_backs(server, while_down.id) == 1 and _write_backs(server, before.id) == 0
    scheduler = next(t for t in server.tasks.values() if t["name"] == "mlaudit watcher: watched")
    assert scheduler["project"] == next(
        p["id"] for p in server.projects.values() if p["name"] == "DevOps"
    )


def test_watcher_start_remotely_enqueues_on_the_queue(server, tmp_path):
    log = tmp_path / "remote.log"
    w = _Watcher(tmp_path / "remote.sqlite", log, "--queue", "services")
    assert w.proc.wait(timeout=60) == 0, log.read_text()
    services = next(q for q in server.queues.values() if q["name"] == "services")
    queued = [server.tasks[e["task"]] for e in services["entries"]]
    assert [t["name"] for t in queued] == ["mlaudit watcher: watched"]
    assert queued[0]["status"] == "queued"
    assert not (tmp_path / "remote.sqlite").exists()  # the agent keeps the state, not this machine


@pytest.mark.parametrize(
    "args, message",
    [
        (["--project", "no-such-project"], "no ClearML project named 'no-such-project'"),
        (
            ["--project", "watched", "--queue", "no-such-queue"],
            "no ClearML queue named 'no-such-queue'",
        ),
        (
            ["--project", "watched", "--status", "completed,running"],
            "--status 'completed,running': use ",
        ),
        (
            ["--project", "watched", "--interval", "-1"],
            "--interval -1.0: must be a positive number of seconds, at most 60480",
        ),
        (
            ["--project", "watched", "--state", "IS_A_DIR"],
            "is a directory, not an mlaudit state file",
        ),
        (["--project", "watched", "--state", "NOT_SQLITE"], "not an mlaudit state file"),
    ],
)
def test_watcher_bad_input_is_one_line_exit_2_and_makes_no_state(
    server, tmp_path, monkeypatch, args, message
):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "IS_A_DIR").mkdir()
    (tmp_path / "NOT_SQLITE").write_text("hello")
    before = sorted(p.name for p in tmp_path.iterdir())
    p = subprocess.run(
        [MLAUDIT, "watch", "clearml", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env=dict(os.environ, COLUMNS="200"),
    )
    assert p.returncode == 2 and message in one_line(p.stderr), p.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # no state, lock or .mlaudit made


def test_comment_edited_during_the_write_back_is_kept(server, trained, monkeypatch):
    """Issue 16.1 on ClearML: the user saves the task comment (real SDK ``Task.set_comment``)
    while mlaudit uploads the report files; the comment is read after the uploads and read back
    after writing, so the edit is kept next to exactly one mlaudit section. (The old write-back
    merged the comment it read before the uploads.)"""
    import mlaudit_clearml.writeback as wb

    task_id = trained["runs"]["healthy"][1]
    sdk_task(task_id).set_comment(USER_NOTE)
    real = wb._register_artifacts

    def register_then_user_edits(task, folder, files, status):
        out = real(task, folder, files, status)
        sdk_task(task_id).set_comment(USER_NOTE + "\nuser edit during the upload")
        return out

    monkeypatch.setattr(wb, "_register_artifacts", register_then_user_edits)
    res = cli("clearml", task_id, "--no-baselines")
    assert res.exit_code == 0, res.output
    comment = sdk_task(task_id).comment
    assert comment.startswith(USER_NOTE + "\nuser edit during the upload"), comment
    assert comment.count(BEGIN) == 1


def test_two_watchers_of_one_project_write_each_task_once(server, tmp_path):
    """Issue 16, two watchers: two ``mlaudit watch clearml`` processes with their own state files
    watch one project; the lease in the user property ``mlaudit.claim`` lets one of them write
    (and so notify) each task, the other settles it as present; no claim is left on a task. Real
    ClearML SDK in real ``mlaudit`` processes against the fake ClearML server
    (tests/clearml_fake_server.py: a real server needs Docker, MongoDB, Elasticsearch)."""
    tasks = [new_task("claimed", f"twice{i}", steps=60) for i in range(3)]
    procs = []
    try:
        for who in ("a", "b"):
            log, state = tmp_path / f"{who}.log", tmp_path / f"{who}.sqlite"
            proc = subprocess.Popen(
                [
                    MLAUDIT,
                    "watch",
                    "clearml",
                    "--project",
                    "claimed",
                    "--poll-interval",
                    "1",
                    "--since",
                    "all",
                    "--no-panel",
                    "--state",
                    str(state),
                ],
                stdout=log.open("ab"),
                stderr=subprocess.STDOUT,
                env=dict(os.environ),
                start_new_session=True,
            )
            procs.append((proc, log, state))
        deadline = time.time() + 240
        while not all(
            len(rows) == len(tasks) and all(r["state"] == "done" for r in rows)
            for rows in (_rows(state) for _p, _l, state in procs)
        ):
            for proc, log, _state in procs:
                assert proc.poll() is None, log.read_text()[-3000:]
            assert time.time() < deadline, "".join(log.read_text()[-3000:] for _p, log, _s in procs)
            time.sleep(0.5)
    finally:
        for proc, _log, _state in procs:
            os.killpg(proc.pid, signal.SIGTERM)
        for proc, log, _state in procs:
            assert proc.wait(timeout=60) == 0, log.read_text()[-3000:]
    logs = "".join(log.read_text() for _p, log, _s in procs)
    for t in tasks:
        assert _write_backs(server, t.id) == 1, logs[-4000:]
        assert logs.count(f"run {t.id}: wrote verdict") == 1, logs[-4000:]
        props = server.tasks[t.id]["hyperparams"]["properties"]
        assert "mlaudit.claim" not in props and props["mlaudit.verdict"]["value"]
        assert server.tasks[t.id]["comment"].count(BEGIN) == 1
    assert "Traceback" not in logs, logs[-4000:]


def test_a_server_that_stops_answering_fails_within_the_tracker_timeout(server, monkeypatch):
    """Issue 16, finding 8 on ClearML: the SDK waited up to 300 s for each answer, so a server
    that accepts and then never answers held every call for minutes. mlaudit's session waits
    ``MLAUDIT_TRACKER_TIMEOUT`` (here 1 s) per read: a call the server leaves hanging for 20 s
    fails as an outage (before: it waited and got the answer). Real SDK, fake server."""
    import threading

    from clearml.backend_interface.base import InterfaceBase
    from mlaudit_clearml.connection import call, connect

    from mlaudit_core.errors import TrackerUnavailable

    task = new_task("hang", "slow")
    monkeypatch.setenv("MLAUDIT_TRACKER_TIMEOUT", "1")
    default = InterfaceBase._default_session
    try:
        session = connect()
        hang = threading.Event()
        original = server.handle

        def slow(endpoint, data, auth_header):
            if endpoint == "tasks.get_all" and hang.is_set():
                time.sleep(20)
            return original(endpoint, data, auth_header)

        monkeypatch.setattr(server, "handle", slow)
        assert call(session, "tasks.get_all", id=[task.id])["tasks"][0]["id"] == task.id
        hang.set()
        with pytest.raises(TrackerUnavailable, match="became unreachable during tasks.get_all"):
            call(session, "tasks.get_all", id=[task.id])
        hang.clear()
    finally:
        InterfaceBase._set_default_session(default)
