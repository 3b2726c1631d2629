"""The agent waits for the person: a permission prompt, an idle prompt, a question, told by each harness's hook.

Claude Code's and Gemini CLI's ``Notification``, Codex's ``PermissionRequest`` and the Hermes plugin's
``pre_approval_request`` reach ``hook`` (from ``strict-loop hook``). The wait is kept in the task's ``waiting.json``
for the page until the same session's next tool call, prompt or stop (``hook`` again, which clears it), recorded as an
``agent.waiting`` event, and sent to the person's channels through the outbox as a pause's alert is: the channels of
the hook's own environment or the person's private file, never the repository's; one alert per kind and task within
``STRICT_LOOP_WAIT_ALERT_S`` seconds (a repeated idle prompt does not spam). The agent's words (the command it asks to
run) are untrusted: one line, clipped and masked before they are kept, shown or sent. Nothing is answered: the
harness goes on asking the person. Only the standard library at import: ``handler`` loads this on every hook call.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Optional

EVENTS = frozenset({"Notification", "PermissionRequest", "pre_approval_request"})
"""The hook events that say the agent waits (Claude Code and Gemini CLI, Codex, the Hermes plugin)."""
FILE, SENT_FILE = "waiting.json", "waiting-alerts.json"
WINDOW_ENV, DEFAULT_WINDOW_S = "STRICT_LOOP_WAIT_ALERT_S", 900.0
KINDS = {
    "permission_prompt": "permission",  # Claude Code
    "worker_permission_prompt": "permission",
    "ToolPermission": "permission",  # Gemini CLI
    "idle_prompt": "idle",
    "elicitation_dialog": "question",  # an MCP server asks the person
    "agent_needs_input": "question",
}
"""Notification types that mean "the agent waits for you"; others (``auth_success``, ...) are not kept or sent."""
SHELLS = frozenset({"Bash", "terminal", "exec_command", "shell", "local_shell", "run_shell_command", "bash"})
MAX_COMMAND, MAX_MESSAGE = 200, 160
CLEARS = ("pre", "post", "prompt", "stop")


def hook(
    root: Path,
    task_dir: Path,
    event: Any,
    env: Mapping[str, str],
    transcript: Callable[[], list[bytes]],
    title: str,
) -> Optional[str]:
    """A wait event (``event``: ``payloads.HookEvent``) kept and alerted; returns a problem to log, else None.
    ``transcript``: the tail of the harness's transcript, read only when the payload does not name the call (Claude
    Code's permission prompt names only the tool)."""
    try:
        wait = read_wait(event.name, event.payload, transcript, env)
        if wait is not None:
            notice(root, task_dir, {**wait, "session": event.session_key[:240], "harness": title}, env)
        return None
    except Exception as exc:  # noqa: BLE001 (a notification must never break the session: logged by the hook)
        return f"waiting: {type(exc).__name__}: {exc}"


def read_wait(
    name: str, payload: Mapping[str, Any], transcript: Callable[[], list[bytes]], env: Mapping[str, str]
) -> Optional[dict[str, Any]]:
    """What the agent waits for, from one harness's payload: ``kind``, ``tool``, ``command`` (clipped, masked),
    ``message`` and ``text`` (the page's words); None for a notification that is no wait."""
    found, shown = payload.get("extra"), payload.get("details")
    extra: dict[str, Any] = found if isinstance(found, dict) else {}
    details: dict[str, Any] = shown if isinstance(shown, dict) else {}  # Gemini CLI's
    message, tool, args = str(payload.get("message") or ""), str(payload.get("tool_name") or ""), None
    if name == "Notification":
        kind = KINDS.get(str(payload.get("notification_type") or ""))
        if details.get("type") == "exec":  # Gemini CLI's confirmation details
            tool, args = "run_shell_command", {"command": details.get("command")}
        elif details.get("type") in ("edit", "mcp"):
            tool, args = str(details.get("toolName") or "edit"), {"path": details.get("filePath")}
        elif kind == "permission":
            tool, args = pending_call(transcript(), message.rsplit(" ", 1)[-1])
    elif name == "PermissionRequest":  # Codex: the call is in the payload
        kind, args = "permission", payload.get("tool_input")
    else:  # the Hermes plugin's pre_approval_request: a dangerous command to approve
        kind, tool = "permission", "terminal"
        args, message = {"command": extra.get("command")}, str(extra.get("description") or "")
    if kind is None:
        return None
    command = _said(_command(args), MAX_COMMAND, env)
    return {
        "kind": kind,
        "tool": _said(tool, 80, env),
        "command": command,
        "message": _said(message, MAX_MESSAGE, env),
        "text": _text(kind, _said(tool, 80, env), command, _said(message, MAX_MESSAGE, env)),
    }


def pending_call(lines: list[bytes], tool: str) -> tuple[str, Any]:
    """The newest call in a Claude Code transcript's tail that has no result yet (the one a permission prompt is
    about), as (tool, arguments); ``tool`` and no arguments when none is found."""
    done: set[str] = set()
    for raw in reversed(lines[-400:]):
        if b'"tool_' not in raw:
            continue
        try:
            entry = json.loads(raw)
            blocks = entry["message"]["content"]
        except (ValueError, KeyError, TypeError):
            continue
        for block in reversed(blocks if isinstance(blocks, list) else []):
            if not isinstance(block, dict):
                continue
            if block.get("type") == "tool_result":
                done.add(str(block.get("tool_use_id")))
            elif block.get("type") == "tool_use" and str(block.get("id")) not in done:
                return str(block.get("name") or tool), block.get("input")
    return tool, None


