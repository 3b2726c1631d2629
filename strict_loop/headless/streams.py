"""What a headless harness printed, as tool calls and one verdict: pure parsers, no I/O, no subprocess.

The supervisor feeds each stdout line of one invocation to an adapter as it arrives and records the
tool calls it returns (so the progress monitor sees them even where hooks do not run), then asks
``finish`` whether the invocation worked. The verdict comes from the stream (and Hermes's usage
file), never from the exit code alone: Claude exits 1 on ``is_error``, Codex may retry forever,
and ``hermes -z`` exits 0 after an API error. Shapes are those the pinned binaries print
(tests/fixtures/streams/, captured by tests/capture_streams.py). The stream is untrusted: a
malformed or hostile line is skipped, never raises, and every kept text is bounded.
"""

from __future__ import annotations

from typing import Any, Optional

from strict_loop.harness.payloads import bounded_args
from strict_loop.harness.readers import exit_code_in
from strict_loop.headless.streambase import (
    MAX_ID,
    MAX_LINE_CHARS,
    MAX_PENDING,
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
    blocks,
    compact,
    content_text,
    unwrap,
)
from strict_loop.model.turns import clip


class ClaudeAdapter(StreamAdapter):
    """``claude -p --output-format stream-json --verbose``: tool_use / tool_result pairs by id, then one ``result``."""

    harness = "claude"

    def __init__(self) -> None:
        super().__init__()
        self.result: Optional[dict] = None
        self.api_error: Optional[tuple[int, str]] = None

    def event(self, event: dict) -> list[ToolCall]:
        kind = event.get("type")
        self._session(event.get("session_id"))
        if kind == "rate_limit_event" or (kind == "assistant" and event.get("is_api_error_message") is True):
            self.notice(event)  # Claude Code's own: a limit's reset, an API error's words (never the model's)
        if kind == "assistant":
            if isinstance(event.get("api_error_status"), int):
                self.api_error = (event["api_error_status"], as_text(event.get("api_error_type")))
            for block in blocks(event):  # one block per event (2.1.331), in the order they were written
                if block.get("type") == "tool_use" and isinstance(block.get("id"), str):
                    self.remember(block["id"], as_text(block.get("name")) or "unknown", block.get("input"))
                elif block.get("type") == "text" and as_text(block.get("text")).strip():
                    self.last_text = clip(block["text"], MAX_TEXT)
                    self.heard(block["text"])
            return []
        if kind == "user":
            calls = [
                self._result(block, event.get("tool_use_result"))
                for block in blocks(event)
                if block.get("type") == "tool_result"
            ]
            return [call for call in calls if call is not None]
        if kind == "system" and event.get("subtype") == "api_retry" and isinstance(event.get("error_status"), int):
            self.api_error = (
                event["error_status"],
                as_text(event.get("error")),
            )  # retrying: what a kill mid-retry leaves
        elif kind == "result":
            self.result = event
            if as_text(event.get("result")).strip():
                self.last_text = clip(event["result"], MAX_TEXT)
        return []

    def _result(self, block: dict, structured: Any) -> Optional[ToolCall]:
        call_id = as_text(block.get("tool_use_id"))[:MAX_ID]
        if call_id not in self.pending:
            return None
        name, args, said = self.pending.pop(call_id)
        is_error = block.get("is_error") is True
        text = content_text(block.get("content"))
        if isinstance(structured, dict) and ("stdout" in structured or "stderr" in structured) and not is_error:
            text = (
                "\n".join(as_text(structured.get(k)) for k in ("stdout", "stderr") if as_text(structured.get(k)))
                or text
            )
        found = exit_code_in(text[:200]) if is_error else None
        code = found if found is not None else (0 if name == "Bash" and not is_error else None)
        turn = {"tool": name, "args": bounded_args(args), "output": clip(text), "error": is_error, "exit_code": code}
        return ToolCall(call_id, {**turn, "thought": said} if said else turn)

    def finish(
        self,
        exit_code: Optional[int],
        timed_out: bool,
        usage: Optional[dict] = None,
        *,
        timeout_s: Optional[float] = None,
    ) -> Outcome:
        result = self.result or {}
        tokens = as_dict(result.get("usage"))
        fields = {
            "cost_usd": as_number(result.get("total_cost_usd")),
            "input_tokens": sum(
                as_count(tokens.get(k))
                for k in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
            ),
            "output_tokens": as_count(tokens.get("output_tokens")),
        }
        status = (
            result.get("api_error_status")
            if isinstance(result.get("api_error_status"), int)
            else (self.api_error or (None,))[0]
        )
        error_type = as_text(result.get("api_error_type")) or (self.api_error[1] if self.api_error else "")
        limited = (
            status == 429
            or "rate_limit" in error_type
            or (status is not None and bool(RATE_LIMIT.search(self.last_text)))
        )
        killed = self._interrupted(exit_code, timed_out, timeout_s)
        if killed is not None:
            return amended(killed, rate_limited=limited, **fields)
        if self.result is None:
            return self._outcome(False, f"exit {exit_code} with no result", rate_limited=limited, **fields)
        if result.get("is_error") is not True:
            return self._outcome(True, "completed", **fields)
        if status is not None:
            reason = f"api error {status}: {self.last_text}"
        else:
            errors = "; ".join(as_text(e) for e in result.get("errors") or [] if as_text(e))
            reason = (
                f"{as_text(result.get('subtype')) or 'error'} "
                f"({as_text(result.get('terminal_reason')) or 'no reason'}): {errors or self.last_text}"
            )
        return self._outcome(False, reason, rate_limited=limited, **fields)


