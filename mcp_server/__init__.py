"""MCP server for strict-agent-loop: the core operations as tools, resources and prompts."""

from .server import build_server, main

__all__ = ["build_server", "main"]
