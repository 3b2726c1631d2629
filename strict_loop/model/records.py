"""The on-disk formats: the single source of truth for state.json and every ledger line.

JSON Schemas in ``references/schemas/`` are generated from these classes
(``strict-loop schemas --write``) and used to validate files when loading.
The request models (``requests.py``) derive from these, so a field has one
name, one cap and one description everywhere (files, CLI flags, MCP tools).
"""

from __future__ import annotations

from typing import Annotated, Any, Final, Literal, Optional

from pydantic import Field, ValidationInfo, field_validator

from strict_loop.model.budgets import TaskBudget
from strict_loop.model.fields import (
    EVENT_KIND_PATTERN,
    TASK_ID_PATTERN,
    Flag,
    Items500,
    Items1000,
    NonBlank,
    Strict,
    TaskId,
    Text,
    TextList,
    check_task_id,
)
from strict_loop.model.settings import Limits, MonitorSettings, StopChecks, UnattendedSettings, parse_text_pattern

__all__ = ["EVENT_KIND_PATTERN", "TASK_ID_PATTERN", "TaskId", "check_task_id", "parse_text_pattern"]

SCHEMA_VERSION: Final = 1
MAX_STATE_BYTES = 64 * 1024
MAX_CONTRACT_BYTES = 24 * 1024
MAX_ROUNDS = 10_000_000
"""No real run records more rounds (max_iterations caps at 1,000,000); a larger count is a damaged or hand-edited
file."""
MAX_SECONDS = 1e12
"""More seconds than lie between any two timestamps the loop can parse (years 1-9999)."""

Status = Literal["running", "completed", "blocked", "failed"]
Progress = Literal["made", "none"]
OperatingMode = Literal["interactive", "unattended"]

DEFAULT_BLOCKER = "A problem that needs a human decision, credentials, or access the agent does not have."


class ContractTerms(Strict):
    """The contract as the agent states it at init_state: everything but the monitor's settings."""

    goal: NonBlank = Text(4000, "The loop's goal", required=True)
    global_stop_condition: NonBlank = Text(4000, "When the loop may stop, in words", required=True)
    success_evidence: Annotated[Items500, Flag(metavar="TEXT")] = TextList(
        20, 500, "What must exist when the goal is met"
    )
    blocker_definition: str = Field(DEFAULT_BLOCKER, max_length=2000, description="What counts as a real blocker")
    operating_mode: OperatingMode = Field(
        "interactive", description="'unattended' (no person watching) needs a stop check"
    )
    stop_checks: Annotated[
        StopChecks, Flag(flatten=True, group="stop checks (all must pass for the goal to count as met)")
    ] = Field(default_factory=StopChecks, validate_default=True, description="Machine checks; all pass = goal met")
    limits: Annotated[Limits, Flag(flatten=True, group="limits")] = Field(
        default_factory=Limits, description="Hard limits"
    )
    unattended: Annotated[UnattendedSettings, Flag(flatten=True, group="unattended supervisor budgets")] = Field(
        default_factory=UnattendedSettings, description="Budgets when unattended"
    )

    @field_validator("stop_checks")
    @classmethod
    def _unattended_needs_checks(cls, checks: StopChecks, info: ValidationInfo) -> StopChecks:
        if info.data.get("operating_mode") == "unattended" and checks.count() == 0:
            raise ValueError(
                "unattended mode needs at least one machine-checkable stop check: add "
                "stop_checks.commands (e.g. 'pytest -q'), stop_checks.paths_exist or stop_checks.text_patterns"
            )
        return checks


class LoopContract(ContractTerms):
    """What the loop is for and when it must stop; fixed at init_state."""

    monitor: MonitorSettings = Field(
        default_factory=MonitorSettings,
        description=(
            "Spiral detection and the escalation ladder: a profile, then .agent-loop/monitor-defaults.json, "
            "then a person's overrides"
        ),
    )
    budget: TaskBudget = Field(
        default_factory=TaskBudget,
        description="What the task may spend, a person's to set: the hooks whisper at 80% and pause the task at 100%",
    )


