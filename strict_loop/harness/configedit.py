"""Pure edits of harness settings files: add or remove strict-loop's entries, leave everything else.

Each ``edit_*`` function takes a file's current text (``None``: no such file) and returns its new text (``None``: the
file should not exist). No I/O here: the installer reads, diffs and writes. Our entries are recognised by what they
run, not by a marker: a hook handler whose command is ``<dir>/strict-loop hook <harness> ...`` (or one of Claude Code's
HTTP hooks' entries, ``daemon.is_our_handler``) and an MCP server named ``strict-loop`` that runs ``strict-loop-mcp``.
A file that does not parse is refused, never rewritten.
"""

from __future__ import annotations

import importlib
import io
import json
import os
import shlex
from pathlib import Path
from typing import Any, Optional

from strict_loop.base import jsonedit
from strict_loop.base.errors import LoopError
from strict_loop.harness import client, daemon, registry

SERVER = "strict-loop"
"""The name every harness knows the MCP server and the Hermes plugin by."""
SERVER_PROGRAMS = ("strict-loop-mcp", "strict-agent-loop")


def _refuse(path: Path, what: str, detail: str) -> LoopError:
    fix = "fix the file (or move it aside) and run the install again"
    return LoopError(str(path), f"{what} ({detail}); nothing was changed", fix)


def hook_command(program: str, harness: str, workspace: Optional[Path] = None) -> str:
    """The shell command a harness runs for every hook event (``client.hook_words``: Codex's is the thin hook)."""
    return shlex.join(client.hook_words(program, harness, workspace))


def is_our_command(command: Any, harness: str) -> bool:
    try:
        words = shlex.split(command) if isinstance(command, str) else []
    except ValueError:
        return False
    return client.is_hook_words(words, harness)  # strict-loop hook HARNESS, or the thin hook's words


def is_ours(handler: Any, harness: str) -> bool:
    """A hook handler an install wrote: a command (``is_our_command``), or an entry of Claude Code's HTTP hooks."""
    command = handler.get("command") if isinstance(handler, dict) else None
    return daemon.is_our_handler(handler, harness) or is_our_command(command, harness)


def hook_groups(harness: str, command: str) -> dict[str, list[dict[str, Any]]]:
    """The ``hooks`` object of a settings file / plugin hooks.json: one matcher group per event."""
    out: dict[str, list[dict[str, Any]]] = {}
    for event, matcher, timeout in registry.get(harness).hook_events:
        group: dict[str, Any] = {"matcher": matcher} if matcher else {}
        group["hooks"] = [{"type": "command", "command": command, "timeout": timeout}]
        out[event] = [group]
    return out


def _load_json(text: Optional[str], path: Path) -> dict[str, Any]:
    if text is None or not text.strip():
        return {}
    try:
        doc = json.loads(text)
    except ValueError as exc:
        raise _refuse(path, "is not valid JSON", str(exc)) from None
    if not isinstance(doc, dict):
        raise _refuse(path, "is not a JSON object", f"found {type(doc).__name__}")
    return doc


def _object(doc: dict[str, Any], key: str, path: Path) -> dict[str, Any]:
    value = doc.get(key, {})
    if not isinstance(value, dict):
        raise _refuse(path, f"has a '{key}' that is not an object", f"found {type(value).__name__}")
    return value


def strip_ours(groups: list[Any], harness: str) -> list[Any]:
    """``groups`` without our handlers; a group left with no handler by that goes too."""
    out = []
    for group in groups:
        handlers = group.get("hooks") if isinstance(group, dict) else None
        if not isinstance(handlers, list):
            out.append(group)
            continue
        kept = [h for h in handlers if not is_ours(h, harness)]
        if len(kept) == len(handlers):
            out.append(group)
        elif kept:
            out.append({**group, "hooks": kept})
    return out


Kept = frozenset[tuple[str, ...]]
"""Containers of a JSON settings file that were there, empty, before the install (``()``: the file itself): an
uninstall that empties them again leaves them, so that the file comes back byte for byte."""


def json_empties(text: Optional[str]) -> Kept:
    """The file itself and its ``hooks``, ``hooks.<event>`` and ``mcpServers`` when present and empty."""
    try:
        doc = json.loads(text) if text and text.strip() else None
    except ValueError:
        doc = None
    if not isinstance(doc, dict):
        return frozenset()
    found: set[tuple[str, ...]] = {()} if not doc else set()
    hooks = doc.get("hooks")
    for key in ("hooks", "mcpServers", ALLOWED_ENV):
        if doc.get(key) in ({}, []):
            found.add((key,))
    if isinstance(hooks, dict):
        found.update(("hooks", event) for event, groups in hooks.items() if groups == [])
    return frozenset(found)


