"""Recording one agent turn: the single path every adapter (MCP, CLI, harness hooks) takes for a ``tool_call`` event.

Secrets are masked before anything is stored, the monitor sees the turn under the
task's lock (with the settings and window its records hold: ``guarded``), and a pause's alert goes to the outbox
after it (delivered in the background).
Kept apart from ``workspace`` so that the hook handler, which runs once per agent
tool call, records exactly as ``append_event`` does without importing every operation.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from strict_loop.alerts import outbox
from strict_loop.base import masking
from strict_loop.loop import safeguards
from strict_loop.loop.monitoring import TaskMonitor
from strict_loop.model.monitoring import Alert, MonitorState, MonitorView
from strict_loop.model.records import EventRecord
from strict_loop.model.settings import MonitorSettings
from strict_loop.model.turns import Turn, clip_turn_data
from strict_loop.model.validation import validate_input
from strict_loop.monitor import ladder
from strict_loop.storage.store import TaskStore


@dataclass(frozen=True)
class Recorded:
    """What recording a turn did: its event line, what the monitor said because of this very turn, and what rides
    on the result (``supervisor``: as every operation's result, with a person's resume notice handed over once)."""

    event: EventRecord
    supervisor: MonitorView
    whisper: Optional[str] = None
    """The whisper this turn produced (None when the turn produced none, even while older ones are still fresh)."""
    pause: Optional[str] = None
    """The pause order when this turn paused the task (with the command a person runs)."""
    notice: Optional[str] = None
    """A person's resume notice, handed over with this turn's result (once)."""


def record_turn(
    store: TaskStore,
    root: Path,
    message: str,
    data: Any,
    meta: Optional[dict[str, Any]] = None,
    settings: Optional[MonitorSettings] = None,
    env: Optional[Mapping[str, str]] = None,
    late: Optional[Callable[[str], str]] = None,
    climb: bool = True,
) -> Recorded:
    """Mask, validate and record one turn on ``store``'s task.

    ``meta`` (e.g. the hook's session) rides along in the event; ``settings`` are the task's monitor
    settings when the caller has them already (else they come from state.json); ``env`` is the caller's
    environment (default ours): the secrets masked and the alert's channels come from it, and it is stored nowhere.
    ``late``: the agent's words before an earlier call of the harness, by its id (``_heard_late``). ``climb=False``:
    the ladder takes no further step (the same hook call already took one: ``record_turns``).
    """
    masked_message, masked, masked_meta = masking.mask_tree(
        [message, data, meta or {}], env
    )  # one pass over the environment
    turn: Turn = validate_input(Turn, clip_turn_data(masked), "append_event.data")
    with store.locked():
        supervision, mon, warned, last = guarded(store, root, settings)
        if late is not None and meta:
            mon = _heard_late(last, mon, late, meta)
        _, event_data, alert = supervision.step(mon, turn, supervision.settings(), climb=climb)
        if meta:
            event_data["hook"] = masked_meta
        rec = store.append_event("tool_call", masked_message, event_data)
        mon = supervision.load()  # just written by step: read back from this process's cache
        view = supervision.deliver()
    safeguards.raise_alerts(store, root, warned, env)
    if alert is not None:
        supervision.raise_alert(alert, env)  # starts the outbox worker itself
    else:
        outbox.kick(root, env)  # one listdir: an alert a dead process left pending goes out now
    texts = {m.kind: m.text for m in view.messages}
    fresh = bool(mon.whispers) and mon.whispers[-1].turn == event_data["turn"] and alert is None
    return Recorded(
        event=rec,
        supervisor=view,
        whisper=mon.whispers[-1].text if fresh else None,
        pause=texts.get("pause") if alert is not None else None,
        notice=texts.get("notice"),
    )


def _heard_late(
    data: Optional[dict[str, Any]], mon: MonitorState, late: Callable[[str], str], meta: dict[str, Any]
) -> MonitorState:
    """The words before the task's last recorded call (``data``, the ledger's), read now if that turn was recorded
    without any (caller holds the lock): Claude Code writes its transcript in batches, so a call faster than a batch
    reached its hook before the words did; at the same session's next call they are there (``ladder.heard_late``).
    The ledger keeps the turn as recorded; the monitor's window takes what the words say of going wrong."""
    hook = data.get("hook") if data is not None else None
    if not isinstance(hook, dict) or data is None or data.get("thought") or type(data.get("turn")) is not int:
        return mon
    call = hook.get("tool_use_id")
    if hook.get("session_id") != meta.get("session_id") or not isinstance(call, str) or call == meta.get("tool_use_id"):
        return mon
    said = late(call)
    return ladder.heard_late(mon, data["turn"], said) if said else mon


