"""The overview: one row per task of every indexed workspace, paused and needs-attention first.

Why bounded reads only: the page refreshes on every recorded turn, and a task may have 10,000 rounds; a row costs
state.json, monitor.json and the last lines of the event ledger, never a whole ledger. Pydantic is not used here
(raw JSON, read as ``read_object`` reads): fifty validations per refresh would be the page's whole budget.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Optional

from strict_loop.alerts import waiting
from strict_loop.base.jsonl import last_json, tail_lines
from strict_loop.base.jsontext import read_object
from strict_loop.base.layout import Layout, TaskPaths, check_task_id
from strict_loop.base.timefmt import now_iso, rate_and_eta, seconds_between
from strict_loop.dashboard import texts
from strict_loop.storage import workspaces
from strict_loop.supervisor import limits

EVENT_TAIL = 40
"""Event lines a row reads: enough to find the harness and session of the latest turn."""
ORDER = {"paused": 0, "attention": 1, "running": 2}


def roots(only: Optional[Path] = None, directory: Optional[Path] = None) -> dict[str, Path]:
    """id -> workspace root: the one given, or every workspace of the per-user index whose loop folder is there."""
    if only is not None:
        real = only.resolve()
        return {workspaces.workspace_id(real): real}
    return workspaces.known(directory)


def gone(only: Optional[Path] = None, directory: Optional[Path] = None) -> dict[str, workspaces.Vanished]:
    """id -> what this machine recorded in a workspace and is no longer there (its ``.agent-loop/``, or some task
    folders): an agent's ``rm -rf .agent-loop`` must not make the page forget the workspace."""
    if only is not None:
        lost = workspaces.vanished_here(only.resolve(), directory)
        return {workspaces.workspace_id(only.resolve()): lost} if lost is not None else {}
    return workspaces.vanished(directory)


def shown(text: str) -> str:
    """A file name or path as the page can show it: bytes that are not UTF-8 as ``\\xff`` escapes."""
    try:
        return os.fsencode(text).decode("utf-8", "backslashreplace")
    except UnicodeError:  # a lone surrogate that no file name decodes to (a \\ud800 escape in a JSON file)
        return text.encode("utf-8", "backslashreplace").decode("utf-8")


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


class Unreadable(Exception):
    """A task's file the row cannot use: the row is left out, and the page names the task and says why."""


def field(doc: dict[str, Any], key: str, kind: type | tuple[type, ...], where: str) -> Any:
    """``doc[key]`` when it is of ``kind`` (None when absent or null); any other value is Unreadable."""
    value = doc.get(key)
    if value is None or (isinstance(value, kind) and not (isinstance(value, bool) and kind in (int, float))):
        return value
    raise Unreadable(f"{where}: {key} is {type(value).__name__} {texts.shorten(str(value), 40)!r}, not {_kind(kind)}")


def _kind(kind: type | tuple[type, ...]) -> str:
    names = {
        dict: "an object",
        list: "a list",
        str: "text",
        int: "a whole number",
        float: "a number",
        bool: "true/false",
    }
    return " or ".join(names.get(k, k.__name__) for k in (kind if isinstance(kind, tuple) else (kind,)))


def attention(state: dict[str, Any], mon: dict[str, Any]) -> Optional[str]:
    """Why a person should look, short of a pause (a pause is said by the row's diagnosis); None when nothing calls
    for it."""
    if state.get("needs_human_input"):
        return "needs human input: " + texts.shown(state.get("stop_reason"))
    if state.get("status") == "blocked":
        return "blocked: " + texts.shown(state.get("stop_reason"))
    level = field(mon, "level", int, "monitor.json") or 0
    if level > 0 and state.get("status") == "running" and not field(mon, "paused", bool, "monitor.json"):
        return "the monitor warned the agent" + (" twice" if level > 1 else "")
    stalled = field(field(state, "counters", dict, "state.json") or {}, "consecutive_no_progress", int, "state.json")
    return f"{stalled} rounds without progress" if (stalled or 0) >= 2 and state.get("status") == "running" else None


def rolled_forward(paths: TaskPaths, state: dict[str, Any], iteration: int) -> tuple[dict[str, Any], int]:
    """The state as its ledger tells it: after a failed checkpoint (a full disk once the round was recorded),
    state.json is a round or more behind iterations.jsonl until the next write, and the page must not be."""
    last = last_json(paths.iterations)
    ahead = last.get("iteration") if last else None
    if type(ahead) is not int or ahead <= iteration:
        return state, iteration
    assert last is not None
    kinds = {"status": str, "stop_reason": str, "needs_human_input": bool}
    newer = {k: last[k] for k, kind in kinds.items() if isinstance(last.get(k), kind)}
    return {**state, **newer, "updated_at": last.get("recorded_at") or state.get("updated_at")}, ahead


