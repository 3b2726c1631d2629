"""The one table of the loop's operations: the ``strict-loop`` subcommands and the MCP tools are generated from it.

Why one table: each operation is a ``Workspace`` method with a request model and a result model; the CLI
needs its flags (from the request model), help and text answer, the MCP server its tool description,
schemas and hints. Adding an operation is one row here plus its ``Workspace`` method.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Optional

from pydantic import BaseModel

from strict_loop.loop import answers
from strict_loop.model.monitoring import SpiralVerdict
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
    StatusResult,
    StopResult,
    TaskList,
    TaskView,
    TrustResult,
)

__all__ = ["EXIT_CONTINUE", "EXIT_PAUSED", "EXIT_SPIRAL", "OPERATIONS", "Operation", "by_name"]

EXIT_CONTINUE = 3  # check_stop --exit-status: the loop should go on
EXIT_SPIRAL = 4  # detect_spiral --exit-status: the monitor sees a spiral (it whispers)
EXIT_PAUSED = 5  # check_stop and detect_spiral --exit-status: the task is paused until a person resumes it


def _same(result: Any) -> BaseModel:
    return result


@dataclass(frozen=True)
class Operation:
    """One loop operation: the ``Workspace`` method of the same name, as a subcommand and (with ``tool``) an MCP tool.

    ``request`` is the input model (None: no input); ``cli_request`` the CLI's flag model where it differs;
    ``answer`` renders the result as text for both; ``structured`` turns the method's return value into the MCP
    tool's structured result (a ``result`` instance).
    """

    name: str
    summary: str  # one line: the subcommand's help
    cli_text: str  # the subcommand's --help description
    request: Optional[type[BaseModel]]
    result: type[BaseModel]
    answer: Callable[[Any], str]
    title: str = ""  # the MCP tool's title
    tool: Optional[str] = None  # the MCP tool's description; None: a person's command, not a tool
    cli_request: Optional[type[BaseModel]] = None
    structured: Callable[[Any], BaseModel] = _same
    method: str = ""  # the Workspace method, when its name is not the operation's
    read_only: bool = False
    destructive: bool = False  # may replace or discard what is there (clients ask before calling)
    open_world: bool = False  # reaches beyond the workspace files: runs the contract's commands, posts alerts
    runs_checks: Callable[[dict[str, Any]], bool] = lambda arguments: False  # these arguments run stop-check commands

    @property
    def flags(self) -> Optional[type[BaseModel]]:
        """The model the subcommand's flags are generated from."""
        return self.cli_request or self.request

    def call(self, ws: Any, request: Any = None) -> Any:
        """Run the operation on a Workspace (a request model instance, or None for an operation without input)."""
        method = getattr(ws, self.method or self.name)
        return method() if self.request is None else method(request)


def _status_result(report: StatusReport) -> BaseModel:
    """The status text once, as the text; the record and the supervisor as the structured result."""
    return StatusResult(**dict(report.record), supervisor=report.supervisor)


