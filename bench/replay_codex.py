"""Codex's side of a replay (bench/replay.py): the payloads Codex 0.169.0 sends its hooks (a shell call and
``apply_patch`` as ``Bash``, no exit code) and the rollout items it writes, rebuilt from a recorded session."""

from __future__ import annotations

import json
import shlex
from typing import Any, Optional

from replay_live import SESSION, Feed, Live

CODEX_VERSION = "0.169.0"

CODEX_SHELLS = frozenset({"exec_command", "shell", "local_shell", "shell_command", "container.exec", "Bash", "bash"})


def codex_command(args: dict[str, Any]) -> Optional[str]:
    """The shell command of a recorded Codex call (``command`` or ``cmd``; an argv list as Codex ran it), else None."""
    cmd = args.get("command", args.get("cmd"))
    if isinstance(cmd, list) and all(isinstance(c, str) for c in cmd):
        return cmd[2] if len(cmd) == 3 and cmd[1] in ("-lc", "-c") else shlex.join(cmd)
    return cmd if isinstance(cmd, str) else None


def codex_call(tool: str, args: dict[str, Any]) -> Optional[tuple[str, dict[str, Any]]]:
    """The ``tool_name`` and ``tool_input`` Codex hands a hook for a call: a shell call as ``Bash`` with its command,
    ``apply_patch`` with the patch as its command, an MCP tool as it is; None for a tool no hook hears of."""
    command = codex_command(args)
    if tool in CODEX_SHELLS and command is not None:
        return "Bash", {"command": command}
    if tool == "apply_patch":
        return tool, {"command": next((args[k] for k in ("input", "patch") if isinstance(args.get(k), str)), command)}
    return (tool, args) if tool.startswith("mcp__") else None


def _codex_item(live: Live, kind: str, payload: dict[str, Any]) -> None:
    live.write({"timestamp": live.stamp(), "ordinal": live.lines, "type": kind, "payload": payload})


def codex_turns(live: Live, turns: list[dict[str, Any]]) -> Feed:
    """Codex: PostToolUse with the raw output (no exit code) for the calls Codex hooks, UserPromptSubmit for a person's
    line; the rollout gets the assistant's message and the function call before the hook, the call's output after."""
    meta = {"session_id": SESSION, "id": SESSION, "cwd": str(live.root), "originator": "codex_exec"}
    _codex_item(live, "session_meta", {**meta, "cli_version": CODEX_VERSION, "source": "exec"})
    base = {"turn_id": f"{SESSION}-turn", "model": "replay", "permission_mode": "bypassPermissions"}
    for i, d in enumerate(turns):
        number, output = d.get("turn", 0), str(d.get("output") or "")
        if d.get("actor") == "person":
            _codex_item(live, "response_item", {"type": "message", "role": "user", "content": [_text("input", output)]})
            live.hook("codex", {**base, "hook_event_name": "UserPromptSubmit", "prompt": output})
            yield number, True
            continue
        if d.get("thought"):
            item = {"type": "message", "role": "assistant", "content": [_text("output", d["thought"])]}
            _codex_item(live, "response_item", item)
        if d.get("tool") == "message":
            yield number, False
            continue
        args, call_id = d.get("args") if isinstance(d.get("args"), dict) else {}, f"call_{i:05d}"
        hooked = codex_call(str(d.get("tool")), args)
        call = {"type": "function_call", "name": d.get("tool"), "arguments": json.dumps(args), "call_id": call_id}
        _codex_item(live, "response_item", call)
        if hooked is not None:
            post = {"hook_event_name": "PostToolUse", "tool_name": hooked[0], "tool_input": hooked[1]}
            live.hook("codex", {**base, **post, "tool_use_id": call_id, "tool_response": output})
        code = d.get("exit_code") if isinstance(d.get("exit_code"), int) else int(bool(d.get("error")))
        said = f"Process exited with code {code}\nOutput:\n{output}"
        _codex_item(live, "response_item", {"type": "function_call_output", "call_id": call_id, "output": said})
        yield number, hooked is not None


def _text(side: str, text: str) -> dict[str, str]:
    return {"type": f"{side}_text", "text": text}
