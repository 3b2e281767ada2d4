"""``mlaudit watch mlflow`` against a real ``mlflow server``: runs finish while the watcher runs
as a subprocess; it is SIGKILLed in two crash windows and SIGTERMed once, restarted, and every
run ends up audited and written exactly once."""

from __future__ import annotations

import logging
import math
import shutil
import signal
import sqlite3
import sys
import threading
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

mlflow = pytest.importorskip("mlflow")
from typer.testing import CliRunner  # noqa: E402
from watch_helpers import Watcher  # noqa: E402

from mlaudit.cli import app  # noqa: E402
from mlaudit_core.writeback import BEGIN  # noqa: E402

NOTE = "Owner notes: lr sweep 3. Keep me."
MLAUDIT = shutil.which("mlaudit", path=str(Path(sys.executable).parent)) or "mlaudit"


def finish_run(client, exp_id: str, name: str, diverge: bool) -> str:
    from mlflow.entities import Metric

    rid = client.create_run(exp_id, run_name=name, tags={"mlflow.note.content": NOTE}).info.run_id
    ms = []
    for i in range(1, 301):
        loss = 2.0 * math.exp(-i / 50) + 0.2
        if diverge and i > 200:
            loss = 0.2 + (i - 200) * 0.3
        ms.append(Metric("train/loss", loss, 1_700_000_000_000 + i * 1000, i))
    client.log_batch(rid, metrics=ms)
    client.set_terminated(rid, "FINISHED")
    return rid


def states(db: Path) -> dict[str, tuple[str, int, int]]:
    con = sqlite3.connect(db)
    try:
        rows = con.execute("SELECT ref, state, attempts, writes FROM runs")
        return {r[0]: (r[1], r[2], r[3]) for r in rows}
    finally:
        con.close()


def test_killed_and_restarted_watcher_audits_every_run_exactly_once(mlflow_server, tmp_path):
    url = mlflow_server["url"]
    client = mlflow.MlflowClient(url)
    exp_id = client.create_experiment("watch-it")
    since = (datetime.now(timezone.utc) - timedelta(seconds=2)).isoformat()
    db = tmp_path / "state.sqlite"
    logs = []

    # 1. Runs finish while watcher A runs; A is killed after writing R1, before recording it.
    a = Watcher(tmp_path, "a", url, "watch-it", since, pause="after_write:120")
    logs.append(a)
    a.wait_for(r"INFO watching mlflow")
    expected = {
        finish_run(client, exp_id, "r1", diverge=True): "diverged",
        finish_run(client, exp_id, "r2", diverge=False): "succeeded",
    }
    # Both runs come in one listing; whichever A takes first is R1, the other R2.
    r1 = a.wait_for(r"run (\w+): wrote verdict").group(1)
    (r2,) = set(expected) - {r1}
    assert a.stop(signal.SIGKILL) == -signal.SIGKILL
    assert states(db)[r1][0] == "writing"  # the crash window "written but not recorded"

    # 2. Watcher B finds R1 already written (no second write), then is killed mid-audit of R2.
    b = Watcher(tmp_path, "b", url, "watch-it", since, pause="after_audit:120")
    logs.append(b)
    b.wait_for(rf"run {r1}: verdict already present, recorded without writing")
    b.wait_for(rf"run {r2}: audited: {expected[r2]}")
    assert b.stop(signal.SIGKILL) == -signal.SIGKILL
    assert states(db)[r2] == ("claimed", 1, 0)  # the crash window "claimed, nothing written"
    assert "mlaudit.verdict" not in client.get_run(r2).data.tags

    # 3. Watcher C audits R2 again and is stopped with SIGTERM before writing: it gives R2 back.
    c = Watcher(tmp_path, "c", url, "watch-it", since, pause="after_audit:120")
    logs.append(c)
    c.wait_for(rf"resuming 1 run\(s\) left in flight by a previous watcher: {r2}")
    c.wait_for(rf"run {r2}: audited: {expected[r2]}")
    assert c.stop(signal.SIGTERM) == 0
    assert f"run {r2}: released unwritten (shutting down)" in c.text()
    assert states(db)[r2] == ("pending", 1, 0)  # B's attempt counts (it died); C's was given back

    # 4. R3 finishes while no watcher runs; D (--once) audits R2 and R3 and exits.
    r3 = finish_run(client, exp_id, "r3", diverge=True)
    expected[r3] = "diverged"
    d = Watcher(tmp_path, "d", url, "watch-it", since, once=True)
    logs.append(d)
    assert d.proc.wait(timeout=150) == 0, d.text()

    final = states(db)
    assert {r: s[0] for r, s in final.items()} == {r1: "done", r2: "done", r3: "done"}
    assert all(s[2] == 1 for s in final.values()), final  # one write-back per run
    all_logs = "".join(w.text() for w in logs)
    for rid, outcome in expected.items():
        assert all_logs.count(f"run {rid}: wrote verdict") == 1, all_logs
        run = client.get_run(rid)
        assert run.data.tags["mlaudit.verdict"] == outcome
        note = run.data.tags["mlflow.note.content"]
        assert note.count(BEGIN) == 1 and note.startswith(NOTE)
        files = {f.path for f in client.list_artifacts(rid, "mlaudit")}
        assert "mlaudit/report.html" in files


