"""Reading tasks of the original skill's ``.codex-loop/`` layout, and converting them.

Users switching over keep their history: ``list_tasks``/``show_task`` read a
legacy task in place (read-only), and the first write to it migrates it into
``.agent-loop/`` with its rounds and events; the legacy files are left untouched.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Optional

from pydantic import ValidationError

from strict_loop.base.errors import LoopError, StateDamaged
from strict_loop.base.fsio import read_own
from strict_loop.base.jsonl import iter_lines, json_records
from strict_loop.base.layout import TaskPaths
from strict_loop.base.timefmt import now_iso
from strict_loop.model.fields import parse_json
from strict_loop.model.records import IterationRecord, LoopContract, OperatingMode, Status, TaskState
from strict_loop.model.settings import Limits, StopChecks, UnattendedSettings, workspace_path_problem
from strict_loop.storage import rounds
from strict_loop.storage.store import TaskStore

PLACEHOLDER = "(round recorded by the original skill; missing from its iterations.jsonl)"
LEGACY_STATE_CAP = 256 << 20
"""The original skill's state.json grew with every round; larger than this is damage, not history."""


def _text(value: Any, cap: int) -> str:
    return " ".join(str(value or "").split())[:cap]


def _texts(values: Any, items: int, cap: int) -> list[str]:
    if not isinstance(values, list):
        return []
    return [t for t in (_text(v, cap) for v in values) if t][:items]


def _inside(path: str, roots: list[Path]) -> Optional[str]:
    """``path`` as a workspace-relative path; an absolute one under one of ``roots`` is rewritten.
    None when it points elsewhere (outside the workspace, ``~``, ``..``)."""
    if not workspace_path_problem(path):
        return path
    for root in roots:
        try:
            rel = Path(path).relative_to(root).as_posix()
        except ValueError:
            continue
        if rel != "." and not workspace_path_problem(rel):
            return rel
    return None


def _stop_checks(raw: dict[str, Any], roots: list[Path]) -> tuple[StopChecks, list[str]]:
    """The legacy checks as StopChecks, and the paths dropped because they leave the workspace.

    The original skill accepted absolute paths; ours must stay inside the workspace, so an
    absolute path under the workspace (``roots``: where it is now, where the legacy state says
    it was) is made relative and any other is dropped (``migrate`` says so).
    """

    def field(entries: Any, key: str) -> list[str]:
        out = []
        for entry in entries if isinstance(entries, list) else []:
            value = entry.get(key) if isinstance(entry, dict) else entry
            if isinstance(value, str) and value.strip():
                out.append(value.strip())
        return out

    dropped: list[str] = []
    commands = field(raw.get("commands"), "command")[:20]
    declared = [e.get("timeout_seconds") for e in raw.get("commands") or [] if isinstance(e, dict)]
    timeouts: list[float] = [t for t in declared if isinstance(t, (int, float)) and t > 0]
    patterns = []
    for entry in raw.get("text_patterns") or []:
        if isinstance(entry, dict) and entry.get("path") and entry.get("pattern"):
            entry = f"{entry['path']}::{entry['pattern']}"
        if isinstance(entry, str) and "::" in entry:
            path, rest = entry.split("::", 1)
            rel = _inside(path.strip(), roots)
            if rel:
                patterns.append(f"{rel}::{rest}")
            else:
                dropped.append(entry)
    paths = []
    for path in field(raw.get("paths_exist"), "path"):
        rel = _inside(path, roots)
        if rel:
            paths.append(rel)
        else:
            dropped.append(path)
    checks = StopChecks(
        commands=commands,
        paths_exist=paths[:50],
        text_patterns=patterns[:50],
        command_timeout_s=min(max(timeouts), 86400) if timeouts else 900.0,
    )
    return checks, dropped


