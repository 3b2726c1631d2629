"""Clipping agent turns to a bounded size: head and tail kept, a marker saying how much was cut.

No pydantic here: the harness hooks import it (they must start fast), and the request
models and the Turn use it too, so a turn is clipped the same way on every path, before
it is validated, and never refused for its size.
"""

from __future__ import annotations

import json
import re
from typing import Any

MAX_TURN_TEXT = 16000
MAX_THOUGHT_TEXT = 4000
MAX_ARGS_CHARS = 16000
MAX_ARG_CHARS = 2000
TURN_DATA_BUDGET = 56 * 1024
"""Bytes (as JSON) a clipped turn stays under: below the 64 KiB cap on event data, with room for the event's own
fields."""
TURN_FIELDS = ("tool", "args", "output", "error", "exit_code", "thought", "paths", "score", "ts", "actor")


_TERMINAL = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[@-Z\\-_])")
"""A terminal's control sequences (colours, cursor moves, titles, links) that tools print when they think a person
watches: never words, and in the way of every reading of the text (``Error:`` coloured is not at a line's start)."""


def plain(text: str) -> str:
    """``text`` without terminal control sequences."""
    return _TERMINAL.sub("", text) if "\x1b" in text else text


def clip(text: str, cap: int = MAX_TURN_TEXT) -> str:
    """Keep the head and the tail of long text (errors live at the end, commands at the start), with a marker
    saying how much was cut; the result is at most ``cap`` characters, so clipping twice changes nothing."""
    if len(text) <= cap:
        return text
    keep = max(cap - 48, 0)  # room for the marker
    head = keep // 4
    return f"{text[:head]}\n...[clipped {len(text) - keep} characters]...\n{text[len(text) - (keep - head) :]}"


def compact(value: Any) -> str:
    """One line of text for a value: a string as it is, None as nothing, anything else as compact JSON."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    except (TypeError, ValueError, RecursionError):
        try:
            return str(value)
        except RecursionError:  # nested deeper than the interpreter recurses: its shape says nothing worth keeping
            return f"[a {type(value).__name__} nested too deep to show]"


def bounded_args(args: dict[str, Any], cap: int = MAX_ARGS_CHARS) -> dict[str, Any]:
    """``args`` small enough for an event line (a Write of a big file carries the whole file).

    Long strings keep their head and tail (commands and paths stay whole); arguments still over
    the cap become one clipped text.
    """
    if len(compact(args)) <= cap:
        return args
    part = max(200, min(MAX_ARG_CHARS, cap // 8))
    shortened = {k: clip(v, part) if isinstance(v, str) else v for k, v in args.items()}
    text = compact(shortened)
    return shortened if len(text) <= cap else {"clipped": clip(text, cap)}


def _json_bytes(value: Any) -> int:
    try:
        return len(json.dumps(value, ensure_ascii=False, default=str).encode("utf-8", "replace"))
    except (TypeError, ValueError, RecursionError):
        return 0  # not JSON at all: validation names the problem


def clip_turn_data(data: Any) -> Any:
    """A ``tool_call`` event's data clipped to fit (output and thought keep head and tail, big arguments are
    shortened) so that a real turn is never refused for its size; run before validation. Not a dict: unchanged."""
    if not isinstance(data, dict):
        return data
    out = {k: v for k, v in data.items() if k in TURN_FIELDS or k == "turn"}
    if isinstance(out.get("tool"), str) and len(out["tool"]) > 200:
        out["tool"] = out["tool"][:200]
    extras = {k: (clip(v, MAX_ARG_CHARS) if isinstance(v, str) else v) for k, v in data.items() if k not in out}
    caps = (MAX_TURN_TEXT, MAX_THOUGHT_TEXT, MAX_ARGS_CHARS)
    while True:
        text_cap, thought_cap, args_cap = caps
        if isinstance(data.get("output"), str):
            out["output"] = clip(plain(data["output"]), text_cap)
        if isinstance(data.get("thought"), str):
            out["thought"] = clip(plain(data["thought"]), thought_cap)
        if isinstance(data.get("args"), dict):
            out["args"] = bounded_args(data["args"], args_cap)
        if isinstance(data.get("paths"), list) and len(data["paths"]) > 50:
            out["paths"] = data["paths"][:50]
        candidate = {**out, **extras}
        if _json_bytes(candidate) <= TURN_DATA_BUDGET:
            return candidate
        if _json_bytes(out) <= TURN_DATA_BUDGET:
            return out  # what the monitor does not read goes first
        if text_cap <= 500:
            return out
        caps = (text_cap // 2, thought_cap // 2, args_cap // 2)  # text that grows as JSON (escapes, wide characters)
