"""The loop's own files checked against what the agent cannot rewrite unnoticed, and what happens on a difference.

Why: every file under ``.agent-loop/`` is in the workspace, where a cloned repository put it or the agent writes.
- A workspace's ``monitor-defaults.json`` changes a new task's monitor only once a person trusted its exact bytes
  (``strict-loop trust``), as a contract's commands run only once trusted; else the built-in settings apply, said.
- A task's monitor settings in ``state.json`` are compared with their seal outside the workspace (``storage.seal``)
  and ``monitor.json``'s turn count with the ledger's, before each turn is judged. A difference is recorded as an
  event, told to the person (an alert), and the sealed settings and the ledger's window are what the monitor keeps.
- What this machine last saw in the workspace (``storage.workspaces``) tells of a removed loop folder.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from contextlib import closing
from pathlib import Path
from typing import Any, NamedTuple, Optional

from strict_loop.base.errors import LoopError
from strict_loop.base.fsio import read_own
from strict_loop.base.jsonl import records_backwards
from strict_loop.base.layout import Layout, TaskPaths
from strict_loop.loop.monitoring import TaskMonitor, monitor_settings
from strict_loop.model.monitoring import Alert, MonitorState
from strict_loop.model.records import TaskState
from strict_loop.model.settings import MonitorSettings
from strict_loop.storage import seal, workspaces
from strict_loop.storage.store import TaskStore
from strict_loop.storage.trust import TrustStore

NO_DEFAULTS = Path(os.devnull)
"""Not a regular file: ``monitor_settings`` then merges the profile and a person's overrides only."""
RECENT_TURN_RECORDS = 50
"""Ledger records looked back through for the last tool call (past it the check is skipped: nothing to compare)."""
WARNING_EVENTS = 2000
"""Ledger records show_task looks back through for what the safeguards recorded."""
RECORDED_KINDS = (
    "monitor.settings_changed",
    "monitor.state_rebuilt",
    "monitor.defaults_ignored",
    "workspace.loop_removed",
    "loop.write_refused",
)
"""The events the safeguards write: show_task repeats the last of them to the person."""


# ---------------------------------------------------------------- a new task's monitor (the defaults file)


def new_task_monitor(
    layout: Layout,
    trust: TrustStore,
    profile: str,
    overrides: Optional[MonitorSettings],
    task_id: str,
) -> tuple[MonitorSettings, list[str]]:
    """A new task's monitor settings and the warnings to give: the workspace's defaults file applies only when it
    changes nothing, or a person trusted its exact content; otherwise the profile and overrides alone do."""
    path = layout.monitor_defaults
    plain = monitor_settings(NO_DEFAULTS, profile, overrides)
    if not os.path.lexists(path):
        return plain, []
    try:
        content = read_own(path)  # never through a link, never a FIFO
    except (OSError, LoopError) as exc:
        why = exc.problem if isinstance(exc, LoopError) else exc.strerror or str(exc)
        return plain, [f"{path} {why}; it is ignored and the built-in monitor settings apply"]
    merged = monitor_settings(path, profile, overrides)  # a malformed file is bad input, as it always was
    if merged == plain or (trust.defaults_trusted(layout.workspace, content) and _same_bytes(path, content)):
        return merged, []
    changes = "; ".join(seal.differences(plain, merged, "built-in"))
    return plain, [
        f"{path} would change this task's monitor settings ({changes}) and this machine has not trusted its "
        "content (it is repository content, like a contract's commands): the built-in settings apply. A person "
        f"who wants it reviews the file and runs `strict-loop trust --task-id {task_id}`; it then applies to "
        "tasks created after that"
    ]


def _same_bytes(path: Path, content: bytes) -> bool:
    try:
        return read_own(path) == content
    except (OSError, LoopError):
        return False


