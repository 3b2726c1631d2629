"""Helpers for talking to the real MCP server with the official client."""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from mcp import Client
from mcp.client.stdio import StdioServerParameters

from mcp_server import build_server


def server_env(env: dict[str, str] | None = None) -> dict[str, str]:
    """Extra variables for a server process. The SDK passes a child only a few safe variables (HOME, PATH, ...):
    add PYTHONPATH, so that the server runs this checkout's code (see conftest.py), not an installed copy, and the
    test's own XDG folders, so that the server records nothing in the user's ~/.config."""
    own = {k: os.environ[k] for k in ("PYTHONPATH", "XDG_CONFIG_HOME", "XDG_RUNTIME_DIR") if k in os.environ}
    return {"PYTHONPATH": "", **own, **(env or {})}  # the test's config folder, never the user's


def stdio_params(workspace: Path, env: dict[str, str] | None = None) -> StdioServerParameters:
    """Spawn the server the way a harness would: a separate process speaking stdio."""
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "mcp_server", "--workspace", str(workspace)],
        cwd=str(workspace),
        env=server_env(env),
    )


@asynccontextmanager
async def stdio_client(workspace: Path, env: dict[str, str] | None = None) -> AsyncIterator[Client]:
    async with Client(stdio_params(workspace, env), read_timeout_seconds=60) as client:
        yield client


@asynccontextmanager
async def memory_client(workspace: Path) -> AsyncIterator[Client]:
    async with Client(build_server(workspace)) as client:
        yield client


async def call(client: Client, name: str, **arguments: Any):
    """Call a tool; return (is_error, structured content or None, text)."""
    result = await client.call_tool(name, arguments)
    text = "\n".join(getattr(block, "text", "") for block in result.content)
    return result.is_error, result.structured_content, text
