"""``strict-loop alerts``: a person's view of the outbox (channels configured here, each alert's delivery) and retry."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Optional

from strict_loop.alerts import channels, outbox
from strict_loop.base.errors import LoopError
from strict_loop.base.layout import TASK_ID_HINT, check_task_id
from strict_loop.loop.workspace import Workspace


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

    A person's explicit step: the text sent is the one alerts.jsonl holds (shown by ``strict-loop alerts`` first)."""
    from strict_loop.monitor.ladder import resume_command

    store = ws.task_store(task_id)
    with store.locked():
        for a in outbox.fold(path):
            names = [n for n, c in a["channels"].items() if c["state"] != "delivered" and not n.startswith("config")]
            if not names:
                continue
            for name in names:
                outbox.record(store, a["id"], name, "pending", 0, None)
            # alerts.jsonl is in the workspace, which a repository may bring: what is sent again is rebuilt here,
            # the diagnosis cleaned and the resume command ours; nothing else of the file's line goes out
            diagnosis = channels.clean(str(a.get("diagnosis", "")), 1000)
            msg = channels.message("[SPIRALING]", task_id, diagnosis, resume_command(ws.root, task_id))
            line = {
                "id": a["id"],
                "ts": channels.clean(str(a.get("ts", "")), 40),
                "task_id": task_id,
                "diagnosis": diagnosis,
                "message": {"headline": msg.headline, "resume": msg.resume},
            }
            outbox.queue(ws.root, line, names, os.environ)


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
