"""The in-process hook keeps to its budget when a notify target never answers (issue 33,
low finding): a real training script logging to a real ``mlflow server`` ends under
``audit_on_exit(budget_s=5, notify=URL)`` where URL is a listener that accepts connections and
never answers. Before, the notification's worker threads (a ThreadPoolExecutor, joined at
interpreter exit) kept the interpreter alive for the notification's whole ``total_s`` (20 s)
after the script's end."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time

import pytest

pytestmark = pytest.mark.e2e  # real processes and servers throughout

SCRIPT = r"""
import sys, time
import mlflow
from mlaudit.hooks import audit_on_exit

with mlflow.start_run(run_name="notify-budget"):
    for step in range(1, 120):
        mlflow.log_metric("train/loss", 2.0 / step, step=step)
    with audit_on_exit(budget_s=5, notify=sys.argv[1]):
        pass
    open(sys.argv[2], "w").write(repr(time.time()))
"""


def test_audit_on_exit_returns_within_budget_when_a_notify_target_never_answers(
    mlflow_server, tmp_path
):
    pytest.importorskip("mlflow")
    silent = socket.create_server(("127.0.0.1", 0))
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:  # take connections, read nothing, answer nothing
        silent.settimeout(0.5)
        while not stop.is_set():
            try:
                held.append(silent.accept()[0])
            except OSError:
                continue

    threading.Thread(target=accept, daemon=True).start()
    url = f"http://127.0.0.1:{silent.getsockname()[1]}/hook"
    stamp = tmp_path / "ended"
    try:
        p = subprocess.run(
            [sys.executable, "-c", SCRIPT, url, str(stamp)],
            cwd=tmp_path,
            env={**os.environ, "MLFLOW_TRACKING_URI": mlflow_server["url"]},
            capture_output=True,
            text=True,
            timeout=120,
        )
        exited = time.time()
    finally:
        stop.set()
        for s in held:
            s.close()
        silent.close()
    assert p.returncode == 0, p.stderr[-2000:]
    after_hook = exited - float(stamp.read_text())
    assert after_hook < 8, (after_hook, p.stderr[-2000:])  # the 20 s of total_s are not waited