def record_turns(
    store: TaskStore,
    root: Path,
    turns: Sequence[tuple[str, Any, Optional[dict[str, Any]]]],
    settings: Optional[MonitorSettings] = None,
    env: Optional[Mapping[str, str]] = None,
    *,
    once: bool = False,
    one_step: bool = False,
) -> list[Recorded]:
    """Several turns ``(message, data, meta)`` in order, as ``record_turn`` records each, under one lock.

    For a supervisor forwarding the tool calls of a harness's stream: the monitor state is read once and monitor.json
    written once at the end (and before every whisper or pause, as one turn does), which is most of a turn's cost.
    All turns are validated before any is written: one bad turn records none. Alerts go after the lock, in order.
    ``once``: a turn whose ``meta["tool_use_id"]`` one of the last ``RECENT_IDS`` events already carries is left out,
    checked under the lock (the hooks of two calls made at once may both find the same refused call in the transcript).
    ``one_step``: the ladder takes one step at most (a hook's batch, which the agent hears all at once after it).
    """
    if not turns:
        return []
    masked_all = masking.mask_tree([[m, d, meta or {}] for m, d, meta in turns], env)
    checked = [(m, validate_input(Turn, clip_turn_data(d), "append_event.data"), meta) for m, d, meta in masked_all]
    steps: list[tuple[EventRecord, Optional[str], Optional[Any]]] = []
    with store.locked():
        if once:
            seen = recorded_call_ids(store)
            checked = [(m, turn, meta) for m, turn, meta in checked if meta.get("tool_use_id") not in seen]
            if not checked:
                return []
        supervision, mon, warned, _ = guarded(store, root, settings)
        settings = supervision.settings()
        for message, turn, meta in checked:
            climb = not (one_step and any(said or alert for _, said, alert in steps))
            mon, event_data, alert = supervision.step(mon, turn, settings, save_quiet=False, climb=climb)
            if meta:
                event_data["hook"] = meta
            rec = store.append_event("tool_call", message, event_data)
            fresh = bool(mon.whispers) and mon.whispers[-1].turn == event_data["turn"]
            steps.append((rec, mon.whispers[-1].text if fresh and alert is None else None, alert))
        supervision.save(mon, sync=False)
        view = supervision.deliver()
    texts = {m.kind: m.text for m in view.messages}
    safeguards.raise_alerts(store, root, warned, env)
    if not any(alert is not None for _, _, alert in steps):
        outbox.kick(root, env)
    out = []
    for rec, whisper, alert in steps:
        if alert is not None:
            supervision.raise_alert(alert, env)
        out.append(
            Recorded(
                event=rec,
                supervisor=view,
                whisper=whisper,
                pause=texts.get("pause") if alert is not None else None,
                notice=texts.get("notice") if rec is steps[-1][0] else None,
            )
        )
    return out


def guarded(
    store: TaskStore, root: Path, settings: Optional[MonitorSettings]
) -> tuple[TaskMonitor, MonitorState, list[Alert], Optional[dict[str, Any]]]:
    """The task's monitor as its records say (caller holds the lock): the sealed settings, whatever state.json says
    (``settings``, when the caller read them already), and the window as the ledger has it; each difference found is
    recorded in the ledger, put right on disk, and returned as an alert for the person (``safeguards``). Last, the
    data of the ledger's last tool call, read once for the window's check and for ``_heard_late``."""
    current = settings if settings is not None else store.load().contract.monitor
    kept, found = safeguards.sealed_settings(root, store.task_id, current)
    findings = [found] if found is not None else []
    if found is not None:
        safeguards.restore_settings(store, kept)
    supervision = TaskMonitor(store, root, kept)
    last = safeguards.last_call(store)
    mon, rebuilt = safeguards.checked_window(supervision, last)
    findings += [rebuilt] if rebuilt is not None else []
    return supervision, mon, safeguards.record(store, findings) if findings else [], last


RECENT_IDS = 100
"""How many of the last events ``record_turns(once=True)`` looks through for a call's id: a hook finds a refused call
again only until the next call runs, a few events later."""


def recorded_call_ids(store: TaskStore, last: int = RECENT_IDS) -> set[str]:
    """The harness call ids (``hook.tool_use_id``) of the tool calls among the task's last ``last`` events."""
    ids: set[str] = set()
    for event in store.events(last=last):
        data = event.get("data")
        hook = data.get("hook") if isinstance(data, dict) and event.get("kind") == "tool_call" else None
        if isinstance(hook, dict) and isinstance(hook.get("tool_use_id"), str):
            ids.add(hook["tool_use_id"])
    return ids
