"""Restart and hang loops: a thing restarted again and again while what it reports stays the same, or one step that
hangs and is cut off on every rerun. Pure: works on the detector's window.

Why a signal of its own: each restart looks like a new attempt (a kill, a start, a redeploy with a new name), and
the check after it often succeeds as a command (``curl`` returns, ``lsof`` prints pids), so neither the failure
signals nor the repetition signals see it. What gives it away is the outcome after each restart: the same port
conflict, the same 409, still "0 peers", still pending. The remedy differs too: find what holds the port or the
other instance, read the log to its cause, or wait with a timeout, instead of restarting once more.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

from strict_loop.model.monitoring import TurnFacts
from strict_loop.monitor.recurrence import since_progress, since_strong


@dataclass(frozen=True)
class Loop:
    turns: list[int]
    evidence: str


def _outcome_key(f: TurnFacts) -> Optional[str]:
    """What a turn showed, comparably: its failure (numbers and paths folded), else its call and its output."""
    if f.failed and f.err is not None:
        return f"err\0{f.err}"
    if f.fclass is not None:
        return f"class\0{f.fclass}"
    if f.kind in ("run", "read", "search") and not f.unknown and not f.empty:
        return f"probe\0{f.sig}\0{f.out}"
    return None


def restart_loop(w: list[TurnFacts], repeats: int, window: int) -> Optional[Loop]:
    """The loop closed by the newest turn: ``repeats`` restarts after which the same outcome came back each time."""
    cur = w[-1]
    key = _outcome_key(cur)
    if key is None or cur.kind == "write":
        return None
    recent = since_strong(w[-window:])
    starts = [k for k, f in enumerate(recent) if f.restart and not _never_started(f)]
    if len(starts) < repeats:
        return None
    seen_after: list[TurnFacts] = []  # the first turn after each restart (or the restart itself) showing the outcome
    for a, b in zip(starts, starts[1:] + [len(recent)], strict=True):
        hit = next((f for f in recent[a:b] if _outcome_key(f) == key), None)
        if hit is not None:
            seen_after.append(hit)
    if len(seen_after) < repeats or seen_after[-1] is not cur:
        return None
    if key.startswith("probe") and any(f.edited for f in recent[starts[0] :]):
        return None  # a status read after each change and restart is checking the work, not a loop
    restarted = list(dict.fromkeys(_command(recent[k]) for k in starts))
    named = "; ".join(f"`{a}`" for a in restarted[:3])
    what = cur.etext if cur.failed and cur.etext else cur.brief.split(" -> ", 1)[-1][:120]
    return Loop(
        turns=sorted({recent[k].i for k in starts} | {f.i for f in seen_after}),
        evidence=f"{len(starts)} restarts ({named}) and after {len(seen_after)} of them the same outcome came back: "
        f"{what}",
    )


def hang_loop(w: list[TurnFacts], repeats: int, window: int) -> Optional[Loop]:
    """One step that hung and was cut off on each of its last ``repeats`` runs, with no progress between."""
    cur = w[-1]
    if not cur.hang:
        return None
    recent = since_progress(w[-window:])[0]  # a status that moves is a wait, not a hang
    hung = [f for f in recent if f.hang and f.step == cur.step]
    if len(hung) < repeats:
        return None
    return Loop(
        turns=[f.i for f in hung],
        evidence=f"`{cur.action[:80]}` hung and was cut off {len(hung)} times (it timed out or was interrupted each "
        "time it ran)",
    )


def _never_started(f: TurnFacts) -> bool:
    """A start whose own program was not found started nothing: the same call failing again is a repeated failure
    (its signals say so), not a restart that changed nothing."""
    return f.failed and (f.missing or "").startswith("program ")


def _command(f: TurnFacts) -> str:
    """A restart as the evidence names it: its command, without the tool's name and without the ``NAME=value``
    settings before it (where a token often sits), at most 100 characters."""
    action = f.action.split(" ", 1)[1] if " " in f.action else f.action
    return _SETTINGS.sub("", action)[:100]


_SETTINGS = re.compile(r"^(?:\s*(?:export\s+)?\w+=(?:'[^']*'|\"[^\"]*\"|\S*)\s+)+")
