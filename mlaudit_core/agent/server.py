"""``mlaudit mcp``: the agent tools (:mod:`.tools`) served over the Model Context Protocol.

Built on the official ``mcp`` Python SDK's low-level :class:`mcp.server.lowlevel.Server`, so
each tool publishes exactly the JSON Schemas of :mod:`.tools` (the audit tools' output schema
is the report schema, docs/schema/report.schema.json) and a tool error is the CLI's one line.

Transports: stdio (the default; while serving, the SDK points fd 1 at stderr, so nothing an
SDK prints can corrupt the protocol) and streamable HTTP on 127.0.0.1 (``--http PORT``; the
SDK's DNS-rebinding protection for localhost is on, and every request needs the bearer token
fixed at start). The MLflow tracking URIs the tools may use are fixed at start too
(``--tracking-uri``); see docs/agents.md "Trust model". Tool calls run in a worker thread, one
at a time; a call that asked for progress (``_meta.progressToken``) gets
``notifications/progress`` at each stage (loading, auditing, writing back; per run for a
folder of runs).

Requires the ``mcp`` extra: ``pip install 'mlaudit[mcp]'``.
"""

from __future__ import annotations

import hmac
import json
import secrets
from collections.abc import Sequence
from typing import Any

from ..errors import MissingDependency
from .tools import Roots, Toolbox, ToolFailure, tool_specs

#: tools that can write (only with write_back: true); every other tool only reads
_MAY_WRITE = {"audit_run", "audit_path"}
_TRACKER_TOOLS = {"audit_run", "compare_runs", "get_series"}

INSTRUCTIONS = (
    "mlaudit audits ML training runs and ML CI failures and returns an evidence-cited report "
    "(verdict: outcome, cause, confidence; findings with metric/step or file:line evidence; "
    "hypotheses; unknowns; next actions). Start with audit_run (MLflow, W&B, ClearML), "
    "audit_path (local files) or audit_ci (a CI failure). Read verdict, then unknowns (what "
    "could not be judged) and hypotheses before concluding. Fetch get_series only to look at "
    "a curve the report points to. Nothing is written back unless write_back is true."
)


def _require_sdk():
    try:
        import mcp  # noqa: F401
    except ImportError:
        raise MissingDependency("mcp", "mcp") from None


