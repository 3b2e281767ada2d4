"""Live triage (``mlaudit watch ... --live``) end to end, with real writers and a real receiver.

* MLflow: a real ``mlflow server`` (conftest), three training-like writers in their own
  processes (tests/data/live/mlflow_writer.py: healthy, NaN mid-way, stalled then resumed)
  and ``mlaudit watch mlflow --live`` as a subprocess posting to a real HTTP receiver
  (tests/webhook_receiver.py). The watcher is SIGKILLed during the stall episode and
  restarted on the same state file.
* TensorBoard: a real ``torch.utils.tensorboard.SummaryWriter`` in a subprocess, appending to
  its event file, with a console log carrying an NCCL watchdog line.
* The live detectors' rules on small synthetic tails (divergence, loss scale, throughput,
  heartbeat-only), and the state file's episode bookkeeping.
"""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.waiting import wait_live_polls, wait_live_runs_ended
from tests.webhook_receiver import Receiver
from tests.webhook_receiver import live_alerts as _live
from tests.webhook_receiver import wait_for as _wait

HERE = Path(__file__).parent
MLAUDIT = shutil.which("mlaudit", path=str(Path(sys.executable).parent)) or "mlaudit"


def _watcher(tmp: Path, url: str, hook: str, label: str) -> tuple[subprocess.Popen, Path]:
    log = tmp / f"watch-{label}.log"
    cmd = [
        MLAUDIT,
        "watch",
        "mlflow",
        "-e",
        "live-it",
        "-u",
        url,
        "--live",
        "--state",
        str(tmp / "state.sqlite"),
        "--poll-interval",
        "0.5",
        "--concurrency",
        "1",
        "--stall-floor",
        "3",
        "--cooldown",
        "0",
        "--stop-on",
        "nan",
        "--notify",
        hook,
    ]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=open(log, "wb"), cwd=tmp)
    return proc, log


