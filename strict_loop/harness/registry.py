"""The one table of coding harnesses: each harness's hooks, answers, settings, headless run and stream, in one row.

Why a table: adding a harness (OpenCode, Gemini CLI, Goose, ...) is one ``Harness`` row and the functions it
names; nothing else branches on a harness's name. The functions are named as ``"module:attribute"`` and
imported on first use: the hook's fast path reads this table for every tool call and must import neither the
installer (tomlkit, ruamel) nor the stream parsers. Standard library only.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any, NamedTuple, Optional

__all__ = ["HARNESSES", "Harness", "get", "names", "register", "resolve", "session_id_problem"]

TOOL_TIMEOUT_S = 30
"""Tool hooks record one turn (p50 well under a second); the bound only matters if a lock is held."""
STOP_TIMEOUT_S = 600
"""The Stop hook runs the task's stop checks, which may run a test suite."""
UUID = r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
"""Claude's and Gemini CLI's session ids, Codex's thread ids. A session id goes on the command line (``--resume ID``),
and ``session.json`` is repository content: anything else (``--settings={...}``) is never passed on."""


class Harness(NamedTuple):
    """One harness. A NamedTuple, not a dataclass: ``dataclasses`` imports ``inspect``, ~7 ms on every hook call.

    The ``*_fn`` fields name functions as ``"strict_loop.harness.module:function"`` (see ``resolve``).
    """

    name: str  # the word on the command line: strict-loop hook NAME, install NAME, supervise --harness NAME
    title: str
    hook_events: tuple[tuple[str, Optional[str], int], ...]  # (event, matcher, timeout) the installer registers
    turn_fn: str  # HookEvent -> the Turn fields of a post-tool event (output, error, exit code)
    words_fn: str  # HookEvent -> what the agent wrote before this call (the Turn's thought); "" names none
    refusals_fn: str  # HookEvent -> the calls refused (by the person) or blocked (by a hook) since the last that ran,
    # each recorded as a turn before this event's own: those no post-tool hook reports; "" names none
    prompt_fn: str  # HookEvent -> what the person typed (a prompt event), recorded as a person's turn
    context_fn: str  # (HookEvent, text) -> hook output that puts text beside the tool result
    deny_fn: str  # (HookEvent, reason) -> hook output that refuses the tool call about to run
    plan_fn: str  # (scope, workspace, install) -> install.Plan: the files ``strict-loop install`` edits
    default_scope: str  # "project" or "user"
    argv_fn: str  # headless.Run -> Wiring: the command line and environment of one unattended invocation
    stream_fn: str  # () -> a streambase.StreamAdapter for what the headless run prints
    stop_restarts_on_new_turn: bool  # a Stop without stop_hook_active begins a new turn (the block count resets)
    resumes_sessions: bool  # the headless run can resume the previous session
    reports_cost: bool  # the headless run reports its cost in dollars (else only tokens)
    hooks_in_headless: bool  # the headless run takes our hook program (Codex reads its own hooks files)
    session_id_pattern: str = ""  # a regex a session id must match whole to be resumed; "" accepts none
    login_hint: str = "sign the harness in"  # how a person fixes "not logged in" (supervise stops with it)
    http_hooks: bool = False  # plan_fn takes hooks="http" (the default: HTTP hooks into the warm daemon) or "command"
    late_words: bool = False  # the transcript may get a call's words after its hook: words_fn(event, call_id) reads
    # them at the session's next call (Claude Code writes its transcript in batches, every 100 ms)


CLAUDE_EVENTS = (
    ("PreToolUse", "*", TOOL_TIMEOUT_S),
    ("PostToolUse", "*", TOOL_TIMEOUT_S),
    ("PostToolUseFailure", "*", TOOL_TIMEOUT_S),
    ("UserPromptSubmit", None, TOOL_TIMEOUT_S),
    ("Stop", None, STOP_TIMEOUT_S),
    ("Notification", None, TOOL_TIMEOUT_S),  # the agent waits for the person (alerts.waiting)
)
# Claude's "*" matches every tool; Codex's matcher is a regex: none matches all.
CODEX_EVENTS = (
    ("PreToolUse", None, TOOL_TIMEOUT_S),
    ("PostToolUse", None, TOOL_TIMEOUT_S),
    ("UserPromptSubmit", None, TOOL_TIMEOUT_S),
    ("Stop", None, STOP_TIMEOUT_S),
    ("PermissionRequest", None, TOOL_TIMEOUT_S),  # observed, never decided: Codex then asks the person
)

# Gemini CLI counts a hook's timeout in milliseconds; "*" matches every tool, and its agent events take no matcher.
GEMINI_EVENTS = (
    ("BeforeTool", "*", TOOL_TIMEOUT_S * 1000),
    ("AfterTool", "*", TOOL_TIMEOUT_S * 1000),
    ("BeforeAgent", None, TOOL_TIMEOUT_S * 1000),
    ("AfterAgent", None, STOP_TIMEOUT_S * 1000),
    ("Notification", None, TOOL_TIMEOUT_S * 1000),
)

_P, _R, _I, _H, _S, _O = (
    "strict_loop.harness.payloads:",
    "strict_loop.harness.readers:",
    "strict_loop.harness.plans:",
    "strict_loop.headless.wiring:",
    "strict_loop.headless.streams:",
    "strict_loop.harness.opencode:",
)