def _contract(raw: dict[str, Any], workspace: Path) -> tuple[LoopContract, list[str]]:
    lim = raw.get("limits") or {}
    sup = raw.get("supervisor") or {}
    roots = [workspace] + ([Path(raw["workspace_root"])] if isinstance(raw.get("workspace_root"), str) else [])
    checks, dropped = _stop_checks(raw.get("stop_checks") or {}, roots)
    mode: OperatingMode = "unattended" if raw.get("operating_mode") == "unattended" else "interactive"
    if mode == "unattended" and not checks.count():
        mode = "interactive"
    contract = LoopContract(
        goal=_text(raw.get("goal"), 4000) or "(goal not recorded)",
        global_stop_condition=_text(raw.get("global_stop_condition"), 4000) or "(stop condition not recorded)",
        success_evidence=_texts(raw.get("success_evidence"), 20, 500),
        blocker_definition=_text(raw.get("blocker_definition"), 2000)
        or LoopContract.model_fields["blocker_definition"].default,
        operating_mode=mode,
        stop_checks=checks,
        limits=Limits(
            max_iterations=_int(lim.get("max_iterations"), 100, 1, 1_000_000),
            max_no_progress_rounds=_int(lim.get("max_no_progress_rounds"), 3, 1, 1000),
            max_context_chars=_int(lim.get("max_context_chars"), 8000, 200, 20000),
        ),
        unattended=UnattendedSettings(
            max_rounds_per_invocation=_int(sup.get("max_rounds_per_invocation"), 5, 1, 1000),
            max_consecutive_failures=_int(sup.get("max_consecutive_failures"), 3, 1, 100),
        ),
    )
    return contract, dropped


def _int(value: Any, default: int, lo: int, hi: int) -> int:
    return min(max(value, lo), hi) if isinstance(value, int) and not isinstance(value, bool) else default


def _status(value: Any) -> Status:
    return value if value in ("running", "completed", "blocked", "failed") else "running"


def _record(entry: dict[str, Any]) -> IterationRecord | None:
    try:
        claimed: Any = entry.get("iteration")  # None or a hand-edited value: int() refuses it
        iteration = int(claimed)
    except (TypeError, ValueError):
        return None
    if iteration < 1:
        return None
    made = entry.get("progress_made")
    elapsed = entry.get("elapsed_since_previous_seconds")
    return IterationRecord(
        iteration=iteration,
        recorded_at=str(entry.get("timestamp") or now_iso()),
        duration_s=float(elapsed) if isinstance(elapsed, (int, float)) and elapsed >= 0 else None,
        task=_text(entry.get("task"), 2000) or "(task not recorded)",
        local_done_condition=_text(entry.get("local_done_condition"), 2000),
        result_summary=str(entry.get("result_summary") or "(not recorded)")[:20000],
        verification_summary=str(entry.get("verification_summary") or "(not recorded)")[:20000],
        progress="none" if made is False else "made",
        status=_status(entry.get("status")),
        stop_reason=_text(entry.get("stop_reason"), 2000),
        needs_human_input=bool(entry.get("needs_human_input")),
        evidence=_texts(entry.get("evidence"), 50, 1000),
        artifacts=_texts(entry.get("artifacts"), 50, 1000),
        next_task=_text(entry.get("next_task"), 2000) or None,
    )


def _raw_state(state_path: Path) -> dict[str, Any]:
    fix = "fix or remove that .codex-loop task; the original files are never modified by strict-loop"
    try:
        raw = parse_json(read_own(state_path, LEGACY_STATE_CAP))
    except LoopError as exc:  # a link, FIFO or device in place of the file: never followed or read
        raise StateDamaged(str(state_path), exc.problem, fix) from None
    except OSError as exc:
        raise StateDamaged(str(state_path), f"cannot be read ({exc.strerror or exc})", fix) from None
    except ValueError as exc:
        raise StateDamaged(str(state_path), str(exc), fix) from None
    if not isinstance(raw, dict):
        raise StateDamaged(str(state_path), "is not a JSON object", fix)
    return raw


def _records(paths: TaskPaths, raw: dict[str, Any]) -> list[IterationRecord]:
    by_iteration: dict[int, IterationRecord] = {}
    sources = [entry for _, entry in json_records(paths.iterations)]
    sources += [h for h in raw.get("history") or [] if isinstance(h, dict)]
    for entry in sources:
        if isinstance(entry, dict):
            try:
                rec = _record(entry)
            except ValidationError:
                rec = None
            if rec is not None:
                by_iteration.setdefault(rec.iteration, rec)
    total = max([_int((raw.get("counters") or {}).get("iteration"), 0, 0, 10**9)] + list(by_iteration))
    return [
        by_iteration.get(i)
        or IterationRecord(
            iteration=i,
            recorded_at=now_iso(),
            task=PLACEHOLDER,
            result_summary=PLACEHOLDER,
            verification_summary="(imported)",
            progress="made",
            status="running",
        )
        for i in range(1, total + 1)
    ]


