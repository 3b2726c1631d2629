"""The on-disk formats: the single source of truth for state.json and every ledger line.

JSON Schemas in ``references/schemas/`` are generated from these classes
(``strict-loop schemas --write``) and used to validate files when loading.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal, Optional

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, field_validator

from .spiral import MonitorSettings

SCHEMA_VERSION = 1
MAX_STATE_BYTES = 64 * 1024
MAX_CONTRACT_BYTES = 24 * 1024

TASK_ID_PATTERN = r"^[a-z0-9][a-z0-9_-]{0,63}$"
_TASK_ID_RE = re.compile(TASK_ID_PATTERN)
EVENT_KIND_PATTERN = r"^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)*$"

Status = Literal["running", "completed", "blocked", "failed"]
Progress = Literal["made", "none"]
OperatingMode = Literal["interactive", "unattended"]


def check_task_id(value: str) -> str:
    if not _TASK_ID_RE.match(value):
        raise ValueError(
            f"{value[:80]!r} is not a task id: use 1-64 lowercase letters, digits, '-' or '_', "
            "starting with a letter or digit (no '/', '.', '..' or spaces)"
        )
    return value


TaskId = Annotated[
    str,
    AfterValidator(check_task_id),
    Field(
        description="Task slug: 1-64 chars of a-z, 0-9, '-', '_'; starts with a letter or digit.",
        json_schema_extra={"pattern": TASK_ID_PATTERN, "maxLength": 64},
    ),
]


def Text(max_chars: int, description: str, *, required: bool = False) -> Any:
    """A capped text field; ``required`` also forbids blank text."""
    return Field(
        ...,
        max_length=max_chars,
        min_length=1 if required else 0,
        description=f"{description} (at most {max_chars} characters)",
    )


def TextList(max_items: int, max_chars: int, description: str) -> Any:
    return Field(
        default_factory=list,
        max_length=max_items,
        description=f"{description} (at most {max_items} items of {max_chars} characters)",
    )


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


def _not_blank(value: str) -> str:
    if not value.strip():
        raise ValueError("must not be blank")
    return value


def _item_cap(max_chars: int):
    def check(items: list[str]) -> list[str]:
        for i, item in enumerate(items):
            if len(item) > max_chars:
                raise ValueError(f"item {i} has {len(item)} characters; the cap is {max_chars}")
            if not item.strip():
                raise ValueError(f"item {i} is blank")
        return items

    return check


def parse_text_pattern(spec: str) -> tuple[str, str, bool]:
    """``path::text`` -> (path, text, False); ``path::re:REGEX`` -> (path, REGEX, True)."""
    if "::" not in spec:
        raise ValueError(f"{spec[:80]!r} needs the form PATH::TEXT or PATH::re:REGEX")
    path, pattern = spec.split("::", 1)
    if not path.strip() or not pattern:
        raise ValueError(f"{spec[:80]!r} needs both a path and a pattern")
    if pattern.startswith("re:"):
        try:
            re.compile(pattern[3:])
        except re.error as exc:
            raise ValueError(f"{spec[:80]!r}: bad regular expression ({exc})") from None
        return path.strip(), pattern[3:], True
    return path.strip(), pattern, False


class StopChecks(Strict):
    """Machine-checkable stop rules; all must pass for the goal to count as met."""

    commands: list[str] = TextList(20, 2000, "Shell commands run in the workspace root; each passes on exit code 0")
    paths_exist: list[str] = TextList(50, 500, "Paths (relative to the workspace root) that must exist")
    text_patterns: list[str] = TextList(
        50, 1000, "Text checks as 'PATH::TEXT' (substring) or 'PATH::re:REGEX' (regular expression search)"
    )
    command_timeout_s: float = Field(600.0, gt=0, le=86400, description="Seconds before a stop command is killed")
    output_tail_chars: int = Field(4000, ge=0, le=20000, description="How much of each command's output to keep")

    _commands = field_validator("commands")(_item_cap(2000))
    _paths = field_validator("paths_exist")(_item_cap(500))

    @field_validator("text_patterns")
    @classmethod
    def _patterns(cls, items: list[str]) -> list[str]:
        _item_cap(1000)(items)
        for item in items:
            parse_text_pattern(item)
        return items

    def count(self) -> int:
        return len(self.commands) + len(self.paths_exist) + len(self.text_patterns)


class Limits(Strict):
    """Hard limits that stop the loop even when the goal is not met."""

    max_iterations: int = Field(100, ge=1, le=1_000_000, description="Most rounds the task may record")
    max_no_progress_rounds: int = Field(3, ge=1, le=1000, description="Consecutive rounds without progress before stopping")
    history_window: int = Field(10, ge=1, le=50, description="Recent rounds kept in state.json; older ones live in the ledgers")
    max_context_chars: int = Field(8000, ge=200, le=20000, description="Cap on context_snapshot length")


class UnattendedSettings(Strict):
    """Budgets for the unattended supervisor."""

    max_rounds_per_invocation: int = Field(5, ge=1, le=1000, description="Rounds one agent invocation may run")
    max_consecutive_failures: int = Field(3, ge=1, le=100, description="Failed invocations in a row before giving up")


DEFAULT_BLOCKER = "A problem that needs a human decision, credentials, or access the agent does not have."


class LoopContract(Strict):
    """What the loop is for and when it must stop; fixed at init_state."""

    goal: str = Text(4000, "The overall goal of the loop", required=True)
    global_stop_condition: str = Text(4000, "When the whole loop may stop, in words", required=True)
    success_evidence: list[str] = TextList(20, 500, "Evidence that must exist when the goal is met")
    blocker_definition: str = Field(DEFAULT_BLOCKER, max_length=2000, description="What counts as a real blocker (at most 2000 characters)")
    operating_mode: OperatingMode = Field("interactive", description="'interactive' (a person watches) or 'unattended' (a supervisor re-invokes the agent)")
    stop_checks: StopChecks = Field(default_factory=StopChecks, description="Machine-checkable stop rules")
    limits: Limits = Field(default_factory=Limits, description="Hard limits")
    unattended: UnattendedSettings = Field(default_factory=UnattendedSettings, description="Unattended supervisor budgets")
    monitor: MonitorSettings = Field(default_factory=MonitorSettings, description="Spiral detection thresholds and the escalation ladder")

    _goal = field_validator("goal", "global_stop_condition")(_not_blank)
    _evidence = field_validator("success_evidence")(_item_cap(500))


class Counters(Strict):
    iteration: int = Field(0, ge=0, description="Rounds recorded so far")
    consecutive_no_progress: int = Field(0, ge=0)
    progress_rounds: int = Field(0, ge=0)
    no_progress_rounds: int = Field(0, ge=0)
    timed_rounds: int = Field(0, ge=0, description="Rounds with a measured duration")
    total_round_seconds: float = Field(0.0, ge=0)


class RoundBrief(Strict):
    """A round as the rolling window in state.json keeps it (full text is in iterations.jsonl)."""

    iteration: int = Field(..., ge=1)
    recorded_at: str
    duration_s: Optional[float] = Field(None, ge=0)
    task: str = Field(..., max_length=300)
    result: str = Field("", max_length=500)
    verification: str = Field("", max_length=300)
    progress: Progress
    status: Status


class ArchiveDigest(Strict):
    """Aggregate of the rounds that left the window; the rounds themselves stay in the ledgers."""

    rounds: int = Field(0, ge=0)
    first_iteration: Optional[int] = Field(None, ge=1)
    last_iteration: Optional[int] = Field(None, ge=1)
    progress_rounds: int = Field(0, ge=0)
    no_progress_rounds: int = Field(0, ge=0)
    total_round_seconds: float = Field(0.0, ge=0)
    headlines: list[str] = Field(default_factory=list, max_length=10, description="'#N task' of the latest archived rounds")


class CurrentRound(Strict):
    """A round that was announced (round.started) and not yet recorded."""

    iteration: int = Field(..., ge=1)
    announced_at: str
    message: str = Field("", max_length=500)


class StopSummary(Strict):
    checked_at: str
    verdict: str
    should_stop: bool
    passed: int = Field(0, ge=0)
    failed: int = Field(0, ge=0)
    reason: str = Field("", max_length=500)


class TaskState(Strict):
    """state.json: bounded (never over 64 KiB), rewritten atomically each round."""

    schema_version: Literal[1] = SCHEMA_VERSION
    task_id: TaskId
    workspace_root: str
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


class IterationRecord(Strict):
    """One line of iterations.jsonl: the full record of one verified round."""

    iteration: int = Field(..., ge=1)
    recorded_at: str
    started_at: Optional[str] = None
    duration_s: Optional[float] = Field(None, ge=0)
    task: str
    local_done_condition: str = ""
    result_summary: str
    verification_summary: str
    progress: Progress
    status: Status
    stop_reason: str = ""
    needs_human_input: bool = False
    evidence: list[str] = Field(default_factory=list)
    artifacts: list[str] = Field(default_factory=list)
    next_task: Optional[str] = None
    context_snapshot: Optional[str] = None


class EventRecord(Strict):
    """One line of events.jsonl."""

    seq: int = Field(..., ge=1)
    ts: str
    kind: str = Field(..., pattern=EVENT_KIND_PATTERN)
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


Verdict = Literal["continue", "goal_met", "limit_reached", "completed", "blocked", "failed"]


class StopReport(Strict):
    """latest-stop-report.json: every stop check and hard limit, with the verdict."""

    task_id: TaskId
    checked_at: str
    iteration: int
    status: Status
    verdict: Verdict = Field(..., description="continue, goal_met, limit_reached, completed (no checks defined), blocked or failed")
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
