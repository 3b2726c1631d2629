"""The harnesses' hook formats, as pure functions: payload -> event and turn fields, decision -> output JSON.

Claude Code, Codex, Hermes and Gemini CLI send different JSON for the same moments (after a tool call, before one, at
the end of a turn) and expect different answers. This module knows those shapes (see references/harnesses.md) and no
loop state, so every mapping is tested from payloads alone; what each harness says about one turn (its result, the
person's text, the agent's words, which Claude Code and Codex keep in a transcript) is read by the functions its
registry row names (``readers``; Gemini CLI's are below). Finding the task, recording and deciding is ``handler``'s.
"""

from __future__ import annotations

import json
import re
import shlex
from typing import Any, Literal, NamedTuple, Optional

from strict_loop.harness.registry import get, resolve

Phase = Literal["post", "pre", "stop", "prompt", "other"]

_PHASES: dict[str, Phase] = {
    "PostToolUse": "post",
    "PostToolUseFailure": "post",
    "PreToolUse": "pre",
    "Stop": "stop",
    "UserPromptSubmit": "prompt",  # Claude Code, Codex
    "post_tool_call": "post",
    "pre_tool_call": "pre",
    "pre_verify": "stop",
    "pre_llm_call": "prompt",  # Hermes (its plugin's hook, once per user message)
    "AfterTool": "post",
    "BeforeTool": "pre",
    "AfterAgent": "stop",
    "BeforeAgent": "prompt",  # Gemini CLI
}

OWN_TOOLS = frozenset(
    {
        "init_state",
        "append_event",
        "update_state",
        "check_stop",
        "report_status",
        "compact_state",
        "rebuild_state",
        "detect_spiral",
        "list_tasks",
        "show_task",
    }
)
"""The loop's MCP tools (the operations table's tools; a test keeps the two in step). Named here because the hook's
fast path imports no pydantic."""
OWN_SERVERS = ("strict-loop", "strict_loop")
"""Our MCP server's names: Claude Code and Codex call its tools ``mcp__<server>__<tool>``, a plugin's
``mcp__plugin_strict-loop_<server>__<tool>``, Hermes ``mcp_<server>_<tool>``, OpenCode ``<server>_<tool>``."""

READ_TOOLS = frozenset({"report_status", "show_task", "list_tasks", "detect_spiral"})
"""The loop's MCP tools that only read its state: allowed while the task is paused (check_stop runs commands)."""

READ_COMMANDS = READ_TOOLS | {name.replace("_", "-") for name in READ_TOOLS}
"""``strict-loop`` subcommands allowed while paused (both spellings the CLI accepts)."""

SHELL_TOOLS = frozenset({"Bash", "terminal", "exec_command", "shell", "local_shell", "run_shell_command", "bash"})

_PLAIN_COMMAND = re.compile(r"[A-Za-z0-9_./=:@,+% -]{1,1000}")
"""Characters a read-only command may hold: no quoting, no expansion, no separator, no newline."""

from strict_loop.base.clipping import MAX_ARGS_CHARS, bounded_args  # noqa: E402,F401  (re-exported: hook turns are bounded as every turn)

MAX_DURATION_MS = 7 * 24 * 3600 * 1000  # a longer (or NaN) duration is not believed


class HookEvent(NamedTuple):
    """One hook call, in the harness's own words but with common names.

    A NamedTuple, not a dataclass: ``dataclasses`` imports ``inspect``, ~7 ms on every hook call.
    """

    harness: str
    name: str
    phase: Phase
    tool: str
    tool_input: Any
    session_id: str
    cwd: str
    stop_hook_active: bool
    payload: dict[str, Any]
    memo: dict[str, Any]  # what one reader of this call read for the others (the transcript's tail: read once)

    @property
    def session_key(self) -> str:
        """``harness:session``: whom per-session records (bindings, Stop blocks, pause notices) are kept for."""
        return f"{self.harness}:{self.session_id or 'no-session'}"

    @property
    def meta(self) -> dict[str, Any]:
        """What the event line keeps about the hook call (a supervisor dedupes by tool_use_id)."""
        out: dict[str, Any] = {"harness": self.harness, "event": self.name, "session_id": self.session_id}
        raw = self.payload.get("extra")
        extra = raw if isinstance(raw, dict) else {}
        call_id = self.payload.get("tool_use_id") or extra.get("tool_call_id")
        if isinstance(call_id, str) and call_id:
            out["tool_use_id"] = call_id[:200]
        took = self.payload.get("duration_ms", extra.get("duration_ms"))  # Claude Code's; Hermes's in ``extra``
        if isinstance(took, (int, float)) and not isinstance(took, bool) and 0 <= took < MAX_DURATION_MS:
            out["duration_ms"] = took  # the tool's own time: telemetry's tool span starts that long before its end
        return out


