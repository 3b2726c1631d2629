"""The loop's operations on one workspace; every adapter (CLI, scripts, MCP) calls these.

Each operation is orchestration only: validate the request, take the task's
lock, have the store / rounds / stop checks / monitor do the work, record the
event. Persistence lives in ``store``, recovery in ``recovery``, task lookup
and the registry in ``taskindex``, the monitor's I/O in ``supervision``.
Every public method raises only :class:`LoopError` (``errors.boundary``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Optional

from . import __version__, legacy, monitor, rounds, secrets, snapshots, stopchecks, trust
from .errors import LoopError, TaskNotFound, boundary, validate_input
from .fsio import LOCK_TIMEOUT_S, atomic_write, dumps_doc, iter_lines, tail_lines, trim_torn_tail
from .layout import Layout, TaskPaths, slug_from_goal
from .models import MAX_CONTRACT_BYTES, CurrentRound, IterationRecord, StopReport, StopSummary, TaskState
from .monitor import SpiralVerdict, Supervisor
from .recovery import LEDGERS
from .requests import (
    AppendEventInput, CheckStopInput, CompactStateInput, DetectSpiralInput, InitStateInput, InitStateRequest, RebuildStateInput,
    ReportStatusInput, ResumeInput, ShowTaskInput, TrustInput, UpdateStateInput,
)
from .results import (
    CompactResult, EventResult, InitResult, RebuildResult, ResumeResult, RoundResult, StatusReport, StopBrief, TaskSummary,
    TaskView, TrustResult,
)
from .settings import MonitorSettings
from .store import TaskStore, ValidationCache
from .supervision import TaskSupervision, monitor_settings
from .taskindex import TaskIndex, summarize
from .timefmt import now_iso, seconds_between
from .trust import TrustStore
from .turns import Turn


class Workspace:
    """A workspace root and the loop tasks kept under its ``.agent-loop/``."""

    def __init__(self, path: str | Path = ".", *, lock_timeout: float = LOCK_TIMEOUT_S, trust_store: Optional[TrustStore] = None) -> None:
        root = Path(path).expanduser()
        if not root.is_dir():
            raise LoopError("workspace", f"{str(root)!r} is not an existing directory", "pass the project folder the loop works in")
        self.root = root.resolve()
        self.layout = Layout(self.root)
        self.index = TaskIndex(self.layout, ValidationCache(), lock_timeout)
        self.trust_store = trust_store or TrustStore()

    @boundary("init_state")
    def init_state(self, request: InitStateInput | None = None, /, **params: Any) -> InitResult:
        """Define the loop contract and create the task's files."""
        req: InitStateInput = request if isinstance(request, InitStateInput) else validate_input(InitStateRequest, request or params, "init_state")
        overrides = req.monitor if isinstance(req, InitStateRequest) else None
        contract = req.contract(monitor_settings(self.layout.monitor_defaults, req.monitor_profile, overrides))
        size = len(json.dumps(contract.model_dump(mode="json")).encode())
        if size > MAX_CONTRACT_BYTES:
            raise LoopError("init_state", f"the loop contract is {size} bytes; the cap is {MAX_CONTRACT_BYTES}",
                            "shorten the goal, evidence or stop checks (details belong in files the checks point at)")
        store = self.index.store(req.task_id or slug_from_goal(req.goal))
        store.paths.root.mkdir(parents=True, exist_ok=True)
        with store.locked():
            replaced, dropped = None, None
            if store.exists():
                if not req.force:
                    raise LoopError("init_state.task_id", f"task '{store.task_id}' already exists ({store.describe()})",
                                    "resume it, choose another task_id, or pass force=true to replace it (old files are moved aside, not deleted)")
                if TaskSupervision(store, self.root).paused():
                    raise LoopError("init_state.force", f"task '{store.task_id}' is paused by the progress monitor; only a person's resume answers a pause",
                                    f"a person runs: strict-loop resume {store.task_id} --action continue|rollback|hand-back")
                moved = store.move_aside(self.layout.trash)
                replaced = str(moved)
                dropped = snapshots.forget_task(self.root, store.task_id, moved.name)  # a rollback must not reach them
            self.trust_store.record(self.root, store.task_id, contract.stop_checks)  # written here, by this machine's user
            ts = now_iso()
            state = TaskState(task_id=store.task_id, created_at=ts, updated_at=ts, contract=contract, next_task=req.next_task)
            store.create_folders()
            store.append_event("task.initialized", f"loop initialized: {req.goal[:200]}",
                               {"task_id": store.task_id, "created_at": ts, "written_by": f"strict-agent-loop {__version__}",
                                "monitor_profile": req.monitor_profile, "contract": contract.model_dump(mode="json")})
            store.save(state)
            if dropped:
                store.append_event(*dropped)
            store.write_status(state, None, record=False)
        self.index.register(state)
        _snapshot(self.root, store, state, 0)
        return InitResult(task_id=store.task_id, task_dir=str(store.paths.root), created_at=ts, replaced=replaced)

    @boundary("append_event")
    def append_event(self, request: AppendEventInput | None = None, /, **params: Any) -> EventResult:
        """Append one event line; ``round.started`` also marks the round as announced; ``tool_call`` feeds the monitor."""
        req: AppendEventInput = validate_input(AppendEventInput, request or params, "append_event")
        # What an agent reports (a tool's output, its own notes) may hold secrets: they are masked before anything is stored.
        message, data = secrets.mask_tree([req.message, req.data])  # one pass over the environment for both
        req = req.model_copy(update={"message": message, "data": data})
        turn = validate_input(Turn, req.data, "append_event.data") if req.kind == "tool_call" else None
        store = self._store(req.task_id)
        alert = None
        with store.locked():
            data = dict(req.data)
            state = store.load_current() if req.kind == "round.started" else None
            if state is not None:
                data.setdefault("iteration", state.counters.iteration + 1)
            if turn is not None:
                data, alert = TaskSupervision(store, self.root).observe(turn)
            rec = store.append_event(req.kind, req.message, data)
            if state is not None:
                state.current_round = CurrentRound(iteration=state.counters.iteration + 1, announced_at=rec.ts, message=req.message[:500])
                state.updated_at = rec.ts
                store.save(state)
        if alert is not None:
            TaskSupervision(store, self.root).raise_alert(alert)
        return EventResult(task_id=store.task_id, seq=rec.seq, kind=rec.kind, ts=rec.ts)

    @boundary("update_state")
    def update_state(self, request: UpdateStateInput | None = None, /, **params: Any) -> RoundResult:
        """Record one verified round (refused without verification, or 'completed' while checks fail); answer with the
        stop verdict and the status line, so that a quiet round costs the agent two calls (announce, record).

        The ledger line is the commit point: a failure before it records nothing; a failure after it
        (a full disk while saving state.json) is a warning, since the round stands. A retry of the
        round just recorded gets that round back instead of recording it twice.
        """
        req: UpdateStateInput = validate_input(UpdateStateInput, request or params, "update_state")
        store = self._store(req.task_id)
        report = self._completion_report(store, req) if req.status == "completed" else None
        result, state, shown = self._record_round(store, req, report)
        return self._answer_round(store, state, req, report, result, shown)

    def _record_round(self, store: TaskStore, req: UpdateStateInput,
                      report: Optional[StopReport]) -> tuple[RoundResult, TaskState, Optional[StatusReport]]:
        """The round's commit; the status broadcast too when no stop check will run after it (one lock, not two)."""
        shown: list[StatusReport] = []
        with store.locked():
            state = store.load_current()
            recorded = store.retried_round(state, req)
            if recorded is not None:
                return store.answer_retry(state, recorded), state, None
            rounds.check_round_input(state, req)
            iteration, ts = state.counters.iteration + 1, now_iso()
            announced = state.current_round if state.current_round and state.current_round.iteration == iteration else None
            started = announced.announced_at if announced else rounds.previous_end(state)
            duration = seconds_between(started, ts) if started else None
            rec = IterationRecord(iteration=iteration, recorded_at=ts, started_at=started,
                                  duration_s=round(duration, 3) if duration is not None else None,
                                  **req.model_dump(exclude={"task_id", "skip_checks"}))
            store.commit_round(rec)
            old_status = state.status
            rounds.fold(state, rec)
            steps: list[tuple[str, Any]] = [(f"writing {store.paths.round_file(iteration).name}", lambda: store.write_round_note(rec))]
            if report is not None:
                state.last_stop = StopSummary.of(report)
                steps.append(("writing latest-stop-report.json",
                              lambda: atomic_write(store.paths.stop_report, dumps_doc(report.model_dump(mode="json")))))
            steps += [("saving state.json", lambda: store.save(state)),
                      ("recording the round.completed event", lambda: store.append_event(
                          "round.completed", f"round {iteration} recorded: {req.task[:200]}",
                          {"iteration": iteration, "progress": req.progress, "status": req.status}))]
            if req.skip_checks or not _checks_due(state, report):
                steps.append(("writing latest-status.txt",
                              lambda: shown.append(store.write_status(state, None, record=False, sync=False))))
            problems = store.settle(iteration, steps)
        problems += _snapshot(self.root, store, state, iteration)  # outside the lock: a big tree takes seconds
        if state.status != old_status:
            problems += store.settle(iteration, [("updating registry.json", lambda: self.index.register(state))])
        result = store.round_result(state, rec, rounds.warnings(state, announced is not None) + problems)
        return result, state, (shown[0] if shown else None)

    def _answer_round(self, store: TaskStore, state: TaskState, req: UpdateStateInput, report: Optional[StopReport],
                      result: RoundResult, status: Optional[StatusReport]) -> RoundResult:
        """The verdict after the round (checks run unless skipped; an untrusted contract's refusal becomes its reason)
        and the status line. The round stands whatever fails here."""
        not_run, fresh = "", False
        if _checks_due(state, report):
            if req.skip_checks:
                not_run = "stop checks skipped this round (skip_checks): the verdict rests on status and limits"
            else:
                try:
                    report, fresh = self._stop_report(state, "update_state"), True  # outside the lock: may take minutes
                except LoopError as exc:  # the trust refusal: the person must run `strict-loop trust`
                    not_run = str(exc)
        verdict = stopchecks.report(state, report.checks if report else [], report.checked_at if report else now_iso(), not_run)
        shown = [status] if status is not None else []
        steps: list[tuple[str, Any]] = [("recording the stop check", lambda: self._record_stop(store, verdict))] if fresh else []
        if status is None:
            steps.append(("writing latest-status.txt", lambda: shown.append(
                store.write_status(store.load_current(), None, record=False, sync=False))))
        try:
            problems = store.settle_locked(result.iteration, steps) if steps else []
        except LoopError as exc:
            problems = [f"round {result.iteration} is recorded, but the stop check and status were not saved ({str(exc)[:200]})"]
        line = shown[0].text.splitlines()[0] if shown else ""
        return result.model_copy(update={"stop": StopBrief.of(verdict, checks_run=not not_run), "status_line": line,
                                         "warnings": result.warnings + problems})

    @boundary("check_stop")
    def check_stop(self, request: CheckStopInput | None = None, /, **params: Any) -> StopReport:
        """Run the stop checks and hard limits; write latest-stop-report.json."""
        req: CheckStopInput = validate_input(CheckStopInput, request or params, "check_stop")
        store = self._store(req.task_id)
        report = self._stop_report(store.load(), "check_stop")  # outside the lock: commands may take minutes
        with store.locked():
            return self._record_stop(store, report)

    @staticmethod
    def _record_stop(store: TaskStore, report: StopReport) -> StopReport:
        """latest-stop-report.json, state.last_stop and the stop.checked event (caller holds the lock)."""
        state = store.load_current()
        report = report.model_copy(update={"iteration": state.counters.iteration, "status": state.status})
        atomic_write(store.paths.stop_report, dumps_doc(report.model_dump(mode="json")))
        state.last_stop = StopSummary.of(report)
        store.save(state)
        store.append_event("stop.checked", f"stop check: {report.verdict} ({report.reason[:200]})",
                           {"verdict": report.verdict, "passed": report.passed, "failed": report.failed})
        return report

    @boundary("report_status")
    def report_status(self, request: ReportStatusInput | None = None, /, **params: Any) -> StatusReport:
        """Refresh latest-status.txt and run-summary.md; append to status-history.jsonl."""
        req: ReportStatusInput = validate_input(ReportStatusInput, request or params, "report_status")
        store = self._store(req.task_id)
        with store.locked():
            return store.write_status(store.load_current(), req.label, record=True)

    @boundary("compact_state")
    def compact_state(self, request: CompactStateInput | None = None, /, **params: Any) -> CompactResult:
        """Shrink the rolling window (older rounds stay in the ledgers) and trim the context snapshot."""
        req: CompactStateInput = validate_input(CompactStateInput, request or params, "compact_state")
        store = self._store(req.task_id)
        with store.locked():
            state = store.load_current()
            keep = req.keep if req.keep is not None else state.contract.limits.history_window // 2
            moved = rounds.shrink_window(state, keep)
            state.context_snapshot = state.context_snapshot[: state.contract.limits.max_context_chars]
            state.updated_at = now_iso()
            size = store.save(state)
            store.append_event("state.compacted", f"window compacted to {len(state.recent_rounds)} rounds",
                               {"kept": len(state.recent_rounds), "archived": moved})
        return CompactResult(task_id=store.task_id, kept=len(state.recent_rounds), archived=moved, state_bytes=size)

    @boundary("list_tasks")
    def list_tasks(self) -> list[TaskSummary]:
        """Every task here, including tasks of an original ``.codex-loop/`` not yet migrated."""
        return self.index.summaries()

    @boundary("show_task")
    def show_task(self, request: ShowTaskInput | None = None, /, **params: Any) -> TaskView:
        """A task's full state, its file paths and its last stop report."""
        req: ShowTaskInput = validate_input(ShowTaskInput, request or params, "show_task")
        found = self.index.find(req.task_id, write=False)
        if isinstance(found, TaskPaths):  # a legacy task, read in place
            state = legacy.load(found.state)
            return TaskView(summary=summarize(state).model_copy(update={"source": "codex-loop"}), state=state, paths=found.as_dict())
        state = found.load()
        return TaskView(summary=summarize(state), state=state, paths=found.paths.as_dict(), last_stop_report=found.last_stop_report())

    @boundary("rebuild_state")
    def rebuild_state(self, request: RebuildStateInput | None = None, /, **params: Any) -> RebuildResult:
        """Reconstruct state.json from the ledgers, trimming torn lines; reports what it fixed."""
        req: RebuildStateInput = validate_input(RebuildStateInput, request or params, "rebuild_state")
        store = self.index.store(self.index.resolve(req.task_id))
        if not store.exists():
            raise TaskNotFound("rebuild_state.task_id", f"no task '{store.task_id}' under {self.layout.tasks}",
                               self.index.known_hint(store.task_id))
        with store.locked():
            state, repaired = store.rebuild()
            for name in LEDGERS:
                trim_torn_tail(getattr(store.paths, name))
            store.save(state)
            events = sum(1 for _ in iter_lines(store.paths.events))
            store.append_event("state.rebuilt", "state.json rebuilt from the ledgers", {"repaired": repaired})
        self.index.register(state)
        return RebuildResult(task_id=store.task_id, iteration=state.counters.iteration, events=events + 1, repaired=repaired)

    @boundary("supervisor")
    def supervisor(self, task_id: Optional[str]) -> Supervisor:
        """Messages for the agent working on ``task_id`` (recent whispers, the pause order); read-only.

        Adapters attach it to every result about a task, so a hint reaches the agent in its own context.
        """
        if not task_id:
            return Supervisor()
        return TaskSupervision(self.index.store(task_id), self.root).view()

    @boundary("detect_spiral")
    def detect_spiral(self, request: DetectSpiralInput | None = None, /, **params: Any) -> SpiralVerdict:
        """The task's current verdict, or (with ``turns``) a from-scratch evaluation of a list of turns; writes nothing."""
        req: DetectSpiralInput = validate_input(DetectSpiralInput, request or params, "detect_spiral")
        if req.turns is not None:
            settings = self._read_store(req.task_id).load().contract.monitor if req.task_id else MonitorSettings()
            return monitor.replay(req.turns, settings)[0]
        return monitor.verdict(TaskSupervision(self._read_store(req.task_id), self.root).load())

    @boundary("resume")
    def resume(self, request: ResumeInput | None = None, /, **params: Any) -> ResumeResult:
        """A person's answer to a pause: continue (with a cooldown), roll the workspace back, or hand the task back."""
        req: ResumeInput = validate_input(ResumeInput, request or params, "resume")
        store = self._store(req.task_id)
        with store.locked():
            result, ended = TaskSupervision(store, self.root).resume(req)
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
        state = self._store(req.task_id).load()
        checks = state.contract.stop_checks
        recorded = self.trust_store.record(self.root, state.task_id, checks) if checks.commands else False
        return TrustResult(task_id=state.task_id, commands=checks.commands, command_timeout_s=checks.command_timeout_s,
                           newly_trusted=recorded, record=str(self.trust_store.path))

    @boundary("resolve_task_id")
    def resolve_task_id(self, task_id: Optional[str]) -> str:
        """The given id; else the only running task, or the only task at all."""
        return self.index.resolve(task_id)

    def task_paths(self, task_id: str) -> TaskPaths:
        return self.layout.task(task_id)

    # ------------------------------------------------------------------ helpers

    def _store(self, task_id: Optional[str]) -> TaskStore:
        """The task's store for a write (a legacy task is migrated first)."""
        found = self.index.find(task_id, write=True)
        assert isinstance(found, TaskStore)
        return found

    def _read_store(self, task_id: Optional[str]) -> TaskStore:
        found = self.index.find(task_id, write=False)
        if isinstance(found, TaskPaths):
            raise LoopError("task_id", f"task '{found.root.name}' is an original .codex-loop task with no monitor state",
                            "write to it once (e.g. append_event) to migrate it")
        return found

    def _completion_report(self, store: TaskStore, req: UpdateStateInput) -> Optional[StopReport]:
        """Before recording a 'completed' round, run the checks (outside the lock: they may take minutes); refuse while any fails."""
        state = store.load()
        if store.retried_round(state, req) is not None:
            return None
        rounds.check_round_input(state, req)
        if not state.contract.stop_checks.count():
            return None
        report = self._stop_report(state, "update_state.status")
        failing = [c for c in report.checks if not c.passed]
        if failing:
            detail = "; ".join(f"{c.kind} {c.target[:60]!r}: {c.detail}" for c in failing[:3])
            raise LoopError("update_state.status", f"cannot be 'completed' while {len(failing)} stop check(s) fail ({detail})",
                            "fix what the checks report, or record this round with status 'running'")
        return report

    def _stop_report(self, state: TaskState, operation: str) -> StopReport:
        """Run the checks, if this machine trusts the contract's commands (see ``trust.py``)."""
        if not self.trust_store.is_trusted(self.root, state.task_id, state.contract.stop_checks):
            raise trust.refusal(state.task_id, state.contract.stop_checks, operation)
        checks = stopchecks.run_checks(state.contract.stop_checks, self.root)
        return stopchecks.report(state, checks, now_iso())


def _checks_due(state: TaskState, report: Optional[StopReport]) -> bool:
    """Whether the verdict after a round hangs on the stop checks: the contract has some, the task is not blocked
    or failed, and they did not just run (before a 'completed' round)."""
    return report is None and state.status in ("running", "completed") and state.contract.stop_checks.count() > 0


def _snapshot(root: Path, store: TaskStore, state: TaskState, iteration: int) -> list[str]:
    """Snapshot after a round, outside the task's lock (a big tree takes seconds), then record it under the lock.

    The round is already recorded, so nothing here fails the call: a problem comes back as a warning.
    """
    event = snapshots.after_round(root, store.task_id, store.paths.root, state.contract.monitor,
                                  state.created_at, iteration)
    if event is None:
        return []
    try:
        with store.locked():
            store.append_event(*event)
    except (LoopError, OSError) as exc:
        return [f"the snapshot of round {iteration} was taken but its event was not recorded: {str(exc)[:200]}"]
    return [event[1]] if event[0] == "snapshot.failed" else []
