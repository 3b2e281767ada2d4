"""W&B auto-triage on the shared watcher core: ``serve wandb-webhook`` and ``watch wandb``.

The real wandb SDK (``wandb.Api``, through its wandb-core service) talks to the local fake W&B
server (``tests/wandb_fake_server.py``: the GraphQL queries and mutations mlaudit sends, with
the real API's payload shapes) on 127.0.0.1; no W&B server can run here (W&B Local is a
licensed multi-GB container) and tests must not need credentials or network. The receiver
runs as a real ``mlaudit`` process and is SIGKILLed and restarted; write-backs are counted on
the server (``upsertBucket`` per run).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import requests
from typer.testing import CliRunner

from mlaudit.cli import app

wandb_fake_server = pytest.importorskip("wandb_fake_server")
from test_batch_trackers import wandb_rows  # noqa: E402
from wandb_helpers import sdk_pointed_at  # noqa: E402

KEY = "k" * 40
SECRET = "hook-secret-0123456789"
ENTITY = "ent"
MLAUDIT = str(Path(sys.executable).with_name("mlaudit"))


@pytest.fixture(scope="module")
def server():
    """Projects ``hooked`` and ``polled``: a healthy, a diverging and a running run each;
    ``srv.writes`` counts upserts (tags/summary/notes write-backs) per run."""
    pytest.importorskip("wandb")
    FakeRun, FakeWandbServer = wandb_fake_server.FakeRun, wandb_fake_server.FakeWandbServer
    with FakeWandbServer(api_key=KEY, entity=ENTITY) as srv:
        for project in ("hooked", "polled"):
            for shape in ("healthy", "diverge"):
                srv.add_run(
                    FakeRun(
                        ENTITY,
                        project,
                        shape,
                        display_name=shape,
                        history=wandb_rows(shape),
                        heartbeat_at="2026-03-01T00:00:00",
                    )
                )
            srv.add_run(
                FakeRun(
                    ENTITY, project, "live", state="running", history=wandb_rows("healthy")[:50]
                )
            )
        srv.writes = {}
        upsert = srv._upsert_bucket

        def counting_upsert(input=None, **kw):
            r = srv._find_by_storage_id((input or {}).get("id") or "")
            res = upsert(input=input, **kw)
            if r is not None:  # an update of an existing run (not a run start)
                srv.writes[f"{r.project}/{r.name}"] = srv.writes.get(f"{r.project}/{r.name}", 0) + 1
            return res

        srv._upsert_bucket = counting_upsert
        with sdk_pointed_at(srv, KEY):
            yield srv


def _writes(srv, project: str, run: str) -> int:
    return srv.writes.get(f"{project}/{run}", 0)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait(cond, timeout: float, what: str, log: Path | None = None) -> None:
    deadline = time.time() + timeout
    while not cond():
        if time.time() > deadline:
            raise AssertionError(
                f"timed out waiting for {what}\n"
                + (log.read_text() if log and log.exists() else "")
            )
        time.sleep(0.2)


def _source():
    from mlaudit_wandb.triage import WandbWatchSource

    from mlaudit_core.plugins import get_plugin

    return WandbWatchSource(get_plugin("wandb", panel=False), "wandb webhook")


def test_webhook_auth_queue_and_health(server, tmp_path):
    """Before the watcher runs, deliveries only queue: status codes and the health counts."""
    from mlaudit_wandb.triage import make_app
    from starlette.testclient import TestClient

    from mlaudit_core.service import StateStore, WatchConfig, Watcher
    from mlaudit_core.settings import Settings

    with StateStore(tmp_path / "q.sqlite", "wandb webhook") as store:
        w = Watcher(_source(), store, Settings(), WatchConfig(max_pending=2))
        client = TestClient(make_app(w, SECRET))
        body = {"entity": ENTITY, "project": "hooked", "run_id": "healthy", "event_type": "RUN"}
        assert client.post("/webhook", json=body).status_code == 401
        assert (
            client.post("/webhook", json=body, headers={"Authorization": "Bearer nope"}).status_code
            == 401
        )
        ok = {"Authorization": f"Bearer {SECRET}"}
        assert client.post("/webhook", json=body, headers=ok).status_code == 202
        assert client.post("/webhook", json=body, headers=ok).status_code == 200  # waiting already
        assert client.post("/webhook", json={"x": 1}, headers=ok).status_code == 400
        assert client.post("/webhook", content=b"{not json", headers=ok).status_code == 400
        assert client.post("/webhook", json=dict(body, state="running"), headers=ok).json() == {
            "ignored": "run state running"
        }
        assert (
            client.post(
                "/webhook",
                json={"run_url": f"https://wandb.ai/{ENTITY}/hooked/runs/diverge"},
                headers=ok,
            ).status_code
            == 202
        )
        assert (
            client.post(
                "/webhook", json={"run_path": f"{ENTITY}/hooked/live"}, headers=ok
            ).status_code
            == 503
        )
        assert client.get("/healthz").json() == {
            "ok": False,
            "queued": 2,
            "retrying": 0,
            "done": 0,
            "failed": 0,
        }
        assert [r["ref"] for r in store.rows()] == [
            f"{ENTITY}/hooked/healthy",
            f"{ENTITY}/hooked/diverge",
        ]
    with StateStore(tmp_path / "q.sqlite", "wandb webhook") as again:  # a restart loses nothing
        assert again.pending() == 2


class _Receiver:
    def __init__(self, port: int, state: Path, log: Path) -> None:
        env = dict(os.environ, MLAUDIT_WANDB_WEBHOOK_SECRET=SECRET)
        self.url = f"http://127.0.0.1:{port}"
        self.log = log
        self.proc = subprocess.Popen(
            [
                MLAUDIT,
                "serve",
                "wandb-webhook",
                "--port",
                str(port),
                "--state",
                str(state),
                "--no-panel",
                "--concurrency",
                "2",
            ],
            env=env,
            stdout=open(log, "a"),
            stderr=subprocess.STDOUT,
        )
        _wait(self._up, 60, "the receiver to answer /healthz", log)

    def _up(self) -> bool:
        assert self.proc.poll() is None, self.log.read_text()
        try:
            return requests.get(f"{self.url}/healthz", timeout=1).json()["ok"]
        except requests.RequestException:
            return False

    def post(self, run: str) -> int:
        return requests.post(
            f"{self.url}/webhook",
            json={"run_path": f"{ENTITY}/hooked/{run}"},
            headers={"Authorization": f"Bearer {SECRET}"},
            timeout=60,
        ).status_code

    def health(self) -> dict:
        return requests.get(f"{self.url}/healthz", timeout=60).json()


def test_webhook_receiver_audits_each_run_once_across_a_kill(server, tmp_path):
    """Deliveries are audited by the running receiver; SIGKILL and restart lose nothing and
    write nothing twice; a duplicate delivery of a judged run is settled without a write; a
    run still running is not written; SIGTERM exits 0."""
    state, log = tmp_path / "hook.sqlite", tmp_path / "hook.log"
    port = _free_port()
    rx = _Receiver(port, state, log)
    try:
        assert rx.post("healthy") == 202 and rx.post("live") == 202
        _wait(
            lambda: rx.health()["done"] == 2 and rx.health()["queued"] == 0,
            60,
            "the healthy run's verdict",
            log,
        )
        assert server.run(ENTITY, "hooked", "healthy").summary["mlaudit/verdict"] == "succeeded"
        per_write = _writes(server, "hooked", "healthy")  # upserts of one write-back
        assert per_write >= 1
    finally:
        rx.proc.send_signal(signal.SIGKILL)
        rx.proc.wait(10)
    rx = _Receiver(port, state, log)
    try:
        assert rx.post("diverge") == 202  # delivered after the restart
        assert rx.post("healthy") == 202  # a redelivery of a judged run: looked at, not rewritten
        _wait(
            lambda: rx.health()["done"] == 3 and rx.health()["queued"] == 0,
            60,
            "the restarted receiver to settle both runs",
            log,
        )
        assert server.run(ENTITY, "hooked", "diverge").summary["mlaudit/verdict"] == "diverged"
        rx.proc.send_signal(signal.SIGTERM)
        assert rx.proc.wait(30) == 0
    finally:
        if rx.proc.poll() is None:
            rx.proc.kill()
    assert _writes(server, "hooked", "healthy") == per_write  # not written again
    assert _writes(server, "hooked", "diverge") == per_write  # written once
    assert _writes(server, "hooked", "live") == 0
    assert "mlaudit/verdict" not in server.run(ENTITY, "hooked", "live").summary
    from mlaudit_core.service import StateStore

    with StateStore(state, "wandb webhook") as st:
        rows = {r["ref"].rsplit("/", 1)[1]: r for r in st.rows()}
    assert rows["live"]["note"] == "still running; audited when it ends"
    assert rows["healthy"]["note"] == "verdict already present" and rows["healthy"]["writes"] == 1
    assert SECRET not in log.read_text()


def test_watch_wandb_once_audits_then_skips_judged_runs(server, tmp_path):
    args = [
        "watch",
        "wandb",
        "--project",
        f"{ENTITY}/polled",
        "--once",
        "--since",
        "all",
        "--no-panel",
        "--state",
        str(tmp_path / "w.sqlite"),
    ]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    per_write = _writes(server, "polled", "healthy")
    assert per_write >= 1 and _writes(server, "polled", "diverge") == per_write
    assert _writes(server, "polled", "live") == 0
    summary = server.run(ENTITY, "polled", "diverge").summary
    assert (summary["mlaudit/verdict"], summary["mlaudit/run_state"]) == ("diverged", "finished")
    # a fresh state file: the listing itself leaves judged runs out (the loop guard)
    from mlaudit_core.plugins import get_plugin

    assert get_plugin("wandb").list_finished(project=f"{ENTITY}/polled") == []
    res = CliRunner().invoke(app, args[:-1] + [str(tmp_path / "w2.sqlite")])
    assert res.exit_code == 0, res.output
    assert _writes(server, "polled", "healthy") == per_write  # nothing written twice
    assert _writes(server, "polled", "diverge") == per_write


def test_a_truncated_history_cache_file_is_read_again_then_retried_not_given_up(server):
    """wandb-core keeps one parquet file per run in WANDB_CACHE_DIR; two processes scanning one
    run at once truncate it under each other (seen with two watchers of one project: "failed to
    create reader for file: ... EOF: Parquet file too small"). The fake server answers the first
    export downloads with no bytes (the same file on disk); the real SDK fails on it. One empty
    download: the scan is started again and the whole history arrives. Three (every scan of one
    load): an outage the watcher retries, not a run given up. Real wandb SDK against
    tests/wandb_fake_server.py (no W&B server can run here)."""
    from mlaudit_core.errors import TrackerUnavailable
    from mlaudit_core.plugins import get_plugin

    FakeRun = wandb_fake_server.FakeRun
    rows = wandb_rows("healthy")
    assert len(rows) > server.live_rows  # some rows come through the parquet export
    for name, empty in (("cache1", 1), ("cache3", 3)):
        server.add_run(
            FakeRun(ENTITY, "cachefile", name, history=rows, heartbeat_at="2026-03-01T00:00:00")
        )
        server.run(ENTITY, "cachefile", name).empty_exports = empty
    data = get_plugin("wandb").load(f"{ENTITY}/cachefile/cache1")
    assert server.run(ENTITY, "cachefile", "cache1").empty_exports == 0
    assert len(data.metrics.series("train/loss")) == len(rows)
    with pytest.raises(TrackerUnavailable, match="failed to create reader for file"):
        get_plugin("wandb").load(f"{ENTITY}/cachefile/cache3")


@pytest.mark.parametrize(
    "argv, message",
    [
        (["watch", "wandb", "--project", "no-entity"], "expected ENTITY/PROJECT"),
        (["watch", "wandb", "--project", "a/b/c"], "expected ENTITY/PROJECT"),
        (["watch", "wandb", "--project", "e/p", "--since", "yesterday-ish"], "--since"),
        (["serve", "wandb-webhook", "--project", "x"], "expected ENTITY/PROJECT"),
    ],
)
def test_bad_watch_input_is_one_line_and_makes_no_file(argv, message, tmp_path):
    env = dict(os.environ, MLAUDIT_WANDB_WEBHOOK_SECRET=SECRET)
    proc = subprocess.run(
        [MLAUDIT, *argv], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 2
    assert message in proc.stderr and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "argv",
    [
        ["watch", "wandb", "--project", "e/p", "--once"],
        ["serve", "wandb-webhook", "--port", "38765"],
    ],
)
def test_no_api_key_is_one_line_before_any_state_file(argv, tmp_path, tmp_path_factory):
    """Without WANDB_API_KEY (and no ~/.netrc) the watcher and the receiver refuse to start,
    instead of queueing runs whose every audit fails; nothing is made in the working dir."""
    home = tmp_path_factory.mktemp("home")
    env = {k: v for k, v in os.environ.items() if not k.startswith("WANDB_")}
    env.update(HOME=str(home), MLAUDIT_WANDB_WEBHOOK_SECRET=SECRET, WANDB_SILENT="true")
    proc = subprocess.run(
        [MLAUDIT, *argv], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip().splitlines()[-1].startswith("mlaudit: error: login: ")
    assert "API key" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert list(tmp_path.iterdir()) == []


def test_webhook_without_secret_is_refused(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "MLAUDIT_WANDB_WEBHOOK_SECRET"}
    proc = subprocess.run(
        [MLAUDIT, "serve", "wandb-webhook"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2 and "MLAUDIT_WANDB_WEBHOOK_SECRET" in proc.stderr
    assert json.dumps(list(tmp_path.iterdir())) == "[]"


def test_a_failed_audit_is_retried_after_its_backoff_not_at_the_next_listing(server, tmp_path):
    """A pushed run whose first load fails (the server's history query errors once) is retried
    after ``retry_base_s`` although the watcher lists only hourly; the run ends ``done``."""
    import threading

    from mlaudit_core.service import StateStore, WatchConfig, Watcher
    from mlaudit_core.settings import Settings

    FakeRun = wandb_fake_server.FakeRun
    server.add_run(
        FakeRun(
            ENTITY,
            "hooked",
            "flaky",
            history=wandb_rows("healthy"),
            heartbeat_at="2026-03-01T00:00:00",
        )
    )
    run_view, failures = server._run_view, []

    def flaky_view(r):
        view = run_view(r)
        if view is not None and r.name == "flaky" and not failures:

            def fail(**_):
                failures.append(1)
                raise wandb_fake_server.GraphQLFailure("internal error: try again")

            view.update(history=fail, sampledHistory=fail, parquetHistory=fail)
        return view

    server._run_view = flaky_view
    try:
        with StateStore(tmp_path / "s.sqlite", "wandb webhook") as store:
            w = Watcher(
                _source(),
                store,
                Settings(),
                WatchConfig(poll_interval_s=3600, retry_base_s=0.5, concurrency=1),
            )
            t = threading.Thread(target=w.run, daemon=True)
            t.start()
            assert w.started.wait(30)
            w.submit([(f"{ENTITY}/hooked/flaky", "e1")])
            _wait(
                lambda: (store.get(f"{ENTITY}/hooked/flaky") or {}).get("state") == "done",
                30,
                "the retried run to be done",
            )
            w.stop()
            t.join(30)
            row = store.get(f"{ENTITY}/hooked/flaky")
    finally:
        server._run_view = run_view
    assert failures and row["attempts"] == 2 and row["writes"] == 1
    assert server.run(ENTITY, "hooked", "flaky").summary["mlaudit/verdict"] == "succeeded"


def test_a_refused_key_is_one_line_before_any_state_file(server, tmp_path):
    env = dict(os.environ, WANDB_API_KEY="w" * 40)  # the fake server answers viewer: null
    proc = subprocess.run(
        [MLAUDIT, "watch", "wandb", "--project", f"{ENTITY}/polled", "--once"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2
    assert proc.stderr.strip() == (
        f"mlaudit: error: login: W&B at {server.base_url} rejected the "
        "API key (check WANDB_API_KEY, ~/.netrc or `wandb login`)"
    )
    assert list(tmp_path.iterdir()) == []


def test_an_outage_while_listing_is_retried_and_a_missing_run_does_not_stall_others(
    server, tmp_path
):
    """The project listing fails twice with a server error (W&B's GraphQL "internal error"):
    the watcher retries instead of stopping; a pushed run that does not exist is given up at
    once (no retries, no pause), and the real run behind it is audited."""
    import threading

    from mlaudit_core.service import StateStore, WatchConfig, Watcher
    from mlaudit_core.settings import Settings

    FakeRun = wandb_fake_server.FakeRun
    server.add_run(
        FakeRun(
            ENTITY,
            "outage",
            "ok1",
            history=wandb_rows("healthy"),
            heartbeat_at="2026-03-01T00:00:00",
        )
    )
    project_view, fails = server._project_view, []

    def failing_project_view(*a, **kw):
        if len(fails) < 2:
            fails.append(1)
            raise wandb_fake_server.GraphQLFailure("internal error: database unavailable")
        return project_view(*a, **kw)

    from mlaudit_wandb.triage import WandbWatchSource

    from mlaudit_core.plugins import get_plugin

    source = WandbWatchSource(
        get_plugin("wandb", panel=False), "wandb outage", [f"{ENTITY}/outage"]
    )
    server._project_view = failing_project_view
    try:
        with StateStore(tmp_path / "s.sqlite", "wandb outage") as store:
            w = Watcher(
                source,
                store,
                Settings(),
                WatchConfig(
                    poll_interval_s=3600,
                    concurrency=1,
                    max_attempts=5,
                    since=__import__("datetime").datetime(2026, 1, 1),
                ),
            )
            t = threading.Thread(target=w.run, daemon=True)
            t.start()
            assert w.started.wait(30)
            w.submit([f"{ENTITY}/outage/gone1", f"{ENTITY}/outage/gone2"])
            _wait(
                lambda: (store.get(f"{ENTITY}/outage/ok1") or {}).get("state") == "done",
                60,
                "the listed run to be audited after the outage",
            )
            assert t.is_alive()  # the outage did not stop the watcher
            w.stop()
            t.join(30)
            rows = {r["ref"].rsplit("/", 1)[1]: r for r in store.rows()}
    finally:
        server._project_view = project_view
    assert len(fails) == 2
    for gone in ("gone1", "gone2"):
        assert rows[gone]["state"] == "failed" and rows[gone]["attempts"] == 1
        assert "no such run" in rows[gone]["error"]
    assert rows["ok1"]["writes"] == 1


@pytest.mark.parametrize(
    "payload",
    [
        {"run_path": "//"},
        {"run_path": "/ent/p"},
        {"run_path": "../../etc"},
        {"entity": "..", "project": "..", "run_id": ".."},
        {"run_url": "https://evil/x/../y/z/runs/../../"},
        {"entity": "ent", "project": "p", "run_id": "x" * 10_000},
        {"entity": "ent", "project": "p", "run_id": "x: ok\n2026 INFO run FORGED\x1b[2K"},
        {"entity": "ent", "project": "p", "run_id": "a\x00b"},
    ],
)
def test_webhook_refuses_run_names_wandb_could_not_hold(payload, tmp_path):
    from mlaudit_wandb.triage import make_app
    from starlette.testclient import TestClient

    from mlaudit_core.service import StateStore, WatchConfig, Watcher
    from mlaudit_core.settings import Settings

    with StateStore(tmp_path / "q.sqlite", "wandb webhook") as store:
        client = TestClient(make_app(Watcher(_source(), store, Settings(), WatchConfig()), SECRET))
        res = client.post("/webhook", json=payload, headers={"Authorization": f"Bearer {SECRET}"})
        assert res.status_code == 400 and store.rows() == []


def test_webhook_body_limits_scheme_case_and_full_queue(tmp_path):
    from mlaudit_wandb.triage import MAX_BODY_BYTES, make_app
    from starlette.testclient import TestClient

    from mlaudit_core.service import StateStore, WatchConfig, Watcher
    from mlaudit_core.settings import Settings

    with StateStore(tmp_path / "q.sqlite", "wandb webhook") as store:
        client = TestClient(
            make_app(Watcher(_source(), store, Settings(), WatchConfig(max_pending=1)), SECRET)
        )
        for scheme in ("bearer", "BEARER", "Bearer"):  # RFC 7235: the scheme is case-insensitive
            res = client.post(
                "/webhook",
                json={"run_path": "ent/p/r1"},
                headers={"Authorization": f"{scheme} {SECRET}"},
            )
            assert res.status_code in (200, 202)
        ok = {"Authorization": f"Bearer {SECRET}"}
        assert client.post("/webhook", json={"run_path": "ent/p/r1"}, headers=ok).status_code == 200
        assert client.post("/webhook", json={"run_path": "ent/p/r2"}, headers=ok).status_code == 503
        deep = b"[" * 100_000 + b"]" * 100_000
        assert client.post("/webhook", content=deep[:MAX_BODY_BYTES], headers=ok).status_code == 400
        assert client.post(
            "/webhook", content=b"[" * 50_000 + b"]" * 50_000, headers=ok
        ).status_code in (400, 413)
        big = b'{"run_path": "ent/p/r3", "pad": "' + b"x" * (MAX_BODY_BYTES + 1) + b'"}'
        assert client.post("/webhook", content=big, headers=ok).status_code == 413
        assert [r["ref"] for r in store.rows()] == ["ent/p/r1"]


def _state_rows(path: Path) -> list[dict]:
    import sqlite3

    if not path.exists():
        return []
    con = sqlite3.connect(path, timeout=30)
    try:
        con.row_factory = sqlite3.Row
        return [dict(r) for r in con.execute("SELECT * FROM runs")]
    except sqlite3.OperationalError:  # not created yet
        return []
    finally:
        con.close()


def test_two_watchers_of_one_project_write_and_notify_each_run_once(server, tmp_path):
    """Issue 16, two watchers: two ``mlaudit watch wandb`` processes with their own state files
    poll one project at the same moment; the lease in the summary key ``mlaudit/claim`` lets one
    of them write and notify each run, the other settles it as present; no claim is left on a
    run. Real wandb SDK (``wandb.Api``) in real ``mlaudit`` processes against the fake W&B
    server (tests/wandb_fake_server.py: no W&B server can run here)."""
    from webhook_receiver import Receiver

    from mlaudit_core.writeback import BEGIN

    FakeRun = wandb_fake_server.FakeRun
    names = [f"twice{i}" for i in range(4)]
    for name in names:  # diverging runs: every verdict is notified
        server.add_run(
            FakeRun(
                ENTITY,
                "claimed",
                name,
                display_name=name,
                notes="user notes",
                history=wandb_rows("diverge"),
                heartbeat_at="2026-03-01T00:00:00",
            )
        )
    procs = []
    with Receiver() as rx:
        try:
            for who in ("a", "b"):
                log = tmp_path / f"{who}.log"
                proc = subprocess.Popen(
                    [
                        MLAUDIT,
                        "watch",
                        "wandb",
                        "--project",
                        f"{ENTITY}/claimed",
                        "--since",
                        "all",
                        "--poll-interval",
                        "1",
                        "--concurrency",
                        "2",
                        "--state",
                        str(tmp_path / f"{who}.sqlite"),
                        "--notify",
                        f"{rx.url}/hook",
                    ],
                    stdout=open(log, "w"),
                    stderr=subprocess.STDOUT,
                    env=dict(os.environ),
                )
                procs.append((proc, log, tmp_path / f"{who}.sqlite"))

            def settled() -> bool:
                for proc, log, state in procs:
                    assert proc.poll() is None, log.read_text()
                    rows = _state_rows(state)
                    if len(rows) < len(names) or any(r["state"] != "done" for r in rows):
                        return False
                return True

            _wait(settled, 240, "both watchers to settle every run", procs[0][1])
        finally:
            for proc, _log, _state in procs:
                proc.send_signal(signal.SIGTERM)
            for proc, log, _state in procs:
                assert proc.wait(60) == 0, log.read_text()
        docs = [r.json() for r in rx.at("/hook")]
    logs = "".join(log.read_text() for _proc, log, _state in procs)
    for name in names:
        ref = f"{ENTITY}/claimed/{name}"
        assert logs.count(f"run {ref}: wrote verdict") == 1, logs
        assert [d["run"]["id"] for d in docs].count(name) == 1, docs
        run = server.run(ENTITY, "claimed", name)
        assert run.summary["mlaudit/verdict"] == "diverged" and "mlaudit/claim" not in run.summary
        assert run.notes.startswith("user notes") and run.notes.count(BEGIN) == 1
    assert "Traceback" not in logs, logs
