"""The prompt of one unattended invocation, built from disk only.

Each invocation may start a fresh harness session, so everything the agent needs comes from the
task's files: the contract, the next task, the recent rounds, the last stop check, what the progress
monitor has to say (a pause, whispers, a person's resume note) and the two-call round protocol with
the exact commands. It stays short whatever the history (``MAX_PROMPT_CHARS``): the files are there
for details, and a long prompt costs every invocation.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Optional

from strict_loop.loop.workspace import Workspace
from strict_loop.model.monitoring import MonitorView
from strict_loop.model.records import RoundBrief, TaskState
from strict_loop.model.results import TaskView
from strict_loop.model.turns import one_line

MAX_PROMPT_CHARS = 6000
RECENT_ROUNDS = 5


def build_prompt(workspace: Path, task_id: str, rounds: Optional[int] = None) -> str:
    """The prompt for the next invocation on ``task_id`` in ``workspace`` (read-only: a pending notice stays pending).

    ``rounds``: the most rounds this invocation may record (default: the contract's max_rounds_per_invocation).
    """
    view = Workspace(workspace).show_task(task_id=task_id)
    state = view.state
    limit = rounds if rounds is not None else state.contract.unattended.max_rounds_per_invocation
    head = "\n\n".join(
        part for part in (_intro(Path(workspace), state), _monitor(view.supervisor), _work(view)) if part
    )
    tail = _protocol(Path(workspace), state, limit)
    room = MAX_PROMPT_CHARS - len(tail) - 2
    if len(head) > room:
        head = head[: room - 16] + "\n...[clipped]..."
    return f"{head}\n\n{tail}"


def _intro(root: Path, state: TaskState) -> str:
    c, n = state.contract, state.counters
    checks = c.stop_checks
    lines = [
        f"You are continuing the strict loop '{state.task_id}' unattended, in {root}. This brief is built from the "
        "loop's files; read them (strict-loop show_task) for details. Nobody is watching: never ask questions, work.",
        f"Goal: {one_line(c.goal, 600)}",
        f"Stop when: {one_line(c.global_stop_condition, 400)}",
        f"Stop checks: {len(checks.commands)} command(s), {len(checks.paths_exist)} path(s), "
        f"{len(checks.text_patterns)} text pattern(s); check_stop runs them, and the loop ends only when they pass.",
        f"Status: {state.status}; {n.iteration} round(s) recorded, {n.consecutive_no_progress} without progress in a "
        f"row (limit {c.limits.max_no_progress_rounds}); at most {c.limits.max_iterations} rounds in all.",
    ]
    return "\n".join(lines)


def _monitor(sup: MonitorView) -> str:
    """The pause first and loudest, then whispers and a person's note."""
    lines: list[str] = []
    for m in sup.messages:
        if m.kind == "pause":
            lines.insert(0, f"{one_line(m.text, 800, tail=300)} Do not work on the task: end this session now.")
        elif m.kind == "whisper":
            lines.append(f"Progress monitor: {one_line(m.text, 350)}")
        else:
            lines.append(f"A person resumed the task: {one_line(m.text, 600)}")
    return "\n".join(lines[:4])


def _work(view: TaskView) -> str:
    state = view.state
    next_task = (
        one_line(state.next_task, 600)
        if state.next_task.strip()
        else "(none recorded: pick the next atomic step toward the goal)"
    )
    parts = [f"Next task: {next_task}"]
    if state.context_snapshot.strip():
        parts.append(f"Context from the last round: {one_line(state.context_snapshot, 1000)}")
    if state.recent_rounds:
        parts.append(
            "Recent rounds (latest last):\n" + "\n".join(_round(r) for r in state.recent_rounds[-RECENT_ROUNDS:])
        )
    report = view.last_stop_report
    if report is not None:
        failing = [
            f"{c.kind} {one_line(c.target, 80)}"
            for c in report.checks
            if not c.passed and c.target not in report.reason
        ][:3]
        more = f"; failing: {', '.join(failing)}" if failing else ""
        parts.append(
            f"Last stop check (round {report.iteration}): {report.verdict}, {report.passed} passed, {report.failed} "
            f"failed - {one_line(report.reason, 300)}{more}"
        )
    elif state.last_stop is not None:
        s = state.last_stop
        parts.append(f"Last stop check: {s.verdict}, {s.passed} passed, {s.failed} failed - {one_line(s.reason, 300)}")
    return "\n\n".join(parts)


def _round(r: RoundBrief) -> str:
    return f"- #{r.iteration} [{r.progress}] {one_line(r.task, 120)} -> {one_line(r.result, 160)}" + (
        f" (verified: {one_line(r.verification, 100)})" if r.verification else ""
    )


def _protocol(root: Path, state: TaskState, rounds: int) -> str:
    """The round protocol with commands a shell tool can run as they are (or the MCP tools of the same names)."""
    where = f"--workspace {shlex.quote(str(root))} --task-id {shlex.quote(state.task_id)}"
    return "\n".join(
        [
            f"Round protocol: do at most {rounds} round(s) in this session, one atomic task each, in two loop calls:",
            f"1. Announce it: strict-loop append_event {where} --kind round.started --message 'Round N: <the task>'",
            "2. Do the task, then verify it (run the test, the build or the check that proves it).",
            f"3. Record it: strict-loop update_state {where} --task '<the task>' --result-summary '<what changed>' "
            "--verification-summary '<the command and what it showed>' --progress made|none --next-task '<the next "
            "atomic task>'",
            "   Add --status completed only when the stop checks pass; blocked or failed need --stop-reason.",
            "The MCP tools append_event and update_state take the same fields, if the strict-loop server is connected.",
            "Read the answer of every loop call: stop as soon as it says the stop checks pass, that the task "
            "is paused, or to stop.",
        ]
    )
