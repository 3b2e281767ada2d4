"""The webhook receiver's connection limits (issue 16, finding 9), on a real
``mlaudit serve wandb-webhook`` process (uvicorn) whose W&B side is the local fake server of
``tests/wandb_fake_server.py`` (the real wandb SDK checks its key there; no W&B server can run
here). The receiver runs with a low file-descriptor limit, as a small container would: idle
connections that never send a request must not use up its descriptors and starve ``/healthz``;
a slow body gets 408; a client that disconnects mid-body is one counted log line, never a
traceback."""

from __future__ import annotations

import os
import resource
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import requests

wandb_fake_server = pytest.importorskip("wandb_fake_server")
pytest.importorskip("wandb")
pytest.importorskip("uvicorn")

from conftest import free_port  # noqa: E402

MLAUDIT = str(Path(sys.executable).with_name("mlaudit"))
KEY = "k" * 40
SECRET = "hook-secret-0123456789"
FD_LIMIT = 256


def _limit_fds() -> None:
    resource.setrlimit(resource.RLIMIT_NOFILE, (FD_LIMIT, FD_LIMIT))


@pytest.fixture(scope="module")
def receiver(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("serve")
    log = tmp / "serve.log"
    with wandb_fake_server.FakeWandbServer(api_key=KEY) as srv:
        port = free_port()
        env = dict(
            os.environ,
            MLAUDIT_WANDB_WEBHOOK_SECRET=SECRET,
            WANDB_API_KEY=KEY,
            WANDB_BASE_URL=srv.base_url,
            WANDB_MODE="online",
        )
        proc = subprocess.Popen(
            [
                MLAUDIT,
                "serve",
                "wandb-webhook",
                "--port",
                str(port),
                "--state",
                str(tmp / "q.sqlite"),
                "--no-panel",
                "--header-timeout",
                "1",
                "--body-timeout",
                "1",
                "--max-connections",
                "50",
            ],
            env=env,
            stdout=open(log, "w"),
            stderr=subprocess.STDOUT,
            preexec_fn=_limit_fds,
        )
        url = f"http://127.0.0.1:{port}"
        deadline = time.time() + 90
        while True:
            assert proc.poll() is None, log.read_text()
            try:
                if requests.get(f"{url}/healthz", timeout=1).json()["ok"]:
                    break
            except requests.RequestException:
                pass
            assert time.time() < deadline, log.read_text()
            time.sleep(0.3)
        try:
            yield {"url": url, "port": port, "log": log}
        finally:
            proc.terminate()
            proc.wait(30)


def _connect(port: int) -> socket.socket | None:
    s = socket.socket()
    s.settimeout(2)
    try:
        s.connect(("127.0.0.1", port))
        return s
    except OSError:
        s.close()
        return None


def test_idle_connections_do_not_starve_healthz(receiver):
    """More idle, unauthenticated connections than the receiver has descriptors: each is closed
    at the header deadline, so /healthz answers again within seconds (before: descriptors
    exhausted, /healthz and deliveries timed out, a traceback per refused accept)."""
    idle = [s for s in (_connect(receiver["port"]) for _ in range(2 * FD_LIMIT)) if s]
    try:
        answered = None
        for _ in range(40):
            try:
                r = requests.get(f"{receiver['url']}/healthz", timeout=2)
                if r.status_code == 200 and r.json()["ok"]:
                    answered = r
                    break
            except requests.RequestException:
                pass
            time.sleep(0.5)
        assert answered is not None, receiver["log"].read_text()[-3000:]
        # the server closed the idle ones it accepted (recv sees the end of the stream)
        idle[0].settimeout(5)
        assert idle[0].recv(1) == b""
    finally:
        for s in idle:
            s.close()
    text = receiver["log"].read_text()
    assert "Traceback" not in text, text[-3000:]
    lines = [ln for ln in text.splitlines() if "without complete request headers" in ln]
    assert 1 <= len(lines) <= 2, text[-2000:]  # one counted line per minute, not one per socket
    assert len([ln for ln in text.splitlines() if "not accepted" in ln]) <= 2


def test_a_slow_body_gets_408_and_a_disconnect_mid_body_no_traceback(receiver):
    head = (
        f"POST /webhook HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {SECRET}\r\n"
        "Content-Type: application/json\r\nContent-Length: 200\r\n\r\n"
    ).encode()
    s = _connect(receiver["port"])
    s.settimeout(10)
    s.sendall(head + b'{"run_path": ')  # and never the rest
    reply = s.recv(4096)
    s.close()
    assert reply.startswith(b"HTTP/1.1 408"), reply

    s = _connect(receiver["port"])
    s.sendall(head + b'{"run_path": "ent/p')
    s.close()  # gone mid-body
    time.sleep(1.5)
    r = requests.get(f"{receiver['url']}/healthz", timeout=5)
    assert r.status_code == 200
    text = receiver["log"].read_text()
    assert "Traceback" not in text and "Exception" not in text, text[-3000:]
    assert "body not complete within 1 s (408)" in text