def build_server(
    roots: Roots,
    config: str | None = None,
    tracking_uris: Sequence[str] = (),
    call_timeout_s: float = 600.0,
):
    """The MCP server object (``mcp.server.lowlevel.Server``) with every tool registered.

    ``tracking_uris``: the MLflow tracking URIs the tools may use (fixed here, never chosen by
    a call beyond picking one of them; see :meth:`.tools.Toolbox._uri`)."""
    _require_sdk()
    import anyio
    import mcp.types as types
    from mcp.server.lowlevel import Server

    from .._version import __version__

    toolbox = Toolbox(roots, config, tracking_uris, call_timeout_s)
    specs = tool_specs()

    def annotations(name: str):
        return types.ToolAnnotations(
            read_only_hint=name not in _MAY_WRITE,
            destructive_hint=False,
            idempotent_hint=True,
            open_world_hint=name in _TRACKER_TOOLS,
        )

    tools = [
        types.Tool(
            name=s.name,
            description=s.description,
            input_schema=s.input_schema,
            output_schema=s.output_schema,
            annotations=annotations(s.name),
        )
        for s in specs
    ]

    async def list_tools(ctx, params) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def call_tool(ctx, params) -> types.CallToolResult:
        name, args = params.name, dict(params.arguments or {})

        def progress(done: float, total: float, message: str) -> None:
            try:
                anyio.from_thread.run(ctx.session.report_progress, done, total, message)
            except Exception:  # noqa: BLE001 - progress is best effort, never fails a call
                pass

        try:
            # the call's time limit: the client gets an error line at the limit; the worker
            # thread cannot be interrupted and finishes on its own (the next call waits for it
            # at most the same limit, see Toolbox.call)
            with anyio.fail_after(call_timeout_s):
                res = await anyio.to_thread.run_sync(
                    lambda: toolbox.call(name, args, progress), abandon_on_cancel=True
                )
        except TimeoutError:
            return types.CallToolResult(
                content=[
                    types.TextContent(
                        type="text",
                        text=f"mlaudit: error: {name}: took longer than the call time "
                        f"limit ({call_timeout_s:.0f} s, --call-timeout)",
                    )
                ],
                is_error=True,
            )
        except ToolFailure as exc:
            return types.CallToolResult(
                content=[types.TextContent(type="text", text=str(exc))], is_error=True
            )
        compact = res.data.get("schema") == "mlaudit-compact/1" or any(
            (r.get("report") or {}).get("schema") == "mlaudit-compact/1"
            for r in res.data.get("runs") or []
            if isinstance(r, dict)
        )
        # the compact form's budget is counted on compact JSON: no indentation for it
        text = (
            json.dumps(res.data, separators=(",", ":"), ensure_ascii=False, default=str)
            if compact
            else json.dumps(res.data, indent=1, default=str)
        )
        content = [types.TextContent(type="text", text=text)]
        content += [types.TextContent(type="text", text=line) for line in res.lines]
        return types.CallToolResult(content=content, structured_content=res.data, is_error=False)

    return Server(
        "mlaudit",
        version=__version__,
        title="mlaudit",
        description="Evidence-backed diagnosis of ML training runs and ML CI failures.",
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


#: The longest JSON-RPC message line read from stdin (a tool call's arguments are small; the
#: SDK's own reader has no limit: a 300 MB line took 5.8 GB)
MAX_LINE_BYTES = 16 << 20


class BoundedLines:
    """A text reader over a binary stream whose ``readline`` returns at most
    :data:`MAX_LINE_BYTES`: a longer line is read to its end in pieces and dropped, and
    replaced by one line no JSON-RPC parser accepts (the SDK answers it as a parse error),
    with one line on stderr."""

    def __init__(self, raw, limit: int = MAX_LINE_BYTES) -> None:
        self.raw, self.limit = raw, limit

    def readline(self) -> str:
        line = self.raw.readline(self.limit + 1)
        if len(line) <= self.limit or line.endswith(b"\n"):
            return line.decode("utf-8", "replace")
        while line and not line.endswith(b"\n"):  # drop the rest of the line, piece by piece
            line = self.raw.readline(1 << 20)
        import sys

        print(
            f"mlaudit mcp: a message line over {self.limit >> 20} MiB was dropped",
            file=sys.stderr,
            flush=True,
        )
        return "message line too long\n"


def serve_stdio(
    roots: Roots,
    config: str | None = None,
    tracking_uris: Sequence[str] = (),
    call_timeout_s: float = 600.0,
) -> None:
    """Serve over stdin/stdout until the client closes the stream.

    stdin is read through :class:`BoundedLines`; fd 0 then points at the null device while
    serving (as the SDK does for its own reader), so nothing the tools run reads the
    protocol stream."""
    server = build_server(roots, config, tracking_uris, call_timeout_s)
    import os

    import anyio
    from mcp.server.stdio import stdio_server

    private = os.dup(0)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    raw = os.fdopen(private, "rb", buffering=1 << 16)

    async def main() -> None:
        # AsyncFile iteration calls readline() only, which BoundedLines has
        stdin = anyio.wrap_file(BoundedLines(raw))  # type: ignore[arg-type]
        async with stdio_server(stdin=stdin) as (read, write):
            await server.run(read, write, server.create_initialization_options())

    try:
        anyio.run(main)
    finally:
        raw.close()


class StaticTokenVerifier:
    """The SDK's bearer-token check (:class:`mcp.server.auth.provider.TokenVerifier`) for one
    token fixed at start: compared in constant time (:func:`hmac.compare_digest`)."""

    def __init__(self, token: str) -> None:
        self._token = token.encode()

    async def verify_token(self, token: str):
        from mcp.server.auth.provider import AccessToken

        if hmac.compare_digest(token.encode(), self._token):
            return AccessToken(token=token, client_id="mlaudit-mcp-client", scopes=[])
        return None


def new_token() -> str:
    """A bearer token for ``--http`` when none is given: 256 random bits, URL-safe."""
    return secrets.token_urlsafe(32)


def serve_http(
    roots: Roots,
    port: int,
    config: str | None = None,
    on_ready: Any = None,
    tracking_uris: Sequence[str] = (),
    token: str | None = None,
    call_timeout_s: float = 600.0,
    session_idle_s: float = 600.0,
    make_server: Any = None,
) -> None:
    """Serve streamable HTTP at ``http://127.0.0.1:PORT/mcp`` until interrupted.

    Every request must carry ``Authorization: Bearer TOKEN`` (``token``; required): the MCP
    authorization specification's bearer-token use, checked by the SDK's own
    :class:`~mcp.server.auth.middleware.bearer_auth.BearerAuthBackend` with
    :class:`StaticTokenVerifier`; a request without it, or with another token, gets 401 and
    ``WWW-Authenticate: Bearer``. Any local process can reach 127.0.0.1; the token is what
    keeps them from calling the tools.

    ``make_server(app, host, port, max_connections=, lifespan=)``: the CLI's
    ``mlaudit.cli.cmd_serve.make_server`` (uvicorn with a deadline for a connection's request
    headers: a connection that sends nothing, or its headers a byte at a time, is closed);
    without it plain uvicorn, which keeps such a connection open forever.
    """
    if not token:
        raise ValueError("serve_http needs a bearer token")
    server = build_server(roots, config, tracking_uris, call_timeout_s)
    import uvicorn
    from mcp.server.auth.settings import AuthSettings

    url = f"http://127.0.0.1:{port}/mcp"
    from pydantic import AnyHttpUrl

    auth = AuthSettings(issuer_url=AnyHttpUrl(f"http://127.0.0.1:{port}"), resource_server_url=None)
    # abandoned sessions end after session_idle_s without a request; at most 64 at a time;
    # uvicorn closes an idle keep-alive connection after 5 s and takes 32 connections at once
    app = server.streamable_http_app(
        host="127.0.0.1",
        auth=auth,
        token_verifier=StaticTokenVerifier(token),
        session_idle_timeout=session_idle_s,
        max_sessions=64,
    )
    if make_server is not None:
        srv = make_server(app, "127.0.0.1", port, max_connections=32, lifespan="on")
    else:
        srv = uvicorn.Server(
            uvicorn.Config(
                app,
                host="127.0.0.1",
                port=port,
                log_level="warning",
                timeout_keep_alive=5,
                limit_concurrency=32,
            )
        )
    if on_ready is not None:
        on_ready(url)
    srv.run()