def defaults_pending(layout: Layout, trust: TrustStore) -> Optional[tuple[bytes, list[str]]]:
    """The defaults file's content and what it would change, when it changes anything and is not trusted yet."""
    path = layout.monitor_defaults
    try:
        content = read_own(path)
        changed = seal.differences(monitor_settings(NO_DEFAULTS), monitor_settings(path), "built-in", limit=40)
    except (OSError, LoopError):
        return None  # absent, a link or malformed: nothing a person could trust (init_state says why)
    if not changed or trust.defaults_trusted(layout.workspace, content):
        return None
    return content, changed


def created_settings(store: TaskStore, state: TaskState) -> MonitorSettings:
    """The settings the task was created with: its ledger's first record, else its state."""
    first = next(store.events(), None)  # the generator is dropped (and its file closed) at once
    data = first.get("data") if isinstance(first, dict) and first.get("kind") == "task.initialized" else None
    contract = data.get("contract") if isinstance(data, dict) else None
    monitor = contract.get("monitor") if isinstance(contract, dict) else None
    try:
        return MonitorSettings.model_validate(monitor) if isinstance(monitor, dict) else state.contract.monitor
    except ValueError:
        return state.contract.monitor


def task_pending(root: Path, store: TaskStore, state: TaskState) -> Optional[tuple[MonitorSettings, list[str]]]:
    """A task's own monitor settings and how they differ from the built-in ones, when no seal of this machine holds
    them (the task came with the repository, a copy, or an older version) and they differ."""
    own = created_settings(store, state)
    sealed = seal.read(root, store.task_id)
    recorded = sealed.settings() if sealed is not None else None
    if sealed is not None and recorded is not None and (sealed.by != "built-in" or recorded == own):
        return None
    changed = seal.differences(MonitorSettings(), own, "built-in", limit=40)
    return (own, changed) if changed else None


def pending_lines(root: Path, layout: Layout, trust: TrustStore, store: TaskStore | TaskPaths) -> list[str]:
    """What ``trust_monitor`` would trust, one line per setting, for a person to read before."""
    found = defaults_pending(layout, trust)
    if not isinstance(store, TaskStore):  # a legacy task: its own settings are sealed once migrated
        return [f"{layout.monitor_defaults} for new tasks: {c}" for c in (found[1] if found else [])]
    own = task_pending(root, store, store.load())
    lines = [f"{layout.monitor_defaults} for new tasks: {c}" for c in (found[1] if found else [])]
    return lines + [f"task '{store.task_id}' monitor: {c}" for c in (own[1] if own else [])]


def trust_monitor(root: Path, layout: Layout, trust: TrustStore, store: TaskStore) -> list[str]:
    """A person's ``trust``: record the defaults file's content and seal the task's own settings (restoring them in
    state.json), each when pending; what was trusted, one line each."""
    done = []
    found = defaults_pending(layout, trust)
    if found is not None:
        trust.record_defaults(root, found[0])
        done.append(f"{layout.monitor_defaults} (sha256 {hashlib.sha256(found[0]).hexdigest()[:16]}), for new tasks")
    with store.locked():
        state = store.load_current()
        own = task_pending(root, store, state)
        if own is not None:
            _seal(root, store.task_id, own[0], "trust")
            if state.contract.monitor != own[0]:
                state.contract.monitor = own[0]
                store.save(state)
            store.append_event(
                "monitor.settings_trusted", "a person trusted the task's own monitor settings", {"changes": own[1]}
            )
            done.append(f"the monitor settings of '{store.task_id}': {'; '.join(own[1])}")
    return done


def _seal(root: Path, task_id: str, settings: MonitorSettings, by: str) -> None:
    try:
        seal.write(root, task_id, settings, by)
    except OSError as exc:
        raise LoopError(
            "trust",
            f"cannot write {seal.seal_path(root, task_id)} ({exc.strerror or exc})",
            "make the folder writable or set XDG_CONFIG_HOME to a writable folder",
        ) from None


