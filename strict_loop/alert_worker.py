"""The outbox worker: ``python -m strict_loop.alert_worker <workspace>``, started detached by ``outbox.kick``.

One worker per workspace (an exclusive lock; a second one exits at once). It
delivers every pending channel of every marked task with retries and backoff,
channels in parallel (one hanging receiver delays no other), records each attempt
in alerts.jsonl and each final outcome in the task's events, then removes the
task's marker. The URLs come from this process's environment only. A worker
killed midway leaves the marker and the pending state: the next process resumes.
"""

from __future__ import annotations

import fcntl
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Mapping, Optional

from . import alerts, outbox, secrets
from .alert_send import SendError, send
from .fsio import LOCK_TIMEOUT_S
from .layout import Layout
from .store import TaskStore, ValidationCache

MAX_PASSES = 50


def run(root: Path, env: Mapping[str, str]) -> int:
    """Deliver until nothing is pending; returns the number of passes made (0 when another worker runs)."""
    passes = 0
    while outbox.pending_tasks(root) and passes < MAX_PASSES:
        fd = _try_lock(root)
        if fd is None:
            return passes  # the running worker re-checks after it lets go of the lock, so nothing is missed
        try:
            while outbox.pending_tasks(root) and passes < MAX_PASSES:
                passes += 1
                for task_id in outbox.pending_tasks(root):
                    deliver_task(root, task_id, env)
        finally:
            os.close(fd)
    return passes


def _try_lock(root: Path) -> Optional[int]:
    fd = os.open(outbox.outbox_dir(root) / outbox.WORKER_LOCK, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())  # who delivers, for a person (or a test) to see
        return fd
    except OSError:
        os.close(fd)
        return None


def deliver_task(root: Path, task_id: str, env: Mapping[str, str]) -> None:
    """Every pending channel of the task's alerts; then the marker goes if nothing is pending any more."""
    marker = outbox.outbox_dir(root) / task_id
    try:
        paths = Layout(root).task(task_id)
    except Exception:  # not a task name: a stray file in the outbox folder
        marker.unlink(missing_ok=True)
        return
    store = TaskStore(paths, task_id, ValidationCache(), LOCK_TIMEOUT_S)
    if not paths.alerts.exists():
        marker.unlink(missing_ok=True)
        return
    chans = {c.name: c for c in alerts.channels(env, root)[0]}
    policy = alerts.delivery(env)
    jobs = [(a, name, c) for a in outbox.fold(paths.alerts) for name, c in a["channels"].items() if c["state"] == "pending"]
    with ThreadPoolExecutor(max_workers=max(1, min(8, len(jobs)))) as pool:
        for job in jobs:
            pool.submit(_deliver_one, store, job, chans, policy, env)
    with store.locked():
        if not any(c["state"] == "pending" for a in outbox.fold(paths.alerts) for c in a["channels"].values()):
            marker.unlink(missing_ok=True)


def _deliver_one(store: TaskStore, job: tuple[dict[str, Any], str, dict[str, Any]], chans: Mapping[str, alerts.Channel],
                 policy: alerts.Delivery, env: Mapping[str, str]) -> None:
    alert, name, state = job
    attempts = int(state.get("attempts") or 0)
    channel = chans.get(name)
    if channel is None:
        _final(store, alert, name, "failed", attempts, f"channel '{name}' is not configured in the environment of the "
               "process that delivered it; configure it there and run: strict-loop alerts --retry")
        return
    msg = alerts.Message(**alert.get("message", {"headline": f"[SPIRALING] {alert.get('task_id')}", "resume": "strict-loop resume"}))
    payload = {"text": "\n".join(msg.lines()), **{k: v for k, v in alert.items() if k not in ("channels", "delivery")}}
    error: Optional[str] = None
    while attempts < policy.attempts:
        attempts += 1
        try:
            send(channel, msg, payload, policy.timeout)
            _final(store, alert, name, "delivered", attempts, None)
            return
        except SendError as exc:
            error = secrets.mask(str(exc), env)
            if exc.final:
                break
        if attempts < policy.attempts:
            with store.locked():
                outbox.record(store, alert["id"], name, "pending", attempts, error)
            time.sleep(policy.backoff * 2 ** (attempts - 1))
    _final(store, alert, name, "failed", attempts, error)


def _final(store: TaskStore, alert: Mapping[str, Any], name: str, state: str, attempts: int, error: Optional[str]) -> None:
    with store.locked():
        outbox.record(store, alert["id"], name, state, attempts, error)
        text = outbox.summary({"state": state, "attempts": attempts, "last_error": error})
        store.append_event(f"alert.{state}", f"alert {alert['id']} via {name}: {text}"[:600],
                           {"alert": alert["id"], "channel": name, "attempts": attempts, "last_error": error})


def main(argv: Optional[list[str]] = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m strict_loop.alert_worker WORKSPACE", file=sys.stderr)
        return 2
    run(Path(args[0]).resolve(), os.environ)
    return 0


if __name__ == "__main__":
    sys.exit(main())