def _start(text: Optional[str]) -> jsonedit.JsonText:
    return jsonedit.JsonText(text if text and text.strip() else "{}\n")


def _finish(edit: jsonedit.JsonText, keep: Kept) -> Optional[str]:
    """The edited text; ``None`` (remove the file) when nothing is left in it that was there before the install."""
    return None if edit.get(()) == {} and () not in keep else edit.text


def _prune_empty(edit: jsonedit.JsonText, path: tuple[str, ...], keep: Kept) -> None:
    """Remove the container at ``path`` when the removal of our entries left it empty and it was not there before."""
    if path not in keep and edit.get(path) in ({}, []):
        edit.remove(path[:-1], path[-1])


def _unhook(edit: jsonedit.JsonText, event: str, groups: list[Any], harness: str) -> None:
    """Remove our handlers from ``hooks.<event>``, and a group left with no handler by that."""
    for n in reversed(range(len(groups))):
        handlers = groups[n].get("hooks") if isinstance(groups[n], dict) else None
        if not isinstance(handlers, list):
            continue
        ours = [i for i, h in enumerate(handlers) if is_ours(h, harness)]
        if ours and len(ours) == len(handlers):
            edit.remove(("hooks", event), n)
        for i in reversed(ours if len(ours) < len(handlers) else []):
            edit.remove(("hooks", event, n, "hooks"), i)


def _ensure(edit: jsonedit.JsonText, path: tuple[str, ...], empty: Any) -> None:
    if edit.get(path) is None:
        edit.append(path[:-1], path[-1], empty)


ALLOWED_ENV = "httpHookAllowedEnvVars"  # Claude Code's allow-list of the variables HTTP hooks put into headers


def edit_hooks(
    text: Optional[str], path: Path, harness: str, command: Optional[str | daemon.Groups], keep: Kept = frozenset()
) -> Optional[str]:
    """Settings/hooks.json with our hook groups (those that run ``command``, or the groups given: Claude Code's HTTP
    hooks, whose token variable joins ``httpHookAllowedEnvVars``), or with none of ours on any event (None). Edited in
    place (:mod:`strict_loop.base.jsonedit`): our groups are appended, and removing them gives back the bytes."""
    doc = _load_json(text, path)
    hooks, names = _object(doc, "hooks", path), doc.get(ALLOWED_ENV, [])
    if not isinstance(names, list):
        raise _refuse(path, f"has a '{ALLOWED_ENV}' that is not a list", f"found {type(names).__name__}")
    wanted = (hook_groups(harness, command) if isinstance(command, str) else command) or {}
    edit, http = _start(text), isinstance(command, dict)
    changed = (daemon.TOKEN_ENV in names) != http
    events = [e for e, _, _ in registry.get(harness).hook_events] + [e for e, g in hooks.items() if isinstance(g, list)]
    for event in dict.fromkeys([*events, *wanted]):
        found = hooks.get(event, [])
        if not isinstance(found, list):
            raise _refuse(path, f"has hooks.{event} that is not a list", f"found {type(found).__name__}")
        stripped = strip_ours(found, harness)
        if [g for g in found if g not in stripped] == wanted.get(event, []) and all(g in found for g in stripped):
            continue  # already exactly as wanted (or nothing of ours to remove)
        changed = True
        _unhook(edit, event, found, harness)
        if event in wanted:
            _ensure(edit, ("hooks",), {})
            _ensure(edit, ("hooks", event), [])
            edit.append(("hooks", event), None, wanted[event][0])
        elif edit.get(("hooks", event)) is not None:
            _prune_empty(edit, ("hooks", event), keep)
    if not changed:
        return text
    if http and daemon.TOKEN_ENV not in names:
        _ensure(edit, (ALLOWED_ENV,), [])
        edit.append((ALLOWED_ENV,), None, daemon.TOKEN_ENV)
    elif not http and daemon.TOKEN_ENV in names:
        edit.remove((ALLOWED_ENV,), names.index(daemon.TOKEN_ENV))
        _prune_empty(edit, (ALLOWED_ENV,), keep)
    if edit.get(("hooks",)) is not None:
        _prune_empty(edit, ("hooks",), keep)
    return _finish(edit, keep)


