"""The alert outbox: a pause is written down at once and delivered later, off the agent's path.

Two records, for two readers. The task's ``alerts.jsonl`` is the ledger a person
reads: append-only, an alert line (the alert, its short message, each channel
``pending``) then one line per delivery attempt (``{"update": <alert id>, "channel",
"state", "attempts", "last_error"}``), which ``fold`` replays into each alert's
current state. The queue the worker delivers from lives outside the workspace, in
this machine's config folder (one small JSON entry per alert), so a cloned
repository carrying ``.agent-loop/`` can never make this machine send its text to a
person's channels. Any process checks the queue in one ``listdir`` and starts the
worker (``alerts.worker``), a detached process that gets the channels' URLs through
its environment only: no file ever holds them.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Optional

from strict_loop.alerts import channels
from strict_loop.base import masking
from strict_loop.base.fsio import append_line, atomic_write, dumps_line
from strict_loop.base.jsonl import json_records
from strict_loop.base.timefmt import now_iso
from strict_loop.model.monitoring import Alert
from strict_loop.storage.store import TaskStore
from strict_loop.storage.trust import config_dir

WORKER_LOCK = ".worker.lock"
STATES = ("pending", "delivered", "failed")
NOTE_EVENTS = 400
"""Events read back for the agent's latest note (``ladder.agent_note``) when an alert is queued."""
HEADING = re.compile(r"^\[[A-Z][A-Z ]{0,30}\]")
"""An alert's heading (``[SPIRALING]``, ``[JOB FAILED]``): all an alert sent again keeps of its recorded headline."""


def queue_dir(root: Path, env: Optional[Mapping[str, str]] = None) -> Path:
    """This workspace's queue: ``$XDG_CONFIG_HOME/strict-loop/outbox/<digest of the workspace path>/``."""
    key = hashlib.sha256(str(root.resolve()).encode()).hexdigest()[:20]
    return config_dir(os.environ if env is None else env) / "outbox" / key


DASHBOARD_URL_ENV = "STRICT_LOOP_DASHBOARD_URL"


def page_link(root: Path, task_id: str, env: Mapping[str, str]) -> str:
    """``answer at <url>/task/<ws>/<task> or run: `` when the person set the dashboard's public URL (first: the
    message is clipped at its end), else nothing. The URL is no secret: it is not masked in the alert."""
    from strict_loop.storage.workspaces import workspace_id

    url = env.get(DASHBOARD_URL_ENV, "").strip().rstrip("/")
    if not url.startswith(("http://", "https://")):
        return ""
    return f"answer at {url}/task/{workspace_id(root)}/{task_id} or run: "


def enqueue(
    store: TaskStore,
    root: Path,
    alert: Alert,
    env: Mapping[str, str],
    *,
    prefix: str,
    resume: str,
    event: Optional[str],
) -> dict[str, str]:
    """Record ``alert`` with every configured channel pending (a misconfiguration as failed), queue it, start the
    worker.

    Returns the delivery summary (channel -> state). ``event`` names the ledger event to write, if any."""
    chans, problems = channels.channels(env, root)
    alert.delivery = {c.name: "pending" for c in chans}
    for i, problem in enumerate(problems):
        alert.delivery[_config_name(i)] = f"failed: {masking.mask(problem, env)}"
    line = said_line(root, alert, env, prefix, resume, latest_note(store))
    with store.locked():
        append_line(store.paths.alerts, dumps_line(line))
        if event:
            store.append_event(
                event, f"{prefix} {alert.diagnosis[:600]}", {"alert": alert.id, "delivery": alert.delivery}
            )
    if chans:
        try:
            queue(root, line, [c.name for c in chans], env)
        except OSError as exc:  # never the agent's call: the pause is recorded, the ledger says why nothing was sent
            reason = (
                f"cannot queue the alert in {queue_dir(root, env)} ({exc.strerror or exc}): fix it and run "
                "strict-loop alerts --retry"
            )
            with store.locked():
                for c in chans:
                    record(store, alert.id, c.name, "failed", 0, reason)
            alert.delivery.update({c.name: f"failed: {reason}" for c in chans})
        kick(root, env)
    return dict(alert.delivery)


