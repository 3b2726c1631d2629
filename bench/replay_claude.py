"""Claude Code's side of a replay (bench/replay.py): the payloads Claude Code 2.1.331 sends its hooks after a call,
and the transcript lines it writes, rebuilt from a recorded session (shapes from tests/fixtures/hooks/, and Claude
Code's sdk-tools.d.ts for the tools it could not be made to run)."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from replay_live import SESSION, Feed, Live

CLAUDE_VERSION = "2.1.331"
REJECTED = ("<tool_use_error>", "The user doesn't want to", "Permission for this tool use was denied", "PreToolUse:")
"""How Claude Code's transcript marks a call that never ran: one it refused before running it, or one the person
refused at the permission prompt (Claude Code 2.1.331 fires PreToolUse and PermissionRequest for it, never a
PostToolUse or PostToolUseFailure). No post-tool hook fires for those."""
_EXIT_LINE = re.compile(r"Exit code (-?\d+)\Z")
_NUMBERED = re.compile(r"^ *\d+(?:→|\t)", re.MULTILINE)
"""Read's rendering (``cat -n`` style) in a transcript; the hook's ``file.content`` is the raw text."""


def bash_response(args: dict[str, Any], output: str, memo: dict[str, Any]) -> Any:
    return {"stdout": output, "stderr": "", "interrupted": False, "isImage": False, "noOutputExpected": False}


def read_response(args: dict[str, Any], output: str, memo: dict[str, Any]) -> Any:
    text = _NUMBERED.sub("", output) if _NUMBERED.match(output) else output
    lines = text.count("\n") + 1
    start = args.get("offset") if isinstance(args.get("offset"), int) else 1
    file = {"filePath": args.get("file_path", ""), "content": text, "numLines": lines, "startLine": start}
    return {"type": "text", "file": {**file, "totalLines": lines}}


def _patch(old: str, new: str) -> list[dict[str, Any]]:
    a, b = old.splitlines(), new.splitlines()
    lines = [f"-{x}" for x in a] + [f"+{x}" for x in b]
    return [{"oldStart": 1, "oldLines": len(a), "newStart": 1, "newLines": len(b), "lines": lines}]


def edit_response(args: dict[str, Any], output: str, memo: dict[str, Any]) -> Any:
    if not isinstance(args.get("old_string"), str) or not isinstance(args.get("new_string"), str):
        return None
    old, new = args["old_string"], args["new_string"]
    return {
        "filePath": args.get("file_path", ""),
        "oldString": old,
        "newString": new,
        "originalFile": None,  # the whole file before the edit: not in the recording
        "structuredPatch": _patch(old, new),
        "userModified": False,
        "replaceAll": bool(args.get("replace_all")),
    }


def write_response(args: dict[str, Any], output: str, memo: dict[str, Any]) -> Any:
    if not isinstance(args.get("content"), str):
        return None
    kind = "create" if output.startswith("File created") else "update"
    written = {"type": kind, "filePath": args.get("file_path", ""), "content": args["content"], "structuredPatch": []}
    return {**written, "originalFile": None, "userModified": False}


def glob_response(args: dict[str, Any], output: str, memo: dict[str, Any]) -> Any:
    names = [line for line in output.splitlines() if line.strip()]
    return {"durationMs": 0, "numFiles": len(names), "filenames": names, "truncated": False}


def grep_response(args: dict[str, Any], output: str, memo: dict[str, Any]) -> Any:
    mode = args.get("output_mode") or "files_with_matches"
    lines = [line for line in output.splitlines() if line.strip()]
    if mode == "files_with_matches":
        return {"mode": mode, "numFiles": len(lines), "filenames": lines}
    return {"mode": mode, "numFiles": 0, "filenames": [], "content": output, "numLines": len(lines)}


def todo_response(args: dict[str, Any], output: str, memo: dict[str, Any]) -> Any:
    if not isinstance(args.get("todos"), list):
        return None
    old, memo["todos"] = memo.get("todos", []), args.get("todos", [])
    return {"oldTodos": old, "newTodos": memo["todos"]}


def fetch_response(args: dict[str, Any], output: str, memo: dict[str, Any]) -> Any:
    url = args.get("url", "")
    return {"bytes": len(output.encode()), "code": 200, "codeText": "OK", "result": output, "durationMs": 0, "url": url}


CLAUDE_RESPONSES: dict[str, Callable[[dict[str, Any], str, dict[str, Any]], Any]] = {
    "Bash": bash_response,
    "Read": read_response,
    "Edit": edit_response,
    "Write": write_response,
    "Glob": glob_response,
    "Grep": grep_response,
    "TodoWrite": todo_response,
    "WebFetch": fetch_response,
}
"""Claude Code's ``tool_response`` per tool, rebuilt from the recorded arguments and result text (None: the recording
lost what it needs, e.g. an export that keeps no Edit text); an MCP tool's is its content blocks; otherwise the
recorded result text, which keeps what told one call from the next."""


def claude_response(tool: str, args: dict[str, Any], output: str, memo: dict[str, Any]) -> Any:
    built = CLAUDE_RESPONSES[tool](args, output, memo) if tool in CLAUDE_RESPONSES else None
    if built is not None:
        return built
    return [{"type": "text", "text": output}] if tool.startswith("mcp__") else output


def claude_error(d: dict[str, Any]) -> str:
    """PostToolUseFailure's ``error``: "Exit code N" and the output for Bash (N from the turn, else from the output's
    own first line, else 1); another tool's error text alone."""
    output = str(d.get("output") or "")
    if d.get("tool") != "Bash":
        return output
    first, _, rest = output.partition("\n")
    named = _EXIT_LINE.match(first.strip())
    code = d.get("exit_code") if isinstance(d.get("exit_code"), int) else int(named.group(1)) if named else 1
    body = rest if named else output
    return f"Exit code {code}\n{body}" if body else f"Exit code {code}"


