"""OpenCode's row: what its plugin's payloads say, its plugin file and its ``opencode.json`` entry.

OpenCode (opencode-ai 1.18.33) has no command hooks: it loads plugins, JavaScript modules in ``.opencode/plugins/``
(or the person's ``~/.config/opencode/plugins/``). Ours (``integrations/opencode/strict-loop.js``) forwards
``tool.execute.before`` / ``tool.execute.after``, the person's messages and the calls that failed to ``strict-loop
hook opencode`` in the command-hook shape (PreToolUse, PostToolUse, UserPromptSubmit) with OpenCode's own input and
output inside; this module reads those and writes the plugin and the MCP entry. Pure but for reading the shipped
plugin; standard library only (the hook's fast path imports the readers).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Optional

PLUGIN_FILE = "strict-loop.js"
PLUGIN_MARK = "// strict-agent-loop's OpenCode plugin"
"""How the plugin file begins: a ``strict-loop.js`` that does not is someone else's, never replaced."""
MCP_KEY = "mcp"
FILE_KEYS = ("filePath", "path")
"""Where OpenCode's file tools (read, write, edit) name their file: the turn's ``paths``."""


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def opencode_turn(event: Any) -> dict[str, Any]:
    """A PostToolUse's ``tool_response``: a call that ran gives ``title``, ``output`` and ``metadata`` (the shell's
    ``exit``); one that failed (from the session's events: no tool.execute.after sees it) its ``error``."""
    response = event.payload.get("tool_response")
    return turn_of(event.tool, event.tool_input, response if isinstance(response, dict) else {})


def turn_of(tool: str, args: Any, response: dict[str, Any]) -> dict[str, Any]:
    """The Turn fields (but the tool and its args) of one OpenCode call: its output, whether it failed, the shell's exit
    code, the file it names. Its ``invalid`` tool answers a call of a tool that does not exist: a failure too. The
    plugin's payload and ``opencode run --format json``'s ``tool_use`` part say the same."""
    found = response.get("metadata")
    metadata: dict[str, Any] = found if isinstance(found, dict) else {}
    args = args if isinstance(args, dict) else {}
    paths = [args[k] for k in FILE_KEYS if isinstance(args.get(k), str)][:1]
    fields: dict[str, Any] = {"paths": paths} if paths else {}
    if "error" in response:
        return {**fields, "output": _text(response.get("error")) or "the tool failed", "error": True, "exit_code": None}
    exit_code = metadata.get("exit")
    code = exit_code if type(exit_code) is int else None
    failed = code not in (None, 0) or tool == "invalid"
    return {**fields, "output": _text(response.get("output")), "error": failed, "exit_code": code}


def opencode_words(event: Any) -> str:
    """The assistant's text since its last call, which the plugin sends with the first call after it."""
    return _text(event.payload.get("assistant_text")).strip()


def opencode_prompt(event: Any) -> Optional[str]:
    """What the person typed: the message's text parts (``opencode run`` quotes a message holding spaces)."""
    return _text(event.payload.get("prompt"))


# ---------------------------------------------------------------- install: the plugin file and opencode.json


def plugin_text(strict_loop: str, workspace: Optional[Path]) -> str:
    """The shipped plugin with the absolute program path, the words that run the hook (the thin hook,
    ``client.hook_words``) and the pinned workspace written in."""
    from strict_loop.base import skillfiles
    from strict_loop.base.errors import LoopError
    from strict_loop.harness.client import hook_words

    src = skillfiles.opencode_plugin_file()
    code = src.read_text(encoding="utf-8")
    if not code.startswith(PLUGIN_MARK):
        raise LoopError(str(src), "is not strict-agent-loop's OpenCode plugin", "reinstall strict-agent-loop")
    head = hook_words(strict_loop, "opencode")[:-2]  # before "hook opencode": the plugin adds those and --workspace
    text = '"[^"\n]*"'
    values = (("const STRICT_LOOP", text, strict_loop), ("const WORKSPACE", text, str(workspace or "")))
    return skillfiles.filled_in(src, code, (*values, ("const HOOK", r"\[\]", head)), end=";")


def plugin_edit(path: Path, old: Optional[str], new: Optional[str]) -> Optional[str]:
    """The plugin file's new text; a file of that name that is not ours is refused, never replaced."""
    if old is not None and not old.startswith(PLUGIN_MARK):
        from strict_loop.base.errors import LoopError

        raise LoopError(
            str(path),
            "exists and is not strict-agent-loop's OpenCode plugin; nothing was changed",
            "move that file aside and run the install again",
        )
    return new


def config_dir(env: Any = os.environ) -> Path:
    """The person's OpenCode config folder: ``$XDG_CONFIG_HOME/opencode``, else ``~/.config/opencode``."""
    base = env.get("XDG_CONFIG_HOME", "")
    return (Path(base) if os.path.isabs(base) else Path.home() / ".config") / "opencode"


def mcp_entry(server: dict[str, Any]) -> dict[str, Any]:
    """OpenCode's shape of a local MCP server: one ``command`` list."""
    return {"type": "local", "command": [server["command"], *server["args"]], "enabled": True}


def mcp_empties(text: Optional[str]) -> frozenset[tuple[str, ...]]:
    """The file itself and its ``mcp`` when present and empty (kept by the uninstall: the file comes back whole)."""
    try:
        doc = json.loads(text) if text and text.strip() else None
    except ValueError:
        return frozenset()
    if not isinstance(doc, dict):
        return frozenset()
    return frozenset(({()} if not doc else set()) | ({(MCP_KEY,)} if doc.get(MCP_KEY) == {} else set()))


def edit_config(
    text: Optional[str], path: Path, server: Optional[dict[str, Any]], keep: frozenset = frozenset()
) -> Optional[str]:
    """``opencode.json`` with ``mcp.strict-loop`` running ``server`` (removed when None), every other byte kept. An
    entry of that name running something else is refused; a file that is not JSON (OpenCode also reads comments) is
    refused, never rewritten."""
    from strict_loop.base.errors import LoopError
    from strict_loop.harness import configedit as ce

    doc = ce._load_json(text, path)
    servers = ce._object(doc, MCP_KEY, path)
    current = servers.get(ce.SERVER)
    command = current.get("command") if isinstance(current, dict) else None
    program = command[0] if isinstance(command, list) and command and isinstance(command[0], str) else ""
    if current is not None and os.path.basename(program) not in ce.SERVER_PROGRAMS:
        problem = (
            f"{MCP_KEY}.{ce.SERVER} is there already and runs {command!r}, not strict-loop-mcp; nothing was changed"
        )
        raise LoopError(str(path), problem, "rename or remove that entry, then run the install again")
    wanted = mcp_entry(server) if server else None
    if current is not None and wanted is not None and command == wanted["command"]:
        return text
    if current is None and wanted is None:
        return text
    edit = ce._start(text)
    if wanted is None:
        edit.remove((MCP_KEY,), ce.SERVER)
        ce._prune_empty(edit, (MCP_KEY,), keep)
        return ce._finish(edit, keep)
    if current is None:
        ce._ensure(edit, (MCP_KEY,), {})
        edit.append((MCP_KEY,), ce.SERVER, wanted)
    else:
        edit.replace((MCP_KEY, ce.SERVER, "command"), wanted["command"])  # keys the person added stay
    return edit.text
