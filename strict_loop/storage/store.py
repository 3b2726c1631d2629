"""One task's files on disk: the lock, validated loads, checkpoint saves and ledger appends.

Durability model: the append-only ledgers are the commit log, ``state.json`` a
bounded checkpoint of them. A round is committed when its line lands in
``iterations.jsonl``; if a crash leaves ``state.json`` behind the ledger,
:meth:`TaskStore.load_current` rolls it forward. Every write happens under the
task's cross-process lock.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional, TypeVar

from pydantic import BaseModel, ValidationError

from strict_loop.base.errors import LoopError, StateDamaged
from strict_loop.base.fsio import append_line, atomic_write, dumps_line, file_lock, read_own
from strict_loop.base.jsonl import iter_lines, json_records, last_json, records_backwards
from strict_loop.base.jsontext import read_object
from strict_loop.base.layout import TaskPaths
from strict_loop.base.timefmt import now_iso
from strict_loop.model.budgets import BUDGET_FILE, BudgetSpent, load_spent
from strict_loop.model.records import EventRecord, IterationRecord, RoundFields, StopReport, TaskState
from strict_loop.model.settings import STORED
from strict_loop.storage import rounds
from strict_loop.telemetry import spool

# Recovery, reports and the JSON Schema check are imported where they are used: the hook handler
# (once per agent tool call) loads a state and appends an event, and should pay for no more.
if TYPE_CHECKING:
    from strict_loop.model.results import RoundResult

M = TypeVar("M", bound=BaseModel)

OBSERVATIONAL_KINDS = frozenset({"note", "tool_call"})
"""Event kinds that record what happened without changing the loop's state. They are
written whole under the lock (no process crash loses them) but not fsynced one by
one: a hook sends every agent tool call here, and a power loss costing the last few
of them is a fair price. Every other event, every round and every state write is on
disk before the call returns."""


class ValidationCache:
    """Bytes of files this process wrote or already checked.

    Re-reading the same bytes needs only the lax pydantic pass. Other bytes first get
    pydantic's strict pass (no type coercion: what it accepts the JSON Schema accepts
    too); only a document it refuses pays for the full JSON Schema check, which names
    the broken field or upgrades a file of an older version. Why: the hook handler
    runs once per agent tool call, and jsonschema alone costs more than its budget.
    """

    def __init__(self) -> None:
        self._checked: dict[Path, bytes] = {}

    def parse(self, model: type[M], path: Path, data: bytes, fix: str) -> M:
        known = self._checked.get(path) == data
        try:
            doc = model.model_validate_json(data, strict=not known, context=STORED)
        except ValidationError:  # e.g. a file of an older version: the full load below upgrades it
            from strict_loop.storage import (
                documents,  # imported only here: jsonschema and every model's schema are the slow part
            )

            doc = documents.load_document(model, data, path, fix)
        self._checked[path] = data
        return doc

    def remember(self, path: Path, data: bytes) -> None:
        self._checked[path] = data


class TaskStore:
    """The files of one task under ``.agent-loop/tasks/<task_id>/``."""

    def __init__(self, paths: TaskPaths, task_id: str, cache: ValidationCache, lock_timeout: float) -> None:
        self.paths = paths
        self.task_id = task_id
        self.cache = cache
        self.lock_timeout = lock_timeout

    @contextmanager
    def locked(self) -> Iterator[None]:
        with file_lock(self.paths.lock, f"task '{self.task_id}'", self.lock_timeout):
            yield

    def exists(self) -> bool:
        return self.paths.exists()

    def describe(self) -> str:
        try:
            state = self.load()
        except LoopError:
            return "its state.json does not load"
        return f"{state.status}, {state.counters.iteration} rounds recorded"

    # ------------------------------------------------------------------ reads

    def read(self, path: Path, fix: str) -> bytes:
        """A file's bytes; a missing or unreadable file is StateDamaged naming the path."""
        try:
            return read_own(path)
        except FileNotFoundError:
            raise StateDamaged(str(path), "is missing", fix) from None
        except OSError as exc:
            raise StateDamaged(str(path), f"cannot be read ({exc.strerror or exc})", fix) from None

    def load(self) -> TaskState:
        fix = f"run `strict-loop rebuild_state --task-id {self.task_id}` to rebuild it from the ledgers"
        state = self.cache.parse(TaskState, self.paths.state, self.read(self.paths.state, fix), fix)
        if state.task_id != self.task_id:  # a state.json copied or written over from another task is not this one's
            raise StateDamaged(
                f"{self.paths.state}: field 'task_id'", f"names task {state.task_id!r}, not {self.task_id!r}", fix
            )
        return state

    def load_current(self) -> TaskState:
        """Load under the lock, rolling forward if the ledger is ahead of state.json (after a crash)."""
        state = self.load()
        last = last_json(self.paths.iterations)
        if last and isinstance(last.get("iteration"), int) and last["iteration"] > state.counters.iteration:
            from strict_loop.storage import recovery

            state, _ = recovery.rebuilt(self.paths, self.task_id, state)
        return state

    def rebuild(self) -> tuple[TaskState, list[str]]:
        """A state folded from the ledgers, with notes on what was wrong (state.json may be damaged)."""
        from strict_loop.storage import recovery

        repaired = recovery.torn_ledgers(self.paths)
        try:
            old = self.load()
        except StateDamaged as exc:
            old = None
            repaired.append(f"state.json did not load ({exc.problem}); rebuilt from the ledgers")
        state, notes = recovery.rebuilt(self.paths, self.task_id, old)
        return state, repaired + notes

    def events(self, *, last: int | None = None) -> Iterator[dict[str, Any]]:
        """The event ledger's records (optionally only the last ``last`` lines); damaged lines are skipped."""
        return (ev for _, ev in json_records(self.paths.events, last=last))

    # ------------------------------------------------------------------ writes (caller holds the lock)

    def save(self, state: TaskState) -> int:
        data = rounds.fit(state)
        atomic_write(self.paths.state, data)
        self.cache.remember(self.paths.state, data)
        return len(data)

    def append_event(self, kind: str, message: str, data: dict[str, Any]) -> EventRecord:
        rec = EventRecord(seq=self._next_seq(), ts=now_iso(), kind=kind, message=message, data=data)
        line = rec.model_dump(mode="json")
        append_line(self.paths.events, dumps_line(line), sync=kind not in OBSERVATIONAL_KINDS)
        spool.offer(self.paths.root, self.task_id, line)  # telemetry, when configured: one append, never raises
        return rec

    def _next_seq(self) -> int:
        """One past the last sane ``seq`` in the event ledger.

        A damaged one (``"abc"``, -5, 2.5, or larger than the ledger has bytes) is not trusted, so one bad
        line never blocks every later write; if the whole tail is damaged, the lines are counted instead.
        """
        try:
            size = self.paths.events.stat().st_size
        except FileNotFoundError:
            return 1
        for look in (3, 64):
            for _, ev in reversed(list(json_records(self.paths.events, last=look))):
                seq = ev.get("seq")
                if type(seq) is int and 1 <= seq <= size:
                    return seq + 1
        return sum(1 for _ in iter_lines(self.paths.events)) + 1

    def append_round(self, rec: IterationRecord) -> None:
        """The round's ledger line (the commit point), then its readable note."""
        self.commit_round(rec)
        self.write_round_note(rec)

    def commit_round(self, rec: IterationRecord) -> None:
        """The round's ledger line: once it is written the round is recorded; if this fails, nothing is."""
        append_line(self.paths.iterations, dumps_line(rec.model_dump(mode="json")))

    def write_round_note(self, rec: IterationRecord) -> None:
        if self.paths.rounds.is_symlink():  # the task folder is checked to be inside the workspace; this folder too
            raise LoopError(
                str(self.paths.rounds),
                "is a symbolic link; round notes are never written through one",
                "replace it with a real folder",
            )
        atomic_write(self.paths.round_file(rec.iteration), rounds.round_markdown(rec, self.task_id).encode())

    def last_stop_report(self) -> Optional[StopReport]:
        """The last stop report if there is a readable one (it is only a report; check_stop rewrites it)."""
        try:
            return self.cache.parse(StopReport, self.paths.stop_report, read_own(self.paths.stop_report), "")
        except (OSError, LoopError):
            return None

    def budget_spent(self) -> Optional[BudgetSpent]:
        """What the task spent of its budgets (budget.json, written by the hooks); None when nothing is counted yet."""
        return load_spent(read_object(self.paths.root / BUDGET_FILE))

    def retried_round(self, state: TaskState, req: RoundFields) -> Optional[IterationRecord]:
        """The last recorded round if ``req`` repeats it word for word and the latest announcement is that round's.

        Why: a call that failed after its commit point (or whose answer was lost) gets retried; the
        retry must get the recorded round back, not record it twice. Without an announcement, two
        identical rounds in a row are taken as two rounds, as before.
        """
        last = last_json(self.paths.iterations)
        try:
            rec = IterationRecord.model_validate(last) if last else None
        except ValueError:
            return None
        fields = set(RoundFields.model_fields)
        if rec is None or rec.model_dump(include=fields) != req.model_dump(include=fields):
            return None
        if state.current_round is not None and state.current_round.iteration > rec.iteration:
            return None
        with closing(records_backwards(self.paths.events)) as events:  # read only when the text repeats
            announced = next((ev.get("data") for ev in events if ev.get("kind") == "round.started"), None)
        return rec if isinstance(announced, dict) and announced.get("iteration") == rec.iteration else None

    def answer_retry(self, state: TaskState, rec: IterationRecord) -> RoundResult:
        """Answer a retry with the round already recorded, completing what its first call left undone (caller holds the
        lock)."""
        steps: list[tuple[str, Any]] = [("saving state.json", lambda: self.save(state))]
        if not self.paths.round_file(rec.iteration).is_file():
            steps.append((f"writing {self.paths.round_file(rec.iteration).name}", lambda: self.write_round_note(rec)))
        problems = self.settle(rec.iteration, steps)
        note = (
            f"this round repeats round {rec.iteration}, which is already recorded (a retry?); it was not recorded "
            "again -- to record a new round, announce it first with append_event kind=round.started"
        )
        return self.round_result(state, rec, [note] + problems)

    def round_result(self, state: TaskState, rec: IterationRecord, warnings: list[str]) -> RoundResult:
        from strict_loop.model.results import RoundResult

        return RoundResult(
            task_id=self.task_id,
            iteration=rec.iteration,
            status=state.status,
            progress=rec.progress,
            consecutive_no_progress=state.counters.consecutive_no_progress,
            duration_s=rec.duration_s,
            round_file=str(self.paths.round_file(rec.iteration)),
            warnings=warnings,
        )

    def settle_locked(self, iteration: int, steps: list[tuple[str, Callable[[], object]]]) -> list[str]:
        with self.locked():
            return self.settle(iteration, steps)

    @staticmethod
    def settle(iteration: int, steps: list[tuple[str, Callable[[], object]]]) -> list[str]:
        """Run the steps that follow a round's commit point; a failure becomes a warning, never an error.

        Why: once the ledger line is written the round is recorded, and an error would make the agent
        retry it. A later call rolls state.json forward from the ledger, as after a crash.
        """
        out = []
        for what, step in steps:
            try:
                step()
            except Exception as exc:  # noqa: BLE001 (any failure here is reported, the round stands)
                reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc) or type(exc).__name__
                out.append(
                    f"round {iteration} is recorded in iterations.jsonl, but {what} failed ({reason[:200]}); "
                    "the next call brings the task's files up to date (or run rebuild_state)"
                )
        return out

    def create_folders(self) -> None:
        for directory in (self.paths.rounds, self.paths.supervisor):
            directory.mkdir(parents=True, exist_ok=True)

    def move_aside(self, trash: Path) -> Path:
        """Move every file of the task (the lock aside) into a new folder under ``trash``."""
        target = trash / f"{self.task_id}-{now_iso().replace(':', '').replace('.', '')}"
        target.mkdir(parents=True, exist_ok=True)
        for entry in self.paths.root.iterdir():
            if entry.name != self.paths.lock.name:
                shutil.move(str(entry), str(target / entry.name))
        return target