OPERATIONS: tuple[Operation, ...] = (
    Operation(
        "init_state",
        "define the loop contract and create a task",
        "Define the loop contract once, before round 1. Unattended mode needs at least one machine stop check.\n\n"
        "example:\n  strict-loop init_state --goal 'Fix the parser crash' \\\n"
        "    --global-stop-condition 'pytest passes and a regression test exists' \\\n"
        "    --stop-command 'pytest -q' --require-path tests/test_parser.py\n\n"
        "The monitor: --monitor-profile, then .agent-loop/monitor-defaults.json, then --monitor (JSON or @file.json).",
        InitStateInput,
        InitResult,
        answers.init,
        cli_request=InitStateRequest,
        title="Define a loop contract",
        tool="Create a loop task once, before round 1: goal, stop condition, machine stop checks. The monitor's "
        "settings come from monitor_profile and a person's workspace defaults.",
        destructive=True,
    ),
    Operation(
        "append_event",
        "append one event (e.g. a round announcement)",
        "Append one line to events.jsonl. Announce each round with --kind round.started before doing it.\n\n"
        "example:\n  strict-loop append_event --kind round.started --message 'Round 3: add the regression test'",
        AppendEventInput,
        EventResult,
        answers.event,
        title="Append an event",
        tool="Append one event: kind='round.started' announces each round; 'note' or 'blocker' for the rest. "
        "Without harness hooks, report each of your tool calls as kind='tool_call', data = one turn "
        "{tool, args, output, error, exit_code}: the monitor watches for circles.",
        open_world=True,
    ),
    Operation(
        "update_state",
        "record one verified round",
        "Record one verified round. --verification-summary is required: no progress without evidence.\n"
        "--status completed is refused while stop checks fail.\n\n"
        "example:\n  strict-loop update_state --task 'Add regression test' --result-summary 'tests/test_parser.py "
        "added' \\\n"
        "    --verification-summary 'pytest -q: 12 passed' --progress made --next-task 'Fix the crash'",
        UpdateStateInput,
        RoundResult,
        answers.round_result,
        title="Record a verified round",
        tool="Record one verified round and get the verdict (stop.should_stop, failing checks, status line); "
        "'completed' is refused while a stop check fails.",
        open_world=True,
        runs_checks=lambda arguments: not arguments.get("skip_checks"),
    ),
    Operation(
        "check_stop",
        "run the stop checks and hard limits",
        "Run every stop check and hard limit; write latest-stop-report.json.\n"
        f"With --exit-status, exit 0 when the loop should stop, {EXIT_CONTINUE} when it should continue and "
        f"{EXIT_PAUSED} when it would continue but the task is paused (a script launches nothing until a person "
        "answers).",
        CheckStopInput,
        StopResult,
        answers.stop_report,
        title="Run the stop checks",
        tool="Run the stop checks and hard limits now (update_state does after each round): the verdict and each "
        "check, with output for failing ones.",
        open_world=True,
        runs_checks=lambda arguments: True,
    ),
    Operation(
        "report_status",
        "refresh the progress broadcast",
        "Write latest-status.txt and run-summary.md and append to status-history.jsonl.",
        ReportStatusInput,
        StatusResult,
        answers.status,
        title="Broadcast progress",
        tool="Broadcast progress: refresh latest-status.txt and run-summary.md, append to status-history.jsonl.",
        structured=_status_result,
    ),
    Operation(
        "compact_state",
        "shrink the rolling window in state.json",
        "Move older rounds out of state.json's window (they stay in iterations.jsonl and rounds/).",
        CompactStateInput,
        CompactResult,
        answers.compact,
        title="Compact the state window",
        tool="Move older rounds out of state.json's window (they stay in the ledgers) and trim the context snapshot.",
    ),
    Operation(
        "rebuild_state",
        "rebuild state.json from the ledgers",
        "Reconstruct state.json from events.jsonl and iterations.jsonl after damage or a crash; prints what was fixed.",
        RebuildStateInput,
        RebuildResult,
        answers.rebuild,
        title="Rebuild state from the ledgers",
        tool="Rebuild state.json from events.jsonl and iterations.jsonl after damage or a crash; says what it fixed.",
        destructive=True,
    ),
    Operation(
        "detect_spiral",
        "show the progress monitor's verdict",
        "The task's current spiral verdict: signals, diagnosis, recent turns, recommended action.\n"
        "With --turns FILE.jsonl, evaluate those turns from scratch instead (nothing is written).\n"
        f"With --exit-status, exit 0 when quiet, {EXIT_SPIRAL} when a spiral is detected, {EXIT_PAUSED} when the task "
        "is paused.",
        DetectSpiralInput,
        SpiralVerdict,
        answers.verdict,
        title="Check for a spiral",
        tool="The progress monitor's verdict: is the agent repeating itself without progress; the signals, a "
        "diagnosis, what to do instead. Read-only.",
        read_only=True,
    ),
    Operation(
        "list_tasks",
        "list the tasks in this workspace",
        "List every task under .agent-loop/ (and an original .codex-loop/, if present).",
        None,
        TaskList,
        answers.task_list,
        title="List loop tasks",
        tool="Every loop task in the workspace, with its status and rounds done.",
        method="task_list",
        read_only=True,
    ),
    Operation(
        "show_task",
        "show one task's state",
        "Show a task's contract, counters, recent rounds and last stop report.",
        ShowTaskInput,
        TaskView,
        answers.task_view,
        title="Show a task",
        tool="A task's full state: contract, counters, next task, recent rounds, context snapshot, last stop report.",
        read_only=True,
    ),
    Operation(
        "trust",
        "trust the task's stop commands on this machine",
        "Show the task's stop commands and record them as trusted by this machine (a person's step, like "
        "`direnv allow`).\nA contract made here by init_state is trusted already; one that came with a repository, a "
        "copy, a takeover\nor a hand edit runs no command until trusted. Records live in $XDG_CONFIG_HOME/strict-loop/ "
        "(~/.config/strict-loop/).",
        TrustInput,
        TrustResult,
        answers.trust,
    ),
    Operation(
        "resume",
        "answer a pause: continue, roll back, or hand back",
        "Resume a task the progress monitor paused.\n"
        "  continue   mute the signals that fired for monitor.cooldown_turns turns and go on\n"
        "  rollback   restore the workspace to round --to N from its snapshot (the current tree is saved first)\n"
        "  hand-back  end the loop as blocked and write handback.md for the person",
        ResumeInput,
        ResumeResult,
        answers.resume,
    ),
)
"""Every operation, in the order the CLI's help and ``tools/list`` show them."""


def by_name(name: str) -> Operation:
    """The operation called ``name`` (``-`` and ``_`` alike); KeyError if there is none."""
    wanted = name.replace("-", "_")
    for op in OPERATIONS:
        if op.name == wanted:
            return op
    raise KeyError(name)
