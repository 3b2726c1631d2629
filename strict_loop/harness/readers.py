"""Each harness's readers of one hook call: what a tool call returned, what the person typed, and the agent's own
words before the call (the turn's ``thought``).

Why apart from ``payloads``: these change when a harness changes what it writes (a payload field, a transcript
line); the hook formats and answers do not. The words come from where each harness keeps them (issue 24): Claude
Code and Codex write every assistant text to a JSONL transcript whose path every hook payload names, read here from
its last ``MAX_TAIL_BYTES`` only; the Hermes plugin passes the assistant message's text beside the call. Standard
library only: the hook's fast path may load this.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Optional

from strict_loop.base.clipping import compact
from strict_loop.base.fsio import Unreadable, read_tail

if TYPE_CHECKING:
    from strict_loop.harness.payloads import HookEvent

MAX_TAIL_BYTES = 256 << 10
"""The most of a transcript read for one call's words: its end, where the call was written a moment ago. One
``pread`` whatever the file's size; only the lines after the previous call are parsed."""
_EXIT_CODE = re.compile(r"\bexit code:? (-?\d+)", re.IGNORECASE)

Item = tuple[str, str]
"""One thing a transcript line holds, in order: ("text", the agent's words), ("call", its id) or ("stop", "") (a
person's message: what the agent wrote before it was not about this call)."""


def prompt_field(event: HookEvent) -> str:
    """Claude Code and Codex: UserPromptSubmit's ``prompt``."""
    return _text(event.payload.get("prompt"))


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
    return {
        "output": _claude_output(response),
        "error": bool(isinstance(response, dict) and response.get("interrupted") is True),
    }


def codex_turn(event: HookEvent) -> dict[str, Any]:
    """Codex: the output text, and no exit code (a failed command looks like a quiet one)."""
    return {"output": compact(event.payload.get("tool_response"))}


def hermes_turn(event: HookEvent) -> dict[str, Any]:
    """Hermes: the plugin's ``extra.result``."""
    return _hermes_result(event.payload.get("extra"))


def claude_words(event: HookEvent) -> str:
    """Claude Code: the ``text`` blocks of the assistant lines between the previous ``tool_use`` and this call's.

    Claude Code writes one transcript line per content block (2.1.331), all of one message with the same
    ``message.id``; a ``thinking`` block is not shown text and is left out; a subagent's lines
    (``isSidechain``) are not this agent's words."""
    return transcript_words(event.payload, _claude_items, (b'"assistant"', b'"user"'))


def codex_words(event: HookEvent) -> str:
    """Codex: the ``output_text`` of the assistant ``message`` items between the previous call and this one.

    A ``reasoning`` item's summary is left out: it is the model's reasoning, written only when the configuration
    asks for summaries (and for no model of every provider), not the words the agent addressed to the person; so
    the same agent gives the same thought whatever that setting, as Claude's ``thinking`` blocks are left out too."""
    return transcript_words(event.payload, _codex_items, (b'"response_item"',))


def hermes_words(event: HookEvent) -> str:
    """Hermes: the assistant message's text the plugin kept from ``post_api_request`` for the first call it made."""
    extra = event.payload.get("extra")
    return _text(extra.get("assistant_text")) if isinstance(extra, dict) else ""


def transcript_words(payload: dict[str, Any], items_of: Callable[[Any], list[Item]], markers: tuple[bytes, ...]) -> str:
    """The agent's text between the call ``payload["tool_use_id"]`` and the call (or the person's message) before it,
    read from the tail of the JSONL file ``payload["transcript_path"]``; "" when the call is not in that tail.

    ``items_of`` turns one decoded line into its items; a line holding none of ``markers`` has none and is not
    parsed. Any failure (no such file, a FIFO or a device there, a torn or garbage line) means fewer words, never
    an error: the first line of a tail is cut, and a line being appended does not parse.
    """
    call_id, path = payload.get("tool_use_id"), payload.get("transcript_path")
    if not (isinstance(call_id, str) and call_id and isinstance(path, str)):
        return ""
    if not (os.path.isabs(path) and path.endswith(".jsonl")):
        return ""  # a transcript is a .jsonl file at an absolute path; nothing else is read
    try:
        data, whole = read_tail(path, MAX_TAIL_BYTES)
    except (OSError, Unreadable, ValueError):
        return ""
    lines = data.split(b"\n")
    needle, found = json.dumps(call_id).encode(), False
    said: list[str] = []
    for raw in reversed(lines if whole else lines[1:]):
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


def _claude_items(entry: Any) -> list[Item]:
    if not isinstance(entry, dict) or entry.get("isSidechain") is True:
        return []
    message = entry.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    blocks = [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []
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
    """What a tool gave back, as the agent reads it: Bash's stdout and stderr, Read's file text, Glob's and Grep's
    matches, an edit's confirmation (never the whole file Edit's response carries as ``originalFile``); for other
    tools a compact text of the response."""
    if not isinstance(response, dict):
        return compact(response)
    if "stdout" in response or "stderr" in response:
        return "\n".join(_text(response.get(k)) for k in ("stdout", "stderr") if _text(response.get(k)))
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
