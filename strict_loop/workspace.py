"""The loop's operations on one workspace; every adapter (CLI, scripts, MCP) calls these.

Durability model: the append-only ledgers are the commit log, ``state.json`` a
bounded checkpoint of them. A round is committed when its line lands in
``iterations.jsonl``; if a crash leaves ``state.json`` behind the ledger, the
next write (or ``rebuild_state``) rolls it forward. All writes to one task
happen under its cross-process lock.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator, Optional, TypeVar

from pydantic import BaseModel

from . import __version__, alerts, legacy, monitor, rounds, schemas, stopchecks
from .errors import LoopError, StateDamaged, TaskNotFound, validate_input
from .fsio import (
    LOCK_TIMEOUT_S,
    append_line,
    atomic_write,
    dumps_doc,
    dumps_line,
    file_lock,
    has_torn_tail,
    iter_lines,
    last_json,
    tail_lines,
    trim_torn_tail,
)
from .layout import Layout, TaskPaths, slug_from_goal
from .monitor import Alert, MonitorState, Verdict
from .snapshots import SnapshotError, Snapshots
from .spiral import MonitorSettings, turn_paths
from .turns import Turn
from .models import (
    MAX_CONTRACT_BYTES,
    CurrentRound,
    EventRecord,
    IterationRecord,
    LoopContract,
    Registry,
    RegistryEntry,
    StopReport,
    StopSummary,
    TaskState,
)
from .reporting import round_markdown, run_summary, status_record, status_text
from .requests import (
    AppendEventInput,
    CheckStopInput,
    CompactStateInput,
    DetectSpiralInput,
    InitStateInput,
    RebuildStateInput,
    ReportStatusInput,
    ResumeInput,
    ShowTaskInput,
    UpdateStateInput,
)
from .results import (
    CompactResult,
    EventResult,
    InitResult,
    RebuildResult,
    ResumeResult,
    RoundResult,
    StatusReport,
    Supervisor,
    TaskSummary,
    TaskView,
)
from .timefmt import now_iso, seconds_between


M = TypeVar("M", bound=BaseModel)

OBSERVATIONAL_KINDS = frozenset({"note", "tool_call"})
"""Event kinds that record what happened without changing the loop's state. They are
written whole under the lock (no process crash loses them) but not fsynced one by
one: a hook sends every agent tool call here, and a power loss costing the last few
of them is a fair price. Every other event, every round and every state write is on
disk before the call returns."""


class Workspace:
    """A workspace root and the loop tasks kept under its ``.agent-loop/``."""

    def __init__(self, path: str | Path = ".", *, lock_timeout: float = LOCK_TIMEOUT_S) -> None:
        root = Path(path).expanduser()
        if not root.is_dir():
            raise LoopError("workspace", f"{str(root)!r} is not an existing directory", "pass the project folder the loop works in")
        self.root = root.resolve()
        self.layout = Layout(self.root)
        self.lock_timeout = lock_timeout
        # state.json bytes this instance wrote or already schema-checked: re-reading the same
        # bytes needs only the (fast) pydantic pass; anything else written meanwhile gets the
        # full JSON Schema check again.
        self._checked: dict[Path, bytes] = {}

    # ------------------------------------------------------------------ operations

    def init_state(self, request: InitStateInput | None = None, /, **params: Any) -> InitResult:
        """Define the loop contract and create the task's files."""
        req: InitStateInput = validate_input(InitStateInput, request or params, "init_state")
        contract = LoopContract(**req.model_dump(include=set(LoopContract.model_fields)))
        contract.monitor = self._monitor_settings(req)
        size = len(json.dumps(contract.model_dump(mode="json")).encode())
        if size > MAX_CONTRACT_BYTES:
            raise LoopError(
                "init_state", f"the loop contract is {size} bytes; the cap is {MAX_CONTRACT_BYTES}",
                "shorten the goal, evidence or stop checks (details belong in files the checks point at)",
            )
        task_id = req.task_id or slug_from_goal(req.goal)
        paths = self.layout.task(task_id)
        paths.root.mkdir(parents=True, exist_ok=True)
        with self._locked(paths, task_id):
            replaced = None
            if self._exists(paths):
                if not req.force:
                    raise LoopError(
                        "init_state.task_id", f"task '{task_id}' already exists ({self._describe(paths)})",
                        "resume it, choose another task_id, or pass force=true to replace it (old files are moved aside, not deleted)",
                    )
                replaced = str(self._move_aside(paths, task_id))
            ts = now_iso()
            state = TaskState(
                task_id=task_id, workspace_root=str(self.root), created_at=ts, updated_at=ts,
                contract=contract, next_task=req.next_task,
            )
            for directory in (paths.rounds, paths.supervisor):
                directory.mkdir(parents=True, exist_ok=True)
            self._append_event(paths, "task.initialized", f"loop initialized: {req.goal[:200]}",
                               {"task_id": task_id, "created_at": ts, "written_by": f"strict-agent-loop {__version__}",
                                "contract": contract.model_dump(mode="json")})
            self._save(paths, state)
            self._write_status(paths, state, None, record=False)
            self._snapshot(paths, state, 0)
        self._register(state)
        return InitResult(task_id=task_id, task_dir=str(paths.root), created_at=ts, replaced=replaced)

    def append_event(self, request: AppendEventInput | None = None, /, **params: Any) -> EventResult:
        """Append one event line; ``round.started`` also marks the round as announced."""
        req: AppendEventInput = validate_input(AppendEventInput, request or params, "append_event")
        turn = validate_input(Turn, req.data, "append_event.data") if req.kind == "tool_call" else None
        task_id, paths = self._task(req.task_id, write=True)
        alert = None
        with self._locked(paths, task_id):
            data = dict(req.data)
            state = None
            if req.kind == "round.started":
                state = self._load_current(paths, task_id)
                data.setdefault("iteration", state.counters.iteration + 1)
            if turn is not None:
                data, alert = self._observe(paths, task_id, turn)
            rec = self._append_event(paths, req.kind, req.message, data)
            if state is not None:
                state.current_round = CurrentRound(iteration=state.counters.iteration + 1, announced_at=rec.ts, message=req.message[:500])
                state.updated_at = rec.ts
                self._save(paths, state)
        if alert is not None:
            self._raise_alert(paths, task_id, alert)
        return EventResult(task_id=task_id, seq=rec.seq, kind=rec.kind, ts=rec.ts)

    def update_state(self, request: UpdateStateInput | None = None, /, **params: Any) -> RoundResult:
        """Record one verified round (refused without verification, or 'completed' while checks fail)."""
        req: UpdateStateInput = validate_input(UpdateStateInput, request or params, "update_state")
        task_id, paths = self._task(req.task_id, write=True)
        report = None
        if req.status == "completed":  # run the checks before taking the lock: they may take minutes
            state = self._load(paths, task_id)
            self._check_round_input(state, req)
            report = self._stop_report(state) if state.contract.stop_checks.count() else None
        if report is not None:
            failing = [c for c in report.checks if not c.passed]
            if failing:
                detail = "; ".join(f"{c.kind} {c.target[:60]!r}: {c.detail}" for c in failing[:3])
                raise LoopError(
                    "update_state.status", f"cannot be 'completed' while {len(failing)} stop check(s) fail ({detail})",
                    "fix what the checks report, or record this round with status 'running'",
                )
        with self._locked(paths, task_id):
            state = self._load_current(paths, task_id)
            self._check_round_input(state, req)
            ts = now_iso()
            iteration = state.counters.iteration + 1
            warnings = []
            announced = state.current_round if state.current_round and state.current_round.iteration == iteration else None
            if announced is None:
                warnings.append("this round was not announced: call append_event(kind='round.started') before the work")
            started = announced.announced_at if announced else _previous_end(state)
            rec = IterationRecord(
                iteration=iteration, recorded_at=ts, started_at=started,
                duration_s=round(seconds_between(started, ts), 3) if started else None,
                **req.model_dump(exclude={"task_id"}),
            )
            append_line(paths.iterations, dumps_line(rec.model_dump(mode="json")))
            atomic_write(paths.round_file(iteration), round_markdown(rec, task_id).encode())
            old_status = state.status
            rounds.fold(state, rec)
            if report is not None:
                state.last_stop = _summary(report)
                atomic_write(paths.stop_report, dumps_doc(report.model_dump(mode="json")))
            self._save(paths, state)
            self._append_event(paths, "round.completed", f"round {iteration} recorded: {req.task[:200]}",
                               {"iteration": iteration, "progress": req.progress, "status": req.status})
            self._snapshot(paths, state, iteration)
        if state.status != old_status:
            self._register(state)
        lim = state.contract.limits
        if state.counters.consecutive_no_progress >= lim.max_no_progress_rounds:
            warnings.append(f"{state.counters.consecutive_no_progress} rounds in a row without progress: the max_no_progress_rounds limit is reached; stop and rethink")
        if iteration >= lim.max_iterations:
            warnings.append(f"iteration limit reached ({iteration}/{lim.max_iterations})")
        return RoundResult(
            task_id=task_id, iteration=iteration, status=state.status, progress=req.progress,
            consecutive_no_progress=state.counters.consecutive_no_progress, duration_s=rec.duration_s,
            round_file=str(paths.round_file(iteration)), warnings=warnings,
        )

    def check_stop(self, request: CheckStopInput | None = None, /, **params: Any) -> StopReport:
        """Run the stop checks and hard limits; write latest-stop-report.json."""
        req: CheckStopInput = validate_input(CheckStopInput, request or params, "check_stop")
        task_id, paths = self._task(req.task_id, write=True)
        report = self._stop_report(self._load(paths, task_id))
        with self._locked(paths, task_id):
            state = self._load_current(paths, task_id)
            report = report.model_copy(update={"iteration": state.counters.iteration, "status": state.status})
            atomic_write(paths.stop_report, dumps_doc(report.model_dump(mode="json")))
            state.last_stop = _summary(report)
            self._save(paths, state)
            self._append_event(paths, "stop.checked", f"stop check: {report.verdict} ({report.reason[:200]})",
                               {"verdict": report.verdict, "passed": report.passed, "failed": report.failed})
        return report

    def report_status(self, request: ReportStatusInput | None = None, /, **params: Any) -> StatusReport:
        """Refresh latest-status.txt and run-summary.md; append to status-history.jsonl."""
        req: ReportStatusInput = validate_input(ReportStatusInput, request or params, "report_status")
        task_id, paths = self._task(req.task_id, write=True)
        with self._locked(paths, task_id):
            state = self._load_current(paths, task_id)
            return self._write_status(paths, state, req.label, record=True)

    def compact_state(self, request: CompactStateInput | None = None, /, **params: Any) -> CompactResult:
        """Shrink the rolling window (older rounds stay in the ledgers) and trim the snapshot."""
        req: CompactStateInput = validate_input(CompactStateInput, request or params, "compact_state")
        task_id, paths = self._task(req.task_id, write=True)
        with self._locked(paths, task_id):
            state = self._load_current(paths, task_id)
            keep = req.keep if req.keep is not None else state.contract.limits.history_window // 2
            moved = rounds.shrink_window(state, keep)
            state.context_snapshot = state.context_snapshot[: state.contract.limits.max_context_chars]
            state.updated_at = now_iso()
            size = self._save(paths, state)
            self._append_event(paths, "state.compacted", f"window compacted to {len(state.recent_rounds)} rounds",
                               {"kept": len(state.recent_rounds), "archived": moved})
        return CompactResult(task_id=task_id, kept=len(state.recent_rounds), archived=moved, state_bytes=size)

    def list_tasks(self) -> list[TaskSummary]:
        """Every task here, including tasks of an original ``.codex-loop/`` not yet migrated."""
        out = []
        seen = set()
        for task_id in self._task_dirs():
            seen.add(task_id)
            paths = self.layout.task(task_id)
            try:
                out.append(_summarize(self._load(paths, task_id)))
            except LoopError as exc:
                out.append(TaskSummary(task_id=task_id, problem=str(exc)))
        for task_id in self.layout.legacy_task_ids():
            if task_id not in seen:
                try:
                    summary = _summarize(legacy.load(self.layout.legacy_task(task_id).state, self.root))
                    out.append(summary.model_copy(update={"source": "codex-loop"}))
                except LoopError as exc:
                    out.append(TaskSummary(task_id=task_id, source="codex-loop", problem=str(exc)))
        return out

    def show_task(self, request: ShowTaskInput | None = None, /, **params: Any) -> TaskView:
        """A task's full state, its file paths and its last stop report."""
        req: ShowTaskInput = validate_input(ShowTaskInput, request or params, "show_task")
        task_id, paths = self._task(req.task_id, write=False)
        if paths.root.parent == self.layout.legacy_tasks:
            state = legacy.load(paths.state, self.root)
            return TaskView(summary=_summarize(state).model_copy(update={"source": "codex-loop"}), state=state, paths=paths.as_dict())
        state = self._load(paths, task_id)
        return TaskView(summary=_summarize(state), state=state, paths=paths.as_dict(), last_stop_report=_last_stop_report(paths))

    def rebuild_state(self, request: RebuildStateInput | None = None, /, **params: Any) -> RebuildResult:
        """Reconstruct state.json from the ledgers, trimming torn lines; reports what it fixed."""
        req: RebuildStateInput = validate_input(RebuildStateInput, request or params, "rebuild_state")
        task_id = req.task_id or self.resolve_task_id(None)
        paths = self.layout.task(task_id)
        if not self._exists(paths):
            raise TaskNotFound("rebuild_state.task_id", f"no task '{task_id}' under {self.layout.tasks}", self._known_hint())
        with self._locked(paths, task_id):
            state, repaired = self._rebuilt(paths, task_id)
            for ledger in (paths.events, paths.iterations, paths.status_history):
                trim_torn_tail(ledger)
            self._save(paths, state)
            events = sum(1 for _ in iter_lines(paths.events))
            self._append_event(paths, "state.rebuilt", "state.json rebuilt from the ledgers", {"repaired": repaired})
        self._register(state)
        return RebuildResult(task_id=task_id, iteration=state.counters.iteration, events=events + 1, repaired=repaired)

    def supervisor(self, task_id: Optional[str]) -> Supervisor:
        """Messages for the agent working on ``task_id`` (recent whispers, the pause order); read-only.

        Adapters attach it to every result about a task, so a hint reaches the agent in its own context.
        """
        if not task_id:
            return Supervisor()
        paths = self.layout.task(task_id)
        if not paths.monitor.exists():
            return Supervisor()
        mon = self._load_monitor(paths, task_id)
        if not (mon.paused or mon.whispers):
            return Supervisor()
        return monitor.supervisor_view(mon, self._settings(paths, task_id))

    def detect_spiral(self, request: DetectSpiralInput | None = None, /, **params: Any) -> Verdict:
        """The task's current verdict, or (with ``turns``) a from-scratch evaluation of a list of turns; writes nothing."""
        req: DetectSpiralInput = validate_input(DetectSpiralInput, request or params, "detect_spiral")
        if req.turns is not None:
            settings = MonitorSettings()
            if req.task_id:
                task_id, paths = self._task(req.task_id, write=False)
                settings = self._settings(paths, task_id)
            return monitor.replay(req.turns, settings)[0]
        task_id, paths = self._task(req.task_id, write=False)
        return monitor.verdict(self._load_monitor(paths, task_id), self._settings(paths, task_id))

    def resume(self, request: ResumeInput | None = None, /, **params: Any) -> ResumeResult:
        """A person's answer to a pause: continue (with a cooldown), roll the workspace back, or hand the task back."""
        req: ResumeInput = validate_input(ResumeInput, request or params, "resume")
        task_id, paths = self._task(req.task_id, write=True)
        with self._locked(paths, task_id):
            state = self._load_current(paths, task_id)
            mon = self._load_monitor(paths, task_id)
            settings = state.contract.monitor
            if req.action == "continue" and not mon.paused:
                raise LoopError("resume.action", f"task '{task_id}' is not paused", "use continue only after a pause; rollback and hand-back work any time")
            kinds = sorted({s.kind for s in mon.last_signals})
            result = ResumeResult(task_id=task_id, action=req.action, detail="")
            if req.action == "rollback":
                snaps = Snapshots(self.root, task_id, paths.root)
                if not Snapshots.available():
                    raise LoopError("resume.action", "rollback needs git, which is not installed", "install git, or resume with continue")
                if snaps.resolve(f"round-{req.to}") is None:
                    raise LoopError("resume.to", f"there is no snapshot of round {req.to} for task '{task_id}'",
                                    "snapshots are taken after each round when monitor.snapshots is on (or 'auto' in a git repository)")
                try:
                    saved, restored = snaps.restore(f"round-{req.to}")
                except SnapshotError as exc:
                    raise LoopError("resume", f"rollback failed: {exc}", "the working tree was saved first; see events.jsonl") from None
                result.saved_commit, result.restored_commit = saved, restored
                result.detail = (f"workspace restored to round {req.to}; the tree as it was is saved as "
                                 f"{snaps.ref('before-rollback')} ({saved[:12]})")
                self._append_event(paths, "workspace.rolled_back", result.detail,
                                   {"to": req.to, "saved": saved, "restored": restored, "note": req.note})
            if req.action == "hand-back":
                text = self._handback(paths, state, mon, req.note)
                atomic_write(paths.root / "handback.md", text.encode())
                state.status, state.needs_human_input = "blocked", True
                state.stop_reason = ("handed back to a person after the progress monitor paused the loop: " + monitor.diagnosis(mon))[:2000]
                state.updated_at = now_iso()
                self._save(paths, state)
                result.handback_file = str(paths.root / "handback.md")
                result.detail = f"loop ended as blocked; summary for the person in {result.handback_file}"
                self._append_event(paths, "task.handed_back", result.detail, {"note": req.note})
            if req.action in ("continue", "rollback"):
                for kind in kinds:
                    mon.muted_until[kind] = mon.turns + settings.cooldown_turns
                result.muted = kinds
                if req.action == "continue":
                    result.detail = f"resumed; {', '.join(kinds) or 'no signal'} muted for {settings.cooldown_turns} turns"
            if mon.whispers and mon.whispers[-1].adopted is None:
                mon.whispers[-1].adopted = False
            mon.paused, mon.paused_at, mon.level, mon.firings_at_level = False, None, 0, 0
            self._save_monitor(paths, mon, sync=True)
            self._append_event(paths, "spiral.resumed", f"resume --action {req.action}: {result.detail}",
                               {"action": req.action, "to": req.to, "muted": result.muted, "note": req.note})
        if req.action == "hand-back":
            self._register(state)
        return result

    # ------------------------------------------------------------------ task lookup

    def resolve_task_id(self, task_id: Optional[str]) -> str:
        """The given id; else the only running task, or the only task at all."""
        if task_id:
            return task_id
        tasks = self.list_tasks()
        running = [t.task_id for t in tasks if t.status == "running"]
        if len(running) == 1:
            return running[0]
        if len(tasks) == 1:
            return tasks[0].task_id
        if not tasks:
            raise TaskNotFound("task_id", f"no loop task exists in {self.root}", "create one with init_state")
        if not running:
            raise LoopError("task_id", "no task is running, so it cannot be guessed", self._known_hint())
        raise LoopError("task_id", f"{len(running)} tasks are running ({', '.join(running)})", "name one with task_id")

    def task_paths(self, task_id: str) -> TaskPaths:
        return self.layout.task(task_id)

    def _task(self, task_id: Optional[str], *, write: bool) -> tuple[str, TaskPaths]:
        task_id = self.resolve_task_id(task_id)
        paths = self.layout.task(task_id)
        if self._exists(paths):
            return task_id, paths
        legacy_paths = self.layout.legacy_task(task_id)
        if legacy_paths.state.is_file():
            if not write:
                return task_id, legacy_paths
            self._migrate(task_id, legacy_paths)
            return task_id, paths
        raise TaskNotFound("task_id", f"no task '{task_id}' in {self.root}", self._known_hint())

    def _known_hint(self) -> str:
        ids = [t.task_id for t in self.list_tasks()]
        return f"known tasks: {', '.join(ids)}" if ids else "create one with init_state"

    def _task_dirs(self) -> list[str]:
        ids = set(self.layout.task_ids())
        if self.layout.tasks.is_dir():
            for entry in self.layout.tasks.iterdir():
                if (entry / "events.jsonl").is_file():
                    try:
                        self.layout.task(entry.name)
                        ids.add(entry.name)
                    except ValueError:
                        pass
        return sorted(ids)

    @staticmethod
    def _exists(paths: TaskPaths) -> bool:
        return paths.state.is_file() or paths.events.is_file()

    def _describe(self, paths: TaskPaths) -> str:
        try:
            state = self._load(paths, paths.root.name)
            return f"{state.status}, {state.counters.iteration} rounds recorded"
        except LoopError:
            return "its state.json does not load"

    # ------------------------------------------------------------------ state I/O

    @contextmanager
    def _locked(self, paths: TaskPaths, task_id: str) -> Iterator[None]:
        with file_lock(paths.lock, f"task '{task_id}'", self.lock_timeout):
            yield

    def _load(self, paths: TaskPaths, task_id: str) -> TaskState:
        fix = f"run `strict-loop rebuild_state --task-id {task_id}` to rebuild it from the ledgers"
        try:
            data = paths.state.read_bytes()
        except FileNotFoundError:
            raise StateDamaged(str(paths.state), "is missing", fix) from None
        return self._parse(TaskState, paths.state, data, fix)

    def _parse(self, model: type[M], path: Path, data: bytes, fix: str) -> M:
        """Validate ``data`` against the schema, unless these exact bytes were written or checked here before."""
        if self._checked.get(path) == data:
            return model.model_validate_json(data)
        doc = schemas.load_document(model, data, path, fix)
        self._checked[path] = data
        return doc

    def _load_current(self, paths: TaskPaths, task_id: str) -> TaskState:
        """Load under the lock, rolling forward if the ledger is ahead of state.json (after a crash)."""
        state = self._load(paths, task_id)
        last = last_json(paths.iterations)
        if last and isinstance(last.get("iteration"), int) and last["iteration"] > state.counters.iteration:
            state, _ = self._rebuilt(paths, task_id)
        return state

    def _save(self, paths: TaskPaths, state: TaskState) -> int:
        data = rounds.fit(state)
        atomic_write(paths.state, data)
        self._checked[paths.state] = data
        return len(data)

    def _append_event(self, paths: TaskPaths, kind: str, message: str, data: dict[str, Any]) -> EventRecord:
        last = last_json(paths.events)
        seq = (last.get("seq", 0) if last else 0) + 1
        rec = EventRecord(seq=seq, ts=now_iso(), kind=kind, message=message, data=data)
        append_line(paths.events, dumps_line(rec.model_dump(mode="json")), sync=kind not in OBSERVATIONAL_KINDS)
        return rec

    def _check_round_input(self, state: TaskState, req: UpdateStateInput) -> None:
        if state.status == "completed":
            raise LoopError(
                "update_state", f"task '{state.task_id}' is already completed at iteration {state.counters.iteration}",
                "start new work with init_state (a new task_id, or force=true)",
            )
        cap = state.contract.limits.max_context_chars
        if req.context_snapshot is not None and len(req.context_snapshot) > cap:
            raise LoopError(
                "update_state.context_snapshot", f"has {len(req.context_snapshot)} characters; this task's cap is {cap}",
                "shorten it to the facts a fresh session needs (the ledgers keep the rest)",
            )

    def _stop_report(self, state: TaskState) -> StopReport:
        checks = stopchecks.run_checks(state.contract.stop_checks, self.root)
        limits = stopchecks.limit_results(state)
        verdict, reason = stopchecks.decide(state, checks, limits)
        passed = sum(c.passed for c in checks)
        return StopReport(
            task_id=state.task_id, checked_at=now_iso(), iteration=state.counters.iteration, status=state.status,
            verdict=verdict, should_stop=verdict != "continue", reason=reason, passed=passed,
            failed=len(checks) - passed, checks=checks, limits=limits,
        )

    def _write_status(self, paths: TaskPaths, state: TaskState, label: Optional[str], *, record: bool) -> StatusReport:
        rec = status_record(state, now_iso(), label)
        text = status_text(state, rec)
        atomic_write(paths.latest_status, text.encode())
        if record:
            append_line(paths.status_history, dumps_line(rec.model_dump(mode="json")))
        atomic_write(paths.run_summary, run_summary(state, text, _last_stop_report(paths)).encode())
        return StatusReport(text=text, record=rec)

    def _rebuilt(self, paths: TaskPaths, task_id: str) -> tuple[TaskState, list[str]]:
        """A fresh state folded from the ledgers, and notes on what differed."""
        repaired: list[str] = []
        for ledger in (paths.events, paths.iterations, paths.status_history):
            if has_torn_tail(ledger):
                repaired.append(f"{ledger.name}: cut an unterminated last line left by an interrupted write")
        old: Optional[TaskState] = None
        try:
            old = self._load(paths, task_id)
        except StateDamaged as exc:
            repaired.append(f"state.json did not load ({exc.problem}); rebuilt from the ledgers")
        base = self._base_state(paths, task_id, old)
        state = base
        for number, line in iter_lines(paths.iterations):
            try:
                rec = IterationRecord.model_validate_json(line)
            except ValueError:
                repaired.append(f"iterations.jsonl line {number}: skipped, not a valid round record")
                continue
            if rec.iteration != state.counters.iteration + 1:
                repaired.append(f"iterations.jsonl line {number}: skipped, iteration {rec.iteration} after {state.counters.iteration}")
                continue
            rounds.fold(state, rec)
        state.current_round = None
        for _, line in iter_lines(paths.events):
            try:
                ev = json.loads(line)
            except ValueError:
                continue
            if ev.get("kind") == "round.started":
                it = (ev.get("data") or {}).get("iteration")
                if isinstance(it, int) and it == state.counters.iteration + 1:
                    state.current_round = CurrentRound(iteration=it, announced_at=ev.get("ts", now_iso()), message=str(ev.get("message", ""))[:500])
        if old is not None:
            state.last_stop = old.last_stop
            if old.counters != state.counters:
                repaired.append(f"counters were {old.counters.model_dump()}; the ledger gives {state.counters.model_dump()}")
        return state, repaired

    def _base_state(self, paths: TaskPaths, task_id: str, old: Optional[TaskState]) -> TaskState:
        if old is not None:
            return TaskState(task_id=task_id, workspace_root=old.workspace_root, created_at=old.created_at,
                             updated_at=old.created_at, contract=old.contract, imported_from=old.imported_from)
        init = None
        for _, line in iter_lines(paths.events):
            try:
                ev = json.loads(line)
            except ValueError:
                continue
            if ev.get("kind") == "task.initialized" and isinstance(ev.get("data"), dict):
                init = ev["data"]
        if init is None:
            raise StateDamaged(
                "rebuild_state", f"state.json of '{task_id}' does not load and events.jsonl has no task.initialized event",
                "restore state.json from a backup or start over with init_state force=true",
            )
        contract = schemas.validate_document(LoopContract, init.get("contract"), "events.jsonl task.initialized contract",
                                             "start over with init_state force=true")
        created = init.get("created_at") or now_iso()
        return TaskState(task_id=task_id, workspace_root=str(self.root), created_at=created, updated_at=created,
                         contract=contract, imported_from=init.get("imported_from"))

    def _move_aside(self, paths: TaskPaths, task_id: str) -> Path:
        target = self.layout.trash / f"{task_id}-{now_iso().replace(':', '').replace('.', '')}"
        target.mkdir(parents=True, exist_ok=True)
        for entry in paths.root.iterdir():
            if entry.name != paths.lock.name:
                shutil.move(str(entry), str(target / entry.name))
        return target

    def _migrate(self, task_id: str, legacy_paths: TaskPaths) -> None:
        paths = self.layout.task(task_id)
        paths.root.mkdir(parents=True, exist_ok=True)
        with self._locked(paths, task_id):
            if self._exists(paths):
                return
            state, records, events = legacy.convert(legacy_paths, self.root)
            paths.rounds.mkdir(parents=True, exist_ok=True)
            paths.supervisor.mkdir(parents=True, exist_ok=True)
            self._append_event(paths, "task.initialized", f"migrated from {legacy_paths.root}",
                               {"task_id": task_id, "created_at": state.created_at, "imported_from": str(legacy_paths.root),
                                "contract": state.contract.model_dump(mode="json")})
            for ev in events:
                self._append_event(paths, "legacy.event", ev["message"], ev["data"])
            for rec in records:
                append_line(paths.iterations, dumps_line(rec.model_dump(mode="json")))
                atomic_write(paths.round_file(rec.iteration), round_markdown(rec, task_id).encode())
            self._save(paths, state)
            self._append_event(paths, "task.migrated", f"took over {len(records)} rounds from .codex-loop",
                               {"rounds": len(records), "events": len(events)})
        self._register(state)

    # ------------------------------------------------------------------ progress monitor

    def _monitor_settings(self, req: InitStateInput) -> MonitorSettings:
        """The task's monitor settings: workspace defaults (if any), overridden by what the request set."""
        path = self.layout.monitor_defaults
        if not path.is_file():
            return req.monitor
        try:
            base = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise LoopError(str(path), f"cannot be read as JSON ({exc})", "fix it or remove it") from None
        merged = _deep_merge(base if isinstance(base, dict) else {}, req.monitor.model_dump(exclude_unset=True))
        return validate_input(MonitorSettings, merged, f"{path.name}")

    def _settings(self, paths: TaskPaths, task_id: str) -> MonitorSettings:
        return self._load(paths, task_id).contract.monitor

    def _load_monitor(self, paths: TaskPaths, task_id: str) -> MonitorState:
        """monitor.json, or a rebuilt one (from the recent tool_call events) if it is missing or damaged."""
        try:
            data = paths.monitor.read_bytes()
        except FileNotFoundError:
            return MonitorState()
        try:
            return self._parse(MonitorState, paths.monitor, data, "")
        except StateDamaged:
            return self._rebuilt_monitor(paths, task_id)

    def _rebuilt_monitor(self, paths: TaskPaths, task_id: str) -> MonitorState:
        """Replay the recent ledger (tool calls, pauses, resumes) into a fresh monitor state."""
        settings = self._settings(paths, task_id)
        mon = MonitorState()
        for line in tail_lines(paths.events, 400):
            try:
                ev = json.loads(line)
            except ValueError:
                continue
            kind = ev.get("kind")
            if kind == "tool_call":
                try:
                    mon, _, _ = monitor.observe(mon, Turn.model_validate(ev.get("data") or {}), settings)
                except ValueError:
                    continue
            elif kind == "spiral.resumed":
                mon.paused, mon.level, mon.firings_at_level = False, 0, 0
                for k in (ev.get("data") or {}).get("muted", []):
                    mon.muted_until[k] = mon.turns + settings.cooldown_turns
        return mon

    def _save_monitor(self, paths: TaskPaths, mon: MonitorState, *, sync: bool) -> None:
        data = mon.model_dump_json().encode()
        atomic_write(paths.monitor, data, sync=sync)
        self._checked[paths.monitor] = data

    def _file_states(self, paths_in: list[str]) -> dict[str, str]:
        """Content digests of the files a turn touched, for those inside the workspace (small files only)."""
        out = {}
        for rel in paths_in[:5]:
            try:
                path = (self.root / rel).resolve()  # an absolute `rel` replaces the root
                path.relative_to(self.root)
                if path.is_file() and path.stat().st_size <= 2_000_000:
                    out[rel] = hashlib.blake2b(path.read_bytes(), digest_size=8).hexdigest()
            except (ValueError, OSError):
                continue
        return out

    def _observe(self, paths: TaskPaths, task_id: str, turn: Turn) -> tuple[dict[str, Any], Optional[Alert]]:
        """Evaluate one turn (caller holds the lock): update monitor.json, record ladder steps; returns the event data."""
        state = self._load(paths, task_id)
        settings = state.contract.monitor
        mon = self._load_monitor(paths, task_id)
        fstate = self._file_states(turn_paths(turn))
        mon, action, signals = monitor.observe(mon, turn, settings, fstate)
        index = mon.turns - 1
        self._save_monitor(paths, mon, sync=action != "none")
        data = {**turn.model_dump(mode="json", exclude_none=True), "turn": index}
        alert = None
        if action in ("whisper", "whisper2"):
            w = mon.whispers[-1]
            self._append_event(paths, "spiral.whisper", w.text, {"turn": index, "level": w.level, "signals": [s.model_dump() for s in signals]})
        elif action == "pause":
            diag = monitor.diagnosis(mon)
            self._append_event(paths, "spiral.paused", f"paused at turn {index}: {diag[:500]}",
                               {"turn": index, "signals": [s.model_dump() for s in signals]})
            alert = Alert(id=f"{task_id}-{mon.alerts}", ts=now_iso(), task_id=task_id, turn=index, level=3, signals=signals,
                          diagnosis=diag, recent=[f.brief for f in mon.window[-5:]],
                          recommended_action=monitor.recommended_action(mon, signals))
        return data, alert

    def _raise_alert(self, paths: TaskPaths, task_id: str, alert: Alert) -> None:
        """Deliver outside the lock (the webhook may be slow), then record the alert with its delivery outcome."""
        payload = {"text": f"[SPIRALING] {task_id}: {alert.diagnosis}", **alert.model_dump(mode="json", exclude={"delivery"})}
        alert.delivery["webhook"] = alerts.deliver(payload, os.environ)
        with self._locked(paths, task_id):
            append_line(paths.alerts, dumps_line(alert.model_dump(mode="json")))
            self._append_event(paths, "spiral.alert", f"[SPIRALING] {alert.diagnosis[:600]}",
                               {"alert": alert.id, "delivery": alert.delivery})

    def _snapshot(self, paths: TaskPaths, state: TaskState, iteration: int) -> None:
        """Snapshot the workspace after a round (never fails the round: a failure is recorded as an event)."""
        mode = state.contract.monitor.snapshots
        if mode == "off" or (mode == "auto" and not (self.root / ".git").exists()) or not Snapshots.available():
            return
        try:
            commit = Snapshots(self.root, state.task_id, paths.root).take(f"round-{iteration}", f"{state.task_id}: after round {iteration}")
        except (SnapshotError, OSError, subprocess.SubprocessError) as exc:
            self._append_event(paths, "snapshot.failed", f"snapshot of round {iteration} failed: {str(exc)[:300]}", {"iteration": iteration})
            return
        self._append_event(paths, "snapshot.taken", f"round {iteration} snapshot {commit[:12]}", {"iteration": iteration, "commit": commit})

    def _handback(self, paths: TaskPaths, state: TaskState, mon: MonitorState, note: str) -> str:
        lines = [f"# Handed back: {state.task_id}", "", f"Goal: {state.contract.goal}", "",
                 f"Rounds recorded: {state.counters.iteration}. Next task was: {state.next_task or '(not set)'}", "",
                 "## Why the loop stopped", monitor.diagnosis(mon), "", "## Last turns"]
        lines += [f"- {b}" for b in [f.brief for f in mon.window[-8:]]] or ["- (none recorded)"]
        lines += ["", "## Hints given"] + ([f"- turn {w.turn} (level {w.level}, {'adopted' if w.adopted else 'not adopted'}): {w.text}"
                                           for w in mon.whispers] or ["- (none)"])
        if note:
            lines += ["", "## Note from the person", note]
        lines += ["", f"Full history: {paths.events} and {paths.iterations}.", ""]
        return "\n".join(lines)

    # ------------------------------------------------------------------ registry

    def _register(self, state: TaskState) -> None:
        with file_lock(self.layout.registry_lock, "the task registry", self.lock_timeout):
            registry = self._load_registry()
            registry.tasks[state.task_id] = RegistryEntry(
                task_id=state.task_id, goal=state.contract.goal[:500], operating_mode=state.contract.operating_mode,
                status=state.status, created_at=state.created_at, updated_at=state.updated_at,
            )
            registry.updated_at = now_iso()
            atomic_write(self.layout.registry, dumps_doc(registry.model_dump(mode="json")))

    def _load_registry(self) -> Registry:
        """The registry is only an index: if it is damaged it is rebuilt from the task folders."""
        try:
            return schemas.load_document(Registry, self.layout.registry.read_bytes(), self.layout.registry, "")
        except (FileNotFoundError, StateDamaged):
            registry = Registry(updated_at=now_iso())
            for task_id in self.layout.task_ids():
                try:
                    s = self._load(self.layout.task(task_id), task_id)
                except LoopError:
                    continue
                registry.tasks[task_id] = RegistryEntry(task_id=task_id, goal=s.contract.goal[:500], operating_mode=s.contract.operating_mode,
                                                        status=s.status, created_at=s.created_at, updated_at=s.updated_at)
            return registry