def row(ws_id: str, root: Path, paths: TaskPaths) -> Optional[dict[str, Any]]:
    """One task's row; None while its state.json is not there yet (a task being created); Unreadable when one of its
    files is damaged (not JSON, not UTF-8, a wrong type)."""
    if not paths.state.exists():
        return None
    state = read_object(paths.state)
    if state is None:
        raise Unreadable("state.json cannot be read (not UTF-8, not JSON, or not an object)")
    contract = field(state, "contract", dict, "state.json")
    if contract is None:
        raise Unreadable("state.json has no contract")
    mon = read_object(paths.monitor) if paths.monitor.exists() else {}
    if mon is None:
        raise Unreadable("monitor.json cannot be read (not UTF-8, not JSON, or not an object)")
    events = events_tail(paths)
    counters = field(state, "counters", dict, "state.json") or {}
    field(state, "status", str, "state.json")
    state, iteration = rolled_forward(paths, state, field(counters, "iteration", int, "state.json") or 0)
    total = field(field(contract, "limits", dict, "state.json") or {}, "max_iterations", int, "state.json")
    elapsed = seconds_between(str(state.get("created_at")), now_iso()) or 0.0
    rate, eta = rate_and_eta(iteration, 0, elapsed, total)
    last = max([str(state.get("updated_at") or "")] + [str(e.get("ts") or "") for e in events[-1:]])
    harness, session = harness_session(paths, events)
    whispers = field(mon, "whispers", list, "monitor.json") or []
    wait = waiting.current(paths.root) if state.get("status") == "running" else None  # a permission, an idle prompt
    wait = wait or (limits.page_wait(events) if state.get("status") == "running" else None)  # a usage limit's reset
    why = wait["text"] if wait else attention(state, mon)
    paused = bool(field(mon, "paused", bool, "monitor.json"))
    group = "paused" if paused else "attention" if why else str(state.get("status") or "running")
    ongoing = state.get("status") == "running" and not paused  # an ETA or a whisper is said of a loop that goes on
    warned = ongoing and (field(mon, "level", int, "monitor.json") or 0) > 0
    return {
        "ws": ws_id,
        "workspace": shown(str(root)),
        "task_id": str(state.get("task_id") or paths.root.name),
        "goal": texts.shorten(str(contract.get("goal") or ""), texts.LONG),
        "status": state.get("status"),
        "group": group,
        "paused": paused,
        "attention": why,
        "waiting": wait,
        "round": iteration,
        "max_rounds": total,
        "last_activity": last,
        "rate_per_hour": round(rate * 3600, 2),
        "eta_s": eta if ongoing else None,
        "stop": field(state, "last_stop", dict, "state.json"),
        "whisper": _whisper(whispers[-1]) if warned and whispers and isinstance(whispers[-1], dict) else None,
        "diagnosis": _pause_line(field(mon, "last_signals", list, "monitor.json") or []) if paused else None,
        "harness": harness,
        "session": session,
        "link": f"/task/{ws_id}/{paths.root.name}",
    }


def _pause_line(signals: list[Any]) -> str:
    """What paused the task: the main signal's evidence, whole (the page cuts it for a glance, at a word)."""
    main = next((s for s in signals if isinstance(s, dict)), None)
    return texts.shown(main.get("evidence")) if main is not None else ""


def _whisper(whisper: dict[str, Any]) -> dict[str, Any]:
    return {**whisper, "text": texts.shown(whisper.get("text"))}


def overview(only: Optional[Path] = None, directory: Optional[Path] = None) -> dict[str, Any]:
    """Every row, paused first, then needs-attention, running, and the ended ones; newest activity first within.
    A task whose files cannot be read is left out and named under ``skipped``, a workspace whose ``.agent-loop/`` is
    gone under ``removed``: one damaged file never blanks the page, and a removed record is never silently dropped."""
    rows: list[dict[str, Any]] = []
    skipped: list[dict[str, Any]] = []
    removed: list[dict[str, Any]] = []
    listed = roots(only, directory)
    for ws_id, lost in gone(only, directory).items():
        where = {"ws": ws_id, "workspace": shown(str(lost.path))}
        removed.append({**where, "whole": lost.whole, "tasks": list(lost.tasks), "problem": shown(lost.describe())})
    for ws_id, root in listed.items():
        for paths in task_dirs(root):
            found, problem = _row_or_problem(ws_id, root, paths)
            if found is not None:
                rows.append(found)
            elif problem:
                skipped.append(_skipped(ws_id, root, paths.root.name, problem))
    rows.sort(key=lambda r: r["last_activity"], reverse=True)
    rows.sort(key=lambda r: ORDER.get(r["group"], 3))
    return {
        "generated_at": now_iso(),
        "workspaces": {k: shown(str(v)) for k, v in listed.items()} | {r["ws"]: r["workspace"] for r in removed},
        "tasks": rows,
        "skipped": skipped,
        "removed": removed,
    }


def _row_or_problem(ws_id: str, root: Path, paths: TaskPaths) -> tuple[Optional[dict[str, Any]], str]:
    name = paths.root.name
    if shown(name) != name:
        return None, "its folder name is not UTF-8, so it is no task id"
    try:
        check_task_id(name)
        return row(ws_id, root, paths), ""
    except (Unreadable, ValueError) as exc:
        return None, str(exc)
    except Exception as exc:  # noqa: BLE001 (a file damaged in a way not foreseen costs its row, never the page)
        return None, f"its files cannot be shown ({type(exc).__name__}: {texts.shorten(str(exc), 200)})"


def _skipped(ws_id: str, root: Path, name: str, problem: str) -> dict[str, Any]:
    """A task left out, named; with the link to its page when its name is a task id (the page shows what loads)."""
    try:
        link: Optional[str] = f"/task/{ws_id}/{check_task_id(name)}"
    except ValueError:
        link = None
    return {"ws": ws_id, "workspace": shown(str(root)), "folder": shown(name), "problem": problem, "link": link}
