"""``mlaudit mcp``: serve mlaudit's audits as Model Context Protocol tools (docs/agents.md)."""

from __future__ import annotations

from pathlib import Path

import typer


def register(app: typer.Typer) -> None:
    @app.command("mcp")
    def mcp_cmd(
        root: list[Path] = typer.Option([], "--root", help="A folder the tools may read (repeatable; "
                                                           "default: the current directory). "
                                                           "Paths outside every root are refused."),
        http: int = typer.Option(None, "--http", metavar="PORT", min=1, max=65535,
                                 help="Serve streamable HTTP on http://127.0.0.1:PORT/mcp instead "
                                      "of stdio."),
        config: Path = typer.Option(None, "--config", help="mlaudit settings file (default: "
                                                           "mlaudit.toml or pyproject.toml "
                                                           "\\[tool.mlaudit] found from the current "
                                                           "directory)."),
        print_config: bool = typer.Option(False, "--print-config",
                                          help="Print the snippets that register this server in "
                                               "Claude Desktop, Claude Code, VS Code and Cursor, "
                                               "and exit."),
    ) -> None:
        """Serve audits to AI agents over MCP: audit_run, audit_path, audit_logs, audit_ci,
        collect_evidence, compare_runs, explain_rule, list_rules, get_series. Nothing is written
        back unless a call sets write_back; needs the mcp extra (pip install 'mlaudit[mcp]')."""
        from ._common import fail

        if print_config:
            from mlaudit_core.agent.clients import snippets

            typer.echo(snippets([str(r) for r in root] or ["."], http), nl=False)
            raise typer.Exit(0)
        from mlaudit_core.agent.tools import Roots, ToolFailure
        from mlaudit_core.errors import MlauditError

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

                def ready(url: str) -> None:
                    typer.echo(f"mlaudit: MCP server on {url} (roots: "
                               f"{', '.join(str(r) for r in roots.paths)})", err=True)

                server.serve_http(roots, http, str(config) if config else None, on_ready=ready)
            else:
                server.serve_stdio(roots, str(config) if config else None)
        except ToolFailure as exc:
            fail(str(exc).removeprefix("mlaudit: error: "))
        except MlauditError as exc:
            fail(str(exc))