def _state(
    raw: dict[str, Any], task_id: str, records: list[IterationRecord], source: Path
) -> tuple[TaskState, list[str]]:
    """The state, and the stop-check paths dropped from its contract (``source``: .codex-loop/tasks/<id>)."""
    created = str(raw.get("created_at") or now_iso())
    contract, dropped = _contract(raw, source.parents[2])
    state = TaskState(
        task_id=task_id,
        created_at=created,
        updated_at=str(raw.get("updated_at") or created),
        contract=contract,
        next_task=_text(raw.get("next_task"), 2000),
        imported_from=str(source),
    )
    for rec in records:
        rounds.fold(state, rec)
    state.status = _status(raw.get("status"))
    blocker = raw.get("blocker") or {}
    state.needs_human_input = bool(blocker.get("needs_human_input"))
    state.stop_reason = _text(blocker.get("reason"), 2000) if state.status != "running" else ""
    state.next_task = _text(raw.get("next_task"), 2000) or state.next_task
    state.context_snapshot = str(raw.get("context_snapshot") or "")[: state.contract.limits.max_context_chars]
    rounds.fit(state)
    return state, dropped


def load(state_path: Path) -> TaskState:
    """A read-only view of a legacy task as a TaskState."""
    paths = TaskPaths(state_path.parent)
    raw = _raw_state(state_path)
    return _state(raw, paths.root.name, _records(paths, raw), paths.root)[0]


def convert(paths: TaskPaths) -> tuple[TaskState, list[IterationRecord], list[dict[str, Any]], list[str]]:
    """State, full round records, events (as message/data) and the dropped stop-check paths, for migrating a legacy
    task."""
    raw = _raw_state(paths.state)
    records = _records(paths, raw)
    events = []
    for number, line in iter_lines(paths.events):
        try:
            original = parse_json(line)
        except ValueError:
            original = {"raw": line[:4000]}
        if not isinstance(original, dict):
            original = {"value": original}
        message = ""
        for key in ("message", "announcement", "summary", "event_type", "kind", "type"):
            if isinstance(original.get(key), str) and original[key].strip():
                message = original[key].strip()
                break
        events.append(
            {"message": (message or f"legacy event line {number}")[:8000], "data": {"legacy": original, "line": number}}
        )
    state, dropped = _state(raw, paths.root.name, records, paths.root)
    return state, records, events, dropped


def migrate(store: TaskStore, legacy_paths: TaskPaths) -> Optional[TaskState]:
    """Copy a legacy task into ``store`` (rounds, events, state); None if it is there already.

    The legacy files are read, never modified. Takes the task lock.
    """
    store.paths.root.mkdir(parents=True, exist_ok=True)
    with store.locked():
        if store.exists():
            return None
        state, records, events, dropped = convert(legacy_paths)
        store.create_folders()
        store.append_event(
            "task.initialized",
            f"migrated from {legacy_paths.root}",
            {
                "task_id": store.task_id,
                "created_at": state.created_at,
                "imported_from": str(legacy_paths.root),
                "contract": state.contract.model_dump(mode="json"),
            },
        )
        for ev in events:
            store.append_event("legacy.event", ev["message"], ev["data"])
        for rec in records:
            store.append_round(rec)
        store.save(state)
        note = (
            (
                f"; dropped {len(dropped)} stop check(s) whose path leaves the workspace: "
                + ", ".join(repr(d[:200]) for d in dropped[:5])
            )
            if dropped
            else ""
        )
        store.append_event(
            "task.migrated",
            f"took over {len(records)} rounds from .codex-loop{note}",
            {"rounds": len(records), "events": len(events), "dropped_stop_checks": dropped[:100]},
        )
    return state
