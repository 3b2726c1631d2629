"""The loop's operations on one workspace; every adapter (CLI, scripts, MCP) calls these.

Each operation is orchestration only: validate the request, take the task's lock, have the store / rounds / stop
checks / monitor do the work, record the event. Persistence lives in ``store``, recovery in ``recovery``, task lookup
and the registry in ``taskindex``, the monitor's I/O in ``supervision``, the writes that create a task and commit a
round in ``commits``. Every public method raises only :class:`LoopError` (``errors.boundary``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Optional, TypeVar

from strict_loop.base import masking
from strict_loop.base.errors import LoopError, TaskNotFound, boundary
from strict_loop.base.fsio import LOCK_TIMEOUT_S, trim_torn_tail
from strict_loop.base.jsonl import iter_lines, tail_lines
from strict_loop.base.layout import MANAGER_DIR, Layout, TaskPaths, slug_from_goal
from strict_loop.base.timefmt import now_iso
from strict_loop.loop import commits, reports, safeguards, verdicts
from strict_loop.loop.delivery import QuietMonitors
from strict_loop.loop.monitoring import TaskMonitor
from strict_loop.loop.recording import record_turn
from strict_loop.model import budgets
from strict_loop.model.monitoring import MonitorView, SpiralVerdict
from strict_loop.model.records import (
    MAX_CONTRACT_BYTES,
    CurrentRound,
)
from strict_loop.model.requests import (
    AppendEventInput,
    CheckStopInput,
    CompactStateInput,
    DetectSpiralInput,
    InitStateInput,
    InitStateRequest,
    RebuildStateInput,
    ReportStatusInput,
    ResumeInput,
    ShowTaskInput,
    TrustInput,
    UpdateStateInput,
)
from strict_loop.model.results import (
    CompactResult,
    EventResult,
    InitResult,
    RebuildResult,
    ResumeResult,
    RoundResult,
    StatusReport,
    StopResult,
    TaskList,
    TaskSummary,
    TaskView,
    TrustResult,
)
from strict_loop.model.settings import MonitorSettings
from strict_loop.model.turns import Turn
from strict_loop.model.validation import validate_input
from strict_loop.monitor import ladder
from strict_loop.storage import legacy, rounds, workspaces
from strict_loop.storage.recovery import LEDGERS
from strict_loop.storage.store import TaskStore, ValidationCache
from strict_loop.storage.taskindex import TaskIndex, summarize
from strict_loop.storage.trust import TrustStore

_Request = TypeVar("_Request", UpdateStateInput, ResumeInput)
ROUND_TEXT = (
    "task",
    "local_done_condition",
    "result_summary",
    "verification_summary",
    "stop_reason",
    "evidence",
    "next_task",
    "context_snapshot",
)
"""What an agent writes about a round: masked before it is stored, as event messages and data are."""


def _masked(req: _Request, fields: tuple[str, ...]) -> _Request:
    """``req`` with its free-text ``fields`` masked (secret values of this environment, URL credentials)."""
    return req.model_copy(update=masking.mask_tree({name: getattr(req, name) for name in fields}))


class Workspace:
    """A workspace root and the loop tasks kept under its ``.agent-loop/``."""

    def __init__(
        self, path: str | Path = ".", *, lock_timeout: float = LOCK_TIMEOUT_S, trust_store: Optional[TrustStore] = None
    ) -> None:
        root = Path(path).expanduser()
        if not root.is_dir():
            raise LoopError(
                "workspace", f"{str(root)!r} is not an existing directory", "pass the project folder the loop works in"
            )
        self.root = root.resolve()
        self.layout = Layout(self.root)
        self.index = TaskIndex(self.layout, ValidationCache(), lock_timeout)
        self.trust_store = trust_store or TrustStore()
        self.quiet = QuietMonitors()  # an append_event's supervisor, without re-reading a quiet monitor.json

    @boundary("init_state")
    def init_state(self, request: InitStateInput | None = None, /, **params: Any) -> InitResult:
        """Define the loop contract and create the task's files."""
        req: InitStateInput = (
            request
            if isinstance(request, InitStateInput)
            else validate_input(InitStateRequest, request or params, "init_state")
        )
        overrides = req.monitor if isinstance(req, InitStateRequest) else None
        task_id = req.task_id or slug_from_goal(req.goal)
        monitor, notes = safeguards.new_task_monitor(
            self.layout, self.trust_store, req.monitor_profile, overrides, task_id
        )
        contract = req.contract(monitor)
        size = len(json.dumps(contract.model_dump(mode="json")).encode())
        if size > MAX_CONTRACT_BYTES:
            raise LoopError(
                "init_state",
                f"the loop contract is {size} bytes; the cap is {MAX_CONTRACT_BYTES}",
                "shorten the goal, evidence or stop checks (details belong in files the checks point at)",
            )
        lost = workspaces.vanished_here(self.root)  # before the new task is recorded beside what is gone
        result = commits.create_task(self, req, contract)
        warnings = safeguards.after_create(self.root, self.index.store(result.task_id), monitor, notes, lost)
        return result.model_copy(update={"warnings": warnings})

    @boundary("append_event")
    def append_event(self, request: AppendEventInput | None = None, /, **params: Any) -> EventResult:
        """Append one event line; ``round.started`` also marks the round as announced; ``tool_call`` feeds the
        monitor."""
        req: AppendEventInput = validate_input(AppendEventInput, request or params, "append_event")
        if req.kind == "tool_call":  # the one path for turns, shared with the harness hooks (masks, observes, alerts)
            validate_input(Turn, req.data, "append_event.data")  # a bad turn is refused before the task is looked up
            store = self.task_store(req.task_id)
            recorded = record_turn(store, self.root, req.message, req.data)
            rec = recorded.event
            return EventResult(
                task_id=store.task_id, seq=rec.seq, kind=rec.kind, ts=rec.ts, supervisor=recorded.supervisor
            )
        # What an agent reports (its own notes) may hold secrets: they are masked before anything is stored.
        message, data = masking.mask_tree([req.message, req.data])  # one pass over the environment for both
        req = req.model_copy(update={"message": message, "data": data})
        store = self.task_store(req.task_id)
        with store.locked():
            sup = TaskMonitor(store, self.root)
            data, state = dict(req.data), None
            if req.kind == "round.started":
                sup.refuse_round("append_event.kind")
                state = store.load_current()
                rounds.refuse_new_round(state)
                data.setdefault("iteration", state.counters.iteration + 1)
            rec = store.append_event(req.kind, req.message, data)
            if state is not None:
                state.current_round = CurrentRound(
                    iteration=state.counters.iteration + 1, announced_at=rec.ts, message=req.message[:500]
                )
                state.updated_at = rec.ts
                store.save(state)
            view = self.quiet.deliver(sup)
        return EventResult(task_id=store.task_id, seq=rec.seq, kind=rec.kind, ts=rec.ts, supervisor=view)

    @boundary("update_state")
    def update_state(self, request: UpdateStateInput | None = None, /, **params: Any) -> RoundResult:
        """Record one verified round (refused without verification, or 'completed' while checks fail); answer with the
        stop verdict and the status line, so that a quiet round costs the agent two calls (announce, record).

        The ledger line is the commit point: a failure before it records nothing; a failure after it
        (a full disk while saving state.json) is a warning, since the round stands. A retry of the
        round just recorded gets that round back instead of recording it twice.
        """
        req: UpdateStateInput = _masked(validate_input(UpdateStateInput, request or params, "update_state"), ROUND_TEXT)
        store = self.task_store(req.task_id)
        sup = TaskMonitor(store, self.root)
        sup.refuse_round("update_state")  # before the stop checks run, and again under the lock
        report = (
            verdicts.before_completed(self.trust_store, self.root, store, req) if req.status == "completed" else None
        )
        result, state, shown = commits.record_round(self, store, sup, req, report)
        return verdicts.after_round(self.trust_store, sup, state, req, report, result, shown)

    @boundary("check_stop")
    def check_stop(self, request: CheckStopInput | None = None, /, **params: Any) -> StopResult:
        """Run the stop checks and hard limits; write latest-stop-report.json."""
        req: CheckStopInput = validate_input(CheckStopInput, request or params, "check_stop")
        store = self.task_store(req.task_id)
        report = verdicts.stop_report(
            self.trust_store, self.root, store.load(), "check_stop"
        )  # outside the lock: commands may take minutes
        with store.locked():
            report = verdicts.record_stop(store, report)
            view = TaskMonitor(store, self.root).deliver()
        return StopResult(**dict(report), supervisor=view)

    @boundary("report_status")
    def report_status(self, request: ReportStatusInput | None = None, /, **params: Any) -> StatusReport:
        """Refresh latest-status.txt and run-summary.md; append to status-history.jsonl."""
        req: ReportStatusInput = validate_input(ReportStatusInput, request or params, "report_status")
        store = self.task_store(req.task_id)
        with store.locked():
            return reports.write_status(
                store, store.load_current(), req.label, record=True, sup=TaskMonitor(store, self.root).deliver()
            )

    @boundary("compact_state")
    def compact_state(self, request: CompactStateInput | None = None, /, **params: Any) -> CompactResult:
        """Shrink the rolling window (older rounds stay in the ledgers) and trim the context snapshot."""
        req: CompactStateInput = validate_input(CompactStateInput, request or params, "compact_state")
        store = self.task_store(req.task_id)
        with store.locked():
            state = store.load_current()
            keep = req.keep if req.keep is not None else state.contract.limits.history_window // 2
            moved = rounds.shrink_window(state, keep)
            state.context_snapshot = state.context_snapshot[: state.contract.limits.max_context_chars]
            state.updated_at = now_iso()
            size = store.save(state)
            store.append_event(
                "state.compacted",
                f"window compacted to {len(state.recent_rounds)} rounds",
                {"kept": len(state.recent_rounds), "archived": moved},
            )
            view = TaskMonitor(store, self.root).deliver()
        return CompactResult(
            task_id=store.task_id, kept=len(state.recent_rounds), archived=moved, state_bytes=size, supervisor=view
        )

    @boundary("list_tasks")
    def list_tasks(self) -> list[TaskSummary]:
        """Every task here, including tasks of an original ``.codex-loop/`` not yet migrated."""
        return self.index.summaries()

    def task_list(self) -> TaskList:
        """``list_tasks`` as one answer: the tasks and the count of tool calls no task claimed."""
        from strict_loop.storage.sessions import unclaimed_count

        lost = workspaces.vanished_here(self.root)
        return TaskList(
            tasks=self.list_tasks(),
            unclaimed_calls=unclaimed_count(self.root / MANAGER_DIR),
            warnings=[lost.describe()] if lost else [],
        )

    @boundary("show_task")
    def show_task(self, request: ShowTaskInput | None = None, /, **params: Any) -> TaskView:
        """A task's full state, its file paths and its last stop report."""
        req: ShowTaskInput = validate_input(ShowTaskInput, request or params, "show_task")
        try:
            found = self.index.find(req.task_id, write=False)
        except TaskNotFound as exc:
            lost = workspaces.vanished_here(self.root)
            if lost is None or req.task_id not in lost.tasks:
                raise
            raise TaskNotFound(exc.field, f"{exc.problem}: {lost.describe()}", exc.fix) from None
        if isinstance(found, TaskPaths):  # a legacy task, read in place
            state = legacy.load(found.state)
            return TaskView(
                summary=summarize(state).model_copy(update={"source": "codex-loop"}), state=state, paths=found.as_dict()
            )
        state = found.load_current()  # a checkpoint that failed after a round was recorded: the ledger's count
        return TaskView(
            summary=summarize(state),
            state=state,
            paths=found.paths.as_dict(),
            last_stop_report=found.last_stop_report(),
            supervisor=TaskMonitor(found, self.root).view(),
            warnings=safeguards.task_warnings(self.root, found, state),
            budget=budgets.lines(state.contract.budget, found.budget_spent(), state.created_at),
        )

    @boundary("rebuild_state")
    def rebuild_state(self, request: RebuildStateInput | None = None, /, **params: Any) -> RebuildResult:
        """Reconstruct state.json from the ledgers, trimming torn lines; reports what it fixed."""
        req: RebuildStateInput = validate_input(RebuildStateInput, request or params, "rebuild_state")
        store = self.index.store(self.index.resolve(req.task_id))
        if not store.exists():
            raise TaskNotFound(
                "rebuild_state.task_id",
                f"no task '{store.task_id}' under {self.layout.tasks}",
                self.index.known_hint(store.task_id),
            )
        with store.locked():
            state, repaired = store.rebuild()
            for name in LEDGERS:
                trim_torn_tail(getattr(store.paths, name))
            repaired += safeguards.resealed(self.root, store.task_id, state)  # the monitor's: the sealed settings
            store.save(state)
            events = sum(1 for _ in iter_lines(store.paths.events))
            store.append_event("state.rebuilt", "state.json rebuilt from the ledgers", {"repaired": repaired})
            view = TaskMonitor(store, self.root).deliver()
        self.index.register(state)
        return RebuildResult(
            task_id=store.task_id,
            iteration=state.counters.iteration,
            events=events + 1,
            repaired=repaired,
            supervisor=view,
        )

    @boundary("supervisor")
    def supervisor(self, task_id: Optional[str]) -> MonitorView:
        """Messages for the agent working on ``task_id`` (recent whispers, the pause order, a pending notice);
        read-only.

        Every result about a task carries it already; operations that write also hand a person's resume notice over
        (once), reads only show it.
        """
        if not task_id:
            return MonitorView()
        return TaskMonitor(self.index.store(task_id), self.root).view()

    @boundary("detect_spiral")
    def detect_spiral(self, request: DetectSpiralInput | None = None, /, **params: Any) -> SpiralVerdict:
        """The task's current verdict, or (with ``turns``) a from-scratch evaluation of a list of turns; writes
        nothing."""
        req: DetectSpiralInput = validate_input(DetectSpiralInput, request or params, "detect_spiral")
        if req.turns is not None:
            settings = self._read_store(req.task_id).load().contract.monitor if req.task_id else MonitorSettings()
            return ladder.replay(req.turns, settings)[0]
        sup = TaskMonitor(self._read_store(req.task_id), self.root)
        mon = sup.load()
        return ladder.verdict(mon).model_copy(update={"supervisor": sup.view(mon, diagnosed=True)})

    @boundary("resume")
    def resume(self, request: ResumeInput | None = None, /, **params: Any) -> ResumeResult:
        """A person's answer to a pause: continue (with a cooldown), roll the workspace back, or hand the task back."""
        req: ResumeInput = _masked(validate_input(ResumeInput, request or params, "resume"), ("note",))
        store = self.task_store(req.task_id)
        with store.locked():
            result, ended = TaskMonitor(store, self.root).resume(req)
        if ended:
            self.index.register(store.load())
        return result

    @boundary("run_summary")
    def run_summary(self, task_id: Optional[str]) -> Optional[str]:
        """The task's run-summary.md as of its last report_status, or None if there is none yet."""
        path = Path(self.show_task(task_id=task_id).paths["run_summary"])
        return path.read_text(encoding="utf-8", errors="replace") if path.is_file() else None

    @boundary("recent_events")
    def recent_events(self, task_id: Optional[str], count: int = 50) -> list[str]:
        """The last ``count`` complete lines of the task's events.jsonl, as written."""
        return tail_lines(Path(self.show_task(task_id=task_id).paths["events"]), count)

    @boundary("trust")
    def trust(self, request: TrustInput | None = None, /, **params: Any) -> TrustResult:
        """Record the task's stop commands as trusted by this machine (a person's decision; not an MCP tool)."""
        req: TrustInput = validate_input(TrustInput, request or params, "trust")
        store = self.task_store(req.task_id)
        state = store.load()
        checks = state.contract.stop_checks
        recorded = self.trust_store.record(self.root, state.task_id, checks) if checks.commands else False
        monitor = safeguards.trust_monitor(self.root, self.layout, self.trust_store, store)
        return TrustResult(
            task_id=state.task_id,
            commands=checks.commands,
            command_timeout_s=checks.command_timeout_s,
            newly_trusted=recorded,
            monitor=monitor,
            record=str(self.trust_store.path),
            supervisor=self.supervisor(state.task_id),
        )

    def untrusted_monitor(self, task_id: Optional[str]) -> list[str]:
        """What ``trust`` would trust of the monitor's settings, for a person to read before (one line each)."""
        found = self.index.find(task_id, write=False)  # a legacy task (no seal yet): the defaults file only
        return safeguards.pending_lines(self.root, self.layout, self.trust_store, found)

    @boundary("resolve_task_id")
    def resolve_task_id(self, task_id: Optional[str]) -> str:
        """The given id; else the only running task, or the only task at all."""
        return self.index.resolve(task_id)

    def task_paths(self, task_id: str) -> TaskPaths:
        return self.layout.task(task_id)

    # ------------------------------------------------------------------ helpers

    def task_store(self, task_id: Optional[str]) -> TaskStore:
        """The task's store for a write (a legacy task is migrated first): for the supervisor, watch and alerts,
        which keep files of their own beside the task's. A malformed id is bad input (LoopError), as everywhere."""
        try:
            found = self.index.find(task_id, write=True)
        except ValueError as exc:  # check_task_id: base raises ValueError, the facade speaks LoopError
            raise LoopError("task_id", str(exc), "name the task as list_tasks shows it") from None
        assert isinstance(found, TaskStore)
        return found

    def _read_store(self, task_id: Optional[str]) -> TaskStore:
        found = self.index.find(task_id, write=False)
        if isinstance(found, TaskPaths):
            raise LoopError(
                "task_id",
                f"task '{found.root.name}' is an original .codex-loop task with no monitor state",
                "write to it once (e.g. append_event) to migrate it",
            )
        return found
