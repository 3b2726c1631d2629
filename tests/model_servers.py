"""Scripted model APIs on loopback, the one stand-in in the harness tests: the harness binaries are real.

Each server listens on 127.0.0.1 with an ephemeral port in a background thread, records the JSON
body of every request it gets, and answers each model request with the next scripted step: a shell
tool call or a final text. Requests that offer no tools are the harness's side calls (titles,
summaries): they get a short text and consume no step. Once the script is used up every further
request gets the last final text, so a harness that asks again (a Stop hook that blocks) still ends.

Wire formats (verified against the pinned clients, research notes "Driving each harness with a
scripted model on loopback"): Anthropic Messages SSE for Claude Code, OpenAI Responses SSE for
Codex, OpenAI chat completions (stream and not) for Hermes.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Optional, Union


@dataclass(frozen=True)
class Shell:
    """The model calls the harness's shell tool with this command, after writing ``text`` (if any) in the same
    response: a text block before the tool_use (Anthropic), a message item before the function_call (Responses),
    the message's content beside its tool_calls (chat completions)."""

    command: str
    text: str = ""


@dataclass(frozen=True)
class Calls:
    """Several shell calls in one response (parallel tool calls), each after its own text, if any."""

    calls: tuple[Shell, ...]


@dataclass(frozen=True)
class Final:
    """The model answers with text and no tool call: the harness's turn ends."""

    text: str


@dataclass(frozen=True)
class HttpError:
    """The model request fails with this HTTP status (e.g. 400: the harness gives up at once, no retry)."""

    status: int
    message: str = "scripted API error"


@dataclass(frozen=True)
class Hang:
    """The server holds the model request for ``seconds`` before answering it with the next step."""

    seconds: float


@dataclass(frozen=True)
class Stall:
    """The server holds the model request for ``seconds``, then fails it (HTTP 503) without taking another step:
    for a client that is ended while it waits, so the next client gets the step after this one."""

    seconds: float


Step = Union[Shell, Calls, Final, HttpError, Hang, Stall]
SIDE_TEXT = "Scripted title"


def strings(value) -> Iterator[str]:
    """Every string inside a decoded JSON value (keys aside): where injected text would sit."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from strings(v)


def parts(step: Step) -> list[tuple[str, str]]:
    """A step as the response's parts in order: ("text", words) and ("call", command)."""
    if isinstance(step, Final):
        return [("text", step.text)]
    shells = step.calls if isinstance(step, Calls) else (step,)
    out: list[tuple[str, str]] = []
    for shell in shells:  # type: ignore[union-attr]
        out += ([("text", shell.text)] if shell.text else []) + [("call", shell.command)]
    return out


def _sse(events: Sequence[tuple[Optional[str], dict]]) -> bytes:
    out = []
    for name, data in events:
        out.append((f"event: {name}\n" if name else "") + f"data: {json.dumps(data)}\n\n")
    return "".join(out).encode()