def forward(
    store: TaskStore,
    root: Path,
    alert: Alert,
    env: Mapping[str, str],
    *,
    prefix: str,
    resume: str,
    note: Optional[str] = None,
) -> dict[str, str]:
    """Send ``alert``, already in alerts.jsonl with no channel, through the channels ``env`` names: the same alert
    (its id), what is sent now (its diagnosis, ``note`` the agent's note it ends with, and its message) and its
    channels added to the ledger by update lines; returns the delivery summary.

    Why: a supervised harness's hooks raise the monitor's alert in the agent's environment, which never carries a
    channel (the agent must not see their URLs); the supervisor, which has them, sends that very alert, with the page
    link and the resume command of its own environment."""
    chans, problems = channels.channels(env, root)
    names = [c.name for c in chans]
    delivery = dict.fromkeys(names, "pending")
    line = said_line(root, alert, env, prefix, resume, note)
    with store.locked():  # a worker already running records its first attempt after our pending lines
        if names:  # the ledger says what went out: ``fold`` (the page, ``alerts --retry``) reads it back
            sent = {"update": alert.id, "diagnosis": line["diagnosis"], "message": line["message"], "ts": now_iso()}
            append_line(store.paths.alerts, dumps_line(sent))
        for i, problem in enumerate(problems):
            text = masking.mask(problem, env)
            record(store, alert.id, _config_name(i), "failed", 0, text)
            delivery[_config_name(i)] = f"failed: {text}"
        try:
            if names:
                queue(root, line, names, env)
            for name in names:
                record(store, alert.id, name, "pending", 0, None)
        except OSError as exc:
            reason = f"cannot queue the alert in {queue_dir(root, env)} ({exc.strerror or exc}): fix it and retry"
            for name in names:
                record(store, alert.id, name, "failed", 0, reason)
                delivery[name] = f"failed: {reason}"
    if names:
        kick(root, env)
    return delivery


def _config_name(i: int) -> str:
    return "config" if i == 0 else f"config-{i + 1}"


def said_line(
    root: Path, alert: Alert, env: Mapping[str, str], prefix: str, resume: str, note: Optional[str] = None
) -> Any:
    """The alert's ledger line (and payload), masked: the alert and the short message every channel says.

    The one message builder of an alert, for its first delivery, a supervisor's forward and a person's retry alike.
    When the diagnosis ends with the agent's ``note`` (``ladder.with_note``), the note is a line of its own: a
    headline is cut short, and the note is what the person most needs to read."""
    from strict_loop.monitor.ladder import with_note

    tail = with_note("", note) if note else ""
    noted = bool(tail) and alert.diagnosis.endswith(tail)
    diagnosis = alert.diagnosis[: len(alert.diagnosis) - len(tail)] if noted else alert.diagnosis
    link = page_link(root, alert.task_id, env)
    msg = channels.message(prefix, alert.task_id, diagnosis, link + resume, alert.recent, str(note) if noted else "")
    said: dict[str, str] = {"headline": msg.headline, "resume": msg.resume}
    said.update({"recent": msg.recent} if msg.recent else {}, **({"note": str(note)} if noted else {}))
    return masking.mask_tree(
        {**alert.model_dump(mode="json"), "message": said}, {k: v for k, v in env.items() if k != DASHBOARD_URL_ENV}
    )


def latest_note(store: TaskStore) -> Optional[str]:
    """The agent's latest note to the person (``ladder.agent_note``) in the task's recent events."""
    from strict_loop.monitor.ladder import agent_note

    return agent_note(store.events(last=NOTE_EVENTS))


def resent(rec: Mapping[str, Any], base: Alert) -> tuple[Alert, str, Optional[str]]:
    """The alert a line of alerts.jsonl recorded (folded), to send again, the heading it was raised with and the
    agent's note its diagnosis ends with: for a supervisor forwarding its harness's alert and a person's retry.

    alerts.jsonl is in the workspace, which a repository or the agent may write: only its words are taken, cleaned
    and bounded (the diagnosis, the recent turns, the time, the heading, the note); the rest is ``base``'s, which the
    caller made from what it knows, and the resume command and the page link are the sender's (``said_line``)."""
    from strict_loop.monitor.ladder import MAX_NOTE_CHARS, alert_heading

    message = rec.get("message")
    said: Mapping[str, Any] = message if isinstance(message, dict) else {}
    recent, note = rec.get("recent"), said.get("note")
    alert = base.model_copy(
        update={
            "ts": channels.clean(str(rec.get("ts") or base.ts), 40),  # the queue names an entry by id and time
            "diagnosis": channels.clean(str(rec.get("diagnosis") or base.diagnosis), 3000),
            "recent": [channels.clean(str(r), 300) for r in recent[-5:]] if isinstance(recent, list) else base.recent,
        }
    )
    heading = HEADING.match(str(said.get("headline", "")))
    note = channels.clean(note, MAX_NOTE_CHARS) if isinstance(note, str) and note.strip() else None
    return alert, heading.group(0) if heading else alert_heading(alert.signals), note


def queue(root: Path, line: Mapping[str, Any], names: list[str], env: Mapping[str, str]) -> None:
    """Put one alert (its ledger line, already masked) in this machine's queue with ``names`` pending."""
    payload = {
        "text": "\n".join(channels.said(line["message"]).lines()),
        **{k: v for k, v in line.items() if k != "delivery"},
    }
    entry = {
        "workspace": str(root.resolve()),
        "task_id": line["task_id"],
        "alert": line["id"],
        "payload": payload,
        "channels": {n: {"state": "pending", "attempts": 0, "last_error": None} for n in names},
    }
    directory = queue_dir(root, env)
    directory.mkdir(parents=True, exist_ok=True, mode=0o700)
    name = hashlib.sha256(f"{line['id']} {line.get('ts', '')}".encode()).hexdigest()[
        :20
    ]  # ids repeat after a monitor rebuild
    atomic_write(directory / f"{name}.json", json.dumps(entry).encode())


