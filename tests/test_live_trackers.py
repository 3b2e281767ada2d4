"""Live triage on W&B and ClearML: ``mlaudit watch wandb|clearml --live`` end to end.

No W&B or ClearML server can run here, so each test drives the real SDKs against the local
servers that implement their endpoints with the real payload shapes:

* W&B: training processes log ONLINE with the real ``wandb`` SDK (tests/data/live/
  wandb_writer.py) to tests/wandb_fake_server.py; ``mlaudit watch wandb --live`` (a
  subprocess, the real ``wandb.Api``) lists running runs, reads their new history after the
  last ``_step``, posts to a real HTTP receiver, and with ``--stop-on nan`` calls
  ``Run.stop()`` (the real ``StopRun`` mutation) and tags the run; the writer's in-process
  ``LiveGuard`` honours the tag and stops its loop.
* ClearML: a task reported with the real ``clearml`` SDK (tests/data/live/clearml_writer.py)
  to tests/clearml_fake_server.py; the live watcher reads the scalars after the last
  iteration and aborts the task with ``tasks.stop`` (clearml-server's status rules for a
  development task: stopped at once); the SDK's own stop signal ends the training process.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from tests.waiting import wait_live_runs_ended
from tests.webhook_receiver import Receiver
from tests.webhook_receiver import live_alerts as _live
from tests.webhook_receiver import wait_for as _wait

HERE = Path(__file__).parent
MLAUDIT = shutil.which("mlaudit", path=str(Path(sys.executable).parent)) or "mlaudit"
KEY = "k" * 40


def _wandb_env(root: Path, base_url: str) -> dict[str, str]:
    env = dict(
        os.environ,
        WANDB_MODE="online",
        WANDB_DIR=str(root),
        WANDB_SILENT="true",
        WANDB_CONFIG_DIR=str(root / "config"),
        WANDB_CACHE_DIR=str(root / "cache"),
        WANDB_DATA_DIR=str(root / "data"),
        WANDB_ERROR_REPORTING="false",
        WANDB_BASE_URL=base_url,
        WANDB_API_KEY=KEY,
        PYTHONPATH=str(HERE.parent),
    )
    return env


def test_wandb_live_nan_alert_and_stop(tmp_path):
    """NaN run: one LV001 alert before it ends, ``Run.stop()`` reaches the server (its stop
    flag) and the run's tag stops the training loop before its 300 steps; healthy run:
    no alert over its whole life."""
    pytest.importorskip("wandb")
    from tests.wandb_fake_server import FakeWandbServer

    with FakeWandbServer(api_key=KEY, entity="ent") as srv, Receiver() as rx:
        env = _wandb_env(tmp_path, srv.base_url)
        log = tmp_path / "watch.log"
        watcher = subprocess.Popen(
            [
                MLAUDIT,
                "watch",
                "wandb",
                "-p",
                "ent/live",
                "--live",
                "--poll-interval",
                "0.5",
                "--state",
                str(tmp_path / "s.sqlite"),
                "--stall-floor",
                "60",
                "--cooldown",
                "0",
                "--stop-on",
                "nan",
                "--notify",
                rx.url + "/hook",
            ],
            stdout=subprocess.DEVNULL,
            stderr=open(log, "wb"),
            cwd=tmp_path,
            env=env,
        )
        try:
            writers = {}
            for mode in ("healthy", "nan"):
                out = tmp_path / f"{mode}.json"
                writers[mode] = (
                    subprocess.Popen(
                        [
                            sys.executable,
                            str(HERE / "data" / "live" / "wandb_writer.py"),
                            "ent/live",
                            f"{mode}1",
                            mode,
                            str(out),
                        ],
                        cwd=tmp_path,
                        env=env,
                        stdout=subprocess.DEVNULL,
                        stderr=open(tmp_path / f"{mode}.err", "wb"),
                    ),
                    out,
                )
            for mode, (w, _o) in writers.items():
                assert w.wait(240) == 0, (tmp_path / f"{mode}.err").read_text()[-3000:]
            wait_live_runs_ended(tmp_path / "s.sqlite", 2)  # over the runs' whole life
        finally:
            watcher.send_signal(signal.SIGTERM)
            watcher.wait(60)
        live = _live(rx)
        results = {m: json.loads(o.read_text()) for m, (_w, o) in writers.items()}
        nan_run = srv.run("ent", "live", "nan1")
        healthy_run = srv.run("ent", "live", "healthy1")
    text = log.read_text()
    by_run: dict[str, list[dict]] = {}
    for d in live:
        by_run.setdefault(d["run"]["id"], []).append(d)
    assert by_run.get("ent/live/healthy1", []) == [], text[-3000:]
    nan = by_run.get("ent/live/nan1", [])
    assert [(d["live"]["kind"], d["live"]["code"]) for d in nan] == [("alert", "LV001")], text[
        -3000:
    ]
    assert nan[0]["live"]["stop_requested"] is True
    assert (
        nan[0]["findings"][0]["code"] == "LV001"
        and "train/loss" in nan[0]["findings"][0]["message"]
    )
    from datetime import datetime

    assert datetime.fromisoformat(nan[0]["sent_at"]).timestamp() < results["nan"]["end_time"]
    # the stop: W&B's own flag on the server, and the tag the writer's guard honoured
    assert nan_run.stopped and not healthy_run.stopped
    assert results["nan"]["how"] in ("stopped_by_tag", "stopped_by_wandb")
    assert 30 <= results["nan"]["last_step"] < 299
    assert results["healthy"]["how"] == "ended" and results["healthy"]["last_step"] == 299
    assert "StopRun" in srv.operations
    assert not srv.unknown, srv.unknown


def _task_id(proc) -> str:
    for line in proc.stdout:  # the SDK prints its own lines first
        if line.startswith("{"):
            return json.loads(line)["task_id"]
    raise AssertionError("the writer printed no task id")


def test_clearml_live_nan_alert_and_abort(tmp_path):
    """NaN task (the SDK reports the NaN as 0.0 and warns on the console): one LV001 alert while
    it runs, ``tasks.stop`` aborts it and the SDK's own stop signal ends the training process
    before its 150 iterations; healthy task: no alert, runs to its end."""
    pytest.importorskip("clearml")
    from tests.clearml_fake_server import FakeClearMLServer

    srv = FakeClearMLServer().start()
    try:
        conf = srv.write_config(tmp_path / "clearml.conf")
        conf.write_text(
            conf.read_text().replace("support_stopping: false", "support_stopping: true")
        )
        # the SDK's default log level (INFO): its "NaN value encountered" line is printed
        env = dict(
            os.environ,
            CLEARML_CONFIG_FILE=str(conf),
            CLEARML_CACHE_DIR=str(tmp_path / "cache"),
            PYTHONPATH=str(HERE.parent),
        )
        env.pop("CLEARML_LOG_LEVEL", None)
        srv.ep_projects__create({"name": "live-it"})  # the watcher checks the project exists
        with Receiver() as rx:
            log = tmp_path / "watch.log"
            watcher = subprocess.Popen(
                [
                    MLAUDIT,
                    "watch",
                    "clearml",
                    "--project",
                    "live-it",
                    "--live",
                    "--poll-interval",
                    "0.5",
                    "--state",
                    str(tmp_path / "s.sqlite"),
                    "--stall-floor",
                    "60",
                    "--cooldown",
                    "0",
                    "--stop-on",
                    "nan",
                    "--notify",
                    rx.url + "/hook",
                ],
                stdout=subprocess.DEVNULL,
                stderr=open(log, "wb"),
                cwd=tmp_path,
                env=env,
            )
            _wait(lambda: "live: polling" in log.read_text(), 120, "the live watcher")
            writers = {}
            for mode in ("healthy", "nan"):
                out = tmp_path / f"{mode}.json"
                writers[mode] = (
                    subprocess.Popen(
                        [
                            sys.executable,
                            str(HERE / "data" / "live" / "clearml_writer.py"),
                            "live-it",
                            f"task-{mode}",
                            mode,
                            str(out),
                        ],
                        cwd=tmp_path,
                        env=env,
                        text=True,
                        stdout=subprocess.PIPE,
                        stderr=open(tmp_path / f"{mode}.err", "w"),
                    ),
                    out,
                )
            ids = {m: _task_id(w) for m, (w, _o) in writers.items()}
            try:
                codes = {m: w.wait(240) for m, (w, _o) in writers.items()}
                wait_live_runs_ended(tmp_path / "s.sqlite", 2)  # over the tasks' whole life
            finally:
                watcher.send_signal(signal.SIGTERM)
                watcher.wait(60)
            live = _live(rx)
        tasks = {m: srv.tasks[i] for m, i in ids.items()}
    finally:
        srv.stop()
    text = log.read_text()
    by_task: dict[str, list[dict]] = {}
    for d in live:
        by_task.setdefault(d["run"]["id"], []).append(d)
    assert by_task.get(ids["healthy"], []) == [], text[-3000:]
    nan = by_task.get(ids["nan"], [])
    assert [(d["live"]["kind"], d["live"]["code"]) for d in nan] == [("alert", "LV001")], text[
        -3000:
    ]
    assert nan[0]["live"]["stop_requested"] is True
    # aborted: the server's status, the SDK ended the process before the loop's end
    assert tasks["nan"]["status"] == "stopped", tasks["nan"]["status"]
    assert codes["nan"] != 0 and not (tmp_path / "nan.json").exists()
    assert 30 <= tasks["nan"]["last_iteration"] < 149
    assert (
        codes["healthy"] == 0
        and json.loads((tmp_path / "healthy.json").read_text())["last_iteration"] == 149
    )
    assert tasks["healthy"]["status"] != "stopped"
    # the live property was written on the running task
    props = tasks["nan"]["hyperparams"]["properties"]
    assert props["mlaudit.live"]["value"].startswith(("alert", "superseded"))
    assert "tasks.stop" in {e for e, _t in srv.calls} and not srv.unknown, srv.unknown


STALL_LINE = "waiting for data loader worker 3 (shard 17) to answer"


def _stall_episode(rx, writer, out: Path, timeout: float = 120) -> list[dict]:
    """Wait for the stall alert, let the writer resume, wait for the recovered message."""
    _wait(lambda: any(d["live"]["slot"] == "stall" for d in _live(rx)), timeout, "the stall alert")
    Path(str(out) + ".resume").write_text("go")
    _wait(
        lambda: len([d for d in _live(rx) if d["live"]["slot"] == "stall"]) >= 2,
        60,
        "the recovered message",
    )
    assert writer.wait(120) == 0
    return [d for d in _live(rx) if d["live"]["slot"] == "stall"]


def _assert_stall_with_console(stall: list[dict], text: str) -> None:
    assert [(d["live"]["kind"], d["live"]["code"]) for d in stall] == [
        ("alert", "LV004"),
        ("recovered", "LV004"),
    ], text[-3000:]
    finding = stall[0]["live"]["finding"]
    # W&B commits a step's row when the next one starts: its last row is step 39
    assert re.search(r"last step (39|40) at", finding["message"]), finding["message"]
    console = [e["text"] for e in finding["evidence"] if e["kind"] == "log"]
    assert console and console[-1].endswith(STALL_LINE), finding["evidence"]


def test_wandb_live_stall_alert_carries_console_lines(tmp_path):
    """A run that stops logging at step 40 while RUNNING (the real SDK, online): one stalled
    alert whose evidence ends with the last console line the run printed (read with
    ``Run.console_logs``, W&B's Logs tab), and one recovered message when it resumes."""
    pytest.importorskip("wandb")
    from tests.wandb_fake_server import FakeWandbServer

    with FakeWandbServer(api_key=KEY, entity="ent") as srv, Receiver() as rx:
        env = _wandb_env(tmp_path, srv.base_url)
        log = tmp_path / "watch.log"
        watcher = subprocess.Popen(
            [
                MLAUDIT,
                "watch",
                "wandb",
                "-p",
                "ent/live",
                "--live",
                "--poll-interval",
                "0.5",
                "--state",
                str(tmp_path / "s.sqlite"),
                "--stall-floor",
                "5",
                "--cooldown",
                "0",
                "--notify",
                rx.url + "/hook",
            ],
            stdout=subprocess.DEVNULL,
            stderr=open(log, "wb"),
            cwd=tmp_path,
            env=env,
        )
        try:
            out = tmp_path / "stall.json"
            w = subprocess.Popen(
                [
                    sys.executable,
                    str(HERE / "data" / "live" / "wandb_writer.py"),
                    "ent/live",
                    "stall1",
                    "stall",
                    str(out),
                ],
                cwd=tmp_path,
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=open(tmp_path / "w.err", "wb"),
            )
            stall = _stall_episode(rx, w, out, 180)
        finally:
            watcher.send_signal(signal.SIGTERM)
            watcher.wait(60)
        assert "RunConsoleLogTail" in srv.operations and not srv.unknown, srv.unknown
    _assert_stall_with_console(stall, log.read_text())


def test_clearml_live_stall_alert_carries_console_lines(tmp_path):
    """A task that stops reporting at iteration 40 while in_progress (the real SDK): one stalled
    alert whose evidence ends with the last console line the task printed (its log events), and
    one recovered message when it resumes."""
    pytest.importorskip("clearml")
    from tests.clearml_fake_server import FakeClearMLServer

    srv = FakeClearMLServer().start()
    try:
        conf = srv.write_config(tmp_path / "clearml.conf")
        env = dict(
            os.environ,
            CLEARML_CONFIG_FILE=str(conf),
            CLEARML_CACHE_DIR=str(tmp_path / "cache"),
            PYTHONPATH=str(HERE.parent),
        )
        srv.ep_projects__create({"name": "live-it"})
        with Receiver() as rx:
            log = tmp_path / "watch.log"
            watcher = subprocess.Popen(
                [
                    MLAUDIT,
                    "watch",
                    "clearml",
                    "--project",
                    "live-it",
                    "--live",
                    "--poll-interval",
                    "0.5",
                    "--state",
                    str(tmp_path / "s.sqlite"),
                    "--stall-floor",
                    "5",
                    "--cooldown",
                    "0",
                    "--notify",
                    rx.url + "/hook",
                ],
                stdout=subprocess.DEVNULL,
                stderr=open(log, "wb"),
                cwd=tmp_path,
                env=env,
            )
            try:
                _wait(lambda: "live: polling" in log.read_text(), 120, "the live watcher")
                out = tmp_path / "stall.json"
                w = subprocess.Popen(
                    [
                        sys.executable,
                        str(HERE / "data" / "live" / "clearml_writer.py"),
                        "live-it",
                        "task-stall",
                        "stall",
                        str(out),
                    ],
                    cwd=tmp_path,
                    env=env,
                    text=True,
                    stdout=subprocess.PIPE,
                    stderr=open(tmp_path / "w.err", "w"),
                )
                _task_id(w)
                threading.Thread(target=w.stdout.read, daemon=True).start()  # drain the pipe
                stall = _stall_episode(rx, w, out, 180)
            finally:
                watcher.send_signal(signal.SIGTERM)
                watcher.wait(60)
    finally:
        srv.stop()
    _assert_stall_with_console(stall, log.read_text())


def test_wandb_offline_run_followed_live(tmp_path):
    """A run logged OFFLINE with the real wandb SDK (no server: ``wandb/offline-run-...``)
    followed by ``mlaudit watch RUN_DIR --live`` while it trains: the transaction log is read
    from the last complete record each poll; the loss turning NaN at step 100 gets one LV001
    alert before the run ends, written to RUN_DIR/mlaudit/live.json."""
    pytest.importorskip("wandb")
    env = dict(
        os.environ,
        WANDB_MODE="offline",
        WANDB_DIR=str(tmp_path),
        WANDB_SILENT="true",
        WANDB_CONFIG_DIR=str(tmp_path / "config"),
        WANDB_CACHE_DIR=str(tmp_path / "cache"),
        WANDB_DATA_DIR=str(tmp_path / "data"),
        WANDB_ERROR_REPORTING="false",
    )
    out = tmp_path / "w.json"
    w = subprocess.Popen(
        [
            sys.executable,
            str(HERE / "data" / "live" / "wandb_offline_writer.py"),
            "live-off",
            str(out),
        ],
        cwd=tmp_path,
        env=env,
        text=True,
        stdout=subprocess.PIPE,
        stderr=open(tmp_path / "w.err", "w"),
    )
    run_dir = None
    for line in w.stdout:
        if line.startswith('{"run_dir"'):
            run_dir = Path(json.loads(line)["run_dir"])
            break
    assert run_dir is not None, (tmp_path / "w.err").read_text()[-2000:]
    threading.Thread(target=w.stdout.read, daemon=True).start()
    with Receiver() as rx:
        log = tmp_path / "watch.log"
        watcher = subprocess.Popen(
            [
                MLAUDIT,
                "watch",
                str(run_dir),
                "--live",
                "--poll-interval",
                "0.5",
                "--state",
                str(tmp_path / "s.sqlite"),
                "--stall-floor",
                "60",
                "--notify",
                rx.url + "/hook",
            ],
            stdout=subprocess.DEVNULL,
            stderr=open(log, "wb"),
            cwd=tmp_path,
            env=env,
        )
        try:
            assert w.wait(240) == 0, (tmp_path / "w.err").read_text()[-3000:]
            _wait(lambda: len(_live(rx)) >= 1, 30, "the live alert")
            wait_live_runs_ended(tmp_path / "s.sqlite", 1)  # its last records and end are read
        finally:
            watcher.send_signal(signal.SIGTERM)
            watcher.wait(60)
        live = _live(rx)
    text = log.read_text()
    assert [(d["live"]["kind"], d["live"]["code"]) for d in live] == [("alert", "LV001")], text[
        -3000:
    ]
    assert live[0]["run"]["id"] == str(run_dir.resolve()) and live[0]["run"]["tracker"] == "wandb"
    finding = live[0]["live"]["finding"]
    assert finding["facts"]["step"] == 100 and finding["facts"]["key"] == "train/loss"
    from datetime import datetime

    assert (
        datetime.fromisoformat(live[0]["sent_at"]).timestamp()
        < json.loads(out.read_text())["end_time"]
    )
    doc = json.loads((run_dir / "mlaudit" / "live.json").read_text())
    assert [e["code"] for e in doc["episodes"]] == ["LV001"]
