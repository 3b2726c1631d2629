"""Replaying one labeled session the way the live product receives it, for bench/spiral_bench.py.

A session of a harness whose hooks we support goes through the hook handler (``harness.handler.handle``) as the
payloads that harness sends, with its transcript written beside the workspace as the harness writes it; any other
session goes through ``append_event`` without the agent's words (nothing carries them live). ``REPLAYS`` maps a
source's name to its replay. The payload shapes follow what Claude Code 2.1.331 and Codex 0.169.0 sent to a hook and
wrote to their transcripts when run against a scripted model (tests/fixtures/hooks/, and Claude Code's
sdk-tools.d.ts for the tools it could not be made to run). One thing those runs showed: Claude Code fires no hook
for a call it rejects before running it (the ``<tool_use_error>`` results: an Edit whose text is not found, a Write
to a file not read yet) nor for one the person refused at the permission prompt, so those calls reach the
transcript only.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from strict_loop import Workspace
from strict_loop.harness.handler import handle
from strict_loop.model.settings import MonitorSettings
from strict_loop.model.turns import Turn

TASK_ID = "replay"
SESSION = "5e55a0e0-0000-4000-8000-000000000001"
CLAUDE_VERSION, CODEX_VERSION = "2.1.331", "0.169.0"
REJECTED = ("<tool_use_error>", "The user doesn't want to", "Permission for this tool use was denied", "PreToolUse:")
"""How Claude Code's transcript marks a call that never ran: one it refused before running it, or one the person
refused at the permission prompt (Claude Code 2.1.331 fires PreToolUse and PermissionRequest for it, never a
PostToolUse or PostToolUseFailure). No post-tool hook fires for those."""
_EXIT_LINE = re.compile(r"Exit code (-?\d+)\Z")
_NUMBERED = re.compile(r"^ *\d+(?:→|\t)", re.MULTILINE)
"""Read's rendering (``cat -n`` style) in a transcript; the hook's ``file.content`` is the raw text."""


@dataclass
class Replayed:
    """What the live path did with one session: the first firing and the turns the monitor saw, each with the
    corpus turn it came from."""

    fired: Optional[int]
    kinds: list[str]
    turns: list[Turn]
    numbers: list[int]
    settings: MonitorSettings
    hook_errors: str = ""
    unhooked: int = 0


@dataclass
class Live:
    """One replay's workspace, its transcript file and the session's running memory (a todo list, an id count)."""

    root: Path
    ws: Workspace
    transcript: Path
    memo: dict[str, Any] = field(default_factory=dict)
    lines: int = 0

    def hook(self, harness: str, payload: dict[str, Any]) -> None:
        body = {"session_id": SESSION, "transcript_path": str(self.transcript), "cwd": str(self.root), **payload}
        handle(harness, json.dumps(body).encode(), workspace=str(self.root), env={"PATH": "/usr/bin:/bin"})

    def write(self, line: dict[str, Any]) -> None:
        with self.transcript.open("a", encoding="utf-8") as f:
            f.write(json.dumps(line, ensure_ascii=False) + "\n")
        self.lines += 1

    def stamp(self) -> str:
        return f"2026-01-01T00:{self.lines // 60 % 60:02d}:{self.lines % 60:02d}.000Z"


Feed = Iterator[tuple[int, bool]]
"""A replay yields, after each corpus line, its turn number and whether it reached the monitor."""


def append_turns(live: Live, turns: list[dict[str, Any]]) -> Feed:
    """A harness without our hooks: ``append_event``, the agent's words left out (nothing carries them live)."""
    for d in turns:
        data = {k: v for k, v in d.items() if k != "thought"}
        live.ws.append_event(
            task_id=TASK_ID, kind="tool_call", message=f"{d.get('tool')} turn {d.get('turn')}", data=data
        )
        yield d.get("turn", 0), True


# ------------------------------------------------------------------ Claude Code


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


# ------------------------------------------------------------------ Codex


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


REPLAYS: tuple[tuple[str, Callable[[Live, list[dict[str, Any]]], Feed]], ...] = (
    ("claude_code", claude_turns),
    ("codex", codex_turns),
)
"""Source-name prefix -> how its sessions reach the monitor live; every other source: ``append_turns``."""


def replay_for(source: str) -> Callable[[Live, list[dict[str, Any]]], Feed]:
    return next((fn for prefix, fn in REPLAYS if source.startswith(prefix)), append_turns)


def replay(source: str, turns: list[dict[str, Any]], folder: Path, profile: str = "default") -> Replayed:
    """Replay ``turns`` live in a fresh workspace under ``folder``; ``detect_spiral`` after every line until the
    first firing, then on to the end so that every turn the monitor saw can be read back from the ledger."""
    root = folder / "ws"
    root.mkdir()
    ws = Workspace(root)
    ws.init_state(
        task_id=TASK_ID,
        goal="replay a recorded session",
        global_stop_condition="never",
        limits={"max_iterations": 1000},
        monitor_profile=profile,
    )
    live = Live(root, ws, folder / "transcript.jsonl")
    fired, kinds, numbers = None, [], []
    for number, seen in replay_for(source)(live, turns):
        numbers += [number] if seen else []
        if fired is None and seen:
            verdict = ws.detect_spiral(task_id=TASK_ID)
            if verdict.detected:
                fired, kinds = number, [s.kind for s in verdict.signals]
    store = ws.task_store(TASK_ID)
    events = [ev.get("data") or {} for ev in store.events() if ev.get("kind") == "tool_call"]
    seen_turns = [Turn.model_validate(data) for data in events]
    log = store.paths.root / "hook-errors.log"
    errors = log.read_text(encoding="utf-8", errors="replace") if log.is_file() else ""
    numbered, extra = _numbered(events, numbers, turns)
    if len(seen_turns) != len(numbers) + extra:  # a hook that found no task says nothing anywhere
        errors += f"the ledger holds {len(seen_turns)} turns where {len(numbers)} were sent\n"
    numbers = numbered
    unhooked = sum(1 for d in turns if d.get("actor") != "person") - sum(1 for t in seen_turns if t.actor != "person")
    return Replayed(fired, kinds, seen_turns, numbers, store.load().contract.monitor, errors, unhooked)


def _numbered(events: list[dict[str, Any]], sent: list[int], turns: list[dict[str, Any]]) -> tuple[list[int], int]:
    """The corpus turn of each recorded turn, and how many the harness's own transcript added: a call the person
    refused reaches no hook, and the next hook records it from the transcript (``hook.source`` "transcript", its
    call id ours: ``toolu_00012`` / ``call_00012`` is the corpus line 12)."""
    out, rest, extra = [], iter(sent), 0
    for data in events:
        hook = data.get("hook") if isinstance(data.get("hook"), dict) else {}
        call = str(hook.get("tool_use_id") or "")
        if hook.get("source") == "transcript" and call[-5:].isdigit() and int(call[-5:]) < len(turns):
            out.append(turns[int(call[-5:])].get("turn", 0))
            extra += 1
        else:
            out.append(next(rest, out[-1] if out else 0))
    return out, extra
