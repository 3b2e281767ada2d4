"""``mlaudit mcp``: serve mlaudit's audits as Model Context Protocol tools (docs/agents.md)."""

from __future__ import annotations

from pathlib import Path

import typer


def register(app: typer.Typer) -> None:
    @app.command("mcp")
    def mcp_cmd(
        root: list[Path] = typer.Option(
            [],
            "--root",
            help="A folder the tools may read (repeatable; "
            "default: the current directory). "
            "Paths outside every root are refused.",
        ),
        http: int = typer.Option(
            None,
            "--http",
            metavar="PORT",
            min=1,
            max=65535,
            help="Serve streamable HTTP on http://127.0.0.1:PORT/mcp instead of stdio.",
        ),
        tracking_uri: list[str] = typer.Option(
            [],
            "--tracking-uri",
            metavar="URI",
            help="An MLflow tracking URI the tools may use (repeatable; the first is the default; "
            "default: MLFLOW_TRACKING_URI). A call may name one of these or a local store "
            "inside the roots, nothing else: MLflow's client sends this server's "
            "credentials to the host.",
        ),
        token: str = typer.Option(
            None,
            "--token",
            envvar="MLAUDIT_MCP_TOKEN",
            help="With --http: the bearer token clients must send "
            "(Authorization: Bearer TOKEN; default: a random one, "
            "printed at start).",
        ),
        call_timeout: float = typer.Option(
            600.0,
            "--call-timeout",
            metavar="SECONDS",
            min=1,
            help="The longest a tool call may run (and wait for "
            "the call before it); over it the call is an "
            "error.",
        ),
        session_idle: float = typer.Option(
            600.0,
            "--session-idle",
            metavar="SECONDS",
            min=1,
            help="With --http: a session without a request for this long is closed.",
        ),
        config: Path = typer.Option(
            None,
            "--config",
            help="mlaudit settings file (default: "
            "mlaudit.toml or pyproject.toml "
            "\\[tool.mlaudit] found from the current "
            "directory).",
        ),
        print_config: bool = typer.Option(
            False,
            "--print-config",
            help="Print the snippets that register this server in "
            "Claude Desktop, Claude Code, VS Code and Cursor, "
            "and exit.",
        ),
    ) -> None:
        """Serve audits to AI agents over MCP: audit_run, audit_path, audit_logs, audit_ci,
        collect_evidence, compare_runs, explain_rule, list_rules, get_series. Nothing is written
        back unless a call sets write_back; needs the mcp extra (pip install 'mlaudit[mcp]')."""
        from ._common import fail

        if print_config:
            from mlaudit_core.agent.clients import snippets

            typer.echo(snippets([str(r) for r in root] or ["."], http), nl=False)
            raise typer.Exit(0)
        import os

        from mlaudit_core.agent.tools import Roots, ToolFailure
        from mlaudit_core.errors import MlauditError

        uris = list(tracking_uri) or [u for u in [os.environ.get("MLFLOW_TRACKING_URI")] if u]
        try:
            roots = Roots.of([str(r) for r in root])
            from mlaudit_core.agent import server

            if http is not None:
                import socket

                try:
                    with socket.create_server(("127.0.0.1", http)):
                        pass
                except OSError as exc:
                    fail(f"--http {http}: cannot listen on 127.0.0.1 ({exc.strerror or exc})")

                from .cmd_serve import make_server

                if token is not None and len(token) < 16:
                    fail("--token: give at least 16 characters (or omit it for a random one)")
                bearer = token or server.new_token()

                def ready(url: str) -> None:
                    from mlaudit_core.redact import strip_uri_credentials

                    shown = ", ".join(strip_uri_credentials(u) for u in uris) or "none"
                    typer.echo(
                        f"mlaudit: MCP server on {url} (roots: "
                        f"{', '.join(str(r) for r in roots.paths)}; tracking URIs: "
                        f"{shown})",
                        err=True,
                    )
                    if token is None:
                        typer.echo(
                            f"mlaudit: clients must send 'Authorization: Bearer {bearer}' "
                            "(or start with --token / MLAUDIT_MCP_TOKEN)",
                            err=True,
                        )

                server.serve_http(
                    roots,
                    http,
                    str(config) if config else None,
                    on_ready=ready,
                    tracking_uris=uris,
                    token=bearer,
                    call_timeout_s=call_timeout,
                    session_idle_s=session_idle,
                    make_server=make_server,
                )
            else:
                server.serve_stdio(
                    roots,
                    str(config) if config else None,
                    tracking_uris=uris,
                    call_timeout_s=call_timeout,
                )
        except ToolFailure as exc:
            fail(str(exc).removeprefix("mlaudit: error: "))
        except MlauditError as exc:
            fail(str(exc))