def record(store: TaskStore, alert_id: str, channel: str, state: str, attempts: int, last_error: Optional[str]) -> None:
    """One delivery update in the ledger (caller holds the task lock)."""
    append_line(
        store.paths.alerts,
        dumps_line(
            {
                "update": alert_id,
                "channel": channel,
                "state": state,
                "attempts": attempts,
                "last_error": last_error,
                "ts": now_iso(),
            }
        ),
        sync=state != "pending",
    )


def fold(path: Path) -> list[dict[str, Any]]:
    """Each alert of ``alerts.jsonl`` in its current state: ``channels`` (name -> state, attempts, last_error) and
    ``delivery`` (name -> one-line summary). Lines of an older format (delivery as text only) are read as final."""
    out: list[dict[str, Any]] = []
    latest: dict[
        str, dict[str, Any]
    ] = {}  # an update belongs to the latest alert of its id (a rebuilt monitor reuses ids)
    for _, rec in json_records(path):
        if "update" in rec:
            alert = latest.get(str(rec["update"]))
            # a channel may first appear in an update: a supervisor sent an alert its harness recorded with none
            if alert is not None and isinstance(rec.get("channel"), str) and rec.get("state") in STATES:
                alert["channels"][rec["channel"]] = {k: rec.get(k) for k in ("state", "attempts", "last_error")}
            elif alert is not None and isinstance(rec.get("diagnosis"), str) and isinstance(rec.get("message"), dict):
                alert.update(diagnosis=rec["diagnosis"], message=rec["message"])  # what a supervisor sent
        elif isinstance(rec.get("id"), str):
            chans = {}
            for name, text in (rec.get("delivery") or {}).items():
                state = (
                    "pending" if text == "pending" else "delivered" if str(text).startswith("delivered") else "failed"
                )
                chans[name] = {"state": state, "attempts": 0, "last_error": None if state != "failed" else str(text)}
            latest[rec["id"]] = {**rec, "channels": chans}
            out.append(latest[rec["id"]])
    for alert in out:
        alert["delivery"] = {name: summary(c) for name, c in alert["channels"].items()}
    return out


def summary(chan: Mapping[str, Any]) -> str:
    state, attempts, error = chan.get("state"), chan.get("attempts") or 0, chan.get("last_error")
    if state == "delivered":
        return f"delivered after {attempts} attempt(s)"
    if state == "failed":
        return error if attempts == 0 and error else f"failed after {attempts} attempt(s): {error}"
    return f"pending ({attempts} attempt(s) so far: {error})" if attempts else "pending"


def pending(root: Path, env: Optional[Mapping[str, str]] = None) -> list[Path]:
    """The queued alerts of this workspace: one listdir (a missing folder is the common, cheapest case)."""
    directory = queue_dir(root, env)
    try:
        return sorted(directory / n for n in os.listdir(directory) if n.endswith(".json"))
    except OSError:
        return []


def worker_lock(root: Path, env: Optional[Mapping[str, str]] = None) -> Optional[int]:
    """The worker's lock, taken (an open descriptor; closing it lets go), or None when a worker holds it."""
    import fcntl

    fd = os.open(queue_dir(root, env) / WORKER_LOCK, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return fd
    except OSError:
        os.close(fd)
        return None


def worker_running(root: Path, env: Optional[Mapping[str, str]] = None) -> bool:
    try:
        fd = worker_lock(root, env)
    except OSError:  # no queue folder (or no access to it): no worker either
        return False
    if fd is not None:
        os.close(fd)
    return fd is None


def kick(root: Path, env: Optional[Mapping[str, str]] = None) -> bool:
    """Start the worker if an alert is queued, this process can name a channel, and no worker runs; cheap otherwise.
    Never raises: whatever goes wrong here must not fail the agent's call (the alert stays queued for the next one)."""
    env = os.environ if env is None else env
    try:
        if not pending(root, env) or not channels.configured(env) or worker_running(root, env):
            return False
        return _spawn(root, env)
    except (OSError, ValueError):  # ValueError: an environment value Popen refuses (an embedded NUL)
        return False


def worker_argv(root: Path) -> list[str]:
    """The worker's command (``skillfiles.boot_argv``): it starts in / and imports this very package."""
    from strict_loop.base.skillfiles import boot_argv

    return [*boot_argv("from strict_loop.alerts.worker import main; sys.exit(main())"), str(root)]


def _spawn(root: Path, env: Mapping[str, str]) -> bool:
    import subprocess
    import threading

    proc = subprocess.Popen(
        worker_argv(root),
        env={**env, "XDG_CONFIG_HOME": str(config_dir(env).parent)},  # the queue's folder, as this process found it
        cwd="/",
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        close_fds=True,
    )
    threading.Thread(target=proc.wait, daemon=True).start()  # reaped here, so a long-lived server keeps no zombie
    return True
