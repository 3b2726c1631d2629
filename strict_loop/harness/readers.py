"""Each harness's readers of one hook call: what a tool call returned, what the person typed, the agent's own words
before the call (the turn's ``thought``) and the calls that never ran before it (refused, or blocked by a hook).

Why apart from ``payloads``: these change when a harness changes what it writes (a payload field, a transcript line).
Claude Code and Codex keep the words and the calls that never ran (no post-tool hook fires for them) only in the JSONL
transcript every hook payload names, read from its last ``MAX_TAIL_BYTES`` once per hook call; the Hermes plugin passes
the words beside the call. Standard library only: the hook's fast path may load this."""

from __future__ import annotations

import json
import os
import re
import shlex
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple, Optional

from strict_loop.base.clipping import compact
from strict_loop.base.fsio import Unreadable, read_tail

if TYPE_CHECKING:
    from strict_loop.harness.payloads import HookEvent

_EXIT_CODE = re.compile(r"\bexit code:? (-?\d+)", re.IGNORECASE)
MAX_TAIL_BYTES = 256 << 10
"""The most of a transcript read for one hook call: its end, where the call was written a moment ago (one ``pread``
whatever the file's size); only the lines after the previous call (or the last that ran) are parsed."""
Item = tuple[str, str]
"""One thing a transcript line holds, in order: ("text", the agent's words), ("call", its id) or ("stop", "") (a
person's message: what the agent wrote before it was not about this call)."""
Step = tuple[str, str, str, Any]
"""What a transcript line says about calls, in order: ("call", id, tool, arguments), ("ran", id, "", None), ("refused",
id, the refusal text, None) or ("blocked", id, the hook's reason, None)."""
ItemsOf = Callable[[Any], list[Item]]  # a decoded line -> its items
StepsOf = Callable[[Any], list[Step]]
Markers = tuple[bytes, ...]  # a line holding none of these has no items, and is not parsed
_CLAUDE_TEXT, _CODEX_TEXT = (b'"assistant"', b'"user"'), (b'"response_item"',)  # the lines the words' items are on
MAX_REFUSALS = 20  # the most calls that never ran one hook call records (the newest): a flood of them costs no more
CLAUDE_REFUSED = "The user doesn't want to proceed with this tool use."
"""How Claude Code 2.1.331's result of a call the person refused begins (then why, and their words if they gave
some); its line also says ``toolDenialKind: "user-rejected"``."""
_CODEX_REFUSED = re.compile(
    r'(?:[\w .-]{1,60}: )?(?:CreateProcess \{ message: "Rejected\(\\"rejected by user\\"\)" \}|'
    r"(?:patch|exec command|command) rejected by user|user rejected MCP tool call)"
)
"""Codex 0.169.0's whole output of a call the person declined (``exec_command failed: CreateProcess { message:
"Rejected(\\"rejected by user\\")" }``, ``patch rejected by user``, ...): matched whole, so that a command whose output
quotes these words is not taken for a refusal."""
_BLOCKED = re.compile(r"PreToolUse:[\w.:-]{1,120} hook error: |Command blocked by PreToolUse hook: ")
"""A PreToolUse hook's denial: Claude Code 2.1.332's ``PreToolUse:Bash hook error: <reason>`` (earlier: the hook's
command in brackets first), Codex 0.171's ``Command blocked by PreToolUse hook: <reason>. Command: <command>``."""
OWN_DENIAL = "strict-loop"  # in every reason our own hooks deny a call with (a pause): ``_blocked`` leaves those out
_SHELL_CALLS = frozenset({"exec_command", "shell", "shell_command", "local_shell", "container.exec"})  # hooks: Bash


class Refusal(NamedTuple):
    """A call that never ran, read from the transcript (the person refused it, or another program's hook blocked it):
    recorded as a turn of its own (``error``: true)."""

    call_id: str
    tool: str  # as the harness's hooks name it, so that the same call made again compares equal
    args: Any
    output: str  # the refusal, with the person's words when they typed some; a hook's reason
    thought: str = ""  # what the agent wrote before the call
    by_hook: bool = False  # a hook's block: its reason is a program's words, not the person's


