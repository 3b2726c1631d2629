"""``strict-loop alerts``: a person's view of the outbox (channels configured here, each alert's delivery) and retry."""

from __future__ import annotations

import json
import os
from pathlib import Path
from shlex import quote
from typing import Any, Optional

from strict_loop.alerts import channels, outbox
from strict_loop.base.errors import LoopError
from strict_loop.base.layout import TASK_ID_HINT, check_task_id
from strict_loop.base.timefmt import now_iso
from strict_loop.loop.workspace import Workspace
from strict_loop.model.monitoring import Alert, MonitorState


def run(workspace: str, task_id: Optional[str], retry: bool, as_json: bool, test: bool = False) -> int:
    """Print the channels this environment configures (and what is wrong with them) and every alert with its
    delivery; ``retry`` re-queues failures; ``test`` sends a test message through every channel now."""
    from strict_loop.alerts.send import url_problem

    ws = Workspace(workspace)
    root = ws.root
    if task_id:
        try:
            check_task_id(task_id)
        except ValueError as exc:
            raise LoopError("alerts.task_id", str(exc), TASK_ID_HINT) from None
    ids = [task_id] if task_id else ws.layout.task_ids()
    chans, problems = channels.channels(os.environ, root)
    problems += [f"{c.name}: {problem}" for c in chans if (problem := url_problem(c))]
    if test:
        return _test(chans, problems, root, as_json)
    found: list[dict[str, Any]] = []
    for tid in ids:
        paths = ws.task_paths(tid)
        if not paths.exists():
            raise LoopError("channels.task_id", f"there is no task '{tid}' in {root}", "run strict-loop list_tasks")
        if retry and paths.alerts.exists():
            _requeue(ws, tid, paths.alerts)
        found += outbox.fold(paths.alerts) if paths.alerts.exists() else []
    if retry:
        outbox.kick(root)
    if as_json:
        print(
            json.dumps(
                {
                    "channels": [c.name for c in chans],
                    "problems": problems,
                    "alerts": [{k: a.get(k) for k in ("id", "task_id", "ts", "channels", "delivery")} for a in found],
                },
                indent=2,
            )
        )
        return 0
    print("channels here: " + (", ".join(c.name for c in chans) or "none (see references/alerts.md)"))
    for problem in problems:
        print(f"  problem: {problem}")
    for a in found:
        said = (a.get("message") or {}).get("headline", a.get("diagnosis", ""))
        print(channels.clean(f"{a['id']} ({a.get('ts', '')}): {said}", 240))  # no control character from the file
        for name, text in a["delivery"].items():
            print("  " + channels.clean(f"{name}: {text}", 300))
    if not found:
        print("no alert raised" + (f" for task '{task_id}'" if task_id else ""))
    return 0


def _requeue(ws: Workspace, task_id: str, path: Path) -> None:
    """Every channel of the task's alerts not yet delivered back to pending (attempts from 0), queued for the worker.

    A person's explicit step: what is sent again is the message the alert was first sent with (``outbox.said_line``:
    its heading, diagnosis, note and recent turns as alerts.jsonl holds them, shown by ``strict-loop alerts`` first),
    with this environment's page link."""
    store = ws.task_store(task_id)
    with store.locked():
        for a in outbox.fold(path):
            names = [n for n, c in a["channels"].items() if c["state"] != "delivered" and not n.startswith("config")]
            if not names:
                continue
            for name in names:
                outbox.record(store, a["id"], name, "pending", 0, None)
            # alerts.jsonl is in the workspace, which a repository may bring: only its words go out again, cleaned;
            # the resume command is ours
            alert, heading, note = outbox.resent(a, _base(task_id, a))
            resume = _resume(ws.root, task_id, alert.level)
            outbox.queue(
                ws.root, outbox.said_line(ws.root, alert, os.environ, heading, resume, note), names, os.environ
            )


def _base(task_id: str, rec: dict[str, Any]) -> Alert:
    """What an alert sent again keeps of its recorded line besides its words: its id (the ledger's key), its turn and
    level (a pause, or a warning about the loop's own files); no signal, nor advice, from a file."""
    from strict_loop.monitor.ladder import recommended_action

    turn, level = rec.get("turn"), rec.get("level")
    level = level if isinstance(level, int) and 1 <= level <= 3 else 3
    return Alert(
        id=str(rec["id"]),
        ts=now_iso(),
        task_id=task_id,
        turn=turn if isinstance(turn, int) and turn >= 0 else 0,
        level=level,
        signals=[],
        diagnosis="",
        recent=[],
        recommended_action=recommended_action(MonitorState(paused=True), []) if level == 3 else "",
    )


def _resume(root: Path, task_id: str, level: int) -> str:
    """The command the alert names: a pause's resume command, else where the person looks (``safeguards``)."""
    from strict_loop.monitor.ladder import resume_command

    if level == 3:
        return resume_command(root, task_id)
    return f"strict-loop show_task --workspace {quote(str(root))} --task-id {quote(task_id)}"


def _test(chans: list[channels.Channel], problems: list[str], root: Path, as_json: bool) -> int:
    """One test message through each channel, now, once (no retry, nothing recorded): exit 0 only if every channel
    took it, so a person learns a channel is wrong before a pause needs it."""
    from strict_loop.alerts.send import SendError, send
    from strict_loop.base import masking

    msg = channels.message("[TEST]", root.name, "strict-loop test alert: this channel works", "nothing to do")
    payload = {"text": "\n".join(msg.lines()), "test": True, "workspace": root.name}
    timeout = channels.delivery(os.environ).timeout
    outcomes: dict[str, str] = {}
    for c in chans:
        try:
            outcomes[c.name] = f"delivered ({send(c, msg, payload, timeout)})"
        except SendError as exc:
            outcomes[c.name] = "failed: " + masking.mask(str(exc))
    ok = bool(chans) and not problems and all(o.startswith("delivered") for o in outcomes.values())
    if as_json:
        print(json.dumps({"channels": outcomes, "problems": problems, "ok": ok}, indent=2))
    else:
        for name, outcome in outcomes.items():
            print(channels.clean(f"{name}: {outcome}", 300))
        for problem in problems:
            print(f"problem: {problem}")
        if not chans:
            print("no channel configured (see references/alerts.md)")
    return 0 if ok else 1
