"""The overview: one row per task of every indexed workspace, paused and needs-attention first.

Why bounded reads only: the page refreshes on every recorded turn, and a task may have 10,000 rounds; a row costs
state.json, monitor.json and the last lines of the event ledger, never a whole ledger. Pydantic is not used here
(raw JSON, read as ``read_object`` reads): fifty validations per refresh would be the page's whole budget.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Optional

from strict_loop.base.jsonl import tail_lines
from strict_loop.base.jsontext import read_object
from strict_loop.base.layout import Layout, TaskPaths
from strict_loop.base.timefmt import now_iso, rate_and_eta, seconds_between
from strict_loop.storage import workspaces

EVENT_TAIL = 40
"""Event lines a row reads: enough to find the harness and session of the latest turn."""
ORDER = {"paused": 0, "attention": 1, "running": 2}


def roots(only: Optional[Path] = None, directory: Optional[Path] = None) -> dict[str, Path]:
    """id -> workspace root: the one given, or every workspace of the per-user index."""
    if only is not None:
        real = only.resolve()
        return {workspaces.workspace_id(real): real}
    return workspaces.known(directory)


def task_dirs(root: Path) -> list[TaskPaths]:
    tasks = Layout(root).tasks
    try:
        names = sorted(p.name for p in tasks.iterdir() if p.is_dir())
    except OSError:
        return []
    return [TaskPaths(tasks / n) for n in names if TaskPaths(tasks / n).exists()]


def events_tail(paths: TaskPaths, count: int = EVENT_TAIL) -> list[dict[str, Any]]:
    out = []
    for line in tail_lines(paths.events, count):
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, dict):
            out.append(value)
    return out


def harness_session(paths: TaskPaths, events: list[dict[str, Any]]) -> tuple[Optional[str], Optional[str]]:
    """The harness and session of the latest hook-recorded turn, else of the supervisor's session.json."""
    for ev in reversed(events):
        data = ev.get("data")
        hook = data.get("hook") if isinstance(data, dict) else None
        if isinstance(hook, dict) and hook.get("harness"):
            return str(hook["harness"]), str(hook["session_id"]) if hook.get("session_id") else None
    sess = read_object(paths.supervisor / "session.json")
    if sess:
        return str(sess.get("harness") or "") or None, str(sess.get("session_id") or "") or None
    return None, None


def attention(state: dict[str, Any], mon: dict[str, Any]) -> Optional[str]:
    """Why a person should look, short of a pause; None when nothing calls for it."""
    if state.get("needs_human_input"):
        return "needs human input: " + str(state.get("stop_reason") or "")[:200]
    if state.get("status") == "blocked":
        return "blocked: " + str(state.get("stop_reason") or "")[:200]
    if int(mon.get("level") or 0) > 0 and state.get("status") == "running":
        return f"the monitor whispered (level {mon.get('level')})"
    stalled = int((state.get("counters") or {}).get("consecutive_no_progress") or 0)
    return f"{stalled} rounds without progress" if stalled >= 2 and state.get("status") == "running" else None


def row(ws_id: str, root: Path, paths: TaskPaths) -> Optional[dict[str, Any]]:
    """One task's row, or None when its state cannot be read (a task being created, a damaged file)."""
    state = read_object(paths.state)
    if state is None or not isinstance(state.get("contract"), dict):
        return None
    mon = read_object(paths.monitor) or {}
    events = events_tail(paths)
    counters = state.get("counters") or {}
    limits = state["contract"].get("limits") or {}
    iteration, total = int(counters.get("iteration") or 0), limits.get("max_iterations")
    elapsed = seconds_between(str(state.get("created_at")), now_iso()) or 0.0
    rate, eta = rate_and_eta(iteration, 0, elapsed, total if isinstance(total, int) else None)
    last = max([str(state.get("updated_at") or "")] + [str(e.get("ts") or "") for e in events[-1:]])
    harness, session = harness_session(paths, events)
    whispers = mon.get("whispers") or []
    why = attention(state, mon)
    paused = bool(mon.get("paused"))
    group = "paused" if paused else "attention" if why else str(state.get("status") or "running")
    return {
        "ws": ws_id,
        "workspace": str(root),
        "task_id": str(state.get("task_id") or paths.root.name),
        "goal": str(state["contract"].get("goal") or "")[:300],
        "status": state.get("status"),
        "group": group,
        "paused": paused,
        "attention": why,
        "round": iteration,
        "max_rounds": total,
        "last_activity": last,
        "rate_per_hour": round(rate * 3600, 2),
        "eta_s": eta,
        "stop": state.get("last_stop"),
        "whisper": whispers[-1] if whispers else None,
        "diagnosis": _pause_line(mon) if paused else None,
        "harness": harness,
        "session": session,
        "link": f"/task/{ws_id}/{paths.root.name}",
    }


def _pause_line(mon: dict[str, Any]) -> str:
    signals = mon.get("last_signals") or []
    return "; ".join(f"{s.get('kind')}: {str(s.get('evidence'))[:200]}" for s in signals[:3] if isinstance(s, dict))


def overview(only: Optional[Path] = None, directory: Optional[Path] = None) -> dict[str, Any]:
    """Every row, paused first, then needs-attention, running, and the ended ones; newest activity first within."""
    rows: list[dict[str, Any]] = []
    listed = roots(only, directory)
    for ws_id, root in listed.items():
        rows += [r for p in task_dirs(root) if (r := row(ws_id, root, p)) is not None]
    rows.sort(key=lambda r: r["last_activity"], reverse=True)
    rows.sort(key=lambda r: ORDER.get(r["group"], 3))
    return {"generated_at": now_iso(), "workspaces": {k: str(v) for k, v in listed.items()}, "tasks": rows}
