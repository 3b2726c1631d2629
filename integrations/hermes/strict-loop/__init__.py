"""strict-agent-loop for Hermes: the harness records, whispers and enforces; the agent only does the work.

Each hook runs ``strict-loop hook hermes`` (as installed: the thin hook, ``python -S .../strict_loop/entry.py hook
hermes``, which hands the call to the workspace's warm hook daemon) as a separate program with the event as JSON on
stdin (the shape of a Hermes shell hook) and acts on the JSON it prints. Hermes runs in its own Python, so this
file imports nothing from strict_loop, and it never raises into Hermes: a missing program, a timeout
or output it cannot read means "nothing to say". Call order per tool call (hermes-agent 0.19
``model_tools.handle_function_call``): pre_tool_call, the tool, post_tool_call, transform_tool_result.

Only the gate is on the model's critical path (issue 27): pre_tool_call (and pre_verify) ask inline, after
the recordings queued before them are done, so a pause the last call caused is seen. Recording a call
(post_tool_call) or what the person typed (pre_llm_call) is queued for one background thread, in order;
a whisper it produces rides on the session's next tool result (transform_tool_result), its next block
message or its next pre_llm_call's context. on_session_end waits for the queue: a one-shot Hermes ends
with ``os._exit``, which would otherwise drop the last recordings. Before those, post_api_request sees each
model response: the text the assistant wrote beside its tool calls is kept for the first of them and sent
with its post_tool_call (``assistant_text``), so the recorded turn carries the agent's own words, and the tokens
Hermes reports for each response (its ``usage``) are summed per session and sent with the next recorded call
(``api_usage``), so a task's token budget holds under Hermes too (no process of its own, nothing on the model's path).
"""

from __future__ import annotations

import json
import os
import subprocess
import threading
from collections import deque
from collections.abc import Callable
from typing import Any, Optional

STRICT_LOOP = "strict-loop"  # `strict-loop install hermes` writes the absolute path of the program here
WORKSPACE = ""  # and here the folder holding .agent-loop/ when the install pins one ("": found from the cwd)
HOOK: list[str] = []  # and here the words that run it: the thin hook (python -S .../entry.py); [] runs STRICT_LOOP
TOOL_TIMEOUT_S = 30.0
VERIFY_TIMEOUT_S = 600.0  # pre_verify runs the task's stop checks
MAX_PENDING = 64
MAX_QUEUED = 256  # recordings waiting: beyond it post_tool_call waits for room (none is dropped)
END_TIMEOUT_S = 120.0  # on_session_end waits this long at most for the queued recordings
MAX_WORDS_CHARS = 100_000  # the hook clips a turn's words to far less; this bounds what one call keeps meanwhile
_TOP_LEVEL = {"tool_name", "args", "session_id", "parent_session_id"}
_USAGE_KEYS = ("input_tokens", "cache_read_tokens", "cache_write_tokens", "output_tokens")


def _payload(event: str, kwargs: dict[str, Any]) -> dict[str, Any]:
    """The JSON a Hermes shell hook gets for ``event``: the hook command reads both forms the same way."""
    args = kwargs.get("args")
    return {
        "hook_event_name": event,
        "tool_name": kwargs.get("tool_name"),
        "tool_input": args if isinstance(args, dict) else None,
        "session_id": kwargs.get("session_id") or kwargs.get("parent_session_id") or "",
        "cwd": os.getcwd(),
        "extra": {k: v for k, v in kwargs.items() if k not in _TOP_LEVEL},
    }


