"""``mlaudit watch mlflow`` trust (issue 16, finding 4) against a real ``mlflow server``:
kills are retried, not given up; two watchers on one experiment write and notify each run
once; runs ended with ``update_run(status=...)`` (no end time) are audited with a note; and
``benchmarks/watcher_kills.py`` at toy size."""

from __future__ import annotations

import importlib.util
import json
import math
import shutil
import signal
import sqlite3
import sys
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

mlflow = pytest.importorskip("mlflow")

from watch_helpers import Watcher  # noqa: E402
from webhook_receiver import Receiver  # noqa: E402

from mlaudit_core.writeback import BEGIN  # noqa: E402

NOTE = "Owner notes: keep me."
MLAUDIT = shutil.which("mlaudit", path=str(Path(sys.executable).parent)) or "mlaudit"
ROOT = Path(__file__).resolve().parents[1]


def finish_run(
    client, exp_id: str, name: str, *, diverge: bool = False, status_only: bool = False
) -> str:
    """A run with 300 loss points; ``status_only`` ends it with ``update_run(status=...)``,
    which records no end time."""
    from mlflow.entities import Metric

    rid = client.create_run(exp_id, run_name=name, tags={"mlflow.note.content": NOTE}).info.run_id
    ms = []
    for i in range(1, 301):
        loss = 2.0 * math.exp(-i / 50) + 0.2
        if diverge and i > 200:
            loss = 0.2 + (i - 200) * 0.3
        ms.append(Metric("train/loss", loss, 1_700_000_000_000 + i * 1000, i))
    client.log_batch(rid, metrics=ms)
    if status_only:
        client.update_run(rid, status="KILLED")
    else:
        client.set_terminated(rid, "FINISHED")
    return rid


def _row(db: Path, ref: str) -> dict:
    con = sqlite3.connect(db)
    con.row_factory = sqlite3.Row
    try:
        return dict(con.execute("SELECT * FROM runs WHERE ref=?", (ref,)).fetchone())
    finally:
        con.close()


def _since() -> str:
    return (datetime.now(timezone.utc) - timedelta(seconds=2)).isoformat()


def test_a_run_killed_more_often_than_max_attempts_is_still_written(mlflow_server, tmp_path):
    """Four SIGKILLs during one run's audit (max_attempts is 3): the run is retried, not given
    up, and ends with one complete verdict; the kills are counted apart from failures."""
    url = mlflow_server["url"]
    client = mlflow.MlflowClient(url)
    exp_id = client.create_experiment("watch-kills-one")
    since = _since()
    rid = finish_run(client, exp_id, "victim", diverge=True)
    for k in range(4):
        w = Watcher(tmp_path, f"k{k}", url, "watch-kills-one", since, pause="after_audit:120")
        w.wait_for(rf"run {rid}: audited: diverged")
        assert w.stop(signal.SIGKILL) == -signal.SIGKILL
    w = Watcher(tmp_path, "final", url, "watch-kills-one", since)
    w.wait_for(rf"run {rid}: wrote verdict diverged")
    w.stop()
    row = _row(tmp_path / "state.sqlite", rid)
    assert row["state"] == "done" and row["interrupts"] == 4 and row["failures"] == 0, row
    tags = client.get_run(rid).data.tags
    assert tags["mlaudit.verdict"] == "diverged"
    assert tags["mlflow.note.content"].count(BEGIN) == 1 and "mlaudit.claim" not in tags
    assert "gave up" not in "".join(p.read_text() for p in tmp_path.glob("watch-*.log"))


def test_two_watchers_on_one_experiment_write_and_notify_once(mlflow_server, tmp_path):
    """Two watchers with different state files watch one experiment: each run is written and
    notified by one of them (the ``mlaudit.claim`` lease), the other records it as present."""
    url = mlflow_server["url"]
    client = mlflow.MlflowClient(url)
    exp_id = client.create_experiment("watch-two")
    since = _since()
    with Receiver() as rx:
        notify = ("--notify", f"{rx.url}/hook")
        a = Watcher(tmp_path, "a", url, "watch-two", since, state="a.sqlite", extra=notify)
        b = Watcher(tmp_path, "b", url, "watch-two", since, state="b.sqlite", extra=notify)
        a.wait_for(r"INFO watching mlflow")
        b.wait_for(r"INFO watching mlflow")
        rids = [finish_run(client, exp_id, f"r{i}", diverge=True) for i in range(4)]  # notified
        for w in (a, b):
            for rid in rids:
                w.wait_for(rf"run {rid}: (wrote verdict|verdict already present)", timeout=120)
        assert a.stop() == 0 and b.stop() == 0
        docs = [r.json() for r in rx.at("/hook")]
    logs = a.text() + b.text()
    for rid in rids:
        assert logs.count(f"run {rid}: wrote verdict") == 1, logs
        assert [d["run"]["id"] for d in docs].count(rid) == 1, docs
        tags = client.get_run(rid).data.tags
        assert tags["mlflow.note.content"].count(BEGIN) == 1 and "mlaudit.verdict" in tags