def parse_event(harness: str, payload: dict[str, Any]) -> HookEvent:
    """The event in ``payload`` (a harness's hook stdin); an unknown event name has phase 'other'."""
    name = _text(payload.get("hook_event_name"))
    return HookEvent(
        harness=harness,
        name=name,
        phase=_PHASES.get(name, "other"),
        tool=_text(payload.get("tool_name"))[:200],
        tool_input=payload.get("tool_input"),
        session_id=_text(payload.get("session_id"))[:200],
        cwd=_text(payload.get("cwd")),
        stop_hook_active=payload.get("stop_hook_active") is True,
        payload=payload,
        memo={},
    )


def own_tool(name: str) -> Optional[str]:
    """The loop tool's own name (``report_status``) if ``name`` is exactly one of the loop's MCP tools, else None.

    Exact on purpose: ``mcp__strict-loop__x__report_status`` or a Hermes server named ``strict_loop_fs`` is not
    ours."""
    for server in OWN_SERVERS:
        for prefix in (f"mcp__{server}__", f"mcp__plugin_strict-loop_{server}__", f"mcp_{server}_", f"{server}_"):
            rest = name[len(prefix) :] if name.startswith(prefix) else None
            if rest in OWN_TOOLS:
                return rest
    return None


def turn_fields(event: HookEvent) -> dict[str, Any]:
    """The ``Turn`` fields of a post-tool event (``tool``, ``args``, ``output``, ``error``, ``exit_code``)."""
    fields: dict[str, Any] = {"tool": event.tool or "unknown", "args": _args(event.tool_input)}
    fields.update(resolve(get(event.harness).turn_fn)(event))
    said = agent_words(event)
    if said:
        fields["thought"] = said  # clipped and masked with the rest of the turn when it is recorded
    return fields


def _args(value: Any) -> dict[str, Any]:
    """A call's input as a turn's ``args`` (an object; anything else under ``input``), bounded."""
    return bounded_args(value if isinstance(value, dict) else ({} if value is None else {"input": value}))


def refused_turns(event: HookEvent) -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
    """The calls refused or blocked by a hook since the last one that ran (``Harness.refusals_fn``), as turns to record
    before this event's own, oldest first: ``(message, fields, meta)``, the meta naming the call's id, by which it is
    recorded once (``recording.record_turns(once=True)``). The loop's own tools are left out, as their calls are; a
    reader's failure gives none: the refusals must never cost this event's turn."""
    ref = get(event.harness).refusals_fn
    out: list[tuple[str, dict[str, Any], dict[str, Any]]] = []
    try:
        for call_id, tool, args, output, thought, by_hook in resolve(ref)(event) if ref else ():
            name = _text(tool)[:200] or "unknown"
            if not (isinstance(call_id, str) and call_id) or own_tool(name) is not None:
                continue
            fields = {"tool": name, "args": _args(args), "output": _text(output), "error": True}
            if isinstance(thought, str) and thought:
                fields["thought"] = thought
            meta = {"harness": event.harness, "event": event.name, "session_id": event.session_id}
            meta.update(tool_use_id=call_id[:200], source="transcript")
            how = "blocked by a hook" if by_hook else "refused by the person"
            out.append((f"{name} ({event.harness} {how})", fields, meta))
    except Exception:  # noqa: BLE001 (a damaged transcript or a reader's bug: no refusals, the turn goes on)
        return []
    return out


def agent_words(event: HookEvent, call_id: Optional[str] = None) -> str:
    """What the agent wrote before this call, or the earlier call ``call_id`` (``Harness.words_fn``); "" when the
    harness gives none, or on any failure: a missing, damaged or unreadable transcript must never cost the turn."""
    ref = get(event.harness).words_fn
    try:
        said = resolve(ref)(event, *([call_id] if call_id else [])) if ref else ""
    except Exception:  # noqa: BLE001 (the words are a bonus; the turn is recorded without them)
        return ""
    return said if isinstance(said, str) else ""


def person_fields(event: HookEvent) -> Optional[dict[str, Any]]:
    """The ``Turn`` fields of what the person typed (a ``prompt`` event): a turn of its own, ``actor`` person; None for
    a prompt that is not the person's (``prompt_fn`` says None: Gemini CLI sends our reason to go on as one)."""
    text = resolve(get(event.harness).prompt_fn)(event)
    said = {"tool": "user_prompt", "actor": "person", "args": {}, "output": text if isinstance(text, str) else ""}
    return None if text is None else said