def _ask(event: str, kwargs: dict[str, Any], timeout: float) -> dict[str, Any]:
    """What ``strict-loop hook hermes`` printed for this event; {} when it said nothing or could not run."""
    command = [*(HOOK or [STRICT_LOOP]), "hook", "hermes", *(["--workspace", WORKSPACE] if WORKSPACE else [])]
    try:
        done = subprocess.run(
            command,
            input=json.dumps(_payload(event, kwargs), default=str),
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
        answer = json.loads(done.stdout) if done.stdout.strip() else {}
    except Exception:  # never break the user's session
        return {}
    return answer if isinstance(answer, dict) else {}


def _blocked(answer: dict[str, Any]) -> Optional[str]:
    if answer.get("decision") == "block" or answer.get("action") == "block":
        reason = answer.get("reason") or answer.get("message")
        return reason if isinstance(reason, str) and reason else "strict-loop: blocked"
    return None


def _field(value: Any, name: str) -> Any:
    """``value.name`` or ``value[name]``: Hermes passes the provider's message object, or a dict."""
    return value.get(name) if isinstance(value, dict) else getattr(value, name, None)


def _message_text(content: Any) -> str:
    """An assistant message's shown text: its content string, or the text of its content parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(t for t in (_field(part, "text") for part in content) if isinstance(t, str))
    return ""


def _keep(store: dict[str, str], key: str, value: str) -> None:
    """Add to a bounded store (the oldest entry goes first); the caller holds the lock."""
    while len(store) >= MAX_PENDING:
        store.pop(next(iter(store)))
    store[key] = value


class _Recorder:
    """The recordings, in order, on one worker thread that runs while there are some (not a daemon thread: Python waits
    for it at exit)."""

    def __init__(self) -> None:
        self.jobs: deque[Callable[[], None]] = deque()
        self.cond = threading.Condition()
        self.queued = self.done = 0
        self.busy = False

    def put(self, job: Callable[[], None]) -> None:
        with self.cond:
            self.cond.wait_for(lambda: len(self.jobs) < MAX_QUEUED, TOOL_TIMEOUT_S)
            self.jobs.append(job)
            self.queued += 1
            if self.busy:
                return
            self.busy = True
        try:
            threading.Thread(target=self._run, name="strict-loop-recorder").start()
        except RuntimeError:  # no thread to be had: record here
            self._run()

    def _run(self) -> None:
        while True:
            with self.cond:
                if not self.jobs:
                    self.busy = False
                    return
                job = self.jobs.popleft()
            try:
                job()
            except Exception:
                pass
            with self.cond:
                self.done += 1
                self.cond.notify_all()

    def wait(self, timeout: float) -> None:
        """Until every recording queued before this call is done, or ``timeout``."""
        with self.cond:
            target = self.queued
            self.cond.wait_for(lambda: self.done >= target, timeout)


class _Hooks:
    """One plugin instance's hooks; ``said`` holds the whispers recordings produced, per session, until a tool result,
    block or context carries them; ``words`` the assistant's text between post_api_request and its first call's
    post_tool_call."""

    def __init__(self) -> None:
        self.said: dict[str, list[str]] = {}
        self.words: dict[str, str] = {}
        self.tokens: dict[str, tuple[int, int]] = {}  # per session: (input, output) reported since its last call
        self.lock = threading.Lock()
        self.recorder = _Recorder()
        self.session = ""  # the session of the last tool call: an approval request names none of its own

    @staticmethod
    def _session(kwargs: dict[str, Any]) -> str:
        return str(kwargs.get("session_id") or kwargs.get("parent_session_id") or "")

    def _record(self, event: str, sent: dict[str, Any], session: str) -> None:
        """Queue one recording; its whisper waits in ``said`` for the session's next chance to be heard."""

        def job() -> None:
            whisper = _ask(event, sent, TOOL_TIMEOUT_S).get("whisper")
            if isinstance(whisper, str) and whisper.strip():
                with self.lock:
                    if session not in self.said and len(self.said) >= MAX_PENDING:
                        self.said.pop(next(iter(self.said)))
                    self.said.setdefault(session, []).append(whisper)

        self.recorder.put(job)

    def _heard(self, session: str) -> list[str]:
        with self.lock:
            return self.said.pop(session, [])

    def pre_tool_call(self, **kwargs: Any) -> Optional[dict[str, str]]:
        try:
            self.session = self._session(kwargs) or self.session
            self.recorder.wait(TOOL_TIMEOUT_S)  # a pause the last call caused decides this one
            reason = _blocked(_ask("pre_tool_call", kwargs, TOOL_TIMEOUT_S))
            if not reason:
                return None
            return {"action": "block", "message": "\n".join([*self._heard(self._session(kwargs)), reason])}
        except Exception:
            return None

    def post_api_request(self, **kwargs: Any) -> None:
        """After each model response, before its tools run: keep the text written beside the tool calls."""
        try:
            message = kwargs.get("assistant_message")
            calls = _field(message, "tool_calls") or []
            text = _message_text(_field(message, "content")).strip()
            first = _field(calls[0], "id") if isinstance(calls, (list, tuple)) and calls else None
            if text and isinstance(first, str) and first:
                with self.lock:
                    _keep(self.words, first, text[:MAX_WORDS_CHARS])
            self._count(self._session(kwargs), kwargs.get("usage"))
        except Exception:
            return

    def _count(self, session: str, usage: Any) -> None:
        """Add one response's tokens (Hermes's usage summary: input with cache reads and writes, output with
        reasoning) to the session's, until its next recorded call carries them."""
        if not isinstance(usage, dict):
            return
        got = [v if type(v) is int and v > 0 else 0 for v in (usage.get(k) for k in _USAGE_KEYS)]
        add_in, add_out = sum(got[:3]), got[3]
        if add_in or add_out:
            with self.lock:
                before = self.tokens.pop(session, (0, 0))
                while len(self.tokens) >= MAX_PENDING:
                    self.tokens.pop(next(iter(self.tokens)))
                self.tokens[session] = (before[0] + add_in, before[1] + add_out)

    def post_tool_call(self, **kwargs: Any) -> None:
        try:
            with self.lock:
                said = self.words.pop(str(kwargs.get("tool_call_id") or ""), None)
            if kwargs.get("status") == "blocked":  # refused before it ran: not a turn
                return
            session = self._session(kwargs)
            with self.lock:
                tokens = self.tokens.pop(session, None)
            sent = {**kwargs, "assistant_text": said} if said else kwargs
            if tokens:
                sent = {**sent, "api_usage": {"input_tokens": tokens[0], "output_tokens": tokens[1]}}
            self._record("post_tool_call", sent, session)
        except Exception:
            return

    def transform_tool_result(self, **kwargs: Any) -> Optional[str]:
        try:
            heard = self._heard(self._session(kwargs))
            if not heard:
                return None
            result = kwargs.get("result")
            return "\n".join([result if isinstance(result, str) else json.dumps(result, default=str), *heard])
        except Exception:
            return None

    def pre_llm_call(self, **kwargs: Any) -> Optional[dict[str, str]]:
        """Once per user message: what the person typed is recorded as their turn (the history is not sent)."""
        try:
            session = self._session(kwargs)
            if kwargs.get("user_message"):
                said = {
                    "session_id": kwargs.get("session_id"),
                    "user_message": str(kwargs.get("user_message"))[:100_000],
                }
                self._record("pre_llm_call", said, session)
            heard = self._heard(session)
            return {"context": "\n".join(heard)} if heard else None
        except Exception:
            return None

    def pre_verify(self, **kwargs: Any) -> Optional[dict[str, str]]:
        try:
            self.recorder.wait(TOOL_TIMEOUT_S)  # the stop checks judge every turn recorded
            reason = _blocked(_ask("pre_verify", kwargs, VERIFY_TIMEOUT_S))
            return {"action": "continue", "message": reason} if reason else None
        except Exception:
            return None

    def pre_approval_request(self, **kwargs: Any) -> None:
        """A dangerous command waits for the person's approval: told to the loop (the page, the person's channels) in
        the background; the approval itself is Hermes's, untouched."""
        try:
            session = str(kwargs.get("session_id") or self.session)
            self._record("pre_approval_request", {**kwargs, "session_id": session}, session)
        except Exception:
            return

    def on_session_end(self, **kwargs: Any) -> None:
        """The end of a run of the agent: the recordings queued are done before Hermes may exit."""
        try:
            self.recorder.wait(END_TIMEOUT_S)
        except Exception:
            return


def register(ctx: Any) -> None:
    """Hermes calls this once when the plugin is enabled (``plugins.enabled`` in config.yaml)."""
    hooks = _Hooks()
    for name in (
        "post_api_request",
        "pre_tool_call",
        "post_tool_call",
        "transform_tool_result",
        "pre_llm_call",
        "pre_verify",
        "pre_approval_request",
        "on_session_end",
    ):
        ctx.register_hook(name, getattr(hooks, name))
