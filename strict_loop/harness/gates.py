"""The hook's decisions about one call beyond recording it, each keeping small records of its own per session:
which task the call belongs to (a session is bound to the task its own loop call names, and a call no task claims
is kept in unclaimed.jsonl: no tool call is ever dropped), the pause (what a paused task's agent may still do, said
in full once, refused when the hook cannot decide) and the Stop (block the end of an unattended agent's turn while
the stop checks say continue).

Why apart from ``handler``: these are the per-session records (``sessions.json``, who was told of the pause, how
often each session was blocked, capped below Claude Code's limit). Why a binding is needed: with two running tasks
in one workspace and no ``STRICT_LOOP_TASK``, a hook cannot guess where a call belongs; the agent's own loop calls
say it (an MCP tool or a ``strict-loop`` command naming a ``task_id``), and a call that neither the environment, a
binding nor a single running task explains goes to ``.agent-loop/unclaimed.jsonl``, the agent told once how to bind.
Only the standard library at import: the hook's fast path loads this.
"""

from __future__ import annotations

import json
import re
import shlex
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

from strict_loop.harness import payloads, registry
from strict_loop.harness.payloads import SHELL_TOOLS, HookEvent, own_tool

if TYPE_CHECKING:
    from strict_loop.storage.store import TaskStore

STOP_BLOCK_CAP = 6
"""Blocks at Stop per task and session: below Claude Code's own cap of 8 consecutive ones; Codex has none."""
STOP_BLOCKS_FILE = "hook-stop-blocks.json"
MAX_SESSIONS_KEPT = 50


def at_stop(event: HookEvent, root: Path, store: TaskStore, lock_timeout: float) -> Optional[dict[str, Any]]:
    """Block the end of the turn while check_stop says continue, at most STOP_BLOCK_CAP times per session.

    An untrusted contract's commands never run (``trust.py``): then the hook does not block at all.
    """
    from strict_loop.loop.workspace import Workspace
    from strict_loop.storage.trust import TrustStore

    state = store.load()  # loaded by the handler a moment ago: from this process's cache
    trust = TrustStore()
    if not trust.is_trusted(root, store.task_id, state.contract.stop_checks):
        return None
    key = event.session_key
    fresh = (
        registry.get(event.harness).stop_restarts_on_new_turn and not event.stop_hook_active
    )  # not a block-continued stop
    with store.locked():
        counts = _stop_blocks(store)
        if fresh:
            counts.pop(key, None)
        if counts.get(key, 0) >= STOP_BLOCK_CAP:
            return None
    report = Workspace(root, lock_timeout=lock_timeout, trust_store=trust).check_stop(task_id=store.task_id)
    if report.should_stop:
        return None
    with store.locked():
        counts = _stop_blocks(store)
        counts[key] = (0 if fresh else counts.get(key, 0)) + 1
        _save_stop_blocks(store, counts)
    reason = payloads.continue_reason(store.task_id, state.next_task, report.reason)
    notices = [
        m.text for m in report.supervisor.messages if m.kind == "notice"
    ]  # handed over by check_stop: say it here
    return payloads.block_stop_output(" ".join([reason, *notices]))


def _stop_blocks(store: TaskStore) -> dict[str, int]:
    # missing or damaged: counting starts again
    return {k: v for k, v in _per_session(store, STOP_BLOCKS_FILE).items() if type(v) is int}


def _save_stop_blocks(store: TaskStore, counts: dict[str, int]) -> None:
    _keep_per_session(store, STOP_BLOCKS_FILE, counts)


def _per_session(store: TaskStore, name: str) -> dict[str, Any]:
    """A small per-session record of the task's hooks (caller holds the task lock)."""
    from strict_loop.base.jsontext import read_object

    return read_object(store.paths.root / name) or {}


def _keep_per_session(store: TaskStore, name: str, values: dict[str, Any]) -> None:
    """Write it back, the last MAX_SESSIONS_KEPT sessions only (caller holds the task lock)."""
    from strict_loop.base.fsio import atomic_write, dumps_doc

    kept = dict(list(values.items())[-MAX_SESSIONS_KEPT:])
    atomic_write(store.paths.root / name, dumps_doc(kept), sync=False)


PAUSE_TOLD_FILE = "hook-pause-told.json"


def said_before(store: TaskStore, event: HookEvent, paused_at: Optional[int]) -> bool:
    """Whether this session was already given this pause's full reason (then one line is enough); records it now."""
    key = event.session_key
    with store.locked():
        told = _per_session(store, PAUSE_TOLD_FILE)
        if told.get(key) == paused_at:
            return True
        told.pop(key, None)  # the latest last: the oldest sessions go first
        told[key] = paused_at
        _keep_per_session(store, PAUSE_TOLD_FILE, told)
    return False


def refuse_if_paused(event: HookEvent, root: Path, phase: str, why: str) -> str:
    """A pre-tool call (or one whose kind is unknown) the hook could not decide about is denied while any task of the
    workspace is paused; otherwise the session goes on (an agent must not get around a pause with an unreadable
    payload, a dead daemon or an error)."""
    if phase not in ("pre", "other"):
        return ""
    try:
        from strict_loop.base.jsontext import read_object
        from strict_loop.base.layout import Layout

        layout = Layout(root)
        paused = [t for t in layout.task_ids() if (read_object(layout.task(t).monitor) or {}).get("paused") is True]
        if not paused:
            return ""
        from strict_loop.monitor.ladder import resume_command  # only on a refusal: pydantic is affordable here

        resume = resume_command(root, paused[0])
        return json.dumps(payloads.deny_output(event, payloads.unreadable_reason(paused, why, resume)))
    except Exception:  # noqa: BLE001
        return json.dumps(payloads.deny_output(event, f"strict-loop: this call could not be checked ({why}); refused"))


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
    from strict_loop.storage import sessions

    return sessions.bound_task(manager, event.session_key)


def bind(manager: Path, event: HookEvent, task_id: str) -> None:
    """Bind the call's session to ``task_id``."""
    from strict_loop.storage import sessions

    sessions.bind(manager, event.session_key, task_id)


def record_unclaimed(
    manager: Path, event: HookEvent, fields: dict[str, Any], running: list[str], env: Mapping[str, str]
) -> Optional[str]:
    """Append the call to unclaimed.jsonl (masked); the text to tell the agent, the first time for its session."""
    from strict_loop.base.masking import mask_tree
    from strict_loop.storage import sessions

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