def test_unknown_experiment_is_one_line_and_exit_2(mlflow_server, tmp_path):
    res = CliRunner().invoke(
        app,
        [
            "watch",
            "mlflow",
            "-e",
            "no-such-exp",
            "-u",
            mlflow_server["url"],
            "--state",
            str(tmp_path / "s.sqlite"),
            "--once",
        ],
    )
    assert res.exit_code == 2
    assert "no mlflow experiment named 'no-such-exp'" in res.output


def test_unknown_experiment_creates_no_state_or_lock_file(mlflow_server, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the default state path is ./.mlaudit/watch-mlflow-*.sqlite
    res = CliRunner().invoke(
        app, ["watch", "mlflow", "-e", "nope", "-u", mlflow_server["url"], "--once"]
    )
    assert res.exit_code == 2, res.output
    lines = [x for x in res.output.splitlines() if x.strip()]
    assert len(lines) == 1 and "no mlflow experiment named 'nope'" in lines[0], res.output
    assert list(tmp_path.iterdir()) == []


def test_non_sqlite_state_file_is_one_line_and_nothing_created(mlflow_server, tmp_path):
    garbage = tmp_path / "garbage.db"
    garbage.write_text("not a database, just text\n" * 100)
    res = CliRunner().invoke(
        app,
        [
            "watch",
            "mlflow",
            "-e",
            "nope",
            "-u",
            mlflow_server["url"],
            "--state",
            str(garbage),
            "--once",
        ],
    )
    assert res.exit_code == 2, res.output
    lines = [x for x in res.output.splitlines() if x.strip()]
    assert len(lines) == 1 and f"{garbage}: not an mlaudit state file" in lines[0], res.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["garbage.db"]


def test_tracker_outage_is_retried_and_logged_never_fatal(tmp_path, monkeypatch, caplog):
    from conftest import free_port
    from mlaudit_mlflow.cli import _mlflow_source
    from mlaudit_mlflow.plugin import MlflowPlugin

    from mlaudit_core.service import StateStore, WatchConfig
    from mlaudit_core.service import Watcher as CoreWatcher
    from mlaudit_core.settings import Settings

    monkeypatch.setenv("MLFLOW_HTTP_REQUEST_MAX_RETRIES", "0")
    url = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    source = _mlflow_source(MlflowPlugin(url), f"mlflow {url} experiments=x", ["x"])
    cfg = WatchConfig(poll_interval_s=0.1, concurrency=1, listing_max_backoff_s=0.3)
    with StateStore(tmp_path / "s.sqlite", source.scope) as store:
        w = CoreWatcher(source, store, Settings(), cfg)
        codes = []
        t = threading.Thread(target=lambda: codes.append(w.run()))
        with caplog.at_level(logging.INFO, logger="mlaudit.watch"):
            t.start()
            deadline = time.time() + 20
            while (
                time.time() < deadline
                and sum("listing finished runs failed" in r.getMessage() for r in caplog.records)
                < 3
            ):
                time.sleep(0.05)
            assert t.is_alive()  # still watching through the outage
            w.stop()
            t.join(10)
    assert codes == [0]
    failures = [
        m for m in (r.getMessage() for r in caplog.records) if "listing finished runs failed" in m
    ]
    assert len(failures) >= 3 and "attempt 3" in failures[2]
    assert any("ConnectionError" in m or "MlflowException" in m for m in failures)


def test_a_first_once_says_why_earlier_runs_are_not_audited(mlflow_server, tmp_path, caplog):
    """New-user pass: the first ``watch mlflow --once`` on a new state file audits nothing that
    ended before it started (the cursor starts now) and said only '0 run(s) audited'. It now
    says why and how to include them; with ``--since all`` the earlier run is audited."""
    client = mlflow.MlflowClient(mlflow_server["url"])
    exp_id = client.create_experiment(f"first-once-{tmp_path.name}")
    rid = finish_run(client, exp_id, "before-the-watcher", diverge=True)
    # ended 10 minutes ago: before the new state file's start grace (watcher.START_GRACE_S)
    client.set_terminated(rid, "FINISHED", end_time=int((time.time() - 600) * 1000))
    base = [
        "watch",
        "mlflow",
        "-e",
        f"first-once-{tmp_path.name}",
        "-u",
        mlflow_server["url"],
        "--once",
    ]
    with caplog.at_level(logging.INFO):
        res = CliRunner().invoke(app, [*base, "--state", str(tmp_path / "a.sqlite")])
    assert res.exit_code == 0, res.output
    log = caplog.text
    assert "s before the watcher started) are not audited" in log and "--since all" in log
    assert "mlaudit.verdict" not in client.get_run(rid).data.tags
    caplog.clear()
    with caplog.at_level(logging.INFO):
        res = CliRunner().invoke(
            app, [*base, "--state", str(tmp_path / "b.sqlite"), "--since", "all"]
        )
    assert res.exit_code == 0, res.output
    assert "before the watcher started) are not audited" not in caplog.text
    assert client.get_run(rid).data.tags["mlaudit.verdict"] == "diverged"
