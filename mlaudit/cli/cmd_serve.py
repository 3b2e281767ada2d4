"""``mlaudit serve <receiver>``: the command group of the webhook receivers, and the HTTP
server settings every receiver runs with.

Tracker plugins add their subcommand to :data:`serve_app` from their ``cli`` member (e.g. the
W&B plugin adds ``mlaudit serve wandb-webhook``) and run their Starlette app with
:func:`make_server`: uvicorn with its own limits (``limit_concurrency``: connections
beyond it get 503; ``timeout_keep_alive``: an idle keep-alive connection is closed;
``h11_max_incomplete_event_size``: request line plus headers at most 16 KiB) and one
addition uvicorn lacks: a deadline for a connection's request headers
(:data:`DEFAULT_HEADER_TIMEOUT_S`). Uvicorn closes an idle connection only after a first
response; a client that connects and sends nothing, or sends its headers a byte at a time
(slowloris), held a connection and a file descriptor forever, and a few thousand of them
starved ``/healthz`` and the deliveries. Refusals (a connection closed at the deadline,
uvicorn's 503 over the connection limit, a malformed request) are logged as one line per
kind per minute with a count, never one line per connection.
"""

from __future__ import annotations

import logging
import threading
import time

import typer

serve_app = typer.Typer(
    name="serve",
    no_args_is_help=True,
    help="Run a receiver that audits runs when a tracker calls it.",
)

log = logging.getLogger("mlaudit.serve")

#: Connections served at once; more get uvicorn's 503. W&B sends one delivery per run
#: event; 100 leaves room for bursts and health checks.
DEFAULT_MAX_CONNECTIONS = 100
#: Seconds a connection may take to send complete request headers (Apache's
#: mod_reqtimeout default is 20 s for headers; a webhook sender sends them at once).
DEFAULT_HEADER_TIMEOUT_S = 10.0
#: Seconds an idle keep-alive connection stays open after a response (uvicorn's default).
DEFAULT_KEEP_ALIVE_S = 5
#: Request line and headers larger than this are refused (400): h11's default, made explicit.
MAX_HEADER_BYTES = 16 * 1024


def register(app: typer.Typer) -> None:
    app.add_typer(serve_app, name="serve")


class RefusalLog:
    """Counts refusals by kind and logs at most one line per kind per ``every_s`` seconds
    (``<kind>: N in the last minute; latest from <client>``)."""

    def __init__(self, logger: logging.Logger = log, every_s: float = 60.0) -> None:
        self.logger, self.every_s = logger, every_s
        self._mu = threading.Lock()
        self._n: dict[str, int] = {}
        self._at: dict[str, float] = {}

    def note(self, kind: str, client: str = "?") -> None:
        now = time.monotonic()
        with self._mu:
            self._n[kind] = self._n.get(kind, 0) + 1
            if now - self._at.get(kind, -1e18) < self.every_s:
                return
            n, self._n[kind], self._at[kind] = self._n[kind], 0, now
        self.logger.warning("receiver: %s: %d in the last minute; latest from %s", kind, n, client)


refusals = RefusalLog()


class _UvicornRefusals(logging.Filter):
    """Turns uvicorn's per-request refusal warnings into :data:`refusals` counts."""

    KINDS = {
        "Exceeded concurrency limit.": "refused over the connection limit (503)",
        "Invalid HTTP request received.": "malformed or oversized request (400)",
    }

    def filter(self, record: logging.LogRecord) -> bool:
        kind = self.KINDS.get(record.getMessage())
        if kind is None:
            return True
        refusals.note(kind)
        return False


def _guarded_protocol(header_timeout_s: float):
    """uvicorn's h11 protocol with a deadline for each request's headers."""
    from mlaudit_core.sdk_private import uvicorn_h11_protocol

    H11Protocol = uvicorn_h11_protocol()
    if H11Protocol is None:
        return None

    class HeaderDeadlineH11(H11Protocol):
        _deadline = None

        def _in_request(self) -> bool:
            cycle = getattr(self, "cycle", None)
            return cycle is not None and not cycle.response_complete

        def _arm(self) -> None:
            if self._deadline is None:
                self._deadline = self.loop.call_later(header_timeout_s, self._expired)

        def _disarm(self) -> None:
            if self._deadline is not None:
                self._deadline.cancel()
                self._deadline = None

        def _expired(self) -> None:
            self._deadline = None
            if self._in_request() or self.transport.is_closing():
                return
            client = f"{self.client[0]}:{self.client[1]}" if self.client else "?"
            refusals.note(
                f"closed connections without complete request headers within "
                f"{header_timeout_s:g} s",
                client,
            )
            self.transport.close()

        def connection_made(self, transport) -> None:
            super().connection_made(transport)
            self._arm()

        def data_received(self, data: bytes) -> None:
            if not self._in_request():  # bytes of a next request on a kept-alive connection
                self._arm()
            super().data_received(data)
            if self._in_request():  # its headers are complete: the app's limits apply now
                self._disarm()

        def connection_lost(self, exc) -> None:
            self._disarm()
            super().connection_lost(exc)

    return HeaderDeadlineH11


def make_server(
    app,
    host: str,
    port: int,
    *,
    max_connections: int = DEFAULT_MAX_CONNECTIONS,
    header_timeout_s: float = DEFAULT_HEADER_TIMEOUT_S,
    keep_alive_s: int = DEFAULT_KEEP_ALIVE_S,
    lifespan: str = "off",
):
    """A ``uvicorn.Server`` for a receiver app with the limits of the module docstring.

    Args:
        app: the ASGI app.
        max_connections: uvicorn ``limit_concurrency`` (503 beyond it).
        header_timeout_s: seconds for a connection's request headers, then it is closed.
        keep_alive_s: uvicorn ``timeout_keep_alive``.
        lifespan: uvicorn ``lifespan`` (``"on"`` for an app that starts work in its lifespan,
            as the MCP SDK's session manager does).
    """
    import uvicorn

    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level="warning",
        lifespan=lifespan,
        access_log=False,
        http=_guarded_protocol(header_timeout_s) or "auto",
        limit_concurrency=max_connections,
        timeout_keep_alive=keep_alive_s,
        h11_max_incomplete_event_size=MAX_HEADER_BYTES,
    )
    ulog = logging.getLogger("uvicorn.error")  # after Config: it (re)configures uvicorn's logging
    if not any(isinstance(f, _UvicornRefusals) for f in ulog.filters):
        ulog.addFilter(_UvicornRefusals())

    class Server(uvicorn.Server):
        async def serve(self, sockets=None) -> None:
            import asyncio

            asyncio.get_running_loop().set_exception_handler(_loop_exception)
            await super().serve(sockets)

    return Server(config)


def _loop_exception(loop, context: dict) -> None:
    """asyncio's handler, except for ``accept()`` failing on a full descriptor table
    (EMFILE/ENFILE): asyncio pauses accepting for a second and logged a traceback per refused
    connection; that is a counted refusal line here."""
    if "out of system resource" in str(context.get("message", "")):
        exc = context.get("exception")
        refusals.note(
            f"connections not accepted: {getattr(exc, 'strerror', None) or exc} "
            "(accepting again in 1 s)"
        )
        return
    loop.default_exception_handler(context)