def prompt_field(event: HookEvent) -> str:
    """Claude Code and Codex: UserPromptSubmit's ``prompt``."""
    return _text(event.payload.get("prompt"))


def gemini_prompt(event: HookEvent) -> Optional[str]:
    """Gemini CLI: BeforeAgent's ``prompt``; None for the reason our AfterAgent hook gave to go on, which Gemini CLI
    0.61.0 sends as the next prompt, through BeforeAgent too: those words are not the person's."""
    from strict_loop.harness.payloads import CONTINUING

    text = _text(event.payload.get("prompt"))
    return None if CONTINUING.match(text) else text


def hermes_prompt(event: HookEvent) -> str:
    """Hermes: pre_llm_call's ``user_message`` (the plugin passes its keyword arguments in ``extra``)."""
    extra = event.payload.get("extra")
    return _text(extra.get("user_message")) if isinstance(extra, dict) else ""


def claude_turn(event: HookEvent) -> dict[str, Any]:
    """Claude Code: Bash's stdout and stderr; on PostToolUseFailure the error text ("Exit code N" and what followed)."""
    if event.name == "PostToolUseFailure":  # "Exit code N", then a newline and the command's output (2.1.331)
        error = _text(event.payload.get("error"))
        first, _, rest = error.partition("\n")
        code = exit_code_in(first)
        return {"output": rest if code is not None and rest.strip() else error, "error": True, "exit_code": code}
    response = event.payload.get("tool_response")
    interrupted = isinstance(response, dict) and response.get("interrupted") is True
    return {"output": _claude_output(response), "error": interrupted}


def codex_turn(event: HookEvent) -> dict[str, Any]:
    """Codex: the output text, and no exit code (a failed command looks like a quiet one)."""
    return {"output": compact(event.payload.get("tool_response"))}


def hermes_turn(event: HookEvent) -> dict[str, Any]:
    """Hermes: the plugin's ``extra.result``."""
    return _hermes_result(event.payload.get("extra"))


def no_refusals(event: HookEvent) -> list[Refusal]:
    """Hermes: none to read. Its tool itself returns the refusal, so ``post_tool_call`` records it as any result."""
    return []


def hermes_words(event: HookEvent) -> str:
    """Hermes: the assistant message's text the plugin kept from ``post_api_request`` for the first call it made."""
    extra = event.payload.get("extra")
    return _text(extra.get("assistant_text")) if isinstance(extra, dict) else ""


def claude_words(event: HookEvent, call_id: Optional[str] = None) -> str:
    """Claude Code: the ``text`` blocks of the assistant lines between the previous ``tool_use`` and this call's (or
    ``call_id``'s: an earlier call's words, read at a later hook, ``Harness.late_words``).

    Claude Code writes one transcript line per content block (2.1.331), all of one message with the same
    ``message.id``; a ``thinking`` block is not shown text and is left out; a subagent's lines (``isSidechain``) are
    not this agent's words. 2.1.332 writes the lines in batches, 100 ms after they are queued (``FLUSH_INTERVAL_MS``
    in the binary): a call that ran faster reaches its hook before them, and its words are read at the next call."""
    return transcript_words(event, _claude_items, _CLAUDE_TEXT, call_id)


def codex_words(event: HookEvent) -> str:
    """Codex: the ``output_text`` of the assistant ``message`` items between the previous call and this one.

    A ``reasoning`` item's summary is left out: it is the model's reasoning, written only when the configuration
    asks for summaries (and for no model of every provider), not the words the agent addressed to the person; so
    the same agent gives the same thought whatever that setting, as Claude's ``thinking`` blocks are left out too."""
    return transcript_words(event, _codex_items, _CODEX_TEXT)


def claude_refusals(event: HookEvent) -> list[Refusal]:
    """Claude Code: the ``tool_result`` lines of calls the person refused (``toolDenialKind: "user-rejected"``, or
    ``CLAUDE_REFUSED``) or a hook blocked, each with its ``tool_use``'s name and input. A subagent's are left out."""
    return transcript_refusals(event, _claude_steps, (b'tool_use"', b'"tool_result"'), (_claude_items, _CLAUDE_TEXT))


