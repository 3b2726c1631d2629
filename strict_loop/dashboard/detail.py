"""A task's page: the contract, the rounds, the monitor's ladder with its evidence, the last turns, alerts, stop-check
history, the hand-back text, the plot's data, and which rounds a rollback can go to (with a preview).

Why bounded: every ledger is read from its end, a fixed number of lines (``ROUND_TAIL``, ``EVENT_TAIL``), so a
10,000-round task costs what a 100-round one does; the page says how far back it looked.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, Optional

from pydantic import ValidationError

from strict_loop.alerts import outbox
from strict_loop.base.errors import LoopError
from strict_loop.base.jsonl import json_records
from strict_loop.base.jsontext import read_object
from strict_loop.base.layout import TaskPaths
from strict_loop.dashboard import card, overview, texts
from strict_loop.loop.monitoring import pause_id
from strict_loop.loop.workspace import Workspace
from strict_loop.model.monitoring import MonitorState
from strict_loop.model.records import TaskState
from strict_loop.storage.snapshots import SnapshotError, Snapshots

ROUND_TAIL = 200
EVENT_TAIL = 4000
TURNS_SHOWN = 15
STOPS_SHOWN = 30
ALERTS_SHOWN = 20
MAX_HANDBACK_CHARS = 50_000
EMPTY_LADDER: dict[str, Any] = {
    "level": 0,
    "paused": False,
    "paused_at": None,
    "pause_id": None,
    "turns": 0,
    "signals": [],
    "whispers": [],
    "muted_until": {},
    "notice": None,
    "diagnosis": "",
    "recommended_action": "",
    "recent": [],
}


def task(ws_id: str, root: Path, task_id: str) -> dict[str, Any]:
    """Everything the task's page shows; LoopError when the task is not there or its state.json does not load.

    A damaged file of the task costs its part of the page, never the page: the part is left out and ``problems`` says
    which and why (issue 25: a list as an event's ``data`` or a wrong type in monitor.json made the whole page a 500).
    """
    work = Workspace(root)
    view = work.show_task(task_id=task_id)
    state = view.state  # rolled forward to the ledger: the round count is the true one
    paths = work.task_paths(state.task_id)
    problems: list[str] = []
    events = usable(problems, [e for _, e in json_records(paths.events, last=EVENT_TAIL)])
    lad = part(problems, "the monitor", lambda: ladder(work, state.task_id, paths.monitor, problems), None)
    lad = {**EMPTY_LADDER, **(lad or {})}
    folded = part(problems, "alerts.jsonl", lambda: outbox.fold(paths.alerts), [])
    return {
        "row": part(problems, "the summary", lambda: summary(ws_id, root, paths, state, lad, problems), {}),
        "contract": state.contract.model_dump(mode="json", exclude={"monitor"}),
        "status": {
            "status": state.status,
            "stop_reason": texts.shown(state.stop_reason) if state.stop_reason else state.stop_reason,
            "next_task": state.next_task,
            "counters": state.counters.model_dump(mode="json"),
            "current_round": state.current_round.model_dump(mode="json") if state.current_round else None,
        },
        "rounds": part(
            problems,
            "iterations.jsonl",
            lambda: rounds(paths.iterations, [r.model_dump(mode="json") for r in state.recent_rounds]),
            [],
        ),
        "ladder": part(problems, "the monitor", lambda: card.told(lad, state.status, events, folded), lad),
        "turns": part(problems, "the last turns", lambda: turns(events), []),
        "alerts": part(problems, "alerts.jsonl", lambda: alerts(folded), []),
        "stops": part(problems, "the stop checks", lambda: stops(events), []),
        "handback": handback(paths.root / "handback.md"),
        "plot": part(problems, "the plot", lambda: plot(events), []),
        "snapshots": snapshot_rounds(root, state.task_id, paths.root, state.created_at),
        "looked_back": {"events": len(events), "rounds": ROUND_TAIL},
        "budget": [line.model_dump(mode="json") for line in view.budget],  # what is spent of each budget set
        "problems": problems,
    }


def part(problems: list[str], what: str, make: Callable[[], Any], fallback: Any) -> Any:
    """One part of the page; ``fallback`` and a line in ``problems`` when a damaged file makes it fail."""
    try:
        return make()
    except Exception as exc:  # noqa: BLE001 (one damaged file costs its part of the page, never the page)
        problems.append(texts.shorten(f"{what}: not shown ({getattr(exc, 'problem', None) or exc})", 400))
        return fallback


def usable(problems: list[str], events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The events whose ``data`` is an object (or absent); the others are counted in ``problems``, never shown."""
    kept = [e for e in events if isinstance(e.get("data") or {}, dict)]
    if len(kept) < len(events):
        problems.append(f"events.jsonl: {len(events) - len(kept)} recent line(s) whose data is not an object, left out")
    return kept


def summary(
    ws_id: str, root: Path, paths: TaskPaths, state: TaskState, lad: dict[str, Any], problems: list[str]
) -> dict[str, Any]:
    """The overview's row of the task; when one of its files is damaged, the row the loaded state gives."""
    try:
        found = overview.row(ws_id, root, paths)
    except overview.Unreadable as exc:  # said once: the ladder may have named the same file
        if not any(said.startswith(str(exc).split(":")[0]) for said in problems):
            problems.append(str(exc))
        found = None
    if found is not None:
        return found
    paused = bool(lad.get("paused"))
    return {
        "ws": ws_id,
        "workspace": overview.shown(str(root)),
        "task_id": state.task_id,
        "goal": state.contract.goal,
        "status": state.status,
        "group": "paused" if paused else state.status,
        "paused": paused,
        "round": state.counters.iteration,
        "max_rounds": state.contract.limits.max_iterations,
        "last_activity": state.updated_at,
        "stop": state.last_stop.model_dump(mode="json") if state.last_stop else None,
        "link": f"/task/{ws_id}/{state.task_id}",
    }


def stops(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    checked = [e for e in events if e.get("kind") == "stop.checked"]
    return [{"ts": e.get("ts"), **(e.get("data") or {}), "message": e.get("message")} for e in checked][-STOPS_SHOWN:]


def rounds(iterations: Path, recent: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The last rounds, newest last: from iterations.jsonl's tail, else the state's window."""
    out = []
    for _, rec in json_records(iterations, last=ROUND_TAIL):
        out.append(
            {
                "iteration": rec.get("iteration"),
                "recorded_at": rec.get("recorded_at"),
                "duration_s": rec.get("duration_s"),
                "task": texts.shorten(str(rec.get("task") or ""), texts.GLANCE),
                "result": texts.shorten(str(rec.get("result_summary") or ""), texts.GLANCE),
                "verification": texts.shorten(str(rec.get("verification_summary") or ""), texts.GLANCE),
                "progress": rec.get("progress"),
                "status": rec.get("status"),
            }
        )
    return out or [{**r, "result": r.get("result", ""), "verification": r.get("verification", "")} for r in recent]


def ladder(work: Workspace, task_id: str, monitor: Path, problems: list[str]) -> dict[str, Any]:
    """The monitor's state as a person reads it: level, each signal with its evidence and turns, the whispers, the
    diagnosis and what it recommends. A damaged monitor.json is said, and the ladder shown is the verdict's, which
    the monitor rebuilds from the ledger as the hooks do."""
    mon: Optional[dict[str, Any]] = {}
    if monitor.exists():
        raw = read_object(monitor)
        try:
            mon = MonitorState.model_validate(raw if raw is not None else "not an object").model_dump(mode="json")
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(k) for k in first["loc"]) or "the file"
            problems.append(
                f"monitor.json is damaged ({where}: {texts.shorten(first['msg'], 200)}); the ladder below is the one "
                "the monitor rebuilds from the event ledger, as the hooks do"
            )
            mon = None
    found: dict[str, Any]
    try:
        verdict = work.detect_spiral(task_id=task_id)
        found = {"diagnosis": verdict.diagnosis, "recommended_action": verdict.recommended_action}
        found["recent"] = verdict.recent
    except LoopError as exc:
        verdict = None
        found = {"diagnosis": f"(no diagnosis: {exc})", "recommended_action": "", "recent": []}
    if mon is None:
        mon = {"paused": bool(verdict and verdict.paused), "level": verdict.level if verdict else 0}
        mon["last_signals"] = [s.model_dump(mode="json") for s in verdict.signals] if verdict else []
    return {
        "level": mon.get("level", 0),
        "paused": bool(mon.get("paused")),
        "paused_at": mon.get("paused_at"),
        "pause_id": pause_id(MonitorState.model_validate(mon)) if mon.get("paused") else None,  # every answer names it
        "turns": mon.get("turns", 0),
        "signals": mon.get("last_signals") or [],
        "whispers": mon.get("whispers") or [],
        "muted_until": mon.get("muted_until") or {},
        "notice": mon.get("notice"),
        **found,
    }


def turns(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for ev in [e for e in events if e.get("kind") == "tool_call"][-TURNS_SHOWN:]:
        data = ev.get("data") or {}
        out.append(
            {
                "turn": data.get("turn"),
                "ts": ev.get("ts"),
                "tool": data.get("tool"),
                "args": texts.shorten(json.dumps(data.get("args") or {}, ensure_ascii=False), texts.LONG),
                "output": texts.shorten(str(data.get("output") or ""), texts.LONG, tail=texts.LONG // 2),
                "failed": bool(data.get("error")) or (data.get("exit_code") not in (None, 0)),
            }
        )
    return out


def alerts(folded: list[dict[str, Any]]) -> list[dict[str, Any]]:
    keep = ("id", "ts", "turn", "delivery", "channels")
    return [
        {
            **{k: a.get(k) for k in keep},
            "diagnosis": texts.shown(a.get("diagnosis")),
            "recommended_action": texts.shown(a.get("recommended_action")),
        }
        for a in folded[-ALERTS_SHOWN:]
    ]


def handback(path: Path) -> Optional[str]:
    """handback.md as the loop wrote it; a link, FIFO, device or oversized file (which a repository or an agent
    could plant) is named, never followed or read: the page must not hang, fill memory or show another file."""
    from strict_loop.base.fsio import read_own

    try:
        text = read_own(path, MAX_HANDBACK_CHARS * 4).decode("utf-8", errors="replace")
    except FileNotFoundError:
        return None
    except (OSError, LoopError) as exc:
        return f"(handback.md is not shown: {getattr(exc, 'problem', None) or exc})"
    if len(text) <= MAX_HANDBACK_CHARS:
        return text
    return texts.shorten(text, MAX_HANDBACK_CHARS) + f"\n(cut here: the whole is in {path})"


def plot(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per round (of the events read): tool calls, failed calls, the best verifier score a turn reported."""
    per: dict[int, dict[str, Any]] = {}
    current = 0
    for ev in events:
        data = ev.get("data") or {}
        if ev.get("kind") == "round.started" and isinstance(data.get("iteration"), int):
            current = data["iteration"]
        elif ev.get("kind") == "tool_call":
            slot = per.setdefault(current, {"round": current, "calls": 0, "failures": 0, "score": None})
            slot["calls"] += 1
            slot["failures"] += bool(data.get("error")) or data.get("exit_code") not in (None, 0)
            score = data.get("score")
            if isinstance(score, (int, float)) and (slot["score"] is None or score > slot["score"]):
                slot["score"] = score
    return [per[k] for k in sorted(per)]


def snapshot_rounds(root: Path, task_id: str, folder: Path, stamp: str) -> dict[str, Any]:
    if not Snapshots.available():
        return {"rounds": [], "note": "git is not installed: no snapshots, no rollback"}
    try:
        return {"rounds": Snapshots(root, task_id, folder, stamp).rounds(), "note": ""}
    except (SnapshotError, OSError) as exc:
        return {"rounds": [], "note": f"snapshots unreadable: {texts.shorten(str(exc), 300)}"}


def rollback_preview(root: Path, task_id: str, to: int) -> dict[str, Any]:
    """What ``resume --action rollback --to N`` would change; LoopError when there is no such snapshot."""
    work = Workspace(root)
    state = work.show_task(task_id=task_id).state
    paths = work.task_paths(state.task_id)
    try:
        changes = Snapshots(root, state.task_id, paths.root, state.created_at).preview(to)
    except (SnapshotError, OSError) as exc:
        raise LoopError("to", texts.shorten(str(exc), 500), "pick a round the page lists under snapshots") from None
    return {"to": to, "files": changes[:500], "count": len(changes)}