class Counters(Strict):
    iteration: int = Field(0, ge=0, le=MAX_ROUNDS, description="Rounds recorded so far")
    consecutive_no_progress: int = Field(0, ge=0, le=MAX_ROUNDS)
    progress_rounds: int = Field(0, ge=0, le=MAX_ROUNDS)
    no_progress_rounds: int = Field(0, ge=0, le=MAX_ROUNDS)
    timed_rounds: int = Field(0, ge=0, le=MAX_ROUNDS, description="Rounds with a measured duration")
    total_round_seconds: float = Field(0.0, ge=0, le=MAX_SECONDS)


class RoundBrief(Strict):
    """A round as the rolling window in state.json keeps it (full text is in iterations.jsonl)."""

    iteration: int = Field(..., ge=1, le=MAX_ROUNDS)
    recorded_at: str
    duration_s: Optional[float] = Field(None, ge=0, le=MAX_SECONDS)
    task: str = Field(..., max_length=300)
    result: str = Field("", max_length=500)
    verification: str = Field("", max_length=300)
    progress: Progress
    status: Status


class ArchiveDigest(Strict):
    """Aggregate of the rounds that left the window; the rounds themselves stay in the ledgers."""

    rounds: int = Field(0, ge=0, le=MAX_ROUNDS)
    first_iteration: Optional[int] = Field(None, ge=1, le=MAX_ROUNDS)
    last_iteration: Optional[int] = Field(None, ge=1, le=MAX_ROUNDS)
    progress_rounds: int = Field(0, ge=0)
    no_progress_rounds: int = Field(0, ge=0)
    total_round_seconds: float = Field(0.0, ge=0)
    headlines: list[str] = Field(
        default_factory=list, max_length=10, description="'#N task' of the latest archived rounds"
    )


class CurrentRound(Strict):
    """A round that was announced (round.started) and not yet recorded."""

    iteration: int = Field(..., ge=1, le=MAX_ROUNDS + 1)
    announced_at: str
    message: str = Field("", max_length=500)


class StopSummary(Strict):
    checked_at: str
    verdict: str
    should_stop: bool
    passed: int = Field(0, ge=0)
    failed: int = Field(0, ge=0)
    reason: str = Field("", max_length=500)

    @classmethod
    def of(cls, report: StopReport) -> StopSummary:
        return cls(
            checked_at=report.checked_at,
            verdict=report.verdict,
            should_stop=report.should_stop,
            passed=report.passed,
            failed=report.failed,
            reason=report.reason[:500],
        )


RETIRED_FIELDS: dict[str, tuple[str, ...]] = {"TaskState": ("workspace_root",)}
"""Fields older versions wrote and this one no longer keeps; dropped when such a file is loaded."""


class TaskState(Strict):
    """state.json: bounded (never over 64 KiB), rewritten atomically each round."""

    schema_version: Literal[1] = SCHEMA_VERSION
    task_id: TaskId
    created_at: str
    updated_at: str
    contract: LoopContract
    status: Status = "running"
    stop_reason: str = Field("", max_length=2000)
    needs_human_input: bool = False
    counters: Counters = Field(default_factory=Counters)
    next_task: str = Field("", max_length=2000)
    context_snapshot: str = Field("", max_length=20000)
    current_round: Optional[CurrentRound] = None
    recent_rounds: list[RoundBrief] = Field(default_factory=list, max_length=50)
    archive: ArchiveDigest = Field(default_factory=ArchiveDigest)
    last_stop: Optional[StopSummary] = None
    imported_from: Optional[str] = Field(None, description="Path of a .codex-loop task this one was migrated from")


class RoundHeader(Strict):
    """The bookkeeping of a recorded round (set by the loop, not by the agent)."""

    iteration: int = Field(..., ge=1, le=MAX_ROUNDS)
    recorded_at: str
    started_at: Optional[str] = None
    duration_s: Optional[float] = Field(None, ge=0, le=MAX_SECONDS)


