"""``mlaudit mcp``'s per-call limits (issue 33, MCP medium findings), driven by the official
SDK client over stdio and, where a hostile client is the point, by hand-written JSON-RPC lines
and HTTP requests: a FIFO argument is refused at once (it held the one-call-at-a-time lock
forever), a call of 20,000 paths is refused by the schema, a 20 MiB stdio line is dropped
without stopping the server, a call over ``--call-timeout`` is an error line, and an HTTP
session idle for ``--session-idle`` is closed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e  # real processes and servers throughout

mcp = pytest.importorskip("mcp")

import anyio  # noqa: E402
import httpx2  # noqa: E402
from conftest import free_port  # noqa: E402
from mcp import Client, StdioServerParameters  # noqa: E402
from waiting import wait_until  # noqa: E402

MLAUDIT = str(Path(sys.executable).parent / "mlaudit")


def session(root: Path, fn, *extra: str):
    async def main():
        params = StdioServerParameters(
            command=MLAUDIT,
            args=["mcp", "--root", str(root), *extra],
            cwd=str(root),
            env=dict(os.environ),
        )
        async with Client(params) as client:
            return await fn(client)

    return anyio.run(main)


def _log(path: Path, n: int) -> Path:
    path.write_text("".join(f"step {i} | loss {2.0 / i:.5f} | lr 0.0003\n" for i in range(1, n)))
    return path


def test_toolbox_refuses_a_fifo_and_a_20000_path_call_at_once(tmp_path):
    os.mkfifo(tmp_path / "train.log")
    _log(tmp_path / "ok.log", 200)
    run = tmp_path / "run"
    run.mkdir()
    os.mkfifo(run / "trainer_state.json")

    async def fn(c):
        fifo = await c.call_tool("audit_logs", {"paths": ["train.log"]})
        inside = await c.call_tool("audit_path", {"path": "run"})
        many = await c.call_tool("audit_logs", {"paths": ["ok.log"] * 20_000})
        ok = await c.call_tool("audit_logs", {"paths": ["ok.log"]})
        return fifo, inside, many, ok

    fifo, inside, many, ok = session(tmp_path, fn)
    for res in (fifo, inside):
        assert res.is_error and "not a regular file or folder" in res.content[0].text, res
    assert many.is_error and "paths" in many.content[0].text, many.content[0].text
    # none of them waited on a reader (a FIFO open blocked forever before): a hang is stopped by
    # the per-test timeout; the answers above are the behaviour
    assert not ok.is_error and ok.structured_content["verdict"]["outcome"]


def _rpc(proc, msg: dict) -> None:
    proc.stdin.write((json.dumps(msg) + "\n").encode())
    proc.stdin.flush()


def _answer(proc, id_: int) -> dict:
    while True:
        line = proc.stdout.readline()
        assert line, proc.stderr.read().decode()[-2000:]
        doc = json.loads(line)
        if doc.get("id") == id_:
            return doc


def test_serve_stdio_drops_an_overlong_line_and_goes_on(tmp_path):
    proc = subprocess.Popen(
        [MLAUDIT, "mcp", "--root", str(tmp_path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=tmp_path,
    )
    try:
        _rpc(
            proc,
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "raw", "version": "0"},
                },
            },
        )
        assert "result" in _answer(proc, 1)
        _rpc(proc, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        big = (
            b'{"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"x": "'
            + b"a" * (20 << 20)
            + b'"}}\n'
        )
        for k in range(0, len(big), 1 << 20):
            proc.stdin.write(big[k : k + (1 << 20)])
        proc.stdin.flush()
        _rpc(proc, {"jsonrpc": "2.0", "id": 3, "method": "tools/list"})
        tools = _answer(proc, 3)
    finally:
        proc.stdin.close()
        proc.wait(timeout=60)
    assert {t["name"] for t in tools["result"]["tools"]} >= {"audit_logs", "audit_run"}
    assert b"message line over 16 MiB was dropped" in proc.stderr.read()


def test_server_call_timeout_is_an_error_and_the_server_recovers(tmp_path):
    _log(tmp_path / "big.log", 60_000)  # ~7 s of parsing here: well past the 1 s call limit

    async def fn(c):
        slow = await c.call_tool("audit_logs", {"paths": ["big.log"]})
        for _ in range(120):  # the abandoned worker finishes on its own, then calls run again
            rules = await c.call_tool("list_rules", {})
            if not rules.is_error:
                return slow, rules
            text = rules.content[0].text  # waited for the abandoned call, then refused
            assert "still busy" in text or "took longer than the call time limit" in text, text
        raise AssertionError("the server never took a call again")

    slow, rules = session(tmp_path, fn, "--call-timeout", "1")
    assert slow.is_error and "took longer than the call time limit (1 s" in slow.content[0].text
    assert rules.structured_content["rules"]


def test_serve_http_closes_an_idle_session(tmp_path):
    port = free_port()
    token = "limits-token-0123456789abcdef"
    proc = subprocess.Popen(
        [
            MLAUDIT,
            "mcp",
            "--root",
            str(tmp_path),
            "--http",
            str(port),
            "--token",
            token,
            "--session-idle",
            "2",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    headers = {"Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream"}

    async def main():
        url = f"http://127.0.0.1:{port}/mcp"
        async with httpx2.AsyncClient(headers=headers, timeout=30) as http:
            for _ in range(150):
                try:
                    await http.get(f"http://127.0.0.1:{port}/")
                    break
                except httpx2.TransportError:
                    await anyio.sleep(0.2)
            init = await http.post(
                url,
                json={
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "initialize",
                    "params": {
                        "protocolVersion": "2025-06-18",
                        "capabilities": {},
                        "clientInfo": {"name": "raw", "version": "0"},
                    },
                },
            )
            sid = init.headers["mcp-session-id"]
            h = {"mcp-session-id": sid, "mcp-protocol-version": "2025-06-18"}
            await http.post(
                url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=h
            )
            fresh = await http.post(
                url, json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, headers=h
            )
            await anyio.sleep(6)
            idle = await http.post(
                url, json={"jsonrpc": "2.0", "id": 3, "method": "tools/list"}, headers=h
            )
            return fresh, idle

    try:
        assert "127.0.0.1" in proc.stderr.readline()
        fresh, idle = anyio.run(main)
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    assert fresh.status_code == 200, fresh.text
    assert idle.status_code == 404, (idle.status_code, idle.text)


def test_serve_http_closes_a_connection_that_sends_no_request(tmp_path):
    """A connection that sends nothing, or its headers a byte at a time, was kept open forever
    (uvicorn closes an idle connection only after a first response); the HTTP server now runs
    with ``mlaudit serve``'s header deadline (10 s)."""
    import socket

    port = free_port()
    proc = subprocess.Popen(
        [
            MLAUDIT,
            "mcp",
            "--root",
            str(tmp_path),
            "--http",
            str(port),
            "--token",
            "limits-token-0123456789abcdef",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert "127.0.0.1" in proc.stderr.readline()

        def connected():
            try:
                return socket.create_connection(("127.0.0.1", port), timeout=40)
            except ConnectionRefusedError:  # printed its address, not listening yet
                return None

        idle = wait_until(connected, 60, "the MCP server to accept connections")
        slow = socket.create_connection(("127.0.0.1", port), timeout=40)
        slow.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        # b"" is the server closing; a server that never closes makes recv raise after 40 s
        got = [s.recv(100) for s in (idle, slow)]
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    assert got == [b"", b""], got