CODEX_CALLS = frozenset({"command_execution", "mcp_tool_call", "file_change"})
"""The ``codex exec --json`` items that are tool calls (recorded as turns)."""


class CodexAdapter(StreamAdapter):
    """``codex exec --json``: completed items become tool calls; ``turn.completed`` or ``turn.failed`` decides."""

    harness = "codex"

    def __init__(self) -> None:
        super().__init__()
        self.completed = False
        self.failure: Optional[str] = None
        self.errors: list[str] = []
        self.input_tokens = 0
        self.output_tokens = 0
        self.started: dict[str, str] = {}  # a started call's item id -> the words written before it

    def event(self, event: dict) -> list[ToolCall]:
        kind = event.get("type")
        if kind == "item.started":  # the messages before a call complete before it starts (0.169.0)
            item = as_dict(event.get("item"))
            item_id = as_text(item.get("id"))[:MAX_ID]
            if item.get("type") in CODEX_CALLS and item_id and len(self.started) < MAX_PENDING:
                self.started[item_id] = self.words()
        elif kind == "thread.started":
            self._session(event.get("thread_id"))
        elif kind == "turn.completed":
            self.completed = True
            tokens = as_dict(event.get("usage"))
            self.input_tokens += as_count(tokens.get("input_tokens"))
            self.output_tokens += as_count(tokens.get("output_tokens"))
        elif kind == "turn.failed":
            self.failure = as_text(as_dict(event.get("error")).get("message")) or "turn.failed"
        elif kind == "error":
            self.errors = (self.errors + [clip(as_text(event.get("message")), MAX_TEXT)])[-5:]
        elif kind == "item.completed":
            call = self._item(as_dict(event.get("item")))
            if call is None:
                return []
            said = self.started.pop(call.call_id, None)
            said = self.words() if said is None else said
            return [ToolCall(call.call_id, {**call.turn, "thought": said}) if said else call]
        return []

    def _item(self, item: dict) -> Optional[ToolCall]:
        kind, item_id = item.get("type"), as_text(item.get("id"))[:MAX_ID]
        failed = item.get("status") == "failed"
        if kind == "agent_message" and as_text(item.get("text")).strip():
            self.last_text = clip(item["text"], MAX_TEXT)
            self.heard(item["text"])
        elif kind == "command_execution" and item_id:
            code = item.get("exit_code") if type(item.get("exit_code")) is int else None
            return ToolCall(
                item_id,
                {
                    "tool": "Bash",
                    "args": bounded_args({"command": unwrap(as_text(item.get("command")))}),
                    "output": clip(as_text(item.get("aggregated_output"))),
                    "error": failed or code not in (None, 0),
                    "exit_code": code,
                },
            )
        elif kind == "mcp_tool_call" and item_id:
            name = f"mcp__{as_text(item.get('server'))}__{as_text(item.get('tool'))}"[:200]
            arguments = item.get("arguments")
            args = arguments if isinstance(arguments, dict) else {"input": arguments}
            error = (
                as_dict(item.get("error")).get("message") if isinstance(item.get("error"), dict) else item.get("error")
            )
            output = content_text(as_dict(item.get("result")).get("content")) or compact(item.get("result"))
            text = "\n".join(t for t in (output, as_text(error)) if t)
            return ToolCall(
                item_id,
                {"tool": name, "args": bounded_args(args), "output": clip(text), "error": failed or bool(error)},
            )
        elif kind == "file_change" and item_id:
            changes = [c for c in item.get("changes") or [] if isinstance(c, dict)][:50]
            paths = [as_text(c.get("path"))[:1000] for c in changes if as_text(c.get("path"))]
            summary = ", ".join(f"{as_text(c.get('kind')) or 'change'} {as_text(c.get('path'))}" for c in changes)
            return ToolCall(
                item_id,
                {
                    "tool": "apply_patch",
                    "args": bounded_args({"changes": changes}),
                    "output": clip(summary),
                    "error": failed,
                    "paths": paths,
                },
            )
        return None

    def finish(
        self,
        exit_code: Optional[int],
        timed_out: bool,
        usage: Optional[dict] = None,
        *,
        timeout_s: Optional[float] = None,
    ) -> Outcome:
        said = " ".join([self.failure or ""] + self.errors)
        fields = {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "rate_limited": bool(RATE_LIMIT.search(said)),
        }
        killed = self._interrupted(exit_code, timed_out, timeout_s)
        if killed is not None:
            return amended(
                killed, reason=killed.reason + (f"; last error: {self.errors[-1]}" if self.errors else ""), **fields
            )
        if self.failure is not None:
            return self._outcome(False, f"turn failed: {self.failure}", **fields)
        if not self.completed:
            last = f": {self.errors[-1]}" if self.errors else ""
            return self._outcome(False, f"exit {exit_code} with no turn.completed{last}", **fields)
        return self._outcome(True, "completed", **fields)