def _deep_merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in override.items():
        out[key] = _deep_merge(out[key], value) if isinstance(value, dict) and isinstance(out.get(key), dict) else value
    return out


def _last_stop_report(paths: TaskPaths) -> Optional[StopReport]:
    """The last stop report if there is a readable one (it is only a report; check_stop rewrites it)."""
    try:
        return schemas.load_document(StopReport, paths.stop_report.read_bytes(), paths.stop_report, "")
    except (FileNotFoundError, StateDamaged):
        return None


def _previous_end(state: TaskState) -> Optional[str]:
    """When an unannounced round began: the end of the previous round, or init for round 1."""
    if state.recent_rounds:
        return state.recent_rounds[-1].recorded_at
    return state.created_at if state.counters.iteration == 0 else None


def _summary(report: StopReport) -> StopSummary:
    return StopSummary(checked_at=report.checked_at, verdict=report.verdict, should_stop=report.should_stop,
                       passed=report.passed, failed=report.failed, reason=report.reason[:500])


def _summarize(state: TaskState) -> TaskSummary:
    return TaskSummary(
        task_id=state.task_id, goal=state.contract.goal, status=state.status, operating_mode=state.contract.operating_mode,
        iteration=state.counters.iteration, max_iterations=state.contract.limits.max_iterations,
        updated_at=state.updated_at, needs_human_input=state.needs_human_input,
    )