def test_mlflow_live_nan_stall_healthy_restart(mlflow_server, tmp_path):
    """NaN run: one alert before it ends and the stop tag honoured; stalled run: one stalled
    alert and one recovered message across a SIGKILL + restart of the watcher during the
    episode; healthy run: nothing."""
    import mlflow

    url = mlflow_server["url"]
    client = mlflow.MlflowClient(url)
    if client.get_experiment_by_name("live-it") is None:
        client.create_experiment("live-it")
    resume = tmp_path / "resume"
    with Receiver() as rx:
        hook = rx.url + "/hook"
        proc, log = _watcher(tmp_path, url, hook, "1")
        try:
            # the watcher is up and polling before the runs start (its first listing sets its
            # cursor; under load its start-up alone can outlast the NaN run)
            _wait(lambda: "live: polling" in log.read_text(), 120, "the watcher")
            writers = {}
            for mode in ("healthy", "nan", "stall"):
                out = tmp_path / f"{mode}.json"
                writers[mode] = (
                    subprocess.Popen(
                        [
                            sys.executable,
                            str(HERE / "data" / "live" / "mlflow_writer.py"),
                            url,
                            "live-it",
                            mode,
                            str(out),
                            str(resume),
                        ],
                        stdout=subprocess.DEVNULL,
                        stderr=open(tmp_path / f"{mode}.err", "wb"),
                    ),
                    out,
                )

            def stall_alerts():
                return [d for d in _live(rx) if d["live"]["slot"] == "stall"]

            _wait(lambda: stall_alerts(), 300, "the stall alert")
            proc.send_signal(signal.SIGKILL)  # during the episode
            proc.wait(10)
            proc, log = _watcher(tmp_path, url, hook, "2")
            _wait(lambda: "live: polling" in log.read_text(), 120, "the restarted watcher")
            # the restarted watcher polls the still-stalled run several times
            wait_live_polls(tmp_path / "state.sqlite", n=4)
            assert len(stall_alerts()) == 1, log.read_text()[-3000:]
            resume.write_text("go")
            for mode, (w, _out) in writers.items():
                assert w.wait(120) == 0, (tmp_path / f"{mode}.err").read_text()[-2000:]
            _wait(lambda: len(stall_alerts()) >= 2, 120, "the recovered message")
            # the runs' end is seen; nothing more may come
            wait_live_runs_ended(tmp_path / "state.sqlite", 3)
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait(60)
        results = {m: json.loads(o.read_text()) for m, (_w, o) in writers.items()}
        live = _live(rx)
    logtext = (tmp_path / "watch-1.log").read_text() + log.read_text()
    by_run: dict[str, list[dict]] = {}
    for d in live:
        by_run.setdefault(d["run"]["id"], []).append(d)
    assert len({d["delivery"] for d in live}) == len(live)  # nothing sent twice

    assert by_run.get(results["healthy"]["run_id"], []) == [], logtext[-3000:]

    nan = by_run[results["nan"]["run_id"]]
    assert [(d["live"]["kind"], d["live"]["code"]) for d in nan] == [("alert", "LV001")], logtext[
        -4000:
    ]
    assert nan[0]["findings"][0]["code"] == "LV001"
    assert nan[0]["verdict"]["outcome"] == "running"
    sent = nan[0]["sent_at"]
    from datetime import datetime

    assert datetime.fromisoformat(sent).timestamp() < results["nan"]["end_time"]
    assert results["nan"]["stopped_by_tag"] and results["nan"]["last_step"] < 400
    tags = client.get_run(results["nan"]["run_id"]).data.tags
    assert tags["mlaudit.stop_requested"].startswith("LV001")
    assert tags["mlaudit.live"].startswith("superseded")
    doc = json.loads(
        Path(
            client.download_artifacts(results["nan"]["run_id"], "mlaudit/live.json", str(tmp_path))
        ).read_text()
    )
    assert [e["code"] for e in doc["episodes"]] == ["LV001"]
    assert doc["episodes"][0]["finding"]["evidence"][0]["metric"] == "train/loss"

    stall = by_run[results["stall"]["run_id"]]
    assert [(d["live"]["kind"], d["live"]["code"]) for d in stall] == [
        ("alert", "LV004"),
        ("recovered", "LV004"),
    ], logtext[-3000:]
    assert stall[0]["live"]["episode"] == stall[1]["live"]["episode"] == 1
    assert (
        "last training step 40" in json.dumps(stall[0])
        or "step 40" in stall[0]["findings"][0]["message"]
    )
    # MLflow keeps no console: the stall alert says so instead of showing last lines
    finding = stall[0]["live"]["finding"]
    assert "no console output" in finding["message"]
    assert any("no console output" in e.get("text", "") for e in finding["evidence"])


TB_WRITER = r"""
import math, sys, time
from pathlib import Path
from torch.utils.tensorboard import SummaryWriter
logdir, bad = Path(sys.argv[1]), sys.argv[2] == "bad"
w = SummaryWriter(str(logdir))
con = open(logdir / "train.log", "a")
for step in range(1, 61):
    loss = float("nan") if bad and step >= 30 else 2.0 * math.exp(-step / 10) + 0.3
    w.add_scalar("train/loss", loss, step)
    w.flush()
    con.write(f"step {step} loss {loss:.4f}\n")
    con.flush()
    if bad and step == 45:
        con.write("[rank3]:[E ProcessGroupNCCL.cpp:607] [Rank 3] Watchdog caught collective "
                  "operation timeout: WorkNCCL(SeqNum=5, OpType=ALLREDUCE) ran for 600000 "
                  "milliseconds before timing out.\n")
        con.flush()
    time.sleep(0.1)
# the bad run trains on until the watcher has sent both alerts (it records an alert in
# LOGDIR/mlaudit/live.json after posting it), as a long run would: under load the watcher's
# start-up and polls can outlast this short loop
live = logdir / "mlaudit" / "live.json"
deadline = time.time() + 300
while bad and time.time() < deadline:
    text = live.read_text() if live.exists() else ""
    if "LV001" in text and "LV007" in text:
        break
    time.sleep(0.1)
w.close()
print(time.time())
"""


