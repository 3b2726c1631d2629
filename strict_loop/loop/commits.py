"""The two operations that write a task's durable record: creating a task (``init_state``) and committing a verified
round (``update_state``).

Why apart from ``workspace``: the facade validates requests and routes them; these are the write sequences whose
order is the crash-safety argument (the event before state.json, the ledger line as a round's commit point, what
runs outside the lock), and they read best on their own.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Optional

from strict_loop import __version__
from strict_loop.base.errors import LoopError
from strict_loop.base.fsio import atomic_write, dumps_doc
from strict_loop.base.layout import GITIGNORE, slug_from_goal
from strict_loop.base.timefmt import now_iso, seconds_between
from strict_loop.loop import reports, verdicts
from strict_loop.loop.monitoring import TaskMonitor
from strict_loop.model.records import CurrentRound, IterationRecord, LoopContract, StopReport, StopSummary, TaskState
from strict_loop.model.requests import InitStateInput, UpdateStateInput
from strict_loop.model.results import InitResult, RoundResult, StatusReport
from strict_loop.storage import rounds, snapshots, workspaces
from strict_loop.storage.store import TaskStore

if TYPE_CHECKING:
    from strict_loop.loop.workspace import Workspace


def create_task(ws: Workspace, req: InitStateInput, contract: LoopContract) -> InitResult:
    """Create the task's files under its lock (an existing task moved aside when ``force``), then register it."""
    store = ws.index.store(req.task_id or slug_from_goal(req.goal))
    store.paths.root.mkdir(parents=True, exist_ok=True)
    ignore = ws.layout.manager / ".gitignore"
    if not os.path.lexists(ignore):  # a person's own file (or a link) is left alone
        atomic_write(ignore, GITIGNORE.encode())
    with store.locked():
        replaced, dropped = _move_aside(ws, store, req) if store.exists() else (None, None)
        ws.trust_store.record(ws.root, store.task_id, contract.stop_checks)  # written here, by this machine's user
        ts = now_iso()
        state = TaskState(
            task_id=store.task_id, created_at=ts, updated_at=ts, contract=contract, next_task=req.next_task
        )
        store.create_folders()
        store.append_event(
            "task.initialized",
            f"loop initialized: {req.goal[:200]}",
            {
                "task_id": store.task_id,
                "created_at": ts,
                "written_by": f"strict-agent-loop {__version__}",
                "monitor_profile": req.monitor_profile,
                "contract": contract.model_dump(mode="json"),
            },
        )
        store.save(state)
        if dropped:
            store.append_event(*dropped)
        reports.write_status(store, state, None, record=False)
    ws.index.register(state)
    workspaces.remember(ws.root)  # the person's page finds this workspace
    snapshots.record_after_round(ws.root, store, state, 0)
    return InitResult(task_id=store.task_id, task_dir=str(store.paths.root), created_at=ts, replaced=replaced)


def _move_aside(
    ws: Workspace, store: TaskStore, req: InitStateInput
) -> tuple[str, Optional[tuple[str, str, dict[str, Any]]]]:
    """An existing task replaced (``force``, never while paused): its folder moved aside; (where to, the event that
    says which snapshots were forgotten)."""
    if not req.force:
        raise LoopError(
            "init_state.task_id",
            f"task '{store.task_id}' already exists ({store.describe()})",
            "resume it, choose another task_id, or pass force=true to replace it (old files are "
            "moved aside, not deleted)",
        )
    if TaskMonitor(store, ws.root).paused():
        raise LoopError(
            "init_state.force",
            f"task '{store.task_id}' is paused by the progress monitor; only a person's resume answers a pause",
            f"a person runs: strict-loop resume {store.task_id} --action continue|rollback|hand-back",
        )
    if store.load_current().contract.budget.limits():
        raise LoopError(
            "init_state.force",
            f"task '{store.task_id}' has a budget a person set; replacing the task would drop it",
            f"a person removes the budget first (strict-loop budget {store.task_id} --help), or choose another task_id",
        )
    moved = store.move_aside(ws.layout.trash)
    return str(moved), snapshots.forget_task(ws.root, store.task_id, moved.name)  # a rollback must not reach them