def _server_entry(path: Path, servers: Any, key: str) -> Any:
    """Our existing server entry, ``None`` when absent; a foreign entry of that name is refused."""
    entry = servers.get(SERVER) if hasattr(servers, "get") else None
    if entry is None:
        return None
    command = entry.get("command") if hasattr(entry, "get") else None
    if isinstance(command, str) and os.path.basename(command) in SERVER_PROGRAMS:
        return entry
    problem = f"{key}.{SERVER} is there already and runs {command!r}, not strict-loop-mcp; nothing was changed"
    raise LoopError(str(path), problem, "rename or remove that entry, then run the install again")


def _same(current: Any, server: Optional[dict[str, Any]]) -> bool:
    """Our entry already runs ``server`` (keys the person added to it, such as ``env``, do not count)."""
    if current is None or server is None:
        return current is None and server is None
    return current.get("command") == server["command"] and list(current.get("args") or []) == server["args"]


def edit_mcp_json(
    text: Optional[str], path: Path, server: Optional[dict[str, Any]], keep: Kept = frozenset()
) -> Optional[str]:
    """``.mcp.json`` / ``~/.claude.json`` with ``mcpServers.strict-loop`` = ``server`` (removed when None), edited in
    place as :func:`edit_hooks` is."""
    doc = _load_json(text, path)
    servers = _object(doc, "mcpServers", path)
    current = _server_entry(path, servers, "mcpServers")
    if _same(current, server):
        return text
    edit = _start(text)
    if server is None:
        edit.remove(("mcpServers",), SERVER)
        _prune_empty(edit, ("mcpServers",), keep)
        return _finish(edit, keep)
    if current is None:
        _ensure(edit, ("mcpServers",), {})
        edit.append(("mcpServers",), SERVER, server)
        return edit.text
    for key, value in server.items():  # in place: keys the person added to our entry stay
        if key in current:
            edit.replace(("mcpServers", SERVER, key), value)
        else:
            edit.append(("mcpServers", SERVER), key, value)
    return edit.text


def _toml_block(server: dict[str, Any]) -> str:
    """Our table as the install appends it to a config.toml: ``[mcp_servers.strict-loop]`` and its two keys."""
    import tomlkit

    doc, servers, table = tomlkit.document(), tomlkit.table(is_super_table=True), tomlkit.table()
    table.update(server)
    servers.add(SERVER, table)
    doc.add("mcp_servers", servers)
    return tomlkit.dumps(doc)


def edit_mcp_toml(text: Optional[str], path: Path, server: Optional[dict[str, Any]]) -> Optional[str]:
    """Codex ``config.toml`` with ``[mcp_servers.strict-loop]``: a new table is appended to the text (after a blank
    line), and an uninstall that finds it there as written cuts exactly that off again, so the file comes back byte
    for byte; any other edit goes through tomlkit, which keeps comments and layout."""
    import tomlkit
    from tomlkit.exceptions import TOMLKitError

    try:
        doc = tomlkit.parse(text or "")
    except TOMLKitError as exc:
        raise _refuse(path, "is not valid TOML", _toml_problem(text or "") or str(exc)) from None
    servers = doc.get("mcp_servers")
    if servers is not None and not isinstance(servers, dict):
        raise _refuse(path, "has an 'mcp_servers' that is not a table", f"found {type(servers).__name__}")
    current = _server_entry(path, servers or {}, "mcp_servers")
    if _same(current, server):
        return text
    if server is None:
        block = "\n" + _toml_block({"command": current["command"], "args": list(current.get("args") or [])})
        if text == block[1:]:
            return None
        if (text or "").endswith(block):
            return (text or "")[: -len(block)]
    elif current is None:
        appended = (f"{text}\n" if text else "") + _toml_block(server)
        if tomlkit.parse(appended).unwrap() == {**doc.unwrap(), "mcp_servers": {**(servers or {}), SERVER: server}}:
            return appended  # else (an inline mcp_servers table, say) tomlkit puts it where it may go
    return _toml_structural(doc, servers, current, server)