class RoundFields(Strict):
    """What the agent reports about one round: the fields of update_state and of iterations.jsonl."""

    task: NonBlank = Text(2000, "The one atomic task of this round", required=True)
    local_done_condition: str = Field("", max_length=2000, description="When this task counts as done")
    result_summary: NonBlank = Text(20000, "What the round produced", required=True)
    verification_summary: NonBlank = Text(20000, "The command run and what it showed", required=True)
    progress: Progress = Field("made", description="'none' if the goal did not move")
    status: Status = Field("running", description="'completed' only when the stop checks pass")
    stop_reason: str = Field(
        "", max_length=2000, validate_default=True, description="Why; required for blocked or failed"
    )
    needs_human_input: bool = Field(False, description="A person must act before the loop goes on")
    evidence: Annotated[Items1000, Flag(metavar="TEXT")] = TextList(50, 1000, "Commands, outputs, file paths")
    artifacts: Annotated[Items1000, Flag(("--artifacts", "--artifact"), metavar="PATH")] = TextList(
        50, 1000, "Files this round produced or changed"
    )
    next_task: Optional[str] = Field(None, max_length=2000, description="The next atomic task (omit: unchanged)")
    context_snapshot: Optional[str] = Field(
        None, max_length=20000, description="What a fresh session needs to resume (omit: unchanged)"
    )


class IterationRecord(RoundFields, RoundHeader):
    """One line of iterations.jsonl: the full record of one verified round (header fields first)."""


class EventRecord(Strict):
    """One line of events.jsonl."""

    seq: int = Field(..., ge=1)
    ts: str
    kind: str = Field(..., max_length=64, pattern=EVENT_KIND_PATTERN)
    message: str
    data: dict[str, Any] = Field(default_factory=dict)


class CheckResult(Strict):
    kind: Literal["command", "path", "text"]
    target: str = Field(..., description="The command, path, or PATH::pattern checked")
    passed: bool
    detail: str = ""
    exit_code: Optional[int] = None
    timed_out: bool = False
    duration_s: float = 0.0
    output_tail: str = ""


class LimitResult(Strict):
    name: Literal["max_iterations", "max_no_progress_rounds"]
    value: int
    limit: int
    hit: bool


StopVerdict = Literal["continue", "goal_met", "limit_reached", "completed", "blocked", "failed"]


class StopReport(Strict):
    """latest-stop-report.json: every stop check and hard limit, with the verdict."""

    task_id: TaskId
    checked_at: str
    iteration: int
    status: Status
    verdict: StopVerdict = Field(
        ..., description="continue, goal_met, limit_reached, completed (no checks defined), blocked or failed"
    )
    should_stop: bool
    reason: str
    passed: int
    failed: int
    checks: list[CheckResult]
    limits: list[LimitResult]


class StatusRecord(Strict):
    """One line of status-history.jsonl (a progress broadcast)."""

    ts: str
    task_id: TaskId
    label: Optional[str] = None
    status: Status
    iteration: int
    max_iterations: int
    percent: float
    recent_round_s: list[float] = Field(default_factory=list)
    avg_round_s: Optional[float] = None
    eta_s: Optional[float] = None
    consecutive_no_progress: int = 0
    next_task: str = ""
    stop_verdict: Optional[str] = None
    paused: bool = Field(False, description="The progress monitor has paused the task; a person must resume it")
    monitor: Optional[str] = Field(
        None, description="The progress monitor's pause order or latest whisper, if it has one"
    )


class RegistryEntry(Strict):
    task_id: TaskId
    goal: str
    operating_mode: OperatingMode
    status: Status
    created_at: str
    updated_at: str


class Registry(Strict):
    """registry.json: an index of tasks; the task directories stay authoritative."""

    schema_version: Literal[1] = SCHEMA_VERSION
    updated_at: str
    tasks: dict[str, RegistryEntry] = Field(default_factory=dict)