class ScriptedModel:
    """One scripted model server; subclasses speak one wire format (``shell_tool`` names its shell tool)."""

    shell_tool = ""

    def __init__(self, steps: Sequence[Step]) -> None:
        self.steps = list(steps)
        self.requests: list[dict] = []  # {"method", "path", "body"} in arrival order
        self.model_requests: list[dict] = []  # bodies of the requests that consumed a step
        self._next = 0
        self._in_flight = 0  # requests being answered (a Hang step holds one)
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_port}"

    def __enter__(self) -> ScriptedModel:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()

    def new_id(self, prefix: str) -> str:
        return f"{prefix}_{next(self._ids):04d}"

    def take(self, body: dict) -> Step:
        """The next scripted step (the last final text once the script is used up), recording the request."""
        with self._lock:
            self.model_requests.append(body)
            step = self._advance()
        if isinstance(step, Hang):
            time.sleep(step.seconds)  # outside the lock: other requests (side calls) are still answered
            with self._lock:
                step = self._advance()
        if isinstance(step, Stall):
            time.sleep(step.seconds)
            raise _Status(HttpError(503, "stalled"))
        if isinstance(step, HttpError):
            raise _Status(step)
        return step

    def _advance(self) -> Step:
        """The next step, consumed (the caller holds the lock); the last final text once the script is used up."""
        if self._next < len(self.steps):
            self._next += 1
            return self.steps[self._next - 1]
        return next((s for s in reversed(self.steps) if isinstance(s, Final)), Final("done"))

    @property
    def steps_used(self) -> int:
        with self._lock:
            return self._next

    def settle(self, quiet: float = 0.1, timeout: float = 10.0) -> None:
        """Return once no request has been in flight for ``quiet`` seconds (at most ``timeout``): a request a client
        that has just been ended left held (a Hang step) is done and has taken its step, so ``steps_used`` says what
        that client's run consumed and nothing later moves it."""
        deadline, idle_since = time.monotonic() + timeout, None
        while time.monotonic() < deadline:
            with self._lock:
                busy = self._in_flight
            now = time.monotonic()
            idle_since = None if busy else (idle_since or now)
            if idle_since is not None and now - idle_since >= quiet:
                return
            time.sleep(0.01)

    def respond(self, method: str, path: str, body: dict) -> tuple[int, str, bytes]:
        """(status, content type, body) for one request; subclasses implement their wire format."""
        raise NotImplementedError

    def _handler(self) -> type:
        model = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _serve(self) -> None:
                with model._lock:
                    model._in_flight += 1
                try:
                    self._answer()
                finally:
                    with model._lock:
                        model._in_flight -= 1

            def _answer(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw) if raw else {}
                except ValueError:
                    body = {"_raw": raw.decode("utf-8", "replace")}
                with model._lock:
                    model.requests.append({"method": self.command, "path": self.path, "body": body})
                try:
                    status, ctype, payload = model.respond(self.command, self.path.split("?")[0], body)
                except _Status as failed:  # one body both wire formats read: Anthropic's and OpenAI's error shapes
                    status, ctype, payload = _json(
                        {
                            "type": "error",
                            "error": {
                                "type": "invalid_request_error",
                                "code": "scripted",
                                "message": failed.step.message,
                            },
                        },
                        failed.step.status,
                    )
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", ctype)
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the harness was killed while its request was held (a Hang step): nobody to answer

            do_GET = do_POST = _serve  # noqa: N815

            def log_message(self, *args) -> None:
                pass

        return Handler


class _Status(Exception):
    """A scripted HTTP error, raised from ``take`` and answered by the handler."""

    def __init__(self, step: HttpError) -> None:
        super().__init__(step.message)
        self.step = step


def _json(data: dict, status: int = 200) -> tuple[int, str, bytes]:
    return status, "application/json", json.dumps(data).encode()


class AnthropicModel(ScriptedModel):
    """Anthropic Messages API (``ANTHROPIC_BASE_URL``) as Claude Code streams it."""

    shell_tool = "Bash"

    def respond(self, method: str, path: str, body: dict) -> tuple[int, str, bytes]:
        if path.endswith("/count_tokens"):
            return _json({"input_tokens": 100})
        if method != "POST" or not path.endswith("/v1/messages"):
            return _json({"type": "error", "error": {"type": "not_found_error", "message": path}}, 404)
        step = self.take(body) if body.get("tools") else Final(SIDE_TEXT)
        blocks = [self._block(kind, value) for kind, value in parts(step)]
        stop = "tool_use" if any(b["type"] == "tool_use" for b, _ in blocks) else "end_turn"
        message = {
            "id": self.new_id("msg"),
            "type": "message",
            "role": "assistant",
            "model": body.get("model", "mock"),
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": 100, "output_tokens": 1},
        }
        if not body.get("stream"):
            full = [
                dict(b, input=json.loads(d["partial_json"])) if b["type"] == "tool_use" else dict(b, text=d["text"])
                for b, d in blocks
            ]
            return _json(
                dict(message, content=full, stop_reason=stop, usage={"input_tokens": 100, "output_tokens": 10})
            )
        events: list[tuple[Optional[str], dict]] = [("message_start", {"type": "message_start", "message": message})]
        for index, (block, delta) in enumerate(blocks):
            events += [
                ("content_block_start", {"type": "content_block_start", "index": index, "content_block": block}),
                ("content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}),
                ("content_block_stop", {"type": "content_block_stop", "index": index}),
            ]
        events += [
            (
                "message_delta",
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": stop, "stop_sequence": None},
                    "usage": {"output_tokens": 10},
                },
            ),
            ("message_stop", {"type": "message_stop"}),
        ]
        return 200, "text/event-stream", _sse(events)

    def _block(self, kind: str, value: str) -> tuple[dict, dict]:
        """One content block as it starts, and its one delta."""
        if kind == "text":
            return {"type": "text", "text": ""}, {"type": "text_delta", "text": value}
        block = {"type": "tool_use", "id": self.new_id("toolu"), "name": "Bash", "input": {}}
        return block, {
            "type": "input_json_delta",
            "partial_json": json.dumps({"command": value, "description": "Run a command"}),
        }