HARNESSES: dict[str, Harness] = {
    "claude": Harness(
        name="claude", title="Claude Code", hook_events=CLAUDE_EVENTS,
        turn_fn=_R + "claude_turn", words_fn=_R + "claude_words", refusals_fn=_R + "claude_refusals",
        prompt_fn=_R + "prompt_field",
        context_fn=_P + "hook_specific_context", deny_fn=_P + "hook_specific_deny",
        plan_fn=_I + "plan_claude", default_scope="project", argv_fn=_H + "claude_argv", stream_fn=_S + "ClaudeAdapter",
        stop_restarts_on_new_turn=True, resumes_sessions=True, reports_cost=True, hooks_in_headless=True,
        session_id_pattern=UUID, login_hint="run `claude /login`, or set ANTHROPIC_API_KEY", http_hooks=True,
        late_words=True,
    ),
    "codex": Harness(
        name="codex", title="Codex CLI", hook_events=CODEX_EVENTS,
        turn_fn=_R + "codex_turn", words_fn=_R + "codex_words", refusals_fn=_R + "codex_refusals",
        prompt_fn=_R + "prompt_field",
        context_fn=_P + "hook_specific_context", deny_fn=_P + "hook_specific_deny",
        plan_fn=_I + "plan_codex", default_scope="project", argv_fn=_H + "codex_argv", stream_fn=_S + "CodexAdapter",
        stop_restarts_on_new_turn=False, resumes_sessions=True, reports_cost=False, hooks_in_headless=False,
        session_id_pattern=UUID, login_hint="run `codex login`, or `codex login --with-api-key` with your OpenAI key",
    ),
    "hermes": Harness(
        name="hermes", title="Hermes Agent", hook_events=(),
        turn_fn=_R + "hermes_turn", words_fn=_R + "hermes_words", refusals_fn=_R + "no_refusals",
        prompt_fn=_R + "hermes_prompt",
        context_fn=_P + "hermes_context", deny_fn=_P + "decision_block",
        plan_fn=_I + "plan_hermes", default_scope="user", argv_fn=_H + "hermes_argv", stream_fn=_S + "HermesAdapter",
        stop_restarts_on_new_turn=False, resumes_sessions=False, reports_cost=True, hooks_in_headless=True,
        session_id_pattern=r"[A-Za-z0-9][A-Za-z0-9_.-]{0,99}",
        login_hint="set your provider's API key in ~/.hermes/.env (or run `hermes setup`)",
    ),
    "gemini": Harness(
        name="gemini", title="Gemini CLI", hook_events=GEMINI_EVENTS,
        turn_fn=_P + "gemini_turn", words_fn=_P + "gemini_words", refusals_fn="", prompt_fn=_R + "gemini_prompt",
        context_fn=_P + "hook_specific_context", deny_fn=_P + "decision_block",
        plan_fn=_I + "plan_gemini", default_scope="project", argv_fn=_H + "gemini_argv", stream_fn=_S + "GeminiAdapter",
        stop_restarts_on_new_turn=False, resumes_sessions=False, reports_cost=False, hooks_in_headless=True,
        session_id_pattern=UUID, login_hint="set GEMINI_API_KEY, or run `gemini` once and sign in with Google",
    ),
    "opencode": Harness(
        name="opencode", title="OpenCode", hook_events=(),
        turn_fn=_O + "opencode_turn", words_fn=_O + "opencode_words", refusals_fn="", prompt_fn=_O + "opencode_prompt",
        context_fn=_P + "hermes_context", deny_fn=_P + "decision_block",
        plan_fn=_I + "plan_opencode", default_scope="project", argv_fn=_H + "opencode_argv",
        stream_fn="strict_loop.headless.opencodestream:OpenCodeAdapter",
        stop_restarts_on_new_turn=False, resumes_sessions=True, reports_cost=True, hooks_in_headless=True,
        session_id_pattern=r"ses_[A-Za-z0-9]{10,60}",
        login_hint="run `opencode auth login` (or set your provider's API key) and choose a model with --model",
    ),
}  # fmt: skip
"""Every harness, by name. Hermes's hooks are its plugin's (integrations/hermes/), so it lists no hook events. Gemini
CLI's ``plan_fn`` and ``argv_fn`` both write its settings (``hooks``, ``mcpServers``: one file), in ``headless``; its
AfterAgent says ``stop_hook_active: false`` after a block too (0.61.0): its blocks are counted per session. OpenCode's
hooks are its plugin's (integrations/opencode/), which whispers and refuses as the Hermes plugin does."""


def names() -> tuple[str, ...]:
    """The harness names, for command-line choices."""
    return tuple(HARNESSES)


def get(name: str) -> Harness:
    """The harness called ``name``; KeyError names the known ones."""
    try:
        return HARNESSES[name]
    except KeyError:
        raise KeyError(f"unknown harness {name!r} (known: {', '.join(HARNESSES)})") from None


def register(harness: Harness) -> None:
    """Add (or replace) a harness: a fourth harness needs this row and the functions it names, nothing else."""
    HARNESSES[harness.name] = harness


def resolve(ref: str) -> Any:
    """The object a ``"module:attribute"`` reference names, imported now."""
    module, _, attribute = ref.partition(":")
    return getattr(import_module(module), attribute)


def session_id_problem(name: str, session_id: object) -> str:
    """Why ``session_id`` may not be resumed with harness ``name`` (not its format: it would become an option), or
    "" when it may."""
    import re

    pattern = get(name).session_id_pattern
    if not isinstance(session_id, str) or not pattern or re.fullmatch(pattern, session_id) is None:
        shown = repr(session_id)[:60]
        return f"session id {shown} is not a {name} session id (expected {pattern or 'none: it does not resume'})"
    return ""
