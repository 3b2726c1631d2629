"""What ``opencode run --format json`` prints (opencode-ai 1.18.33), read as tool calls and one verdict.

One JSON object a line, each with ``type``, ``sessionID`` and a ``part``: ``step_start``; ``text`` (a finished text part
of the assistant); ``reasoning``; ``tool_use`` (a call at its end: ``part.callID``, ``part.tool``, ``part.state`` with
``status`` completed or error, ``input``, ``output`` or ``error``, ``metadata``: the shell's ``exit``); ``step_finish``
(``part.tokens`` and ``part.cost`` of that model request, ``part.reason``: "tool-calls", "stop", ...); and ``error``
(``error.name`` such as APIError or ProviderAuthError, ``error.data.message``, ``statusCode``), after which the run
exits 1. Apart from ``streams``, which another harness's parsers fill.
"""

from __future__ import annotations

from typing import Any, Optional

from strict_loop.base.clipping import bounded_args
from strict_loop.harness.opencode import turn_of
from strict_loop.headless.streambase import (
    MAX_ID,
    MAX_TEXT,
    RATE_LIMIT,
    Outcome,
    StreamAdapter,
    ToolCall,
    amended,
    as_count,
    as_dict,
    as_number,
    as_text,
)
from strict_loop.model.turns import clip


class OpenCodeAdapter(StreamAdapter):
    """Every call of the run, by its ``callID`` (the plugin wired into the run records the same id first: the
    supervisor records a call once), its tokens and cost summed over its model requests, and its errors."""

    harness = "opencode"

    def __init__(self) -> None:
        super().__init__()
        self.input_tokens = self.output_tokens = 0
        self.cost = 0.0
        self.finished: Optional[str] = None  # the last step_finish's reason
        self.errors: list[str] = []
        self.retry_at: list[float] = []  # a 429's reset (epoch s): the usage-limit reader's (supervisor.limits)

    def event(self, event: dict) -> list[ToolCall]:
        kind, part = event.get("type"), as_dict(event.get("part"))
        self._session(event.get("sessionID"))
        if kind == "text":
            self.last_text = clip(as_text(part.get("text")), MAX_TEXT)
            self.heard(self.last_text)
        elif kind == "tool_use" and isinstance(part.get("callID"), str) and part["callID"]:
            return self._call(part)
        elif kind == "step_finish":
            tokens = as_dict(part.get("tokens"))
            self.input_tokens += as_count(tokens.get("input")) + as_count(as_dict(tokens.get("cache")).get("read"))
            self.output_tokens += as_count(tokens.get("output")) + as_count(tokens.get("reasoning"))
            self.cost += as_number(part.get("cost")) or 0.0
            self.finished = as_text(part.get("reason")) or "unknown"
        elif kind == "error":
            self.errors = (self.errors + [self._error(as_dict(event.get("error")))])[-5:]
            reset = _retry_at(as_dict(as_dict(event.get("error")).get("data")), event.get("timestamp"))
            self.retry_at = (self.retry_at + [reset])[-5:] if reset is not None else self.retry_at
        return []

    def _call(self, part: dict) -> list[ToolCall]:
        state = as_dict(part.get("state"))
        if state.get("status") not in ("completed", "error"):
            return []
        tool, args = as_text(part.get("tool"))[:200] or "unknown", state.get("input")
        response: dict[str, Any] = {"output": state.get("output"), "metadata": state.get("metadata")}
        if state.get("status") == "error":
            response = {"error": as_text(state.get("error")), "metadata": state.get("metadata")}
        turn = {
            "tool": tool,
            "args": bounded_args(args if isinstance(args, dict) else {}),
            **turn_of(tool, args, response),
        }
        turn["output"] = clip(turn["output"])
        said = self.words()
        return [ToolCall(part["callID"][:MAX_ID], {**turn, "thought": said} if said else turn)]

    @staticmethod
    def _error(error: dict) -> str:
        data = as_dict(error.get("data"))
        status = data.get("statusCode")
        code = f" {status}" if type(status) is int else ""
        return clip(f"{as_text(error.get('name')) or 'error'}{code}: {as_text(data.get('message'))}".strip(), MAX_TEXT)

    def finish(
        self,
        exit_code: Optional[int],
        timed_out: bool,
        usage: Optional[dict] = None,
        *,
        timeout_s: Optional[float] = None,
    ) -> Outcome:
        failure = "; ".join(self.errors)
        fields = {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cost_usd": round(self.cost, 6),
            "rate_limited": bool(RATE_LIMIT.search(failure)),
        }
        killed = self._interrupted(exit_code, timed_out, timeout_s)
        if killed is not None:
            return amended(killed, **fields)
        if self.errors:
            return self._outcome(False, f"failed: {failure}", **fields)
        if exit_code not in (0, None):
            return self._outcome(False, f"exit {exit_code} with no error event", **fields)
        if self.finished is None:
            return self._outcome(False, f"exit {exit_code} and no model request finished", **fields)
        return self._outcome(True, f"completed ({self.finished})", **fields)


def _retry_at(data: dict, stamp: Any) -> Optional[float]:
    """When a 429 error event says to retry: its provider's ``retry-after-ms`` or ``retry-after`` header (seconds, or
    an HTTP date) from the event's ``timestamp`` (ms). OpenCode prints the error only after retrying five times, each
    after that header (however long), so the reset it names is the one after those."""
    from email.utils import parsedate_to_datetime

    headers = as_dict(data.get("responseHeaders"))
    ms, after = as_text(headers.get("retry-after-ms")).strip(), as_text(headers.get("retry-after")).strip()
    at = stamp / 1000 if type(stamp) in (int, float) else None
    if data.get("statusCode") != 429 or not (ms or after):
        return None
    try:
        if at is not None and (ms or after.replace(".", "", 1).isdigit()):
            return at + (float(ms) / 1000 if ms else float(after))
        return parsedate_to_datetime(after).timestamp()
    except (ValueError, TypeError, OverflowError, IndexError):
        return None
