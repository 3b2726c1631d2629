"""What of a spool the task ledgers vouch for: the exporter sends a record only when its task's ``events.jsonl``
holds the same event (issue 25).

Why: the spool sits in the workspace, where the agent can append a line of its own making (a round that never
happened, a person's resume that never came). The ledger is where the loop records every event first, so a spool
record is taken as a pointer to a ledger line (task and ``seq``) and sent only if that line, clipped as the spool
clips it, is the same; its workspace is the exporter's own, never the record's.
"""

from __future__ import annotations

from collections.abc import Iterable
from contextlib import closing
from pathlib import Path
from typing import Any, Optional

from strict_loop.base.errors import LoopError
from strict_loop.base.jsonl import records_backwards
from strict_loop.base.layout import Layout
from strict_loop.telemetry.spool import clipped

MAX_LEDGER_LINES = 20_000
"""Ledger lines read back (from the end) to find a batch's events: a spool holds ~2,000, so a record older than
this is not looked for (a forged one with a low ``seq`` must not make every drain read a whole ledger)."""
OURS = ("task", "workspace")


def vouched(manager: Path, records: Iterable[dict[str, Any]]) -> tuple[list[dict[str, Any]], int]:
    """The records some task's ledger under ``manager`` holds, in order and once each, their ``workspace`` the
    folder ``manager`` is in; and how many were refused."""
    records = list(records)
    wanted: dict[str, set[int]] = {}
    for rec in records:
        key = _key(rec)
        if key is not None:
            wanted.setdefault(key[0], set()).add(key[1])
    workspace = manager.parent
    held = {task: _held(workspace, task, seqs) for task, seqs in wanted.items()}
    out: list[dict[str, Any]] = []
    sent: set[tuple[str, int]] = set()
    for rec in records:
        key = _key(rec)
        if key is None or key in sent:
            continue
        event = {k: v for k, v in rec.items() if k not in OURS}
        if held[key[0]].get(key[1]) != event:
            continue
        sent.add(key)
        out.append({"task": key[0], "workspace": str(workspace), **event})
    return out, len(records) - len(out)


def _key(rec: dict[str, Any]) -> Optional[tuple[str, int]]:
    """(task, seq) of a spooled record, None when it names neither."""
    task, seq = rec.get("task"), rec.get("seq")
    if isinstance(task, str) and isinstance(seq, int) and not isinstance(seq, bool):
        return task, seq
    return None


def _is_seq(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _held(workspace: Path, task: str, seqs: set[int]) -> dict[int, Any]:
    """Task ``task``'s ledger events with these ``seq``s, clipped as the spool clips them (read from the end)."""
    found: dict[int, Any] = {}
    low = min(seqs)
    try:
        path = Layout(workspace).task(task).events  # refuses a bad task id and a task folder that leads out
        with closing(records_backwards(path)) as ledger:
            for n, rec in enumerate(ledger):
                seq = rec.get("seq") if _is_seq(rec.get("seq")) else None
                if seq is not None and seq in seqs and seq not in found:
                    found[seq] = clipped(rec)
                if len(found) == len(seqs) or n >= MAX_LEDGER_LINES or (seq is not None and seq < low):
                    break
    except (LoopError, ValueError, OSError):  # no such task, a damaged or linked ledger: it vouches for nothing
        return found
    return found
