"""Bounded waits (issue 16, finding 8): ``watch mlflow --once`` gives up on a tracker that is
down after a bounded retry budget (exit 4, one line), a server that accepts connections and
never answers fails in seconds (``MLAUDIT_TRACKER_TIMEOUT``), and ``--once`` with a failed run
exits 4 saying how to resume. Real ``mlaudit`` processes against a closed port, a real socket
that accepts and never answers, and the real ``mlflow server`` of conftest."""

from __future__ import annotations

import os
import socket
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from conftest import free_port

MLAUDIT = str(Path(sys.executable).with_name("mlaudit"))
pytest.importorskip("mlflow")


def run(args: list[str], *, timeout: float, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [MLAUDIT, *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "COLUMNS": "200", **env},
    )


@pytest.fixture
def hung_server():
    """A TCP server on 127.0.0.1 that accepts every connection and never answers."""
    srv = socket.create_server(("127.0.0.1", 0))
    conns: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        srv.settimeout(0.2)
        while not stop.is_set():
            try:
                conns.append(srv.accept()[0])
            except OSError:
                pass

    t = threading.Thread(target=accept, daemon=True)
    t.start()
    yield f"http://127.0.0.1:{srv.getsockname()[1]}"
    stop.set()
    t.join(2)
    for c in conns:
        c.close()
    srv.close()


def test_watch_once_gives_up_on_a_tracker_that_is_down(tmp_path):
    """Before: still retrying at 400 s. Now: exit 4 with one line after 4 listing attempts."""
    url = f"http://127.0.0.1:{free_port()}"  # nothing listens
    p = run(
        [
            "watch",
            "mlflow",
            "-e",
            "exp",
            "-u",
            url,
            "--once",
            "--state",
            str(tmp_path / "w.sqlite"),
        ],
        timeout=180,
        MLAUDIT_TRACKER_TIMEOUT="2",
    )
    assert p.returncode == 4, p.stderr[-2000:]
    err = [ln for ln in p.stderr.splitlines() if "mlaudit: error:" in ln]
    assert len(err) == 1 and "did not answer the listing after 4 attempts" in err[0], p.stderr


def test_a_server_that_never_answers_fails_in_seconds(hung_server):
    """Before: MLflow's 30 s timeout times 3 attempts (about 100 s). Now the connect/read timeout
    is ``MLAUDIT_TRACKER_TIMEOUT`` (default 10 s) with one retry."""
    p = run(
        ["mlflow", "0123456789abcdef0123456789abcdef", "-u", hung_server],
        timeout=60,
        MLAUDIT_TRACKER_TIMEOUT="2",
    )
    assert p.returncode == 2, p.stderr
    assert p.stderr.count("\n") == 1 and "could not be read" in p.stderr


def test_a_bad_timeout_setting_is_one_line_exit_2(hung_server):
    p = run(
        ["mlflow", "0123456789abcdef0123456789abcdef", "-u", hung_server],
        timeout=60,
        MLAUDIT_TRACKER_TIMEOUT="soon",
    )
    assert p.returncode == 2 and "MLAUDIT_TRACKER_TIMEOUT='soon'" in p.stderr, p.stderr


def test_watch_once_with_a_failed_run_exits_4_and_says_how_to_resume(mlflow_server, tmp_path):
    import mlflow
    from mlflow.entities import Metric

    client = mlflow.MlflowClient(mlflow_server["url"])
    exp = client.create_experiment("once-fails")
    rid = client.create_run(exp, run_name="broken").info.run_id
    client.log_batch(rid, metrics=[Metric("train_loss", 1.0 / i, 0, i) for i in range(1, 50)])
    client.set_terminated(rid, "FINISHED")
    db = sqlite3.connect(mlflow_server["root"] / "mlflow.db")
    with db:  # a damaged row in the server's store: get-history answers HTTP 500 for this run
        db.execute("UPDATE metrics SET value='not a number' WHERE run_uuid=? AND step=7", (rid,))
    db.close()
    p = run(
        [
            "watch",
            "mlflow",
            "-e",
            "once-fails",
            "-u",
            mlflow_server["url"],
            "--once",
            "--since",
            "all",
            "--state",
            str(tmp_path / "w.sqlite"),
        ],
        timeout=300,
    )
    assert p.returncode == 4, p.stderr[-3000:]
    assert "1 run(s) failed and wait for a retry: run the same command again" in p.stderr


def test_logs_memory_benchmark_end_to_end_at_toy_size():
    """``benchmarks/logs_throughput.py --no-parse`` (the issue-16 figure: ``mlaudit logs`` end to
    end on a generated N-line log, peak RSS against 1 GiB) at toy size; the figures themselves
    are printed by the full-size run, not asserted here."""
    bench = Path(__file__).resolve().parents[1] / "benchmarks" / "logs_throughput.py"
    p = subprocess.run(
        [sys.executable, str(bench), "--lines", "3000", "--no-parse"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert p.returncode == 0, p.stderr[-3000:]
    assert "generated 3,00" in p.stdout and "mlaudit logs (CLI):" in p.stdout, p.stdout
    assert "parse (load_logs)" not in p.stdout  # --no-parse: the end-to-end child only
    assert "end-to-end peak within 1 GiB: True" in p.stdout, p.stdout