def test_a_run_ended_without_an_end_time_is_audited_with_a_note(mlflow_server, tmp_path):
    url = mlflow_server["url"]
    client = mlflow.MlflowClient(url)
    exp_id = client.create_experiment("watch-no-end")
    since = _since()
    w = Watcher(tmp_path, "a", url, "watch-no-end", since)
    w.wait_for(r"INFO watching mlflow")
    rid = finish_run(client, exp_id, "ended-by-status", diverge=True, status_only=True)
    assert client.get_run(rid).info.end_time is None
    w.wait_for(rf"run {rid}: wrote verdict")
    assert w.stop() == 0
    from mlaudit_core.render.html import report_json_from_html

    page = Path(client.download_artifacts(rid, "mlaudit/report.html", str(tmp_path))).read_text()
    report = json.loads(report_json_from_html(page) or "null")
    assert any("without an end time" in x for x in report["warnings"]), report["warnings"]


def test_watcher_kills_benchmark_at_toy_size(mlflow_server, tmp_path):
    """``benchmarks/watcher_kills.py`` at toy size: 3 random SIGKILLs over 6 finishing runs;
    every run ends with exactly one complete verdict."""
    spec = importlib.util.spec_from_file_location(
        "watcher_kills", ROOT / "benchmarks" / "watcher_kills.py"
    )
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    out = bench.run_benchmark(
        mlflow_server["url"],
        runs=6,
        kills=3,
        seed=1,
        workdir=tmp_path,
        min_gap=0.5,
        max_gap=3.0,
        settle_s=300,
    )
    assert out["runs"] == 6 and out["complete_runs"] == 6, out
    assert out["failed_in_state"] == 0, out


def test_a_run_audited_while_running_is_judged_by_the_watcher_once_it_ends(mlflow_server, tmp_path):
    """A run audited by hand while still RUNNING carries the interim verdict ``running`` and the
    report artifacts; once it ends, the watcher audits it again and writes its real verdict
    (before: listed, then settled as "verdict already present", so it stayed ``running``)."""
    from mlflow.entities import Metric

    url = mlflow_server["url"]
    client = mlflow.MlflowClient(url)
    exp_id = client.create_experiment("watch-interim")
    since = _since()
    rid = client.create_run(
        exp_id, run_name="audited-early", tags={"mlflow.note.content": NOTE}
    ).info.run_id
    # logged as a live run logs: the last point now (a RUNNING run whose last write is far in the
    # past is an abandoned run to verdict.liveness, not a running one)
    now_ms = int(time.time() * 1000)
    client.log_batch(
        rid,
        metrics=[
            Metric(
                "train/loss",
                0.2 + (i - 200) * 0.3 if i > 200 else 2.0 * math.exp(-i / 50) + 0.2,
                now_ms - (300 - i) * 1000,
                i,
            )
            for i in range(1, 301)
        ],
    )
    import subprocess

    p = subprocess.run(
        [MLAUDIT, "mlflow", rid, "-u", url], capture_output=True, text=True, timeout=300
    )
    assert client.get_run(rid).data.tags.get("mlaudit.verdict") == "running", p.stderr[-2000:]
    w = Watcher(tmp_path, "a", url, "watch-interim", since)
    w.wait_for(r"INFO watching mlflow")
    client.set_terminated(rid, "FINISHED")
    w.wait_for(rf"run {rid}: wrote verdict diverged", timeout=180)
    assert w.stop() == 0
    tags = client.get_run(rid).data.tags
    assert tags["mlaudit.verdict"] == "diverged" and "mlaudit.claim" not in tags
    assert tags["mlflow.note.content"].startswith(NOTE)
    assert tags["mlflow.note.content"].count(BEGIN) == 1
