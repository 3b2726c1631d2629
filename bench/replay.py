"""Replaying one labeled session the way the live product receives it, for bench/spiral_bench.py.

A session of a harness whose hooks we support goes through the hook handler (``harness.handler.handle``) as the
payloads that harness sends, with its transcript written beside the workspace as the harness writes it; any other
session goes through ``append_event`` without the agent's words (nothing carries them live). ``REPLAYS`` maps a
source's name to its replay, each harness's in a module of its own (``replay_claude``, ``replay_codex``,
``replay_gemini``; the shared workspace in ``replay_live``). The payload shapes follow what Claude Code 2.1.331,
Codex 0.169.0 and Gemini CLI 0.61.0 sent to a hook and wrote to their transcripts when run against a scripted model
(tests/fixtures/hooks/, and Claude Code's sdk-tools.d.ts for the tools it could not be made to run). One thing
those runs showed: Claude Code fires no hook for a call it rejects before running it (the ``<tool_use_error>``
results: an Edit whose text is not found, a Write to a file not read yet) nor for one the person refused at the
permission prompt, so those calls reach the transcript only.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from replay_claude import claude_payload, claude_response, claude_turns
from replay_codex import codex_call, codex_turns
from replay_gemini import gemini_response, gemini_turns
from replay_live import TASK_ID, Feed, Live, append_turns

from strict_loop import Workspace
from strict_loop.model.settings import MonitorSettings
from strict_loop.model.turns import Turn

__all__ = [
    "Replayed",
    "append_turns",
    "claude_payload",
    "claude_response",
    "claude_turns",
    "codex_call",
    "codex_turns",
    "gemini_response",
    "gemini_turns",
    "replay",
    "replay_for",
]


@dataclass
class Replayed:
    """What the live path did with one session: the first firing and the turns the monitor saw, each with the
    corpus turn it came from."""

    fired: Optional[int]
    kinds: list[str]
    turns: list[Turn]
    numbers: list[int]
    settings: MonitorSettings
    hook_errors: str = ""
    unhooked: int = 0


REPLAYS: tuple[tuple[str, Callable[[Live, list[dict[str, Any]]], Feed]], ...] = (
    ("claude_code", claude_turns),
    ("codex", codex_turns),
    ("gemini", gemini_turns),
)
"""Source-name prefix -> how its sessions reach the monitor live; every other source: ``append_turns``."""


def replay_for(source: str) -> Callable[[Live, list[dict[str, Any]]], Feed]:
    return next((fn for prefix, fn in REPLAYS if source.startswith(prefix)), append_turns)


def replay(source: str, turns: list[dict[str, Any]], folder: Path, profile: str = "default") -> Replayed:
    """Replay ``turns`` live in a fresh workspace under ``folder``; ``detect_spiral`` after every line until the
    first firing, then on to the end so that every turn the monitor saw can be read back from the ledger."""
    root = folder / "ws"
    root.mkdir()
    ws = Workspace(root)
    ws.init_state(
        task_id=TASK_ID,
        goal="replay a recorded session",
        global_stop_condition="never",
        limits={"max_iterations": 1000},
        monitor_profile=profile,
    )
    live = Live(root, ws, folder / "transcript.jsonl")
    fired, kinds, numbers = None, [], []
    for number, seen in replay_for(source)(live, turns):
        numbers += [number] if seen else []
        if fired is None and seen:
            verdict = ws.detect_spiral(task_id=TASK_ID)
            if verdict.detected:
                fired, kinds = number, [s.kind for s in verdict.signals]
    store = ws.task_store(TASK_ID)
    events = [ev.get("data") or {} for ev in store.events() if ev.get("kind") == "tool_call"]
    seen_turns = [Turn.model_validate(data) for data in events]
    log = store.paths.root / "hook-errors.log"
    errors = log.read_text(encoding="utf-8", errors="replace") if log.is_file() else ""
    numbered, extra = _numbered(events, numbers, turns)
    if len(seen_turns) != len(numbers) + extra:  # a hook that found no task says nothing anywhere
        errors += f"the ledger holds {len(seen_turns)} turns where {len(numbers)} were sent\n"
    numbers = numbered
    unhooked = sum(1 for d in turns if d.get("actor") != "person") - sum(1 for t in seen_turns if t.actor != "person")
    return Replayed(fired, kinds, seen_turns, numbers, store.load().contract.monitor, errors, unhooked)


def _numbered(events: list[dict[str, Any]], sent: list[int], turns: list[dict[str, Any]]) -> tuple[list[int], int]:
    """The corpus turn at which the monitor could first act on each recorded turn, and how many the harness's own
    transcript added: a call that never ran (refused, or blocked by a hook) reaches no hook, and the next hook records
    it from the transcript (``hook.source`` "transcript", its call id ours: ``toolu_00012`` / ``call_00012`` is the
    corpus line 12); what the monitor says of it reaches the agent at that next hook, whose turn it is given."""
    out: list[int] = []
    waiting, rest, extra = 0, iter(sent), 0
    for data in events:
        hook = data.get("hook") if isinstance(data.get("hook"), dict) else {}
        call = str(hook.get("tool_use_id") or "")
        if hook.get("source") == "transcript" and call[-5:].isdigit() and int(call[-5:]) < len(turns):
            out.append(turns[int(call[-5:])].get("turn", 0))
            waiting, extra = waiting + 1, extra + 1
        else:
            out.append(next(rest, out[-1] if out else 0))
            out[len(out) - 1 - waiting : -1], waiting = [out[-1]] * waiting, 0
    return out, extra
