"""How many rounds a task had recorded by a given time, from its ``iterations.jsonl``: read once, then only what was
appended since (issue 26).

Why: the converter asks for every event it exports (which round was in progress when a tool call was recorded), and
reading the whole ledger each time cost 57 ms per event at 10,000 rounds. Each task's ledger is looked at once per
batch: its identity, its size, its modification time and the bytes just before where the last read stopped; the new
bytes alone are read. A ledger replaced, cut or rewritten under us (another file, fewer bytes, a change with no
byte added, other bytes before our offset) is read again from the start, so a rollback or a repair never leaves a
stale count. A damaged line costs itself, as in every ledger reader (``base.jsonl``).
"""

from __future__ import annotations

import bisect
import json
import os
from pathlib import Path
from typing import Optional

from strict_loop.base.errors import LoopError
from strict_loop.base.fsio import open_own
from strict_loop.base.jsonl import MAX_LINE_BYTES
from strict_loop.base.layout import Layout

MAX_TASKS = 256
"""Ledgers remembered at once (the least recently added is forgotten, and read again if asked for)."""
MAX_TIMES = 200_000
"""Recording times kept per task: beyond, the oldest are only counted (a ledger the agent grew cannot grow memory)."""
TAIL = 64
_CHUNK = 1 << 16


class _Ledger:
    """One task's rounds read so far: their recording times (sorted), and where the read stopped."""

    def __init__(self) -> None:
        self.reset(None)

    def reset(self, ident: Optional[tuple[int, int]]) -> None:
        self.ident, self.offset, self.tail, self.mtime = ident, 0, b"", -1
        self.times: list[str] = []
        self.forgotten = 0  # the oldest times, counted but no longer kept (MAX_TIMES)
        self.pending, self.skipping = b"", False  # an unfinished last line; inside an overlong one

    def done_by(self, ts: str) -> int:
        return self.forgotten + bisect.bisect_right(self.times, ts)

    def refresh(self, path: Optional[Path]) -> None:
        try:
            if path is None:
                raise FileNotFoundError
            fd = open_own(path)
        except (LoopError, OSError):  # no ledger yet, or a link or FIFO in its place: no rounds
            self.reset(None)
            return
        try:
            info = os.fstat(fd)
            ident = (info.st_dev, info.st_ino)
            rewritten = info.st_size == self.offset and info.st_mtime_ns != self.mtime  # changed, nothing added
            if ident != self.ident or info.st_size < self.offset or rewritten or not self._same_tail(fd):
                self.reset(ident)
            if info.st_size > self.offset:
                self._read(fd, info.st_size)  # no further: what is appended meanwhile changes the time seen next
            self.mtime = info.st_mtime_ns
        except OSError:
            self.reset(None)
        finally:
            os.close(fd)

    def _same_tail(self, fd: int) -> bool:
        return not self.tail or os.pread(fd, len(self.tail), self.offset - len(self.tail)) == self.tail

    def _read(self, fd: int, end: int) -> None:
        os.lseek(fd, self.offset, os.SEEK_SET)
        while self.offset < end and (chunk := os.read(fd, min(_CHUNK, end - self.offset))):
            self.offset += len(chunk)
            self.tail = (self.tail + chunk)[-TAIL:]
            *lines, rest = (self.pending + chunk).split(b"\n")
            for n, line in enumerate(lines):
                if n == 0 and self.skipping:  # the end of an overlong line: skipped as damaged
                    self.skipping = False
                elif len(line) <= MAX_LINE_BYTES:
                    self._take(line)
            self.pending = rest
            if len(rest) > MAX_LINE_BYTES:
                self.pending, self.skipping = b"", True

    def _take(self, line: bytes) -> None:
        try:
            value = json.loads(line) if line.strip() else None
        except (ValueError, RecursionError):
            return
        if not isinstance(value, dict):
            return
        ts = str(value.get("recorded_at", ""))
        if self.times and ts < self.times[-1]:
            bisect.insort(self.times, ts)
        else:
            self.times.append(ts)
        if len(self.times) > MAX_TIMES:
            cut = len(self.times) - MAX_TIMES
            del self.times[:cut]
            self.forgotten += cut


class RoundTimes:
    """Rounds recorded by a time, per (workspace, task); each ledger checked at most once per ``batch``."""

    def __init__(self) -> None:
        self._ledgers: dict[tuple[str, str], _Ledger] = {}
        self._checked: set[tuple[str, str]] = set()

    def batch(self) -> None:
        """A new batch begins: each ledger is looked at again (once) for what was appended."""
        self._checked.clear()

    def done_by(self, workspace: str, task: str, ts: str) -> int:
        key = (workspace, task)
        ledger = self._ledgers.get(key)
        if ledger is None:
            if len(self._ledgers) >= MAX_TASKS:
                forget = next(iter(self._ledgers))
                del self._ledgers[forget]
                self._checked.discard(forget)
            ledger = self._ledgers[key] = _Ledger()
        if key not in self._checked:
            self._checked.add(key)
            ledger.refresh(_path(workspace, task))
        return ledger.done_by(ts)


def _path(workspace: str, task: str) -> Optional[Path]:
    try:
        return Layout(Path(workspace)).task(task).iterations  # refuses a bad task id
    except (LoopError, ValueError, OSError):
        return None
