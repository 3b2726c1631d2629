"""What every stream adapter builds on: the tool call and outcome types, the adapter base class that decodes and
bounds each untrusted line, and the value-shape guards and text extraction the adapters share.

Why apart from ``streams``: ``streams`` holds each harness's event shapes; this module is the part that is the same
for every harness (a new harness's adapter subclasses ``StreamAdapter``). Pure, no I/O.
"""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass
from typing import Any, Optional

from strict_loop.harness.payloads import own_tool
from strict_loop.model.turns import MAX_TURN_TEXT, clip, one_line

MAX_LINE_CHARS = 8_000_000
"""A longer stdout line is skipped unparsed (a tool result can be large; JSON parsing of more would stall the loop)."""
MAX_PENDING = 1000
"""Tool uses awaiting their result; beyond this the oldest are forgotten (a stream that never answers them)."""
MAX_TEXT = 4000
MAX_ID = 200
MAX_NOTICES = 5
MAX_SAID = 20
"""Texts kept for one call's thought (the turn keeps 4000 characters of them, head and tail)."""

RATE_LIMIT = re.compile(r"\b429\b|rate[ _-]?limit|too many requests|overloaded", re.IGNORECASE)
AUTH_FAILURE = re.compile(
    r"\b401\b|unauthori[sz]ed|not logged in|not signed in|please run /login|invalid[ _-]?(api[ _-]?key|x-api-key)"
    r"|authentication[ _-]?(error|failed)|(no|missing) api key|api key (is )?(missing|not set|required)"
    r"|oauth token (has )?expired|login required|please set an auth method|api key not valid",
    re.IGNORECASE,
)
"""What a harness says when it is not signed in (Claude: ``Invalid API key · Please run /login``; Codex: ``401
Unauthorized``, ``Not logged in``; Hermes: ``HTTP 401``, no API key; Gemini CLI: ``Please set an Auth method``, ``API
key not valid``): retrying cannot help."""
_BASH_WRAPPER = ("/bin/bash", "bash", "/bin/sh", "sh", "/bin/zsh", "zsh")


@dataclass(frozen=True)
class ToolCall:
    """One tool call seen in the stream, ready for recording as a turn."""

    call_id: str
    """The harness's tool-use id (Claude tool_use.id, Codex item.id): the key to dedupe against what hooks recorded."""
    turn: dict
    """Turn fields (strict_loop/turns.py): tool, args, output, error, exit_code (and paths for file changes)."""


@dataclass
class Outcome:
    """The verdict on one invocation, from the stream (and the usage file), not the exit code alone."""

    ok: bool
    reason: str
    session_id: Optional[str] = None
    cost_usd: Optional[float] = None
    input_tokens: int = 0
    output_tokens: int = 0
    rate_limited: bool = False
    last_text: str = ""
    signed_out: bool = False  # the harness is not signed in (see ``AUTH_FAILURE``): no retry can help
    limit_reset_at: Optional[float] = None  # the plan's usage limit resets then (epoch s; ``supervisor.limits``)


