"""``mlaudit mcp``'s trust boundary, driven by the official MCP SDK's client against the real
server (stdio subprocess and streamable HTTP), with a real ``mlflow server`` on 127.0.0.1 and a
plain HTTP listener standing for a host a caller would like the server to talk to.

* the MLflow tracking URIs are fixed at start (``--tracking-uri``): a call naming another
  host gets a one-line refusal, and the listener never sees a request (so never the server's
  ``MLFLOW_TRACKING_TOKEN``); the allowed URI works;
* a remote server's error body is not returned (read-SSRF);
* SQLite stores are confined by parsing the SQLAlchemy URI (``sqlite+pysqlite:///...``);
* HTTP needs the bearer token (401 without it or with another one).
"""

from __future__ import annotations

import http.server
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e  # real processes and servers throughout

mcp = pytest.importorskip("mcp")
mlflow = pytest.importorskip("mlflow")

import anyio  # noqa: E402
import httpx2  # noqa: E402
from conftest import free_port  # noqa: E402
from mcp import Client, StdioServerParameters  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402

MLAUDIT = str(Path(sys.executable).parent / "mlaudit")
TOKEN = "tok-0123456789abcdef-server-secret"
BODY = "LISTENER-BODY-7f3a"


class Listener:
    """An HTTP server on 127.0.0.1 that records every request's headers and answers 500 with
    ``BODY`` (what a host that is not an MLflow server would say)."""

    def __init__(self) -> None:
        seen = self.seen = []

        class H(http.server.BaseHTTPRequestHandler):
            def _any(self):
                seen.append(dict(self.headers))
                payload = f"<html><body>{BODY} internal details</body></html>".encode()
                self.send_response(500)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            do_GET = do_POST = _any

            def log_message(self, *a):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
        self.url = f"http://127.0.0.1:{self.httpd.server_port}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()


@pytest.fixture
def listener():
    lst = Listener()
    yield lst
    lst.close()


@pytest.fixture(scope="module")
def run_id(mlflow_server):
    client = mlflow.MlflowClient(mlflow_server["url"])
    exp = client.create_experiment(f"mcp-trust-{os.getpid()}")
    rid = client.create_run(exp, run_name="r").info.run_id
    for i in range(1, 60):
        client.log_metric(rid, "train/loss", 2.0 / i, step=i)
    client.set_terminated(rid)
    return rid


def session(root: Path, fn, *extra: str, env: dict | None = None):
    async def main():
        params = StdioServerParameters(
            command=MLAUDIT,
            args=["mcp", "--root", str(root), *extra],
            cwd=str(root),
            env={**os.environ, **(env or {})},
        )
        async with Client(params) as client:
            return await fn(client)

    return anyio.run(main)


def test_toolbox_uri_refuses_hosts_not_given_at_start_and_keeps_credentials_home(
    tmp_path, listener, mlflow_server, run_id
):
    env = {"MLFLOW_TRACKING_TOKEN": TOKEN, "MLFLOW_TRACKING_URI": ""}

    async def fn(c):
        return (
            await c.call_tool(
                "audit_run", {"tracker": "mlflow", "run_ref": run_id, "tracking_uri": listener.url}
            ),
            await c.call_tool(
                "get_series",
                {
                    "source": "mlflow",
                    "run_ref": run_id,
                    "metric": "train/loss",
                    "tracking_uri": listener.url + "/x",
                },
            ),
            await c.call_tool(
                "compare_runs",
                {
                    "source": "mlflow",
                    "run": run_id,
                    "baselines": [run_id],
                    "tracking_uri": "postgresql://u@127.0.0.1/x",
                },
            ),
            await c.call_tool("audit_run", {"tracker": "mlflow", "run_ref": run_id}),
            await c.call_tool(
                "audit_run",
                {
                    "tracker": "mlflow",
                    "run_ref": run_id,
                    "tracking_uri": mlflow_server["url"] + "/",
                },
            ),
        )

    other, series, db, default, named = session(
        tmp_path, fn, "--tracking-uri", mlflow_server["url"], env=env
    )
    for res in (other, series, db):
        text = res.content[0].text
        assert res.is_error and "not a tracking URI this server was started with" in text, text
        assert "\n" not in text
    assert listener.seen == []  # no request ever reached the other host, with or without token
    for res in (default, named):  # the URI given at start is used, by default or by name
        assert not res.is_error, res.content[0].text
        assert res.structured_content["verdict"]["outcome"]


