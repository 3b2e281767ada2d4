"""``mlaudit serve mlflow-webhook`` has a body deadline (issue 33, medium finding): a client that
sends a delivery's headers and then only part of its body gets 408 after ``--body-timeout``
and the connection is closed; before, the receiver waited for the rest forever. A real
receiver process (uvicorn) against a real ``mlflow server`` on 127.0.0.1."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import requests

pytest.importorskip("mlflow")
from conftest import free_port  # noqa: E402

pytestmark = pytest.mark.e2e  # real processes and servers throughout

MLAUDIT = str(Path(sys.executable).with_name("mlaudit"))


def test_registry_webhook_make_app_answers_408_to_a_slow_body(mlflow_server, tmp_path):
    port = free_port()
    log = tmp_path / "hook.log"
    proc = subprocess.Popen(
        [
            MLAUDIT,
            "serve",
            "mlflow-webhook",
            "--port",
            str(port),
            "-u",
            mlflow_server["url"],
            "--state",
            str(tmp_path / "hook.sqlite"),
            "--body-timeout",
            "1",
        ],
        stdout=open(log, "wb"),
        stderr=subprocess.STDOUT,
        start_new_session=True,
        env=dict(os.environ, MLAUDIT_MLFLOW_WEBHOOK_SECRET="mlflow-hook-secret-0123"),
    )
    try:
        deadline = time.time() + 90
        while True:
            assert proc.poll() is None, log.read_text()
            try:
                if requests.get(f"http://127.0.0.1:{port}/healthz", timeout=1).ok:
                    break
            except requests.RequestException:
                pass
            assert time.time() < deadline, log.read_text()
        s = socket.create_connection(("127.0.0.1", port), timeout=30)
        s.sendall(
            b"POST /webhook HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b"Content-Length: 300\r\n\r\n" + b'{"entity": "model_version", '
        )
        t0 = time.monotonic()
        reply = s.recv(4096)
        waited = time.monotonic() - t0
        s.close()
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=30)
    assert reply.startswith(b"HTTP/1.1 408"), (reply, log.read_text()[-2000:])
    assert waited < 25
    assert "body not complete within 1 s (408)" in log.read_text()