def reads_loop_state(event: HookEvent, own_executable: Optional[str] = None) -> bool:
    """True for a call allowed while paused: the loop's read tools, a note for the person (``append_event`` of kind
    ``note``), or one plain ``strict-loop <read op>`` / ``strict-loop append_event --kind note --message '...'`` (or
    ``"..."`` holding nothing a shell expands).

    Strict on purpose (the agent is untrusted): a shell command passes only when, single-quoted text aside, it holds
    no quoting, expansion, separator or newline, starts with ``strict-loop`` (or this very executable's path) and
    names a read operation, or a note with no flag beyond the task, the workspace and the message.
    """
    name = own_tool(event.tool)
    args = event.tool_input if isinstance(event.tool_input, dict) else {}
    if name is not None:
        return name in READ_TOOLS or (name == "append_event" and args.get("kind") == "note" and not args.get("data"))
    command = args.get("command", args.get("cmd"))
    if event.tool not in SHELL_TOOLS or not isinstance(command, str) or "\n" in command:
        return False
    if not _PLAIN_COMMAND.fullmatch(_QUOTED_MESSAGE.sub("--message x", command)):
        return False
    words = shlex.split(command)
    allowed = {"strict-loop"} | ({own_executable} if own_executable else set())
    if len(words) < 2 or words[0] not in allowed:
        return False
    return words[1] in READ_COMMANDS or (words[1] in ("append_event", "append-event") and _a_note(words[2:]))


_QUOTED_MESSAGE = re.compile(r"""--message (?:'[^'\n]{0,4000}'|"[^"\n$`\\!]{0,4000}")""")
"""A note's text in single quotes, or in double quotes holding nothing a shell would expand (``$``, backquotes,
backslashes, ``!``)."""
_NOTE_FLAGS = frozenset({"--task-id", "--workspace", "--message", "--kind"})


def _a_note(words: list[str]) -> bool:
    """``--kind note`` with only a task, a workspace and a message beside it (no --data)."""
    pairs = dict(zip(words[::2], words[1::2], strict=False))
    return len(words) % 2 == 0 and set(pairs) <= _NOTE_FLAGS and pairs.get("--kind") == "note"


def pause_reason(diagnosis: str, resume_command: str) -> str:
    """Why a tool call is refused while paused, and what the person must run (said in full once per pause)."""
    return (
        f"PAUSED by the strict-loop progress monitor: {_clip(diagnosis, 600)} Stop working and wait for a person; "
        "only reading the loop's state, or leaving the person a note (the append_event tool with kind 'note', or "
        "strict-loop append_event --kind note --message '<text>'), is allowed. "
        f"A person must run: {resume_command}"
    )


def pause_reminder(resume_command: str) -> str:
    """The same refusal after it was said in full: one line."""
    return f"Still PAUSED (see the reason given before): wait for a person, who runs: {resume_command}"


def unreadable_reason(paused: list[str], why: str, resume_command: str) -> str:
    """A call the hook cannot decide about while a task is paused: refused (when in doubt while paused, deny)."""
    return (
        f"strict-loop: the progress monitor has paused {', '.join(paused[:5])} and this hook could not decide about "
        f"this call ({_clip(why, 200)}): while paused, such a call is refused. A person must run: {resume_command}"
    )


_EVENT_NAME = re.compile(rb'"hook_event_name"\s*:\s*"([A-Za-z_]{1,40})"')


_CWD = re.compile(rb'"cwd"\s*:\s*"((?:[^"\\]|\\.){1,4096})"')


def sniff_cwd(raw: bytes) -> Optional[str]:
    """The ``cwd`` named in a payload that does not parse, if one can be read (to find the workspace)."""
    found = _CWD.search(raw[: 1 << 20])
    if not found:
        return None
    try:
        value = json.loads(b'"' + found.group(1) + b'"')
    except ValueError:
        return None
    return value if isinstance(value, str) else None


def sniff_phase(raw: bytes) -> Phase:
    """The phase named in a payload that does not parse (the first hook_event_name in it), else 'other'."""
    found = _EVENT_NAME.search(raw[: 1 << 20])
    return _PHASES.get(found.group(1).decode(), "other") if found else "other"


CONTINUING = re.compile(r"The strict loop '[a-z0-9][a-z0-9_-]{0,63}' is not done: check_stop says continue \(")
"""How ``continue_reason`` begins: Gemini CLI sends it on as a prompt, and those words are not the person's."""


def continue_reason(task_id: str, next_task: str, verdict_reason: str) -> str:
    """Why an unattended loop may not stop yet, with the next task."""
    todo = _clip(next_task, 600) if next_task.strip() else "the next step toward the goal (see show_task)"
    return (
        f"The strict loop '{task_id}' is not done: check_stop says continue ({_clip(verdict_reason, 400)}). "
        f"Next task: {todo}. Do one round: announce it, do it, verify it, record it with update_state."
    )


def context_output(event: HookEvent, text: str) -> dict[str, Any]:
    """Text for the model next to the tool result."""
    return resolve(get(event.harness).context_fn)(event, text)