def test_tool_errors_do_not_return_a_remote_servers_body(tmp_path, listener):
    async def fn(c):
        return await c.call_tool("audit_run", {"tracker": "mlflow", "run_ref": "0" * 32})

    res = session(
        tmp_path, fn, "--tracking-uri", listener.url, env={"MLFLOW_HTTP_REQUEST_MAX_RETRIES": "0"}
    )
    text = res.content[0].text
    assert res.is_error and listener.seen, text  # the operator's host was asked...
    assert BODY not in text and "<html" not in text.lower(), text  # ...its answer not handed on
    assert len(text) <= 320


def test_toolbox_sqlite_uris_are_parsed_not_prefix_matched(tmp_path):
    root = tmp_path / "root"
    root.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    uris = [
        f"sqlite+pysqlite:///{outside}/mlflow.db",
        f"SQLite+pysqlite:///{outside}/m2.db",
        f"sqlite:///{root}/../outside/m3.db",
        f"sqlite+pysqlite:///{root}/../outside/m4.db",
        f"sqlite:///file:{outside}/m5.db?uri=true",
    ]

    async def fn(c):
        return [
            await c.call_tool("audit_run", {"tracker": "mlflow", "run_ref": "x", "tracking_uri": u})
            for u in uris
        ]

    for res in session(root, fn):
        text = res.content[0].text
        assert res.is_error, text
        assert "outside the allowed roots" in text or "give a SQLite database file" in text, text
    assert list(outside.iterdir()) == []  # no database was created outside the roots


def _http(port: int, headers: dict | None):
    async def main():
        async with httpx2.AsyncClient(headers=headers or {}, timeout=30) as http:
            for _ in range(150):
                try:
                    await http.get(f"http://127.0.0.1:{port}/")
                    break
                except httpx2.TransportError:
                    await anyio.sleep(0.2)
            raw = await http.post(
                f"http://127.0.0.1:{port}/mcp",
                json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                headers={"Accept": "application/json, text/event-stream"},
            )
            if raw.status_code == 401:
                return raw, None
            async with Client(
                streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=http)
            ) as c:
                return raw, (await c.list_tools()).tools

    return anyio.run(main)


def test_serve_http_requires_the_bearer_token(tmp_path):
    port = free_port()
    proc = subprocess.Popen(
        [MLAUDIT, "mcp", "--root", str(tmp_path), "--http", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "MLAUDIT_MCP_TOKEN": ""},
    )
    try:
        first, second = proc.stderr.readline(), proc.stderr.readline()
        assert "127.0.0.1" in first, first
        token = second.split("Bearer ", 1)[1].split("'", 1)[0]
        assert len(token) >= 32
        none, _ = _http(port, None)
        wrong, _ = _http(port, {"Authorization": "Bearer " + "x" * 43})
        ok, tools = _http(port, {"Authorization": f"Bearer {token}"})
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    for r in (none, wrong):
        assert r.status_code == 401 and r.headers["www-authenticate"].startswith("Bearer"), r
    assert ok.status_code != 401 and {t.name for t in tools} >= {"audit_run", "audit_path"}


def test_serve_http_takes_a_given_token(tmp_path):
    port = free_port()
    proc = subprocess.Popen(
        [MLAUDIT, "mcp", "--root", str(tmp_path), "--http", str(port), "--token", TOKEN],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert "127.0.0.1" in proc.stderr.readline()
        ok, tools = _http(port, {"Authorization": f"Bearer {TOKEN}"})
    finally:
        proc.terminate()
        out = proc.communicate(timeout=30)[1]
    assert ok.status_code != 401 and tools
    assert TOKEN not in out  # a given token is not printed


def test_wandb_parse_ref_keeps_no_host_of_a_run_url(monkeypatch):
    """A W&B run URL given as ``run_ref`` names a run, not a host: the server's W&B host is
    its environment's (``WANDB_BASE_URL``), fixed at start (docs/agents.md, trust model)."""
    pytest.importorskip("wandb")
    from mlaudit_wandb.online import base_url, parse_ref

    monkeypatch.setenv("WANDB_BASE_URL", "https://wandb.internal.example")
    path = parse_ref("https://listener.example:8443/ent/proj/runs/abc123")
    assert str(path) == "ent/proj/abc123"
    assert base_url() == "https://wandb.internal.example"