def record_round(
    ws: Workspace, store: TaskStore, sup: TaskMonitor, req: UpdateStateInput, report: Optional[StopReport]
) -> tuple[RoundResult, TaskState, Optional[StatusReport]]:
    """The round's commit; the status broadcast too when no stop check will run after it (one lock, not two)."""
    shown: list[StatusReport] = []
    with store.locked():
        sup.refuse_round("update_state")
        state = store.load_current()
        recorded = store.retried_round(state, req)
        if recorded is not None:
            return store.answer_retry(state, recorded).model_copy(update={"supervisor": sup.deliver()}), state, None
        rounds.check_round_input(state, req)
        rec, announced = _iteration_record(state, req)
        store.commit_round(rec)
        old_status = state.status
        rounds.fold(state, rec)
        problems = store.settle(rec.iteration, _after_commit(store, sup, state, rec, req, report, shown))
        view = sup.deliver()
    problems += snapshots.record_after_round(
        ws.root, store, state, rec.iteration
    )  # outside the lock: a big tree takes seconds
    if state.status != old_status:
        problems += store.settle(rec.iteration, [("updating registry.json", lambda: ws.index.register(state))])
    result = store.round_result(state, rec, rounds.warnings(state, announced is not None) + problems)
    return result.model_copy(update={"supervisor": view}), state, (shown[0] if shown else None)


def _iteration_record(state: TaskState, req: UpdateStateInput) -> tuple[IterationRecord, Optional[CurrentRound]]:
    """The round's ledger line (timed from its announcement, else from the previous round's end), and the
    announcement it answers."""
    iteration, ts = state.counters.iteration + 1, now_iso()
    announced = state.current_round if state.current_round and state.current_round.iteration == iteration else None
    started = announced.announced_at if announced else rounds.previous_end(state)
    duration = seconds_between(started, ts) if started else None
    rec = IterationRecord(
        iteration=iteration,
        recorded_at=ts,
        started_at=started,
        duration_s=round(duration, 3) if duration is not None else None,
        **req.model_dump(exclude={"task_id", "skip_checks"}),
    )
    return rec, announced


def _after_commit(
    store: TaskStore,
    sup: TaskMonitor,
    state: TaskState,
    rec: IterationRecord,
    req: UpdateStateInput,
    report: Optional[StopReport],
    shown: list[StatusReport],
) -> list[tuple[str, Callable[[], Any]]]:
    """The writes that follow a round's ledger line, in order (``store.settle`` turns a failure into a warning);
    sets ``state.last_stop`` from ``report``."""
    iteration = rec.iteration
    steps: list[tuple[str, Any]] = [
        (f"writing {store.paths.round_file(iteration).name}", lambda: store.write_round_note(rec))
    ]
    if report is not None:
        state.last_stop = StopSummary.of(report)
        steps.append(
            (
                "writing latest-stop-report.json",
                lambda: atomic_write(store.paths.stop_report, dumps_doc(report.model_dump(mode="json"))),
            )
        )
    steps += [
        ("saving state.json", lambda: store.save(state)),
        (
            "recording the round.completed event",
            lambda: store.append_event(
                "round.completed",
                f"round {iteration} recorded: {req.task[:200]}",
                {
                    "iteration": iteration,
                    "progress": req.progress,
                    "status": req.status,
                    "started_at": rec.started_at,
                    "duration_s": rec.duration_s,
                    "verdict": report.verdict if report is not None else None,
                },
            ),
        ),
    ]
    if req.skip_checks or not verdicts.checks_due(state, report):
        steps.append(
            (
                "writing latest-status.txt",
                lambda: shown.append(
                    reports.write_status(store, state, None, record=False, sup=sup.view(), sync=False)
                ),
            )
        )
    return steps