def after_create(
    root: Path, store: TaskStore, settings: MonitorSettings, notes: list[str], lost: Optional[workspaces.Vanished]
) -> list[str]:
    """After ``init_state`` wrote the task: seal its monitor settings outside the workspace, and record in its ledger
    why the defaults file was ignored and what loop folder was removed before it; the warnings for the result."""
    warnings = list(notes)
    try:
        seal.write(root, store.task_id, settings, "init_state")
    except OSError as exc:
        warnings.append(
            f"cannot seal the monitor settings in {seal.seal_path(root, store.task_id)} ({exc.strerror or exc}): "
            "until they are, the monitor cannot tell a changed state.json"
        )
    if lost is not None:
        warnings.append(f"{lost.describe()} (not by the loop: this machine's record of the workspace says so)")
    with store.locked():
        for note in notes:
            store.append_event("monitor.defaults_ignored", note, {})
        if lost is not None:
            data = {"tasks": list(lost.tasks), "whole": lost.whole, "seen": lost.seen}
            store.append_event("workspace.loop_removed", lost.describe(), data)
    if lost is not None:
        workspaces.acknowledge(root)  # the loss is in this task's ledger now
    return warnings


# ---------------------------------------------------------------- before each turn (the caller holds the lock)


class Finding(NamedTuple):
    """A difference between the loop's files and their record: what to say, and the event that records it."""

    kind: str
    text: str
    data: dict[str, Any]


def sealed_settings(root: Path, task_id: str, current: MonitorSettings) -> tuple[MonitorSettings, Optional[Finding]]:
    """The settings the monitor uses: ``current`` (state.json's) when they agree with the seal, else the sealed ones;
    a task without a seal gets one (the built-in settings, when its own differ from them: a person trusts those)."""
    sealed = seal.read(root, task_id)
    if sealed is not None and sealed.monitor == current.model_dump(mode="json"):
        return current, None
    recorded = sealed.settings() if sealed is not None else None
    if sealed is not None and recorded is not None:  # a seal that no longer validates is no record
        if recorded == current:
            return current, None
        changes = seal.differences(recorded, current, "sealed")
        return recorded, Finding(
            "monitor.settings_changed",
            f"state.json's monitor settings were changed outside the loop ({'; '.join(changes)}): the monitor keeps "
            f"the ones sealed by {sealed.by} at {sealed.sealed_at}, and state.json has them back",
            {"changes": changes, "sealed_by": sealed.by},
        )
    builtin = MonitorSettings()
    try:
        seal.write(root, task_id, builtin, "built-in")
    except OSError:
        pass  # a read-only config folder: checked again next turn
    if current == builtin:
        return current, None
    changes = seal.differences(builtin, current, "built-in")
    return builtin, Finding(
        "monitor.settings_changed",
        f"this task's monitor settings ({'; '.join(changes)}) are sealed by no person on this machine (the task came "
        "with the repository, a copy, or an older version): the built-in settings apply until a person reviews them "
        f"and runs `strict-loop trust --task-id {task_id}`",
        {"changes": changes, "sealed_by": None},
    )


def restore_settings(store: TaskStore, settings: MonitorSettings) -> None:
    """Put the settings the monitor keeps back into state.json (a damaged state.json is left for rebuild_state)."""
    try:
        state = store.load()
    except LoopError:
        return
    if state.contract.monitor != settings:
        state.contract.monitor = settings
        store.save(state)


def checked_window(
    supervision: TaskMonitor, last_data: Optional[dict[str, Any]]
) -> tuple[MonitorState, Optional[Finding]]:
    """monitor.json, or the window rebuilt from the ledger when its turn count is not the ledger's (it was removed,
    replaced or rolled back outside the loop, or a crash cut a write); ``last_data``: the ledger's ``last_call``."""
    store = supervision.store
    present = os.path.lexists(store.paths.monitor)
    mon = supervision.load() if present else MonitorState()
    last = _turn_of(last_data)
    if last is None or mon.turns == last + 1:
        return mon, None
    what = "was removed" if not present else f"counts {mon.turns} turns where the ledger has {last + 1}"
    rebuilt = supervision._rebuilt()
    supervision.save(rebuilt, sync=True)
    return rebuilt, Finding(
        "monitor.state_rebuilt",
        f"monitor.json {what} (changed outside the loop, or a crash cut a write): the monitor's window and ladder "
        "were rebuilt from the ledger",
        {"was": mon.turns if present else None, "ledger": last + 1, "paused": rebuilt.paused},
    )


