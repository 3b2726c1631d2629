"""Which tasks a workspace holds: the registry, task lookup, guessing the task, and listing.

The task folders are authoritative; ``registry.json`` is an index of them that
is rebuilt from the folders whenever it is missing or damaged.
"""

from __future__ import annotations

import difflib
from typing import Optional, Union

from strict_loop.base.errors import LoopError, StateDamaged, TaskNotFound
from strict_loop.base.fsio import atomic_write, dumps_doc, file_lock, read_own
from strict_loop.base.jsontext import read_object
from strict_loop.base.layout import Layout, TaskPaths
from strict_loop.base.timefmt import now_iso
from strict_loop.model.records import Registry, RegistryEntry, TaskState
from strict_loop.model.results import TaskSummary
from strict_loop.storage import documents, legacy, sessions
from strict_loop.storage.store import TaskStore, ValidationCache


class TaskIndex:
    """The tasks under one workspace's ``.agent-loop/`` (and an original ``.codex-loop/``)."""

    def __init__(self, layout: Layout, cache: ValidationCache, lock_timeout: float) -> None:
        self.layout = layout
        self.cache = cache
        self.lock_timeout = lock_timeout

    def store(self, task_id: str) -> TaskStore:
        return TaskStore(self.layout.task(task_id), task_id, self.cache, self.lock_timeout)

    def find(self, task_id: Optional[str], *, write: bool) -> Union[TaskStore, TaskPaths]:
        """The task's store; for a read of a not yet migrated legacy task, its legacy paths.

        A write to a legacy task migrates it first, so every write lands in ``.agent-loop/``.
        """
        task_id = self.resolve(task_id)
        store = self.store(task_id)
        if store.exists():
            return store
        legacy_paths = self.layout.legacy_task(task_id)
        if legacy_paths.state.is_file():
            if not write:
                return legacy_paths
            state = legacy.migrate(store, legacy_paths)
            if state is not None:
                self.register(state)
            return store
        raise TaskNotFound("task_id", f"no task '{task_id}' in {self.layout.workspace}", self.known_hint(task_id))

    def resolve(self, task_id: Optional[str]) -> str:
        """The given id; else the only running task, or the only task at all."""
        if task_id:
            return task_id
        tasks = self.summaries()
        running = [t.task_id for t in tasks if t.status == "running"]
        if len(running) == 1:
            return running[0]
        if len(tasks) == 1:
            return tasks[0].task_id
        if not tasks:
            raise TaskNotFound(
                "task_id", f"no loop task exists in {self.layout.workspace}", "create one with init_state"
            )
        if not running:
            raise LoopError("task_id", "no task is running, so it cannot be guessed", self.known_hint())
        raise LoopError("task_id", f"{len(running)} tasks are running ({', '.join(running)})", "name one with task_id")

    def known_hint(self, wanted: Optional[str] = None) -> str:
        ids = sorted(set(self.layout.task_ids()) | set(self.layout.legacy_task_ids()))
        if not ids:
            return "create one with init_state"
        close = difflib.get_close_matches(wanted, ids, n=1) if wanted else []
        prefix = f"did you mean '{close[0]}'? " if close else ""
        return f"{prefix}known tasks: {', '.join(ids)}"

    def summaries(self) -> list[TaskSummary]:
        """Every task, including tasks of an original ``.codex-loop/`` not yet migrated; one unreadable task is
        reported, not fatal."""
        out = []
        ids = self.layout.task_ids()
        for task_id in ids:
            try:
                store = self.store(task_id)
                paused = (read_object(store.paths.monitor) or {}).get("paused") is True
                out.append(summarize(store.load()).model_copy(update={"paused": paused}))
            except LoopError as exc:
                out.append(TaskSummary(task_id=task_id, problem=str(exc)))
        for task_id in self.layout.legacy_task_ids():
            if task_id not in ids:
                try:
                    summary = summarize(legacy.load(self.layout.legacy_task(task_id).state))
                    out.append(summary.model_copy(update={"source": "codex-loop"}))
                except LoopError as exc:
                    out.append(TaskSummary(task_id=task_id, source="codex-loop", problem=str(exc)))
        return out

    def register(self, state: TaskState) -> None:
        with file_lock(self.layout.registry_lock, "the task registry", self.lock_timeout):
            registry = self._load_registry()
            registry.tasks[state.task_id] = _entry(state)
            registry.updated_at = now_iso()
            atomic_write(self.layout.registry, dumps_doc(registry.model_dump(mode="json")))
        sessions.note_status(self.layout, state.task_id, state.status)  # the hooks' index of the running tasks

    def _load_registry(self) -> Registry:
        """The registry is only an index: if it is damaged it is rebuilt from the task folders."""
        try:
            return documents.load_document(Registry, read_own(self.layout.registry), self.layout.registry, "")
        except (OSError, StateDamaged):
            registry = Registry(updated_at=now_iso())
            for task_id in self.layout.task_ids():
                try:
                    registry.tasks[task_id] = _entry(self.store(task_id).load())
                except LoopError:
                    continue
            return registry


def _entry(state: TaskState) -> RegistryEntry:
    return RegistryEntry(
        task_id=state.task_id,
        goal=state.contract.goal[:500],
        operating_mode=state.contract.operating_mode,
        status=state.status,
        created_at=state.created_at,
        updated_at=state.updated_at,
    )


def summarize(state: TaskState) -> TaskSummary:
    return TaskSummary(
        task_id=state.task_id,
        goal=state.contract.goal,
        status=state.status,
        operating_mode=state.contract.operating_mode,
        iteration=state.counters.iteration,
        max_iterations=state.contract.limits.max_iterations,
        updated_at=state.updated_at,
        needs_human_input=state.needs_human_input,
    )
