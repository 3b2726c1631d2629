"""Live updates: one background task polls the size and mtime of each task's state.json, monitor.json and
events.jsonl every ``POLL_S`` seconds and tells every open page (server-sent events) which tasks changed.

Why polling stats: the writers (the agent's operations, the hook on every tool call) pay nothing for an open page;
the page hears of a recorded turn, round, whisper or pause within ``POLL_S`` plus a network hop. A stream never ends
on its own: ``end_streams`` ends them when the server shuts down (else Ctrl-C waits for every open page).
"""

from __future__ import annotations

import asyncio
import json
import os
import time
import weakref
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Optional

import anyio.to_thread

from strict_loop.base.layout import Layout

POLL_S = 0.25
RELIST_S = 5.0
PING_S = 15.0
WATCHED = ("state.json", "monitor.json", "events.jsonl", "waiting.json")

Stamp = tuple[tuple[int, int], ...]
_WATCHERS: weakref.WeakSet[Watcher] = weakref.WeakSet()


def end_streams() -> None:
    """End every live stream served on the running event loop (its server is shutting down); new ones end at once.
    Per loop: a process may run more than one server, each in its own thread."""
    loop = asyncio.get_running_loop()
    for watcher in list(_WATCHERS):
        if watcher.loop is loop:
            watcher.end()


def stamp(folder: Path) -> Stamp:
    out = []
    for name in WATCHED:
        try:
            st = os.stat(folder / name)
            out.append((st.st_mtime_ns, st.st_size))
        except OSError:
            out.append((0, -1))
    return tuple(out)


def task_folders(roots: dict[str, Path]) -> dict[tuple[str, str], Path]:
    found = {}
    for ws_id, root in roots.items():
        tasks = Layout(root).tasks
        try:
            found.update({(ws_id, p.name): p for p in tasks.iterdir() if p.is_dir()})
        except OSError:
            continue
    return found


class Watcher:
    """The one poller of a server; runs while at least one page listens."""

    def __init__(self, roots: Callable[[], dict[str, Path]], poll_s: float = POLL_S) -> None:
        self.roots = roots
        self.poll_s = poll_s
        self.listeners: set[asyncio.Queue[Optional[list[str]]]] = set()
        self.stamps: dict[tuple[str, str], Stamp] = {}
        self.task: Optional[asyncio.Task[None]] = None
        self.primed = False  # the first scan is the baseline, not a change
        self.loop: Optional[asyncio.AbstractEventLoop] = None  # the server's, once a page listens
        self.ended = False
        _WATCHERS.add(self)

    def end(self) -> None:
        """Every stream ends (None is the last word in each queue), and any stream opened from now on."""
        self.ended = True
        for queue in list(self.listeners):
            queue.put_nowait(None)

    def changes(self, folders: dict[tuple[str, str], Path]) -> list[str]:
        changed = []
        for key, folder in folders.items():
            now = stamp(folder)
            if self.stamps.get(key) != now:
                if self.primed:
                    changed.append(f"{key[0]}/{key[1]}")
                self.stamps[key] = now
        for key in set(self.stamps) - set(folders):
            del self.stamps[key]
            changed.append(f"{key[0]}/{key[1]}")
        self.primed = True
        return changed

    def scan(self, folders: dict[tuple[str, str], Path], relist: bool) -> tuple[dict[tuple[str, str], Path], list[str]]:
        """One poll (the task folders listed again when ``relist``): the folders and the tasks that changed."""
        if relist:
            folders = task_folders(self.roots())
        return folders, self.changes(folders)

    async def run(self) -> None:
        """Poll while a page listens; each poll's stats and listings run in a worker thread, never on the event loop
        (a slow disk or a thousand tasks would hold every request of the server)."""
        folders: dict[tuple[str, str], Path] = {}
        listed = 0.0
        while self.listeners:
            relist = time.monotonic() - listed > RELIST_S
            folders, changed = await anyio.to_thread.run_sync(self.scan, folders, relist)
            listed = time.monotonic() if relist else listed
            if changed:
                for queue in list(self.listeners):
                    queue.put_nowait(changed)
            await asyncio.sleep(self.poll_s)
        self.task = None

    async def stream(self) -> AsyncIterator[str]:
        """The SSE stream of one page: ``event: change`` with the changed tasks (ws/task), a ping now and then."""
        if self.ended:
            return
        queue: asyncio.Queue[Optional[list[str]]] = asyncio.Queue()
        self.listeners.add(queue)
        self.loop = asyncio.get_running_loop()
        if self.task is None:
            self.task = self.loop.create_task(self.run())
        try:
            yield "retry: 1000\n\n"
            while True:
                try:
                    changed = await asyncio.wait_for(queue.get(), PING_S)
                except asyncio.TimeoutError:
                    yield ": ping\n\n"
                    continue
                if changed is None:
                    return
                yield f"event: change\ndata: {json.dumps({'tasks': changed})}\n\n"
        finally:
            self.listeners.discard(queue)
