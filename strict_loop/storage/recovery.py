"""Rebuilding a task's state.json from its ledgers (the commit log).

Used to roll a checkpoint forward after a crash left it behind the ledger,
and by ``rebuild_state`` after damage. Reads only; the caller holds the task
lock and saves the result.
"""

from __future__ import annotations

import os
import re
from typing import Any, Optional

from strict_loop.base.errors import StateDamaged
from strict_loop.base.fsio import has_torn_tail
from strict_loop.base.jsonl import json_records
from strict_loop.base.layout import TaskPaths
from strict_loop.base.timefmt import now_iso
from strict_loop.model.records import MAX_ROUNDS, CurrentRound, IterationRecord, LoopContract, Status, TaskState
from strict_loop.storage import documents, rounds

LEDGERS = ("events", "iterations", "status_history")
_NOTE = re.compile(r"iteration-(\d{1,9})\.md")


def torn_ledgers(paths: TaskPaths) -> list[str]:
    """Notes on ledgers whose last line was cut short by an interrupted write."""
    return [
        f"{getattr(paths, name).name}: cut an unterminated last line left by an interrupted write"
        for name in LEDGERS
        if has_torn_tail(getattr(paths, name))
    ]


def rebuilt(paths: TaskPaths, task_id: str, old: Optional[TaskState]) -> tuple[TaskState, list[str]]:
    """A fresh state folded from the ledgers (``old``: the current state.json, if it loads) and notes on what differed.

    Rounds are folded by their numbers: a damaged line costs that round only, the later ones are
    kept. The counter ends at the highest round number anything claims (a valid record, a damaged
    one that still names its number, a round note, the old state.json), so no number is used twice.
    """
    repaired: list[str] = []
    state = base_state(paths, task_id, old)
    claimed = max(_round_notes(paths), old.counters.iteration if old is not None else 0)
    damaged: list[int] = []
    for number, raw in json_records(paths.iterations, skipped=damaged):
        if type(raw.get("iteration")) is int and 0 < raw["iteration"] <= MAX_ROUNDS:
            claimed = max(claimed, raw["iteration"])
        try:
            rec = IterationRecord.model_validate(raw)
        except ValueError:
            repaired.append(f"iterations.jsonl line {number}: skipped, not a valid round record")
            continue
        last = state.counters.iteration
        if rec.iteration <= last:
            repaired.append(
                f"iterations.jsonl line {number}: skipped, round {rec.iteration} repeats an earlier number "
                f"(after {last})"
            )
            continue
        if rec.iteration > last + 1:
            repaired.append(
                f"iterations.jsonl line {number}: round {rec.iteration} follows round {last}; "
                f"round(s) {last + 1}-{rec.iteration - 1} are missing from the ledger"
            )
        rounds.fold(state, rec)
    repaired += [f"iterations.jsonl line {number}: skipped, not a JSON object" for number in damaged]
    if claimed > state.counters.iteration:
        repaired.append(
            f"round numbers up to {claimed} were used (damaged ledger lines, round notes or the old "
            f"state.json); the next round is {claimed + 1}, so none is reused"
        )
        state.counters.iteration = claimed
    state.current_round, ended = _after_rounds(paths, state.counters.iteration)
    if ended is not None and state.status == "running":  # a goal_met completion or a hand-back after the last round
        state.status, state.stop_reason = ended
        state.needs_human_input = state.status == "blocked"
    if old is not None:
        state.last_stop = old.last_stop
        if old.counters != state.counters:
            repaired.append(
                f"counters were {old.counters.model_dump()}; the ledger gives {state.counters.model_dump()}"
            )
    return state, repaired


def _round_notes(paths: TaskPaths) -> int:
    """The highest round number with a note in ``rounds/`` (0 if none)."""
    try:
        names = [entry.name for entry in os.scandir(paths.rounds)]
    except OSError:
        return 0
    found = [int(m.group(1)) for m in map(_NOTE.fullmatch, names) if m]
    return max((n for n in found if n <= MAX_ROUNDS), default=0)


def _after_rounds(paths: TaskPaths, last: int) -> tuple[Optional[CurrentRound], Optional[tuple[Status, str]]]:
    """From the event ledger: the latest announcement of round ``last + 1``, and how the task ended after round
    ``last`` if it did (``task.completed`` by a goal_met verdict, ``task.handed_back`` by a person): the loop alone
    writes those kinds."""
    current: Optional[CurrentRound] = None
    ended: Optional[tuple[Status, str]] = None
    for _, ev in json_records(paths.events):
        raw = ev.get("data")
        data = raw if isinstance(raw, dict) else {}
        kind = ev.get("kind")
        if kind == "round.started" and data.get("iteration") == last + 1:
            current = CurrentRound(
                iteration=last + 1,
                announced_at=str(ev.get("ts") or now_iso()),
                message=str(ev.get("message", ""))[:500],
            )
        elif kind == "round.completed" and data.get("iteration") == last:
            ended = None  # only what came after the last round counts
        elif kind == "task.completed" and data.get("iteration") == last:
            ended = ("completed", f"goal met: {str(ev.get('message', ''))[:300]}")
        elif kind == "task.handed_back":
            ended = ("blocked", f"handed back by a person: {str(data.get('note') or '')[:300]}")
    return current, ended


def base_state(paths: TaskPaths, task_id: str, old: Optional[TaskState]) -> TaskState:
    """The state before round 1: from ``old`` if it loads, else from the task.initialized event."""
    if old is not None:
        return TaskState(
            task_id=task_id,
            created_at=old.created_at,
            updated_at=old.created_at,
            contract=old.contract,
            imported_from=old.imported_from,
        )
    init: Optional[dict[str, Any]] = None
    for _, ev in json_records(
        paths.events
    ):  # the first one: a later one can only be forged (the kind is refused to callers)
        if ev.get("kind") == "task.initialized" and isinstance(ev.get("data"), dict):
            init = ev["data"]
            break
    if init is None:
        raise StateDamaged(
            "rebuild_state",
            f"state.json of '{task_id}' does not load and events.jsonl has no task.initialized event",
            "restore state.json from a backup or start over with init_state force=true",
        )
    contract = documents.validate_document(
        LoopContract,
        init.get("contract"),
        "events.jsonl task.initialized contract",
        "start over with init_state force=true",
    )
    created = str(init.get("created_at") or now_iso())
    return TaskState(
        task_id=task_id,
        created_at=created,
        updated_at=created,
        contract=contract,
        imported_from=init["imported_from"] if isinstance(init.get("imported_from"), str) else None,
    )