def codex_refusals(event: HookEvent) -> list[Refusal]:
    """Codex: the ``function_call_output`` (or ``custom_tool_call_output``) items whose whole output is a refusal or a
    hook's block, each with its call item's tool and arguments as Codex's hooks name them."""
    return transcript_refusals(event, _codex_steps, (b'_call"', b'_output"'), (_codex_items, _CODEX_TEXT))


def transcript_lines(event: HookEvent) -> list[bytes]:
    """The lines of the last ``MAX_TAIL_BYTES`` of the JSONL file ``transcript_path`` names (a first line the window
    cuts left out), read once per hook call (kept in ``event.memo``). [] unless the path is absolute and ends in
    ``.jsonl`` and a regular file is there (a FIFO, a device or a link is never opened), and on any failure to read."""
    if "tail" not in event.memo:
        path, lines = event.payload.get("transcript_path"), []
        if isinstance(path, str) and os.path.isabs(path) and path.endswith(".jsonl"):
            try:
                data, whole = read_tail(path, MAX_TAIL_BYTES)
                lines = data.split(b"\n")[0 if whole else 1 :]
            except (OSError, Unreadable, ValueError):
                lines = []
        event.memo["tail"] = lines
    return event.memo["tail"]


def transcript_words(event: HookEvent, items_of: ItemsOf, markers: Markers, call_id: Optional[str] = None) -> str:
    """The agent's text between the call ``call_id`` (default: the payload's ``tool_use_id``) and the call (or the
    person's message) before it, read from the transcript's tail (``transcript_lines``); "" when the call is not in it.

    ``items_of`` turns one decoded line into its items; a line holding none of ``markers`` has none and is not
    parsed. Any failure (no such file, a torn or garbage line: a tail's first, one being appended) means fewer words."""
    call_id = event.payload.get("tool_use_id") if call_id is None else call_id
    if not (isinstance(call_id, str) and call_id):
        return ""
    needle, found = json.dumps(call_id).encode(), False
    said: list[str] = []
    for raw in reversed(transcript_lines(event)):
        if not (any(m in raw for m in markers) if found else needle in raw):
            continue  # cheaper than parsing it: a line without these holds none of the items wanted
        items = items_of(_decoded(raw))
        if not found:
            if ("call", call_id) not in items:
                continue
            found, items = True, items[: items.index(("call", call_id))]
        for kind, value in reversed(items):
            if kind != "text":
                return _joined(said)
            said.append(value)
    return _joined(said) if found else ""


def transcript_refusals(
    event: HookEvent, steps_of: StepsOf, markers: Markers, words: tuple[ItemsOf, Markers]
) -> list[Refusal]:
    """The calls that never ran (refused, or blocked by a hook) since the last one that ran, oldest first (at most
    ``MAX_REFUSALS``), each with the agent's words before it (``words``: ``transcript_words``'s two arguments).

    Why since the last that ran: its hook recorded a turn, and the hook after a refusal recorded those before it; a
    hook finds a refusal again until a call runs, and the recorder skips it by its id. ``steps_of`` turns one decoded
    line into its steps; a line holding none of ``markers`` is not parsed."""
    pending: dict[str, tuple[str, bool]] = {}
    found: list[Refusal] = []
    ran = False
    for raw in reversed(transcript_lines(event)):
        if (ran and not pending) or len(found) >= MAX_REFUSALS:
            break
        if not any(m in raw for m in markers):
            continue
        for kind, call_id, text, args in reversed(steps_of(_decoded(raw))):
            if kind in ("refused", "blocked") and call_id and not ran:
                pending.setdefault(call_id, (text, kind == "blocked"))
            elif kind == "ran":
                ran = True
            elif kind == "call" and call_id in pending:
                said = transcript_words(event, *words, call_id=call_id)
                output, by_hook = pending.pop(call_id)
                found.append(Refusal(call_id, text, args, output, said, by_hook))
    return found[::-1]


