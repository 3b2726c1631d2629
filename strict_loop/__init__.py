"""strict-agent-loop core: durable loop state, stop checks and progress reports.

No MCP imports here; the MCP server and the scripts are thin adapters over
:class:`Workspace`. The names below are imported on first use: the hook handler
runs once per agent tool call and must not pay for the whole package.
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"

__all__ = ["Workspace", "Watch", "WatchSettings", "LoopError", "StateDamaged", "TaskNotFound", "__version__"]

_LAZY = {
    "Workspace": "loop.workspace",
    "Watch": "experiments.watch",
    "WatchSettings": "experiments.remedies",
    "LoopError": "base.errors",
    "StateDamaged": "base.errors",
    "TaskNotFound": "base.errors",
}


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module 'strict_loop' has no attribute {name!r}")
    from importlib import import_module

    return getattr(import_module(f".{_LAZY[name]}", __name__), name)
