"""Rebuilding a task's state.json from its ledgers (the commit log).

Used to roll a checkpoint forward after a crash left it behind the ledger,
and by ``rebuild_state`` after damage. Reads only; the caller holds the task
lock and saves the result.
"""

from __future__ import annotations

from typing import Any, Optional

from . import rounds, schemas
from .errors import StateDamaged
from .fsio import has_torn_tail, json_records
from .layout import TaskPaths
from .models import CurrentRound, IterationRecord, LoopContract, TaskState
from .timefmt import now_iso

LEDGERS = ("events", "iterations", "status_history")


def torn_ledgers(paths: TaskPaths) -> list[str]:
    """Notes on ledgers whose last line was cut short by an interrupted write."""
    return [f"{getattr(paths, name).name}: cut an unterminated last line left by an interrupted write"
            for name in LEDGERS if has_torn_tail(getattr(paths, name))]


def rebuilt(paths: TaskPaths, task_id: str, old: Optional[TaskState]) -> tuple[TaskState, list[str]]:
    """A fresh state folded from the ledgers (``old``: the current state.json, if it loads) and notes on what differed."""
    repaired: list[str] = []
    state = base_state(paths, task_id, old)
    for number, raw in json_records(paths.iterations):
        try:
            rec = IterationRecord.model_validate(raw)
        except ValueError:
            repaired.append(f"iterations.jsonl line {number}: skipped, not a valid round record")
            continue
        if rec.iteration != state.counters.iteration + 1:
            repaired.append(f"iterations.jsonl line {number}: skipped, iteration {rec.iteration} after {state.counters.iteration}")
            continue
        rounds.fold(state, rec)
    state.current_round = _announced(paths, state.counters.iteration + 1)
    if old is not None:
        state.last_stop = old.last_stop
        if old.counters != state.counters:
            repaired.append(f"counters were {old.counters.model_dump()}; the ledger gives {state.counters.model_dump()}")
    return state, repaired


def _announced(paths: TaskPaths, iteration: int) -> Optional[CurrentRound]:
    """The latest announcement of round ``iteration`` in the event ledger, if any."""
    current = None
    for _, ev in json_records(paths.events):
        data = ev.get("data") if isinstance(ev.get("data"), dict) else {}
        if ev.get("kind") == "round.started" and data.get("iteration") == iteration:
            current = CurrentRound(iteration=iteration, announced_at=str(ev.get("ts") or now_iso()), message=str(ev.get("message", ""))[:500])
    return current


def base_state(paths: TaskPaths, task_id: str, old: Optional[TaskState]) -> TaskState:
    """The state before round 1: from ``old`` if it loads, else from the task.initialized event."""
    if old is not None:
        return TaskState(task_id=task_id, created_at=old.created_at, updated_at=old.created_at,
                         contract=old.contract, imported_from=old.imported_from)
    init: Optional[dict[str, Any]] = None
    for _, ev in json_records(paths.events):  # the first one: a later one can only be forged (the kind is refused to callers)
        if ev.get("kind") == "task.initialized" and isinstance(ev.get("data"), dict):
            init = ev["data"]
            break
    if init is None:
        raise StateDamaged(
            "rebuild_state", f"state.json of '{task_id}' does not load and events.jsonl has no task.initialized event",
            "restore state.json from a backup or start over with init_state force=true",
        )
    contract = schemas.validate_document(LoopContract, init.get("contract"), "events.jsonl task.initialized contract",
                                         "start over with init_state force=true")
    created = str(init.get("created_at") or now_iso())
    return TaskState(task_id=task_id, created_at=created, updated_at=created, contract=contract,
                     imported_from=init.get("imported_from"))