class ResponsesModel(ScriptedModel):
    """OpenAI Responses API (``wire_api = "responses"``) as Codex streams it."""

    shell_tool = "exec_command"

    def respond(self, method: str, path: str, body: dict) -> tuple[int, str, bytes]:
        if method != "POST" or not path.endswith("/responses"):
            return _json(
                {"object": "list", "data": [{"id": "mock-model", "object": "model"}]}
                if path.endswith("/models")
                else {"error": {"message": path}},
                200 if path.endswith("/models") else 404,
            )
        step = self.take(body) if body.get("tools") else Final(SIDE_TEXT)
        rid = self.new_id("resp")
        usage = {
            "input_tokens": 100,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": 10,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": 110,
        }
        events: list[tuple[Optional[str], dict]] = [
            ("response.created", {"type": "response.created", "response": {"id": rid}})
        ]
        for index, (kind, value) in enumerate(parts(step)):
            item = self._item(kind, value)
            events += [
                (name, {"type": name, "output_index": index, "item": item})
                for name in ("response.output_item.added", "response.output_item.done")
            ]
        events.append(("response.completed", {"type": "response.completed", "response": {"id": rid, "usage": usage}}))
        return 200, "text/event-stream", _sse(events)

    def _item(self, kind: str, value: str) -> dict:
        if kind == "call":
            return {
                "type": "function_call",
                "id": self.new_id("fc"),
                "call_id": self.new_id("call"),
                "name": "exec_command",
                "arguments": json.dumps({"cmd": value}),
                "status": "completed",
            }
        return {
            "type": "message",
            "id": self.new_id("msg"),
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": value, "annotations": []}],
        }


class ChatModel(ScriptedModel):
    """OpenAI chat completions (stream and not) plus the ``/models`` probes, as Hermes uses them."""

    shell_tool = "terminal"

    def respond(self, method: str, path: str, body: dict) -> tuple[int, str, bytes]:
        if method == "GET" and "/models" in path:
            card = {
                "id": "mock-model",
                "object": "model",
                "created": 0,
                "owned_by": "scripted",
                "context_length": 128000,
            }
            return _json(card if path.rstrip("/").endswith("mock-model") else {"object": "list", "data": [card]})
        if method != "POST" or not path.endswith("/chat/completions"):
            return _json({"error": {"message": f"no route {path}"}}, 404)
        step = self.take(body) if body.get("tools") else Final(SIDE_TEXT)
        message: dict = {"role": "assistant", "content": None}
        texts = [value for kind, value in parts(step) if kind == "text"]
        calls = [value for kind, value in parts(step) if kind == "call"]
        if texts:
            message["content"] = "\n\n".join(texts)
        finish = "tool_calls" if calls else "stop"
        if calls:
            message["tool_calls"] = [
                {
                    "index": index,
                    "id": self.new_id("call"),
                    "type": "function",
                    "function": {"name": "terminal", "arguments": json.dumps({"command": command})},
                }
                for index, command in enumerate(calls)
            ]
        base = {"id": self.new_id("chatcmpl"), "created": int(time.time()), "model": body.get("model", "mock-model")}
        usage = {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}
        if not body.get("stream"):
            return _json(
                dict(
                    base,
                    object="chat.completion",
                    usage=usage,
                    choices=[{"index": 0, "message": message, "finish_reason": finish}],
                )
            )
        chunk = dict(base, object="chat.completion.chunk")
        events = [
            (None, dict(chunk, choices=[{"index": 0, "delta": message, "finish_reason": None}])),
            (None, dict(chunk, choices=[{"index": 0, "delta": {}, "finish_reason": finish}], usage=usage)),
        ]
        return 200, "text/event-stream", _sse(events) + b"data: [DONE]\n\n"
