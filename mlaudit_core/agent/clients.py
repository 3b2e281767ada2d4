"""Registration snippets for common MCP clients (``mlaudit mcp --print-config``).

The command is the absolute path of this ``mlaudit`` executable (clients start servers
without the user's shell, so a bare name may not be on their PATH); the roots are absolute.
File locations and shapes follow each client's documentation: Claude Desktop
``claude_desktop_config.json`` (``mcpServers``), Claude Code (``claude mcp add`` or a
project ``.mcp.json`` with ``mcpServers``), VS Code ``.vscode/mcp.json`` (``servers`` with
``type``), Cursor ``~/.cursor/mcp.json`` or ``.cursor/mcp.json`` (``mcpServers``).
"""

from __future__ import annotations

import json
import shlex
import shutil
import sys
from pathlib import Path


def mlaudit_command() -> str:
    """The absolute path of the running ``mlaudit`` (falls back to ``mlaudit``)."""
    here = Path(sys.argv[0])
    if here.name == "mlaudit" and here.exists():
        return str(here.resolve())
    found = shutil.which("mlaudit", path=str(Path(sys.executable).parent)) or shutil.which(
        "mlaudit"
    )
    return str(Path(found).resolve()) if found else "mlaudit"


def snippets(roots: list[str], http_port: int | None = None, command: str | None = None) -> str:
    """The text ``--print-config`` prints: one block per client."""
    cmd = command or mlaudit_command()
    args = ["mcp"] + [a for r in roots for a in ("--root", str(Path(r).expanduser().resolve()))]
    stdio = {"command": cmd, "args": args}
    blocks = [
        (
            "Claude Desktop: claude_desktop_config.json (Settings > Developer > Edit Config)",
            json.dumps({"mcpServers": {"mlaudit": stdio}}, indent=2),
        ),
        (
            "Claude Code: run once (or put the Claude Desktop block in the project's .mcp.json)",
            "claude mcp add mlaudit -- " + shlex.join([cmd, *args]),
        ),
        (
            "VS Code: .vscode/mcp.json",
            json.dumps({"servers": {"mlaudit": {"type": "stdio", **stdio}}}, indent=2),
        ),
        (
            "Cursor: ~/.cursor/mcp.json (all projects) or .cursor/mcp.json (this project)",
            json.dumps({"mcpServers": {"mlaudit": stdio}}, indent=2),
        ),
    ]
    if http_port:
        url = f"http://127.0.0.1:{http_port}/mcp"
        start = shlex.join([cmd, *args, "--http", str(http_port)])
        auth = "Authorization: Bearer ${MLAUDIT_MCP_TOKEN}"
        blocks += [
            (
                f"Streamable HTTP, Claude Code (start the server first with the same token in "
                f"MLAUDIT_MCP_TOKEN: {start})",
                f'claude mcp add --transport http mlaudit {url} --header "{auth}"',
            ),
            (
                "Streamable HTTP, VS Code: .vscode/mcp.json",
                json.dumps(
                    {
                        "servers": {
                            "mlaudit": {
                                "type": "http",
                                "url": url,
                                "headers": {"Authorization": "Bearer ${env:MLAUDIT_MCP_TOKEN}"},
                            }
                        }
                    },
                    indent=2,
                ),
            ),
        ]
    return "\n\n".join(f"# {title}\n{body}" for title, body in blocks) + "\n"