class HermesAdapter(StreamAdapter):
    """``hermes -z`` / ``chat -q``: no event stream (tool calls reach the loop through hooks); the usage file
    decides."""

    harness = "hermes"

    def feed(self, line: str) -> list[ToolCall]:
        """No tool calls: stdout is the final text (or ``HTTP 400: ...``), kept as the last message."""
        if isinstance(line, str) and line.strip() and len(line) <= MAX_LINE_CHARS:
            self.last_text = clip(f"{self.last_text}\n{line.rstrip()}".strip(), MAX_TEXT)
        return []

    def event(self, event: dict) -> list[ToolCall]:
        return []

    def finish(
        self,
        exit_code: Optional[int],
        timed_out: bool,
        usage: Optional[dict] = None,
        *,
        timeout_s: Optional[float] = None,
    ) -> Outcome:
        usage = usage if isinstance(usage, dict) else None
        data = usage or {}
        self._session(data.get("session_id"))
        failure = as_text(data.get("failure")) or (self.last_text if data.get("failed") is True else "")
        fields = {
            "cost_usd": as_number(data.get("estimated_cost_usd")),
            "input_tokens": as_count(data.get("input_tokens")),
            "output_tokens": as_count(data.get("output_tokens")),
            "rate_limited": bool(RATE_LIMIT.search(failure)),
        }
        killed = self._interrupted(exit_code, timed_out, timeout_s)
        if killed is not None:
            return amended(killed, **fields)
        if usage is None:
            return self._outcome(
                False, f"exit {exit_code} and no usage file: cannot tell whether the run completed", **fields
            )
        if data.get("failed") is True or data.get("completed") is not True:
            return self._outcome(False, f"failed: {failure or 'the usage file says it did not complete'}", **fields)
        if exit_code not in (0, None):
            return self._outcome(False, f"exit {exit_code} though the usage file says completed", **fields)
        return self._outcome(True, "completed", **fields)