def _claude_blocks(entry: Any) -> list[dict[str, Any]]:
    """The content blocks of a line of this agent's (a subagent's lines, ``isSidechain``, have none)."""
    if not isinstance(entry, dict) or entry.get("isSidechain") is True:
        return []
    message = entry.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def _claude_items(entry: Any) -> list[Item]:
    if not isinstance(entry, dict) or entry.get("isSidechain") is True:
        return []
    blocks = _claude_blocks(entry)
    if entry.get("type") == "user":  # a tool's result comes after its call: skipped; a person's message stops
        return [] if any(b.get("type") == "tool_result" for b in blocks) else [("stop", "")]
    if entry.get("type") != "assistant":
        return []
    out: list[Item] = []
    for block in blocks:
        kind = block.get("type")
        if kind == "text" and isinstance(block.get("text"), str):
            out.append(("text", block["text"]))
        elif isinstance(kind, str) and kind.endswith("tool_use"):  # tool_use, server_tool_use, mcp_tool_use
            out.append(("call", _text(block.get("id"))))
    return out


def _codex_items(entry: Any) -> list[Item]:
    item = entry.get("payload") if isinstance(entry, dict) and entry.get("type") == "response_item" else None
    if not isinstance(item, dict):
        return []
    kind, content = item.get("type"), item.get("content")
    if kind == "message" and item.get("role") == "user":
        return [("stop", "")]
    if kind == "message" and item.get("role") == "assistant" and isinstance(content, list):
        return [
            ("text", part["text"])
            for part in content
            if isinstance(part, dict) and part.get("type") == "output_text" and isinstance(part.get("text"), str)
        ]
    if isinstance(kind, str) and kind.endswith("_call"):  # function_call, custom_tool_call, local_shell_call, ...
        return [("call", _text(item.get("call_id")) or _text(item.get("id")))]
    return []  # reasoning, a call's output, a developer message


def _claude_steps(entry: Any) -> list[Step]:
    blocks = _claude_blocks(entry)
    kind = entry.get("type") if blocks else None
    if kind == "assistant":
        return [
            ("call", _text(b.get("id")), _text(b.get("name")), b.get("input"))
            for b in blocks
            if _text(b.get("type")).endswith("tool_use")
        ]
    denial = entry.get("toolDenialKind") if kind == "user" else None
    out: list[Step] = []
    for block in blocks if kind == "user" else ():
        if block.get("type") != "tool_result":
            continue
        text, call_id = _content_text(block.get("content")).strip(), _text(block.get("tool_use_id"))
        if denial == "user-rejected" or text.startswith(CLAUDE_REFUSED):
            out.append(("refused", call_id, text or CLAUDE_REFUSED, None))
        elif _BLOCKED.match(text):
            out += _blocked(call_id, text)
        elif denial is None:  # another denial (a classifier's) is neither a run nor the person's refusal
            out.append(("ran", call_id, "", None))
    return out


def _codex_steps(entry: Any) -> list[Step]:
    item = entry.get("payload") if isinstance(entry, dict) and entry.get("type") == "response_item" else None
    kind = _text(item.get("type")) if isinstance(item, dict) else ""
    if isinstance(item, dict) and kind.endswith("_call_output"):  # function_call_output, custom_tool_call_output
        text, call_id = _content_text(item.get("output")).strip(), _text(item.get("call_id"))
        if _BLOCKED.match(text):
            return _blocked(call_id, text.rsplit(". Command: ", 1)[0])  # without Codex's ". Command: ..."
        return [("refused" if _CODEX_REFUSED.fullmatch(text) else "ran", call_id, text, None)]
    if isinstance(item, dict) and kind.endswith("_call"):
        return [("call", _text(item.get("call_id")) or _text(item.get("id")), *_codex_call(item))]
    return []


def _blocked(call_id: str, reason: str) -> list[Step]:
    """A hook's block of a call, as a step; none for one of ours (a pause), which is neither a run nor a failure."""
    return [] if OWN_DENIAL in reason[:2000] else [("blocked", call_id, reason, None)]


