"""mlaudit for agents: the tools ``mlaudit mcp`` serves (docs/agents.md).

:mod:`.tools` holds the tools as plain functions with their JSON Schemas (no MCP import:
usable and testable without the SDK); :mod:`.server` serves them over the Model Context
Protocol with the official ``mcp`` SDK (the ``mcp`` extra); :mod:`.clients` prints the
snippets that register the server in common MCP clients. Nothing here is imported when the
CLI starts.
"""
