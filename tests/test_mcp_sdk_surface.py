"""The server stands on the MCP SDK's public API only, so an upgrade inside ``mcp>=2.3,<3`` cannot break it silently.

Public means: a name in the ``__all__`` of the package it is imported from, or an exception class of the
documented ``mcp.server.mcpserver.exceptions`` module. Reaching for anything else (``tools.base.Tool``,
``func_metadata``, ``_lowlevel_server``, ...) fails here, naming the symbol.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

SERVER = Path(__file__).resolve().parent.parent / "mcp_server" / "server.py"
PUBLIC_MODULES = {"mcp", "mcp.server", "mcp.server.mcpserver", "mcp.server.subscriptions", "mcp_types"}
EXCEPTIONS_MODULE = "mcp.server.mcpserver.exceptions"


def _is_public(module: str, name: str) -> bool:
    mod = importlib.import_module(module)
    if module in PUBLIC_MODULES:
        return name in getattr(mod, "__all__", ())
    if module == EXCEPTIONS_MODULE:
        obj = getattr(mod, name, None)
        return not name.startswith("_") and isinstance(obj, type) and issubclass(obj, Exception)
    return False


def _sdk_uses(tree: ast.Module) -> list[tuple[str, str]]:
    """Every (module, name) server.py takes from the SDK, including ``alias.Name`` on a module import."""
    uses, aliases = [], {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] in ("mcp", "mcp_types"):
            uses += [(node.module, a.name) for a in node.names]
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name.split(".")[0] in ("mcp", "mcp_types"):
                    aliases[a.asname or a.name] = a.name
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in aliases:
            uses.append((aliases[node.value.id], node.attr))
    return sorted(set(uses))


def test_the_server_uses_only_public_sdk_names():
    uses = _sdk_uses(ast.parse(SERVER.read_text(encoding="utf-8")))
    assert uses, "the scan found no SDK import in server.py; has the import style changed?"
    internal = [f"{module}.{name}" for module, name in uses if not _is_public(module, name)]
    assert not internal, f"mcp_server/server.py uses SDK names that are not public API: {internal}"


def test_no_private_attribute_of_an_sdk_object_is_touched():
    tree = ast.parse(SERVER.read_text(encoding="utf-8"))
    private = sorted({node.attr for node in ast.walk(tree)
                      if isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__")
                      and not (isinstance(node.value, ast.Name) and node.value.id == "self")})  # our own helpers
    assert not private, f"mcp_server/server.py reaches into private attributes: {private}"