def deny_output(event: HookEvent, reason: str) -> dict[str, Any]:
    """Refuse the tool call that is about to run."""
    return resolve(get(event.harness).deny_fn)(event, reason)


def hook_specific_context(event: HookEvent, text: str) -> dict[str, Any]:
    """Claude Code and Codex: ``additionalContext`` beside the tool result."""
    return {"hookSpecificOutput": {"hookEventName": event.name, "additionalContext": text}}


def hook_specific_deny(event: HookEvent, reason: str) -> dict[str, Any]:
    """Claude Code and Codex: a PreToolUse permission decision."""
    return {
        "hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "deny",
            "permissionDecisionReason": reason,
        }
    }


def hermes_context(event: HookEvent, text: str) -> dict[str, Any]:
    """Hermes: the strict-loop plugin appends the whisper in transform_tool_result."""
    return {"whisper": text}


def decision_block(event: HookEvent, reason: str) -> dict[str, Any]:
    """Hermes (its plugin's pre_tool_call) and Gemini CLI (BeforeTool): block the call, the reason its error."""
    return {"decision": "block", "reason": reason}


_SHELL_SECTIONS = ("Process Group PGID", "Background PIDs", "Signal", "Exit Code", "Error")  # after Output: ...
_SHELL_HEAD = re.compile(r"(?:Command: [^\n]*\nDirectory: [^\n]*\n)?Output: ")


def gemini_turn(event: HookEvent) -> dict[str, Any]:
    """Gemini CLI 0.61.0: AfterTool's ``tool_response``: what the model reads (``llmContent``), the tool's ``error``. A
    shell's text: ``Output: ...``, ``Exit Code: N`` (none: 0) and its process group's id, cut (each run's differs);
    until gemini-cli's PR 17538 (January 2026) it opened with ``Command:`` and ``Directory:`` and gave every field."""
    response = event.payload.get("tool_response")
    response = response if isinstance(response, dict) else {}
    text = _parts_text(response.get("llmContent")).strip()
    text = text.removeprefix("<untrusted_context>").removesuffix("</untrusted_context>").strip("\n")
    code: Optional[int] = None
    if event.tool in SHELL_TOOLS and (opening := _SHELL_HEAD.match(text)):
        said: dict[str, str] = {}
        for name in _SHELL_SECTIONS:  # from the end, each once: an output's own "Exit Code: 1" line stays output
            head, sep, value = text.rpartition(f"\n{name}: ")
            if sep and "\n" not in value:
                said[name], text = value, head
        text = "" if text[opening.end() :] == "(empty)" else text[opening.end() :]
        said = {k: v for k, v in said.items() if v != "(none)" or k == "Exit Code"}  # the older form's empty fields
        number = said.get("Exit Code", "" if "Signal" in said else "0")
        code = int(number) if re.fullmatch(r"-?\d{1,6}", number) else None
        text = "\n".join([text] + [f"{k}: {said[k]}" for k in ("Error", "Signal") if k in said]).strip("\n")
    error = response.get("error")
    message = _text(error.get("message")) if isinstance(error, dict) else ""
    if message and message not in text:
        text = f"{text}\n{message}".strip()
    return {"output": text, "error": bool(error) or code not in (None, 0), "exit_code": code}


def gemini_words(event: HookEvent) -> str:
    """Gemini CLI: the text of the model message this call came in: the transcript's last ``gemini`` line, written
    before its calls run (0.61.0; its ``thoughts`` left out); "" when a ``user`` line (a tool's result, a person's
    message) is last. The calls of one message each get its text: no hook payload names its call."""
    from strict_loop.harness.readers import transcript_lines

    for raw in reversed(transcript_lines(event)):
        if b'"type":"gemini"' not in raw and b'"type":"user"' not in raw:
            continue
        try:
            entry = json.loads(raw)
        except (ValueError, RecursionError):
            continue
        kind = entry.get("type") if isinstance(entry, dict) else None
        if kind in ("gemini", "user"):
            return _text(entry.get("content")).strip() if kind == "gemini" else ""
    return ""


def _parts_text(content: Any) -> str:
    """A result's text: a string, or the ``text`` of a part or a list of parts."""
    parts = [content] if isinstance(content, dict) else content if isinstance(content, list) else []
    return (
        content if isinstance(content, str) else "\n".join(_text(p.get("text")) for p in parts if isinstance(p, dict))
    )


def block_stop_output(reason: str) -> dict[str, Any]:
    """Keep the agent working instead of ending its turn (Stop on Claude Code and Codex, pre_verify on Hermes,
    AfterAgent on Gemini CLI: its reason becomes the next prompt)."""
    return {"decision": "block", "reason": reason}


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _clip(text: str, cap: int) -> str:
    return text if len(text) <= cap else text[: cap - 3] + "..."