def _codex_call(item: dict[str, Any]) -> tuple[str, Any]:
    """A call item's tool and arguments as Codex's hooks name them: a shell call ``Bash`` ``{"command": ...}``, a patch
    ``apply_patch`` ``{"command": <the patch>}``, any other tool its own name and arguments."""
    name, raw = _text(item.get("name")), item.get("arguments", item.get("input"))
    if item.get("type") == "local_shell_call":
        name, raw = "local_shell", item.get("action")
    decoded = _decoded(raw.encode("utf-8", "surrogatepass")) if isinstance(raw, str) else raw
    args = decoded if isinstance(decoded, dict) else ({"input": raw} if isinstance(raw, str) else {})
    if name in _SHELL_CALLS:
        command = args.get("cmd", args.get("command"))
        if isinstance(command, list):
            command = shlex.join(str(word) for word in command)
        return "Bash", {"command": _text(command)}
    if name == "apply_patch":
        return name, {"command": _text(args.get("input"))}
    return name, args


def _content_text(content: Any) -> str:
    """A result's text: a string, or the ``text`` of its content blocks."""
    parts = content if isinstance(content, list) else []
    texts = (_text(p.get("text")) for p in parts if isinstance(p, dict))
    return content if isinstance(content, str) else "\n".join(t for t in texts if t)


def _decoded(raw: bytes) -> Any:
    try:
        return json.loads(raw)
    except (ValueError, RecursionError):  # a torn last line, garbage, nesting too deep to matter
        return None


def _joined(said: list[str]) -> str:
    return "\n".join(text.strip() for text in reversed(said) if text.strip())


def exit_code_in(text: str) -> Optional[int]:
    """The exit code Claude Code names in a failed command's text ("Exit code 1"), if any."""
    found = _EXIT_CODE.search(text)
    return int(found.group(1)) if found else None


def _claude_output(response: Any) -> str:
    """What a tool gave back, as the agent reads it: Bash's stdout and stderr (after its word that it moved a command
    past its timeout to the background, or its background task's id, as the model is told it), Read's file text, Glob's
    and Grep's matches, an edit's confirmation (never Edit's ``originalFile``); else a compact text of the response."""
    if not isinstance(response, dict):
        return compact(response)
    if "stdout" in response or "stderr" in response:
        ms, job = response.get("timedOutAfterMs"), response.get("backgroundTaskId")
        cut = [f"Command did not complete within its {ms // 1000}s timeout"] if isinstance(ms, int) else []
        cut += [f"Command running in background with ID: {job}"] if isinstance(job, str) and not cut else []
        return "\n".join(s for s in cut + [_text(response.get(k)) for k in ("stdout", "stderr")] if s)
    file = response.get("file")
    if isinstance(file, dict) and isinstance(file.get("content"), str):
        return file["content"]
    if isinstance(response.get("filePath"), str) and ("structuredPatch" in response or "oldString" in response):
        verb = "created" if response.get("type") == "create" else "updated"
        return f"The file {response['filePath']} has been {verb}."
    if isinstance(response.get("content"), str) and "numFiles" in response:
        return response["content"]  # Grep's content mode
    found = response.get("filenames")
    if isinstance(found, list) and all(isinstance(f, str) for f in found):
        return "\n".join(found) if found else "No files found"
    return compact(response)


def _hermes_result(extra: Any) -> dict[str, Any]:
    """Hermes ``extra.result``: a JSON string ``{"output", "exit_code", "error"}`` (plain text for some tools)."""
    extra = extra if isinstance(extra, dict) else {}
    raw = extra.get("result")
    try:
        result = json.loads(raw) if isinstance(raw, str) else raw
    except (ValueError, RecursionError):
        result = raw
    failed_tool = extra.get("status") not in (None, "ok")
    if not isinstance(result, dict):
        return {"output": compact(result), "error": True if failed_tool else None}
    code = result.get("exit_code")
    code = code if type(code) is int else None
    error_text = _text(result.get("error"))
    output = _text(result.get("output")) if "output" in result else compact(result)
    if error_text:
        output = f"{output}\n{error_text}" if output else error_text
    failed = failed_tool or bool(error_text) or (code not in (None, 0))
    return {"output": output, "exit_code": code, "error": failed if (failed or code is not None) else None}


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""