class StreamAdapter:
    """One invocation's stream; subclasses know one harness's event shapes."""

    harness = ""

    def __init__(self) -> None:
        self.session_id: Optional[str] = None
        self.last_text = ""
        self.skipped = 0  # malformed or oversized lines
        self.said: list[str] = []  # the agent's text since its last tool call: the next call's thought
        self.pending: dict[str, tuple[str, dict, str]] = {}  # call id -> (tool, args, the words written before it)
        self.notices: list[dict] = []  # the harness's own error and limit events, never the agent's words

    def notice(self, event: dict) -> None:
        """Keep one of the harness's own error or limit events (the last few): ``supervisor.limits`` reads them."""
        self.notices = (self.notices + [event])[-MAX_NOTICES:]

    def heard(self, text: str) -> None:
        """The agent wrote ``text`` (shown to the person, not a call): it goes with the next call (issue 24)."""
        if text.strip():
            self.said = (self.said + [clip(text.strip(), MAX_TEXT)])[-MAX_SAID:]

    def words(self) -> str:
        """What the agent wrote since its last call, taken: the call after this one starts with none."""
        said, self.said = "\n".join(self.said), []
        return said

    def remember(self, call_id: str, name: str, args: Any) -> None:
        """A call awaiting its result, with the words written before it (past MAX_PENDING, the oldest is forgotten)."""
        if len(self.pending) >= MAX_PENDING:
            self.pending.pop(next(iter(self.pending)))
        self.pending[call_id[:MAX_ID]] = (name[:200], args if isinstance(args, dict) else {"input": args}, self.words())

    def feed(self, line: str) -> list[ToolCall]:
        """The tool calls completed by this raw stdout line (none for a malformed line or the loop's own tools)."""
        event = self._decode(line)
        if event is None:
            return []
        try:
            return [call for call in self.event(event) if own_tool(str(call.turn.get("tool", ""))) is None]
        except (
            TypeError,
            ValueError,
            AttributeError,
            KeyError,
            RecursionError,
        ):  # a well-formed line of a shape we don't know
            self.skipped += 1
            return []

    def event(self, event: dict) -> list[ToolCall]:
        raise NotImplementedError

    def finish(
        self,
        exit_code: Optional[int],
        timed_out: bool,
        usage: Optional[dict] = None,
        *,
        timeout_s: Optional[float] = None,
    ) -> Outcome:
        raise NotImplementedError

    def _decode(self, line: str) -> Optional[dict]:
        if not isinstance(line, str) or len(line) > MAX_LINE_CHARS or not line.strip():
            self.skipped += bool(line and line.strip())
            return None
        try:
            value = json.loads(line)
        except (ValueError, RecursionError):
            self.skipped += 1
            return None
        if not isinstance(value, dict):
            self.skipped += 1
            return None
        return value

    def _session(self, value: Any) -> None:
        if isinstance(value, str) and value:
            self.session_id = value[:MAX_ID]

    def _interrupted(self, exit_code: Optional[int], timed_out: bool, timeout_s: Optional[float]) -> Optional[Outcome]:
        """The outcome of a run the supervisor killed, else None."""
        if not timed_out:
            return None
        after = f" after {timeout_s:g} s" if timeout_s is not None else ""
        return self._outcome(False, f"timed out{after} (killed by the supervisor's wall clock)")

    def _outcome(self, ok: bool, reason: str, **fields: Any) -> Outcome:
        return Outcome(
            ok=ok, reason=one_line(reason, 500), session_id=self.session_id, last_text=self.last_text, **fields
        )


def unwrap(command: str) -> str:
    """``ls x`` from Codex's ``/bin/bash -lc 'ls x'`` (as its hooks report it), else the command as given."""
    try:
        words = shlex.split(command)
    except ValueError:
        return command
    if len(words) == 3 and words[0] in _BASH_WRAPPER and words[1] in ("-lc", "-c"):
        return words[2]
    return command


def blocks(event: dict) -> list[dict]:
    content = as_dict(event.get("message")).get("content")
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def content_text(content: Any) -> str:
    """A tool result's text: a string, or the text blocks of a content list."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(as_text(b.get("text")) for b in content if isinstance(b, dict) and as_text(b.get("text")))
    return ""


def as_text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def as_dict(value: Any) -> dict:
    return value if isinstance(value, dict) else {}


def as_count(value: Any) -> int:
    return value if type(value) is int and 0 <= value < 10**12 else 0


def as_number(value: Any) -> Optional[float]:
    if type(value) in (int, float) and 0 <= value < 1e9:
        return float(value)
    return None


def compact(value: Any) -> str:
    if value is None:
        return ""
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))[: MAX_TURN_TEXT * 2]
    except (TypeError, ValueError, RecursionError):
        return ""


def amended(outcome: Outcome, **fields: Any) -> Outcome:
    """``outcome`` with ``fields`` set (a reason kept to one bounded line)."""
    for name, value in fields.items():
        setattr(outcome, name, one_line(value, 500) if name == "reason" else value)
    return outcome


def signed_out(outcome: Outcome, stderr_tail: str = "") -> bool:
    """Whether a failed invocation failed because the harness is not signed in (its verdict or its stderr say so)."""
    return not outcome.ok and bool(AUTH_FAILURE.search(f"{outcome.reason}\n{stderr_tail}"))