def _turn_of(data: Optional[dict[str, Any]]) -> Optional[int]:
    """The ``turn`` of a tool call's data (``last_call``), or None."""
    turn = data.get("turn") if data is not None else None
    return turn if type(turn) is int and turn >= 0 else None


def last_call(store: TaskStore) -> Optional[dict[str, Any]]:
    """The data of the ledger's last tool call (within its last ``RECENT_TURN_RECORDS`` records), or None."""
    with closing(records_backwards(store.paths.events)) as records:
        for i, ev in enumerate(records):
            if i >= RECENT_TURN_RECORDS:
                return None
            if ev.get("kind") == "tool_call":
                data = ev.get("data")
                return data if isinstance(data, dict) else None
    return None


def record(store: TaskStore, findings: list[Finding]) -> list[Alert]:
    """The findings' events (caller holds the lock) and the alerts to raise after it."""
    alerts = []
    for found in findings:
        rec = store.append_event(found.kind, found.text, found.data)
        action = "look at what the agent did to the loop's files (show_task, events.jsonl)"
        alerts.append(Alert.notice(f"{store.task_id}-{found.kind}-{rec.seq}", store.task_id, 2, found.text, action))
    return alerts


def raise_alerts(store: TaskStore, root: Path, alerts: list[Alert], env: Optional[Mapping[str, str]]) -> None:
    """Queue each alert for the person's channels (after the lock: this takes it), as a pause's alert goes."""
    from strict_loop.alerts import outbox

    for alert in alerts:
        outbox.enqueue(
            store,
            root,
            alert,
            os.environ if env is None else env,
            prefix="[MONITOR CHANGED]",
            resume=f"strict-loop show_task --workspace {root} --task-id {store.task_id}",
            event="monitor.alert",
        )


# ---------------------------------------------------------------- what show_task and list_tasks say


def task_warnings(root: Path, store: TaskStore, state: TaskState) -> list[str]:
    """What the person should know about the task's own files, read-only: a difference from the seal or the ledger
    now, and the last things the safeguards recorded."""
    out = []
    _, found = sealed_settings_readonly(root, store.task_id, state.contract.monitor)
    if found:
        out.append(found)
    if not os.path.lexists(store.paths.monitor) and _turn_of(last_call(store)) is not None:
        out.append("monitor.json is missing while the ledger holds tool calls: the next turn rebuilds it")
    recorded = [ev for ev in store.events(last=WARNING_EVENTS) if ev.get("kind") in RECORDED_KINDS]
    for ev in recorded[-5:]:
        out.append(f"recorded at {ev.get('ts')}: {str(ev.get('message', ''))[:600]}")
    if len(recorded) > 5:
        out.append(f"... and {len(recorded) - 5} earlier such events in events.jsonl")
    return out


def sealed_settings_readonly(root: Path, task_id: str, current: MonitorSettings) -> tuple[MonitorSettings, str]:
    """``sealed_settings`` without writing a seal: the settings the monitor would use, and why ('' if agreed)."""
    sealed = seal.read(root, task_id)
    recorded = sealed.settings() if sealed is not None else None
    if recorded is None:
        sealed, recorded = None, MonitorSettings()
    if recorded == current:
        return current, ""
    changes = "; ".join(seal.differences(recorded, current, "sealed" if sealed else "built-in"))
    if sealed is not None:
        return (
            recorded,
            f"state.json's monitor settings differ from the sealed ones ({changes}): the monitor uses those",
        )
    return recorded, (
        f"this task's monitor settings ({changes}) are sealed by no person on this machine: the built-in settings "
        f"apply until a person runs `strict-loop trust --task-id {task_id}`"
    )


def resealed(root: Path, task_id: str, state: TaskState) -> list[str]:
    """For rebuild_state: put the sealed monitor settings into ``state`` when it holds others; what was mended."""
    kept, why = sealed_settings_readonly(root, task_id, state.contract.monitor)
    if not why:
        return []
    state.contract.monitor = kept
    return [why]
