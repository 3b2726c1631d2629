"""The server stands on the MCP SDK's public API only, so an upgrade inside ``mcp>=2.3,<3`` cannot break it silently.

Public means: a name in the ``__all__`` of the package it is imported from, an exception class of the
documented ``mcp.server.mcpserver.exceptions`` module, or a type that a public method of ``Server`` takes
(``Server.run``'s ``SessionMessage`` streams, ``streamable_http_app``'s ``TransportSecuritySettings``). Reaching for
anything else (``tools.base.Tool``, ``func_metadata``, ``_lowlevel_server``, ...) fails here, naming the symbol.
Every module of ``mcp_server/`` is scanned.
"""

from __future__ import annotations

import ast
import importlib
import typing
from pathlib import Path

import pytest
from mcp.server import Server

MODULES = sorted((Path(__file__).resolve().parent.parent / "mcp_server").glob("*.py"))
PUBLIC_MODULES = {"mcp", "mcp.server", "mcp.server.mcpserver", "mcp.server.subscriptions", "mcp_types"}
EXCEPTIONS_MODULE = "mcp.server.mcpserver.exceptions"


def _signature_types() -> set[object]:
    """Every class named in the parameters of ``Server``'s public methods, unwrapping ``X | None``, ``Stream[X]``..."""
    found: set[object] = set()

    def walk(hint: object) -> None:
        if isinstance(hint, type):
            found.add(hint)
        for arg in typing.get_args(hint):
            walk(arg)

    for name, method in vars(Server).items():
        if callable(method) and not name.startswith("_"):
            for hint in typing.get_type_hints(method).values():
                walk(hint)
    return found


def _is_public(module: str, name: str) -> bool:
    mod = importlib.import_module(module)
    if module in PUBLIC_MODULES:
        return name in getattr(mod, "__all__", ())
    if module == EXCEPTIONS_MODULE:
        obj = getattr(mod, name, None)
        return not name.startswith("_") and isinstance(obj, type) and issubclass(obj, Exception)
    return not name.startswith("_") and getattr(mod, name, None) in _signature_types()


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


@pytest.mark.parametrize("module", MODULES, ids=lambda path: path.name)
def test_the_server_uses_only_public_sdk_names(module):
    uses = _sdk_uses(ast.parse(module.read_text(encoding="utf-8")))
    if module.name == "server.py":
        assert uses, "the scan found no SDK import in server.py; has the import style changed?"
    internal = [f"{mod}.{name}" for mod, name in uses if not _is_public(mod, name)]
    assert not internal, f"mcp_server/{module.name} uses SDK names that are not public API: {internal}"


@pytest.mark.parametrize("module", MODULES, ids=lambda path: path.name)
def test_no_private_attribute_of_an_sdk_object_is_touched(module):
    tree = ast.parse(module.read_text(encoding="utf-8"))
    private = sorted(
        {
            node.attr
            for node in ast.walk(tree)
            if isinstance(node, ast.Attribute)
            and node.attr.startswith("_")
            and not node.attr.startswith("__")
            and not (isinstance(node.value, ast.Name) and node.value.id == "self")
        }
    )  # our own helpers
    assert not private, f"mcp_server/{module.name} reaches into private attributes: {private}"


def test_the_signature_rule_admits_only_what_server_takes():
    assert _is_public("mcp.shared.message", "SessionMessage") and _is_public(
        "mcp.server.transport_security", "TransportSecuritySettings"
    )
    assert not _is_public("mcp.server.transport_security", "TransportSecurityMiddleware")
    assert not _is_public("mcp.server.streamable_http_manager", "StreamableHTTPSessionManager")
