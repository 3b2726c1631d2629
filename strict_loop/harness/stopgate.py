"""The hook's answer at Stop: block the end of an unattended agent's turn while the stop checks say continue.

Why apart from ``handler``: it is the one hook answer that runs the stop checks and keeps state of its own (how
often each session was blocked, capped below Claude Code's limit); the handler imports it only at a Stop.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

from strict_loop.harness import payloads, registry
from strict_loop.harness.payloads import HookEvent

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
    key = f"{event.harness}:{event.session_id or 'no-session'}"
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
    from strict_loop.base.jsontext import read_object

    value = read_object(store.paths.root / STOP_BLOCKS_FILE) or {}  # missing or damaged: counting starts again
    return {k: v for k, v in value.items() if type(v) is int}


def _save_stop_blocks(store: TaskStore, counts: dict[str, int]) -> None:
    from strict_loop.base.fsio import atomic_write, dumps_doc

    kept = dict(list(counts.items())[-MAX_SESSIONS_KEPT:])
    atomic_write(store.paths.root / STOP_BLOCKS_FILE, dumps_doc(kept), sync=False)
