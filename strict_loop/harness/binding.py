"""Which task a harness session works on, and the tool calls no task claims: no tool call is ever dropped.

Why: with two running tasks in one workspace and no ``STRICT_LOOP_TASK``, a hook cannot guess where a call
belongs. The agent's own loop calls say it (an MCP tool or a ``strict-loop`` command naming a ``task_id``):
they bind the session to that task in ``.agent-loop/sessions.json``. A call that neither the environment, a
binding nor a single running task explains goes to ``.agent-loop/unclaimed.jsonl``, and the agent is told
once how to bind. Standard library only: this runs on every hook call.
"""

from __future__ import annotations

import re
import shlex
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Optional

from strict_loop.harness.payloads import SHELL_TOOLS, HookEvent, own_tool
from strict_loop.storage import sessions

__all__ = ["bind", "bound_task", "claimed_task", "record_unclaimed"]
TASK_ID = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")
_TASK_FLAGS = ("--task-id", "--task")
_OUR_PROGRAMS = ("strict-loop",)


def claimed_task(event: HookEvent) -> Optional[str]:
    """The task id the agent's own loop call names: one of the loop's MCP tools with ``task_id``, or a
    ``strict-loop ... --task-id X`` command (also ``python scripts/<op>.py --task-id X``); else None."""
    args = event.tool_input if isinstance(event.tool_input, dict) else {}
    if own_tool(event.tool) is not None:
        task_id = args.get("task_id")
        return task_id if isinstance(task_id, str) and TASK_ID.fullmatch(task_id) else None
    if event.tool not in SHELL_TOOLS:
        return None
    command = args.get("command", args.get("cmd"))
    if isinstance(command, list):
        command = " ".join(str(word) for word in command)
    return _task_in_command(command) if isinstance(command, str) and len(command) <= 10_000 else None


def _task_in_command(command: str, depth: int = 0) -> Optional[str]:
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    ours = False
    for i, word in enumerate(words):
        if word.startswith("#"):  # a task named in a comment claims nothing
            return None
        if word.rsplit("/", 1)[-1] in _OUR_PROGRAMS or (word.endswith(".py") and "/scripts/" in f"/{word}"):
            ours = True
        elif ours and word in _TASK_FLAGS and i + 1 < len(words):
            return words[i + 1] if TASK_ID.fullmatch(words[i + 1]) else None
        elif ours and word.startswith(tuple(f + "=" for f in _TASK_FLAGS)):
            value = word.split("=", 1)[1]
            return value if TASK_ID.fullmatch(value) else None
        elif word in ("&&", "||", ";", "|"):
            ours = False
        elif depth == 0 and " " in word:  # bash -lc '<command>' (Codex reports shell calls wrapped)
            found = _task_in_command(word, 1)
            if found:
                return found
    return None


def bound_task(manager: Path, event: HookEvent) -> Optional[str]:
    """The task this call's session was bound to, if any."""
    return sessions.bound_task(manager, event.session_key)


def bind(manager: Path, event: HookEvent, task_id: str) -> None:
    """Bind the call's session to ``task_id``."""
    sessions.bind(manager, event.session_key, task_id)


def record_unclaimed(
    manager: Path, event: HookEvent, fields: dict[str, Any], running: list[str], env: Mapping[str, str]
) -> Optional[str]:
    """Append the call to unclaimed.jsonl (masked); the text to tell the agent, the first time for its session."""
    from strict_loop.base.masking import mask_tree

    line = {
        "ts": round(time.time(), 3),
        "harness": event.harness,
        "session_id": event.session_id[:200],
        "event": event.name,
        "running_tasks": running[:20],
        "turn": fields,
    }
    if not sessions.append_unclaimed(manager, event.session_key, mask_tree(line, env)):
        return None
    ids = ", ".join(running[:10])
    return (
        f"[strict-loop] {len(running)} loop tasks are running here ({ids}) and this session is bound to none, "
        f"so this call was recorded in .agent-loop/{sessions.UNCLAIMED_FILE}, not in a task. Name your task in a "
        "loop call to bind this session (announce your round: append_event with task_id=<id>, or run "
        "`strict-loop show_task --task-id <id>`), or start the session with STRICT_LOOP_TASK=<id>."
    )