def test_tensorboard_live_nan_and_nccl(tmp_path):
    """Two real SummaryWriters appending to their event files, one watcher on both logdirs:
    the bad run gets one NaN alert and one NCCL alert naming rank 3, both before its writer
    ends, recorded in LOGDIR/mlaudit/live.json; the healthy run gets nothing."""
    pytest.importorskip("torch")
    logdir, good = tmp_path / "run1", tmp_path / "run2"
    logdir.mkdir()
    good.mkdir()
    script = tmp_path / "tbw.py"
    script.write_text(TB_WRITER)
    with Receiver() as rx:
        hook = rx.url + "/hook"
        log = tmp_path / "watch.log"
        proc = subprocess.Popen(
            [
                MLAUDIT,
                "watch",
                "tensorboard",
                str(logdir),
                str(good),
                "--live",
                "--poll-interval",
                "0.3",
                "--state",
                str(tmp_path / "s.sqlite"),
                "--stall-floor",
                "30",
                "--notify",
                hook,
            ],
            stdout=subprocess.DEVNULL,
            stderr=open(log, "wb"),
        )
        try:
            g = subprocess.Popen(
                [sys.executable, str(script), str(good), "good"],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            w = subprocess.run(
                [sys.executable, str(script), str(logdir), "bad"],
                capture_output=True,
                text=True,
                timeout=420,
            )
            assert w.returncode == 0, w.stderr[-2000:]
            assert g.wait(120) == 0
            ended = float(w.stdout.strip().splitlines()[-1])
            _wait(lambda: len(_live(rx)) >= 2, 120, "two live alerts")
            wait_live_polls(tmp_path / "s.sqlite")  # the writers' last lines are read
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait(30)
        live = _live(rx)
    assert proc.returncode == 0, log.read_text()[-2000:]
    assert {d["run"]["id"] for d in live} == {str(logdir.resolve())}
    assert not (good / "mlaudit").exists()
    codes = sorted((d["live"]["kind"], d["live"]["code"]) for d in live)
    assert codes == [("alert", "LV001"), ("alert", "LV007")], log.read_text()[-3000:]
    nccl = next(d for d in live if d["live"]["code"] == "LV007")
    assert "rank 3" in nccl["findings"][0]["message"]
    from datetime import datetime

    nan = next(d for d in live if d["live"]["code"] == "LV001")
    assert datetime.fromisoformat(nan["sent_at"]).timestamp() < ended
    doc = json.loads((logdir / "mlaudit" / "live.json").read_text())
    assert sorted(e["code"] for e in doc["episodes"]) == ["LV001", "LV007"]


# --------------------------------------------------------------------------- rules


def _feed(run, key, values, start=0, t0=1_000.0, dt=1.0, th=None):
    from mlaudit_core.live import LiveThresholds

    th = th or LiveThresholds()
    steps = list(range(start, start + len(values)))
    walls = [t0 + s * dt for s in steps]
    run.feed({key: (steps, walls, list(values))}, walls[-1], th)
    return th


def test_divergence_needs_a_sustained_window_and_clears():
    from mlaudit_core.live import LiveRun

    r = LiveRun()
    th = _feed(r, "train/loss", [1.0] * 20 + [10.0] + [1.0] * 5)  # one spike: no divergence
    assert "diverged" not in r.conditions(2_000.0, th, running=False)
    _feed(r, "train/loss", [3.0] * 14, start=26)
    c = r.conditions(2_000.0, th, running=False)
    assert c["diverged"].code == "LV002" and c["diverged"].facts["ratio"] == pytest.approx(3.0)
    _feed(r, "train/loss", [1.2] * 5, start=40)
    assert "diverged" not in r.conditions(2_000.0, th, running=False)


def test_loss_scale_throughput_and_heartbeat():
    from mlaudit_core.live import LiveRun, LiveThresholds

    r = LiveRun()
    th = _feed(r, "loss_scale", [65536.0, 32768.0, 1024.0, 1.0])
    assert r.conditions(1_004.0, th, running=False)["loss_scale"].facts["max"] == 65536.0
    r = LiveRun()
    th = LiveThresholds(throughput_ref_points=20)
    _feed(r, "throughput/samples_per_sec", [100.0] * 30, th=th)
    assert "throughput" not in r.conditions(1_030.0, th, running=False)
    _feed(r, "throughput/samples_per_sec", [40.0] * 10, start=30, th=th)
    f = r.conditions(1_040.0, th, running=False)["throughput"]
    assert f.code == "LV006" and f.facts["early_median"] == 100.0
    # heartbeat-only: system metrics keep coming after training stopped
    r = LiveRun()
    th = LiveThresholds(stall_floor_s=5)
    _feed(r, "train/loss", [1.0] * 10, th=th)  # last point at t=1009, interval 1 s
    assert "stall" not in r.conditions(1_012.0, th)
    r.feed_system(1_030.0, 1_030.0)
    assert r.conditions(1_031.0, th)["stall"].code == "LV005"
    assert r.conditions(1_100.0, th)["stall"].code == "LV004"  # heartbeat gone too
    assert "stall" not in r.conditions(1_100.0, th, running=False)
    # no run status (TensorBoard): a run that stopped writing may have ended: no LV004...
    assert "stall" not in r.conditions(1_100.0, th, status_known=False)
    r.feed_system(1_099.0, 1_099.0)  # ...but a console still growing is a hang
    assert r.conditions(1_100.0, th, status_known=False)["stall"].code == "LV005"


def test_episodes_survive_a_new_store_and_respect_cooldown(tmp_path):
    from mlaudit_core.live import LiveRun
    from mlaudit_core.live.episodes import LiveStore, reconcile
    from mlaudit_core.service import StateStore

    r = LiveRun()
    th = _feed(r, "loss", [1.0, float("nan")])
    cond = r.conditions(1_002.0, th, running=False)
    with StateStore(tmp_path / "s.sqlite", "test") as st:
        ev = reconcile(LiveStore(st), "run1", cond, stop_on=("nan",), cooldown_s=60, now=1_002.0)
        assert [(e.kind, e.stop) for e in ev] == [("alert", True)]
    with StateStore(tmp_path / "s.sqlite", "test") as st:  # a restarted watcher
        ls = LiveStore(st)
        assert reconcile(ls, "run1", cond, cooldown_s=60, now=1_003.0) == []
        ev = reconcile(ls, "run1", {}, cooldown_s=60, now=1_004.0)
        assert [e.kind for e in ev] == ["recovered"]
        assert reconcile(ls, "run1", cond, cooldown_s=60) == []  # again within the cooldown
        assert [e["alert_sent"] for e in ls.episodes("run1")] == [1, 0]


def test_stop_on_names_are_checked():
    from mlaudit_core.live import parse_stop_on

    assert parse_stop_on("nan, diverged,nan") == ("nan", "diverged")
    with pytest.raises(ValueError, match="unknown stop condition 'nans'"):
        parse_stop_on("nans")


def test_cli_bad_stop_on_is_one_line_exit_2(tmp_path):
    p = subprocess.run(
        [MLAUDIT, "watch", "tensorboard", str(tmp_path), "--live", "--stop-on", "bogus"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert p.returncode == 2 and "bogus" in p.stderr
    p = subprocess.run(
        [MLAUDIT, "watch", "tensorboard", str(tmp_path)], capture_output=True, text=True, timeout=60
    )
    assert p.returncode == 2 and "--live" in p.stderr
    assert not (tmp_path / ".mlaudit").exists()


def test_live_poll_benchmark_runs_at_toy_size(mlflow_server):
    """benchmarks/live_poll.py at toy size (3 runs for 3 s, polls every 0.5 s, a 3,000-point
    logdir; MLflow through the suite's running server, TensorBoard, W&B and ClearML fake
    servers, local files, the in-process guard), in one process as a user runs it: it runs end
    to end and prints every figure, and each NaN it logs is alerted. Its targets are figures
    for the full size, not asserted here (no timed test). About 9 CPU-s (was about 31 with its
    own mlflow server and 6 s parts)."""
    import re

    pytest.importorskip("torch")
    p = subprocess.run(
        [
            sys.executable,
            str(HERE.parent / "benchmarks" / "live_poll.py"),
            "--runs",
            "3",
            "--seconds",
            "3",
            "--interval",
            "0.5",
            "--tb-points",
            "3000",
            "--guard-points",
            "2000",
            "--server-url",
            mlflow_server["url"],
            "--db-uri",
            mlflow_server["db_uri"],
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert p.returncode in (0, 1), p.stderr[-3000:]
    out = p.stdout
    for name in ("mlflow", "tensorboard", "wandb", "clearml", "files"):
        assert re.search(
            rf"^{name}: steady polls \d+, per poll: mlaudit process CPU median [\d.]+ s "
            rf".*poll thread CPU median [\d.]+ s",
            out,
            re.M,
        ), out
        assert re.search(rf"^{name}: NaN-to-alert latency [\d.]+ s", out, re.M), out
    assert re.search(r"^guard: .* mean [\d.]+ ms, p99 [\d.]+ ms", out, re.M), out


def test_a_nan_that_clears_within_one_poll_is_still_reported_once():
    from mlaudit_core.live import LiveRun

    r = LiveRun()
    th = _feed(r, "train/loss", [1.0] * 5 + [float("nan")] + [1.0] * 12)  # one poll's tail
    c = r.conditions(1_020.0, th, running=False)
    assert c["nonfinite"].facts["step"] == 5 and "finite again since" in c["nonfinite"].message
    assert "nonfinite" not in r.conditions(1_021.0, th, running=False)  # the next poll: cleared


def test_an_episode_is_not_closed_on_evidence_older_than_what_opened_it(tmp_path):
    """The race behind a CI run's alert, 'recovered', alert on a run NaN to its end: the
    fast-path thread opens the NaN episode from a newer listing while the poll thread's tails
    end before the NaN; or a restarted watcher's saved summary predates the NaN point. Neither
    poll may close the episode; a poll that has seen past it and is finite again does."""
    from mlaudit_core.live import LiveRun
    from mlaudit_core.live.episodes import LiveStore, reconcile
    from mlaudit_core.service import StateStore

    r = LiveRun()
    th = _feed(r, "loss", [1.0] * 5 + [float("nan")])
    cond = r.conditions(1_006.0, th, running=False)
    assert cond["nonfinite"].facts["step"] == 5
    with StateStore(tmp_path / "s.sqlite", "test") as st:
        ls = LiveStore(st)
        assert [e.kind for e in reconcile(ls, "run1", cond, cooldown_s=0, close_missing=False)] == [
            "alert"
        ]
        opened = ls.open_episodes("run1")["nonfinite"]["opened_at"]
        # the poll thread listed before the fast path opened it: its finite tail closes nothing
        assert reconcile(ls, "run1", {}, cooldown_s=0, seen_since=opened - 1.0, seen_step=9) == []
        # a restarted watcher whose summary stops at step 3, before the NaN at step 5
        assert reconcile(ls, "run1", {}, cooldown_s=0, seen_since=opened + 1.0, seen_step=3) == []
        # finite again after the NaN, on a poll listed after the episode opened: recovered
        ev = reconcile(ls, "run1", {}, cooldown_s=0, seen_since=opened + 1.0, seen_step=20)
        assert [e.kind for e in ev] == ["recovered"]