GEMINI_UNHOOKED = frozenset({"invalid_tool_params", "tool_not_registered"})
"""Gemini CLI's errors for a call refused before it ran, which no hook sees: recorded from the stream. A call that ran
was recorded by the AfterTool hook wired into the run, and no id names it in both: the stream leaves those out."""


class GeminiAdapter(StreamAdapter):
    """``gemini -p --output-format stream-json``: the assistant's text in deltas, ``tool_use`` / ``tool_result`` by
    ``tool_id``, warnings as ``error`` events (a loop it detected), then one ``result`` with the tokens."""

    harness = "gemini"

    def __init__(self) -> None:
        super().__init__()
        self.text = ""  # the assistant's message so far
        self.result: Optional[dict] = None
        self.errors: list[str] = []

    def event(self, event: dict) -> list[ToolCall]:
        kind = event.get("type")
        if kind == "init":
            self._session(event.get("session_id"))
        elif kind == "message" and event.get("role") == "assistant":
            self.text = clip(self.text + as_text(event.get("content")), MAX_TEXT)
        elif kind == "tool_use" and isinstance(event.get("tool_id"), str):
            self._spoken()
            self.remember(event["tool_id"], as_text(event.get("tool_name")) or "unknown", event.get("parameters"))
        elif kind == "tool_result":
            entry = self.pending.pop(as_text(event.get("tool_id"))[:MAX_ID], None)
            error = as_dict(event.get("error"))
            if entry is not None and error.get("type") in GEMINI_UNHOOKED:
                text = clip(as_text(error.get("message")) or as_text(event.get("output")))
                turn = {"tool": entry[0], "args": bounded_args(entry[1]), "output": text, "error": True}
                return [ToolCall(event["tool_id"][:MAX_ID], {**turn, "thought": entry[2]} if entry[2] else turn)]
        elif kind == "error":
            self.errors = (self.errors + [clip(as_text(event.get("message")), MAX_TEXT)])[-5:]
        elif kind == "result":
            self._spoken()
            self.result = event
        return []

    def _spoken(self) -> None:
        """The assistant's message is complete (a call or the result follows it)."""
        if self.text.strip():
            self.last_text = self.text
            self.heard(self.text)
        self.text = ""

    def finish(
        self,
        exit_code: Optional[int],
        timed_out: bool,
        usage: Optional[dict] = None,
        *,
        timeout_s: Optional[float] = None,
    ) -> Outcome:
        result = self.result or {}
        stats, failure = as_dict(result.get("stats")), as_text(as_dict(result.get("error")).get("message"))
        warned = f" (warnings: {'; '.join(self.errors)})" if self.errors else ""
        fields = {
            "input_tokens": as_count(stats.get("input_tokens")),
            "output_tokens": as_count(stats.get("output_tokens")),
            "rate_limited": bool(RATE_LIMIT.search(f"{failure} {warned}")),
        }
        killed = self._interrupted(exit_code, timed_out, timeout_s)
        if killed is not None:
            return amended(killed, **fields)
        if self.result is None:
            return self._outcome(False, f"exit {exit_code} with no result{warned}", **fields)
        if result.get("status") != "success":
            return self._outcome(False, f"failed: {failure or 'the result says error'}{warned}", **fields)
        return self._outcome(True, f"completed{warned}", **fields)


def adapter_for(harness: str) -> StreamAdapter:
    """A fresh adapter for one invocation of ``harness`` (the registry's ``stream_fn``)."""
    from strict_loop.harness import registry

    try:
        row = registry.get(harness)
    except KeyError as exc:
        raise ValueError(str(exc).strip('"')) from None
    adapter: StreamAdapter = registry.resolve(row.stream_fn)()
    return adapter
