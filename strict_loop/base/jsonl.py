"""Reading JSON Lines ledgers: every complete line from the start, or the last few from the end, each kept only when
it is whole, not too long and (for records) a JSON object.

Why apart from ``fsio``: ``fsio`` writes (atomic replace, whole-line appends, torn-tail repair, the lock); this is
the reading side, where a damaged line costs that line alone and a tail read costs the lines read, not the file.
"""

from __future__ import annotations

import json
import os
from collections.abc import Generator, Iterator
from contextlib import closing
from itertools import islice
from pathlib import Path
from typing import Any, Optional

from strict_loop.base.fsio import _CHUNK, _last_newline_end, open_own

MAX_LINE_BYTES = 4 << 20
"""Longest ledger line a reader keeps. The largest real one (a round with every field at its cap) is about
1 MB; a longer one is damage and is skipped, so one huge line costs no unbounded time or memory."""


def _lines_backwards(fd: int, end: int) -> Iterator[Optional[bytes]]:
    """The lines of the file up to ``end`` (just past a newline), last first, without their newlines.

    A line over MAX_LINE_BYTES comes out as None (damage): it is read through in chunks to find
    its start but never held, so a huge line costs a scan, not memory.
    """
    if end <= 0:
        return
    pos, chunk = end - 1, 4096  # pos: the final newline, excluded
    parts: list[bytes] = []
    size = 0
    while True:
        start = max(0, pos - chunk)
        block = os.pread(fd, pos - start, start)
        pos, chunk, cut = start, min(chunk * 4, _CHUNK), len(block)
        while True:
            nl = block.rfind(b"\n", 0, cut)
            if size <= MAX_LINE_BYTES:
                parts.append(block[nl + 1 : cut])
                size += cut - nl - 1
            if nl < 0:
                break
            yield b"".join(reversed(parts)) if size <= MAX_LINE_BYTES else None
            parts, size, cut = [], 0, nl
        if pos == 0:
            yield b"".join(reversed(parts)) if size <= MAX_LINE_BYTES else None
            return


def _lines_from_end(path: Path) -> Generator[str, None, None]:
    """Complete, non-blank lines, last first; an unterminated fragment and lines over MAX_LINE_BYTES are skipped."""
    try:
        fd = open_own(path)
    except FileNotFoundError:
        return
    try:
        for raw in _lines_backwards(fd, _last_newline_end(fd, os.fstat(fd).st_size)):
            text = raw.decode("utf-8", errors="replace") if raw is not None else ""
            if text.strip():  # blank as iter_lines sees it
                yield text
    finally:
        os.close(fd)


def tail_lines(path: Path, count: int) -> list[str]:
    """The last ``count`` complete, non-blank lines, read backwards in small chunks.

    The cost depends on the length of those lines only, never on the file's size;
    a line over MAX_LINE_BYTES is skipped as damaged.
    """
    if count <= 0:
        return []
    with closing(_lines_from_end(path)) as lines:
        return list(islice(lines, count))[::-1]


def iter_lines(path: Path) -> Iterator[tuple[int, str]]:
    """(line number, text) of every complete, non-blank line; a line over MAX_LINE_BYTES is skipped as damaged."""
    try:
        fd = open_own(path)
    except FileNotFoundError:
        return
    with os.fdopen(fd, "rb") as fh:
        number = 0
        while raw := fh.readline(MAX_LINE_BYTES + 1):
            number += 1
            if not raw.endswith(b"\n"):
                if len(raw) <= MAX_LINE_BYTES:
                    return  # torn tail
                while raw and not raw.endswith(b"\n"):  # read past the rest of an overlong line
                    raw = fh.readline(_CHUNK)
                continue
            text = raw.decode("utf-8", errors="replace").strip()
            if text:
                yield number, text


def json_records(
    path: Path, *, last: int | None = None, skipped: list[int] | None = None
) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) of every complete ledger line that is a JSON object; others are skipped (their numbers go
    to ``skipped``).

    With ``last``, only the last ``last`` lines are read (numbered from the end: -1 is the last line).
    The one reader of ledgers: a damaged line costs that line, never the ones around it.
    """
    if last is None:
        lines: Iterator[tuple[int, str]] = iter_lines(path)
    else:
        tail = tail_lines(path, last)
        lines = zip(range(-len(tail), 0), tail, strict=True)
    for number, line in lines:
        value = _record(line)
        if value is not None:
            yield number, value
        elif skipped is not None:
            skipped.append(number)


def records_backwards(path: Path) -> Generator[dict[str, Any], None, None]:
    """The ledger's JSON objects, last first, read lazily from the end (for a search that usually stops early)."""
    with closing(_lines_from_end(path)) as lines:
        for line in lines:
            value = _record(line)
            if value is not None:
                yield value


def _record(line: str | bytes) -> dict[str, Any] | None:
    try:
        value = json.loads(line)
    except (ValueError, RecursionError):  # RecursionError: a line of thousands of nested brackets
        return None
    return value if isinstance(value, dict) else None


def last_json(path: Path) -> dict[str, Any] | None:
    """The last parseable JSON object of a ledger, or None."""
    found = None
    for _, value in json_records(path, last=3):
        found = value
    return found
