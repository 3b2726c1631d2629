"""The monitor's card on a task's page, as the person reads it: who paused the task and why (a ``strict-loop watch``
pause in the failure's own words, from its alert), the agent's notes to the person, how the last pause was answered,
and advice only while there is something to advise.

Why apart from ``detail``: ``detail`` reads the task's files; this decides what is true to say from them (issue 26:
a watch pause shown as the monitor's with a generic remedy, "Carry on." after a hand-back, a paused task's note from
the agent nowhere, turn numbers no one ever saw).
"""

from __future__ import annotations

from typing import Any, Optional

from strict_loop.base.clipping import compact
from strict_loop.dashboard import texts
from strict_loop.monitor import ladder

NOTES_SHOWN = 10
RECENT_SHOWN = 5
MAX_NOTE_CHARS = 8000
"""An agent's note whole (``append_event``'s message is at most 8000 characters)."""
BY_MONITOR, BY_WATCH = "the progress monitor", "strict-loop watch (the job failed)"


def turn_times(events: list[dict[str, Any]]) -> dict[int, str]:
    """The monitor's turn number -> the time of that tool call, for the turns among ``events``."""
    out = {}
    for ev in events:
        data = ev.get("data") or {}
        if ev.get("kind") == "tool_call" and type(data.get("turn")) is int and ev.get("ts"):
            out[data["turn"]] = str(ev["ts"])
    return out


def notes(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The agent's notes to the person (events of kind ``note``), newest last; ``current``: left since the last answer
    to a pause and in the round under way, so about the pause the task is in (if any), as the alert's note is
    (``ladder.agent_note``)."""
    out: list[dict[str, Any]] = []
    since = 0  # the first note of the current stretch
    for ev in events:
        if ev.get("kind") in ladder.NOTE_RESETS:
            since = len(out)
        elif ev.get("kind") == "note" and str(ev.get("message") or "").strip():
            out.append({"ts": ev.get("ts"), "text": texts.shorten(str(ev["message"]), MAX_NOTE_CHARS)})
    return [{**note, "current": i >= since} for i, note in enumerate(out)][-NOTES_SHOWN:]


def answered(events: list[dict[str, Any]]) -> Optional[dict[str, Any]]:
    """How the last pause among ``events`` was answered, when the answer is the latest of the two."""
    last = next((e for e in reversed(events) if e.get("kind") in ("spiral.paused", "spiral.resumed")), None)
    if last is None or last.get("kind") != "spiral.resumed":
        return None
    data = last.get("data") or {}
    said = texts.shown(last.get("message"))
    if data.get("note"):
        said += " Your note: " + texts.shorten(str(data["note"]), texts.GLANCE)
    return {"ts": last.get("ts"), "action": data.get("action"), "text": said}


def brief(data: dict[str, Any]) -> str:
    """One line for a recorded turn: the tool, what it was given, what came back (whole up to ``texts.GLANCE``)."""
    raw = data.get("args")
    args: dict[str, Any] = raw if isinstance(raw, dict) else {}
    keys = ("command", "file_path", "path", "pattern", "url", "query")
    what = next((compact(args[k]) for k in keys if args.get(k)), compact(args) if args else "")
    failed = bool(data.get("error")) or data.get("exit_code") not in (None, 0)
    output = " ".join(compact(data.get("output")).split()) or "(no output)"
    return texts.shorten(f"{compact(data.get('tool'))} {what} -> {'FAILED: ' if failed else ''}{output}", texts.GLANCE)


def told(
    lad: dict[str, Any], status: str, events: list[dict[str, Any]], alerts: list[dict[str, Any]]
) -> dict[str, Any]:
    """The ladder (``detail.ladder``) as the card says it."""
    when = turn_times(events)
    standing = lad["paused"] or lad["level"] > 0  # at the ladder's foot, the last signals are history, not the news
    signals = [{**s, "evidence": texts.shown(s.get("evidence"))} for s in lad["signals"] if isinstance(s, dict)]
    signals = signals if standing else []
    whispers = [w for w in lad["whispers"] if isinstance(w, dict)]
    turns = [e.get("data") or {} for e in events if e.get("kind") == "tool_call"][-RECENT_SHOWN:]
    out = {
        **lad,
        "signals": signals,
        "whispers": [{**w, "text": texts.shown(w.get("text")), "ts": when.get(w.get("turn", -1))} for w in whispers],
        "diagnosis": texts.shown(lad["diagnosis"]),
        "recommended_action": texts.shown(lad["recommended_action"]),
        "recent": [brief(t) for t in turns],
        "notes": notes(events),
        "answered": None if lad["paused"] else answered(events),
        "paused_by": BY_MONITOR,
    }
    if lad["paused"] and signals and signals[0].get("kind") == "job_failure":
        out["paused_by"] = BY_WATCH  # watch's own words: its alert holds the failure's advice and the runs
        alert = next((a for a in reversed(alerts) if _kind(a) == "job_failure"), None)
        if alert is not None:
            recent = alert.get("recent") if isinstance(alert.get("recent"), list) else []
            out["diagnosis"] = texts.shown(alert.get("diagnosis"))
            out["recommended_action"] = texts.shown(alert.get("recommended_action"))
            out["recent"] = [texts.shown(r) for r in recent]
    elif not lad["paused"] and status != "running":
        out.update(diagnosis=f"The loop is {status}: the monitor no longer watches it.", recommended_action="")
        out["signals"] = []
    elif not lad["paused"] and not signals:
        out["recommended_action"] = ""  # "Carry on." is the monitor's word to the agent, not advice for the person
    return out


def _kind(alert: dict[str, Any]) -> Optional[str]:
    signals = alert.get("signals")
    first = signals[0] if isinstance(signals, list) and signals else None
    return str(first.get("kind")) if isinstance(first, dict) else None
