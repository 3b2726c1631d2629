"""The outbox worker (``main(["<workspace>"])``), started detached by ``outbox.kick``.

One worker per workspace (an exclusive lock; a second one exits at once). It
delivers every pending channel of every queued alert with retries and backoff,
channels in parallel (one hanging receiver delays no other), keeps each channel's
state in the queue entry, records each attempt in the task's alerts.jsonl and each
final outcome in its events, then removes the entry. The URLs come from this
process's environment only. A worker killed midway leaves the entry: the next
process that records a turn (or starts a server) starts a worker that resumes it.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Optional

from strict_loop.alerts import channels, outbox
from strict_loop.alerts.send import SendError, send
from strict_loop.base import masking
from strict_loop.base.fsio import LOCK_TIMEOUT_S, atomic_write, read_own
from strict_loop.base.layout import Layout
from strict_loop.storage.store import TaskStore, ValidationCache
from strict_loop.telemetry import export

MAX_PASSES = 50


def run(root: Path, env: Mapping[str, str]) -> int:
    """Deliver until nothing is queued; returns the number of passes made (0 when another worker runs)."""
    passes = 0
    export.start(root)  # the outcomes it records go out as telemetry too, when configured
    while outbox.pending(root, env) and passes < MAX_PASSES:
        fd = _try_lock(root, env)
        if fd is None:
            return passes  # the running worker re-checks after it lets go of the lock, so nothing is missed
        try:
            while outbox.pending(root, env) and passes < MAX_PASSES:
                passes += 1
                for path in outbox.pending(root, env):
                    deliver_entry(root, path, env)
        finally:
            os.close(fd)
    return passes


def _try_lock(root: Path, env: Mapping[str, str]) -> Optional[int]:
    fd = outbox.worker_lock(root, env)
    if fd is not None:
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())  # who delivers, for a person (or a test) to see
    return fd


class _Entry:
    """One queued alert: its channels' states, saved after every attempt (threads share it under a lock)."""

    def __init__(self, path: Path, data: dict[str, Any], store: Optional[TaskStore]) -> None:
        self.path, self.data, self.store = path, data, store
        self.guard = threading.Lock()

    def update(self, name: str, state: str, attempts: int, error: Optional[str]) -> None:
        with self.guard:
            self.data["channels"][name] = {"state": state, "attempts": attempts, "last_error": error}
            atomic_write(self.path, json.dumps(self.data).encode(), sync=state != "pending")
        if self.store is None:
            return
        alert_id = self.data["alert"]
        with self.store.locked():
            outbox.record(self.store, alert_id, name, state, attempts, error)
            if state != "pending":
                text = outbox.summary({"state": state, "attempts": attempts, "last_error": error})
                self.store.append_event(
                    f"alert.{state}",
                    f"alert {alert_id} via {name}: {text}"[:600],
                    {"alert": alert_id, "channel": name, "attempts": attempts, "last_error": error},
                )


def deliver_entry(root: Path, path: Path, env: Mapping[str, str]) -> None:
    """Every pending channel of one queued alert; the entry goes once none is pending (or it cannot be read)."""
    try:
        data = json.loads(read_own(path))
        task_id, chans_state = str(data["task_id"]), data["channels"]
        assert isinstance(chans_state, dict) and isinstance(data["payload"], dict)
    except Exception:  # damaged or not ours: nothing to deliver from it
        path.unlink(missing_ok=True)
        return
    try:
        paths = Layout(root).task(task_id)
        store: Optional[TaskStore] = (
            TaskStore(paths, task_id, ValidationCache(), LOCK_TIMEOUT_S) if paths.exists() else None
        )
    except Exception:
        store = None  # the task is gone: deliver anyway, there is no ledger to record in
    entry = _Entry(path, data, store)
    configured = {c.name: c for c in channels.channels(env, root)[0]}
    policy = channels.delivery(env)
    jobs = [name for name, c in chans_state.items() if c.get("state") == "pending"]
    with ThreadPoolExecutor(max_workers=max(1, min(8, len(jobs)))) as pool:
        for name in jobs:
            pool.submit(_deliver_one, entry, name, configured.get(name), policy, env)
    if not any(c.get("state") == "pending" for c in entry.data["channels"].values()):
        path.unlink(missing_ok=True)


def _deliver_one(
    entry: _Entry, name: str, channel: Optional[channels.Channel], policy: channels.Delivery, env: Mapping[str, str]
) -> None:
    attempts = int(entry.data["channels"][name].get("attempts") or 0)
    if channel is None:
        entry.update(
            name,
            "failed",
            attempts,
            f"channel '{name}' is not configured in the environment of the process that "
            "delivered it; configure it there and run: strict-loop alerts --retry",
        )
        return
    payload = entry.data["payload"]
    message = payload.get("message")
    msg = channels.said(message if isinstance(message, dict) else {})  # cleaned on every send, whatever is queued
    error: Optional[str] = None
    while attempts < policy.attempts:
        attempts += 1
        try:
            send(channel, msg, payload, policy.timeout)
            entry.update(name, "delivered", attempts, None)
            return
        except SendError as exc:
            error = masking.mask(str(exc), env)
            if exc.final:
                break
        if attempts < policy.attempts:
            entry.update(name, "pending", attempts, error)
            time.sleep(policy.backoff * 2 ** (attempts - 1))
    entry.update(name, "failed", attempts, error)


def main(argv: Optional[list[str]] = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print(
            "usage: python -m strict_loop.alerts.worker WORKSPACE (started by strict_loop.alerts.outbox.kick)",
            file=sys.stderr,
        )
        return 2
    run(Path(args[0]).resolve(), os.environ)
    return 0


if __name__ == "__main__":
    sys.exit(main())
