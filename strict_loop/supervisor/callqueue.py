"""The stream's tool calls a supervisor records as turns: deduplicated against what hooks recorded, and batched.

Why apart from ``runner``: the runner drives invocations; this is the bookkeeping that keeps each tool call
recorded exactly once when both the harness's hooks and its stream report it, and that records them in batches
(one lock and one monitor write per batch) without delaying any by more than BATCH_WAIT_S.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import IO, Any, Optional

from strict_loop.base.errors import LoopError
from strict_loop.headless.streambase import ToolCall
from strict_loop.loop.recording import record_turn, record_turns
from strict_loop.storage.store import TaskStore
from strict_loop.supervisor.lock import SeenIds

BATCH, BATCH_WAIT_S = 10, 0.2
"""Stream tool calls are recorded in batches of up to 10, at most 0.2 s late: one lock and one monitor write per
batch."""


class CallQueue:
    """One supervisor's queue of stream tool calls awaiting recording, and the ids already recorded."""

    def __init__(self, store: TaskStore, root: Path, harness: str, env: Mapping[str, str], stderr: IO[str]) -> None:
        self.store, self.root, self.harness, self.env, self.stderr = store, root, harness, env, stderr
        self.seen = SeenIds()
        self._pending: list[tuple[str, Any, Optional[dict[str, Any]]]] = []
        self._pending_ids: list[str] = []  # the harness's id of each queued call
        self._pending_since = 0.0

    def absorb(self, events: Iterable[dict[str, Any]]) -> None:
        """Remember the tool-call ids these events recorded."""
        self.seen.absorb(events)

    def full(self) -> bool:
        """A whole batch is waiting."""
        return len(self._pending) >= BATCH

    def due(self) -> bool:
        """Some call has waited BATCH_WAIT_S."""
        return bool(self._pending) and time.monotonic() - self._pending_since >= BATCH_WAIT_S

    def add(self, call: ToolCall, n: int) -> None:
        """Queue a stream's tool call of invocation ``n`` for recording unless a hook (or we) recorded it already.

        A hook stores the harness's own id (``hook.tool_use_id``); we store ``<invocation>:<id>`` (``hook.call_id``),
        since some ids restart with each session (Codex numbers its items ``item_0``, ``item_1``... per run)."""
        own = f"{n}:{call.call_id}"
        self.seen.absorb(self.store.events(last=50))  # a hook of this very call may have written it just now
        if call.call_id in self.seen or own in self.seen:
            return
        self.seen.add(own)
        if not self._pending:
            self._pending_since = time.monotonic()
        meta = {"source": "supervisor", "harness": self.harness, "call_id": own, "invocation": n}
        self._pending.append((f"{self.harness} {call.turn.get('tool', 'tool')}", call.turn, meta))
        self._pending_ids.append(call.call_id)

    def flush(self) -> bool:
        """Record the queued calls in one batch (one lock, monitor.json written once); True when one paused the task.

        A hook may have recorded one of them since it was queued (a batch waits up to BATCH_WAIT_S): dropped here."""
        if self._pending:
            self.seen.absorb(self.store.events(last=50))
        batch = [item for item, raw in zip(self._pending, self._pending_ids, strict=True) if raw not in self.seen]
        self._pending, self._pending_ids = [], []
        if not batch:
            return False
        try:
            recorded = record_turns(self.store, self.root, batch, env=self.env)
        except LoopError:  # one odd turn fails the batch: record the others one by one, noting the odd one
            recorded = []
            for message, turn, meta in batch:
                try:
                    recorded.append(record_turn(self.store, self.root, message, turn, meta=meta, env=self.env))
                except LoopError as exc:
                    print(
                        f"[supervisor] could not record a {turn.get('tool')} call: {exc}", file=self.stderr, flush=True
                    )
        return any(r.pause is not None for r in recorded)