def _command(args: Any) -> str:
    if isinstance(args, dict):
        value = next((args[k] for k in ("command", "cmd", "file_path", "path", "url") if args.get(k)), "")
        return " ".join(str(w) for w in value) if isinstance(value, list) else str(value)
    return ""


def _said(text: str, cap: int, env: Mapping[str, str]) -> str:
    """Untrusted text made safe to keep, show and send: one line, no control character, no backquote, clipped,
    secrets masked."""
    from strict_loop.alerts.channels import clean
    from strict_loop.base import masking

    return masking.mask(clean(str(text).replace("`", "'"), cap), env) if text else ""


def _text(kind: str, tool: str, command: str, message: str) -> str:
    if kind == "permission" and command:
        return (
            f"permission to run `{command}`"
            if tool in SHELLS or not tool
            else f"permission to use {tool} on `{command}`"
        )
    if kind == "permission":
        return f"permission to use {tool}" if tool else message or "a permission"
    if kind == "idle":
        return "your next message (the agent finished its turn and is idle)"
    return f"an answer: {message}" if message else "an answer"


def notice(root: Path, task_dir: Path, wait: dict[str, Any], env: Mapping[str, str]) -> None:
    """Keep ``wait`` for the page (first: it is cheap), record it, and alert unless one of its kind went out within
    the window."""
    from strict_loop.base.fsio import atomic_write
    from strict_loop.base.timefmt import now_iso

    wait = {**wait, "since": now_iso()}
    atomic_write(task_dir / FILE, json.dumps(wait).encode(), sync=False)
    from strict_loop.base.jsontext import read_object
    from strict_loop.base.layout import TaskPaths
    from strict_loop.storage.store import TaskStore, ValidationCache

    store = TaskStore(TaskPaths(task_dir), task_dir.name, ValidationCache(), 20.0)
    now = time.time()
    with store.locked():
        sent = {k: v for k, v in (read_object(task_dir / SENT_FILE) or {}).items() if isinstance(v, (int, float))}
        throttled = now - sent.get(wait["kind"], 0.0) < window(env)
        data = {k: wait[k] for k in ("kind", "tool", "command", "harness", "session")} | {"throttled": throttled}
        rec = store.append_event("agent.waiting", f"{wait['harness']} waits for you: {wait['text']}", data)
        if not throttled:
            atomic_write(task_dir / SENT_FILE, json.dumps({**sent, wait["kind"]: now}).encode(), sync=False)
    if not throttled:
        _alert(store, root, wait, f"{store.task_id}-waiting-{rec.seq}", env)


def _alert(store: Any, root: Path, wait: dict[str, Any], alert_id: str, env: Mapping[str, str]) -> None:
    from strict_loop.alerts import outbox
    from strict_loop.model.monitoring import Alert

    alert = Alert.notice(
        alert_id,
        store.task_id,
        1,
        f"{wait['harness']} waits for you: {wait['text']}",
        f"answer it in the {wait['harness']} session",
    )
    look = f"strict-loop show_task --workspace {root} --task-id {store.task_id}"
    resume = f"answer it in the {wait['harness']} session ({look})"
    outbox.enqueue(store, root, alert, env, prefix="[WAITING]", resume=resume, event=None)


def window(env: Mapping[str, str]) -> float:
    """Seconds between two alerts of one kind for one task (``STRICT_LOOP_WAIT_ALERT_S``; a bad value: the default)."""
    try:
        value = float(env.get(WINDOW_ENV, DEFAULT_WINDOW_S))
    except ValueError:
        return DEFAULT_WINDOW_S
    return value if value >= 0 else DEFAULT_WINDOW_S


def went_on(task_dir: Optional[Path], event: Any) -> None:
    """A session that goes on (a tool call, a prompt, a stop: ``event``) no longer waits (one stat when no wait is
    kept: the hook asks on every call)."""
    if task_dir is not None and event.phase in CLEARS and kept(task_dir):
        clear(task_dir, event.session_key)


def kept(task_dir: Path) -> bool:
    """Whether the task has a wait kept (one stat: the hook asks on every call)."""
    return os.path.lexists(task_dir / FILE)


def clear(task_dir: Path, session_key: str) -> None:
    """The session went on (a tool call, a prompt, a stop): it no longer waits. Another session's wait stays."""
    path = task_dir / FILE
    if not os.path.lexists(path):
        return  # the common case: one stat
    try:
        kept = json.loads(path.read_bytes())
        if not isinstance(kept, dict) or kept.get("session") in (None, session_key[:240]):
            path.unlink()
    except (OSError, ValueError):
        path.unlink(missing_ok=True)


def current(task_dir: Path) -> Optional[dict[str, Any]]:
    """The task's wait for the page (``text``: "waiting for you: ..."), or None."""
    from strict_loop.base.jsontext import read_object

    path = task_dir / FILE
    kept = read_object(path) if os.path.lexists(path) else None
    if not isinstance(kept, dict) or not isinstance(kept.get("text"), str):
        return None
    from strict_loop.alerts.channels import clean  # the file is in the workspace: its words are cleaned again

    fields = ("kind", "tool", "command", "harness", "since")
    return {k: clean(str(kept.get(k) or ""), 300) for k in fields} | {
        "text": "waiting for you: " + clean(kept["text"], 300)
    }