def _toml_structural(doc: Any, servers: Any, current: Any, server: Optional[dict[str, Any]]) -> Optional[str]:
    import tomlkit

    if server is None:
        del servers[SERVER]
        if not servers and getattr(servers, "is_super_table", lambda: False)():  # a [mcp_servers] of theirs stays
            del doc["mcp_servers"]
    else:
        if servers is None:
            servers = tomlkit.table(is_super_table=True)
            doc["mcp_servers"] = servers
        if current is None:
            current = servers[SERVER] = tomlkit.table()
        current.update(server)  # in place: the person's own keys and comments in our table stay
    out = tomlkit.dumps(doc)
    return out if out.strip() else None


def _yaml():
    from ruamel.yaml import YAML

    yaml = YAML()
    yaml.preserve_quotes, yaml.width = True, 4096
    yaml.indent(mapping=2, sequence=4, offset=2)
    return yaml


def edit_hermes_yaml(text: Optional[str], path: Path, server: Optional[dict[str, Any]]) -> Optional[str]:
    """Hermes ``config.yaml`` with ``mcp_servers.strict-loop`` and ``strict-loop`` in ``plugins.enabled`` (or none)."""
    from ruamel.yaml.comments import CommentedMap
    from ruamel.yaml.error import YAMLError

    yaml = _yaml()
    try:
        doc = yaml.load(text or "")
    except YAMLError as exc:
        raise _refuse(path, "is not valid YAML", " ".join(str(exc).split())) from None
    doc = CommentedMap() if doc is None else doc
    if not isinstance(doc, dict):
        raise _refuse(path, "is not a YAML mapping", f"found {type(doc).__name__}")
    for key in ("mcp_servers", "plugins"):
        if doc.get(key) is not None and not isinstance(doc[key], dict):
            raise _refuse(path, f"has a '{key}' that is not a mapping", f"found {type(doc[key]).__name__}")
    enabled = (doc.get("plugins") or {}).get("enabled")
    if enabled is not None and not isinstance(enabled, list):
        raise _refuse(path, "has a 'plugins.enabled' that is not a list", f"found {type(enabled).__name__}")
    current = _server_entry(path, doc.get("mcp_servers") or {}, "mcp_servers")
    listed = SERVER in (enabled or [])
    if _same(current, server) and listed == (server is not None):
        return text
    _set_entry(doc, "mcp_servers", SERVER, server)
    _set_listed(doc, server is not None)
    if not doc:
        return None
    out = io.StringIO()
    yaml.dump(doc, out)
    return out.getvalue()


def hermes_disabled(text: Optional[str]) -> bool:
    """Whether config.yaml denies the plugin (``plugins.disabled`` wins over ``plugins.enabled`` in Hermes)."""
    from ruamel.yaml.error import YAMLError

    try:
        doc = _yaml().load(text) if text else None
    except YAMLError:  # edit_hermes_yaml has refused such a file already
        return False
    plugins = doc.get("plugins") if isinstance(doc, dict) else None
    disabled = plugins.get("disabled") if isinstance(plugins, dict) else None
    return isinstance(disabled, list) and SERVER in disabled


def _set_entry(doc: Any, key: str, name: str, value: Optional[dict[str, Any]]) -> None:
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

    table = doc.get(key)
    if value is None:
        if table is not None and name in table:
            del table[name]
            if not table:
                del doc[key]
        return
    table = doc[key] = CommentedMap() if table is None else table
    entry = table[name] = CommentedMap() if table.get(name) is None else table[name]
    args = CommentedSeq(value["args"])
    args.fa.set_flow_style()
    entry["command"], entry["args"] = value["command"], args  # in place: the person's own keys stay


def _set_listed(doc: Any, wanted: bool) -> None:
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

    plugins = doc.get("plugins")
    enabled = (plugins or {}).get("enabled")
    if wanted and SERVER not in (enabled or []):
        plugins = doc["plugins"] = CommentedMap() if plugins is None else plugins
        enabled = plugins["enabled"] = CommentedSeq() if enabled is None else enabled
        enabled.append(SERVER)
    elif not wanted and enabled is not None and SERVER in enabled:
        enabled.remove(SERVER)
        if not enabled:
            del plugins["enabled"]
            if not plugins:
                del doc["plugins"]


def _toml_problem(text: str) -> Optional[str]:
    """The standard library's words for bad TOML (3.11+): tomlkit says "Unexpected character: '\\x00'" at EOF."""
    try:
        importlib.import_module("tomllib").loads(text)
    except (ValueError, ImportError) as exc:
        return str(exc) if isinstance(exc, ValueError) else None
    return None