def claude_payload(d: dict[str, Any], call_id: str, memo: dict[str, Any]) -> dict[str, Any]:
    """The hook payload Claude Code sends after the recorded call ``d``."""
    tool, args = str(d.get("tool")), d.get("args") if isinstance(d.get("args"), dict) else {}
    base = {"permission_mode": "bypassPermissions", "tool_name": tool, "tool_input": args, "tool_use_id": call_id}
    if d.get("error") or d.get("exit_code") not in (None, 0):
        return {**base, "hook_event_name": "PostToolUseFailure", "error": claude_error(d), "is_interrupt": False}
    response = claude_response(tool, args, str(d.get("output") or ""), memo)
    return {**base, "hook_event_name": "PostToolUse", "tool_response": response, "duration_ms": 1}


def _claude_line(live: Live, kind: str, message: dict[str, Any], **extra: Any) -> str:
    uuid = f"00000000-0000-4000-8000-{live.lines:012d}"
    line = {"parentUuid": live.memo.get("parent"), "isSidechain": False, "type": kind, "message": message}
    line.update(extra, uuid=uuid, timestamp=live.stamp(), cwd=str(live.root), sessionId=SESSION)
    live.write({**line, "version": CLAUDE_VERSION, "userType": "external", "entrypoint": "cli"})
    live.memo["parent"] = uuid
    return uuid


def _claude_assistant(live: Live, msg_id: str, block: dict[str, Any]) -> str:
    message = {"id": msg_id, "type": "message", "role": "assistant", "model": "replay", "content": [block]}
    return _claude_line(live, "assistant", {**message, "stop_reason": "tool_use", "stop_sequence": None})


def claude_turns(live: Live, turns: list[dict[str, Any]]) -> Feed:
    """Claude Code: UserPromptSubmit for a person's line, PostToolUse(Failure) for a call; the transcript gets the
    assistant's text and tool_use blocks before the hook runs, and the tool_result after it, as Claude Code writes."""
    for i, d in enumerate(turns):
        number, output = d.get("turn", 0), str(d.get("output") or "")
        if d.get("actor") == "person":
            _claude_line(live, "user", {"role": "user", "content": output}, promptId=f"prompt-{i}")
            live.hook("claude", {"hook_event_name": "UserPromptSubmit", "prompt": output})
            yield number, True
            continue
        msg_id, call_id = f"msg_{i:05d}", f"toolu_{i:05d}"
        if d.get("thought"):
            _claude_assistant(live, msg_id, {"type": "text", "text": d["thought"]})
        if d.get("tool") == "message":  # words without a call: no hook
            yield number, False
            continue
        args = d.get("args") if isinstance(d.get("args"), dict) else {}
        source = _claude_assistant(
            live, msg_id, {"type": "tool_use", "id": call_id, "name": d.get("tool"), "input": args}
        )
        rejected = output.lstrip().startswith(REJECTED)
        payload = claude_payload(d, call_id, live.memo)
        if not rejected:
            live.hook("claude", payload)
        result = {"tool_use_id": call_id, "type": "tool_result", "content": output, "is_error": bool(d.get("error"))}
        kept = payload.get("tool_response", f"Error: {payload.get('error', '')}")
        _claude_line(
            live, "user", {"role": "user", "content": [result]}, toolUseResult=kept, sourceToolAssistantUUID=source
        )
        yield number, not rejected
