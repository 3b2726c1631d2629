"""A task's budgets (part of its contract) and what is spent of them (``budget.json``), with the one pure reading of
both that the hooks, ``show_task``, ``strict-loop budget`` and the page share.

Why in the task and not only under ``strict-loop supervise``: a person at a terminal runs out of money or patience the
same way an unattended run does, so the hooks of every harness enforce the task's budgets (``harness.spend``): a
whisper at ``WHISPER_AT`` of a budget, a pause with an alert when it is spent. A budget is a person's to set
(``init_state`` on the command line, ``strict-loop budget``, the page), never the agent's: it is not in the MCP tool.
"""

from __future__ import annotations

from typing import Annotated, Any, NamedTuple, Optional

from pydantic import BaseModel, Field, model_validator

from strict_loop.base.timefmt import now, parse
from strict_loop.model.fields import Flag, Strict, TaskId

BUDGET_FILE = "budget.json"
MOST_CALLS, MOST_WALL_S, MOST_TOKENS, MOST_USD, MOST_USD_PER_MTOK = 10_000_000, 31_622_400, 10**13, 1_000_000, 10_000
"""The largest budget of each kind (31,622,400 s: a leap year), the same whether a contract sets it or a person raises
it (``TaskBudget``, ``BudgetInput``)."""
WHISPER_AT = 0.8
"""The share of a budget at which the agent is told, once per limit: it may finish its step and record the round."""
MAX_TRANSCRIPTS = 16
"""Transcripts whose read position ``budget.json`` keeps (the newest): a task worked on in more sessions recounts
nothing, it only starts an old session's file from its end again."""
LABELS = {
    "tool_calls": "tool calls",
    "wall_time_s": "wall time",
    "tokens": "tokens",
    "cost_usd": "cost",
}


class TaskBudget(Strict):
    """What the task may spend, counted from when the first budget was set; none set: no budget (the default)."""

    max_tool_calls: Optional[int] = Field(
        None, ge=1, le=MOST_CALLS, description="Tool calls the agent may make (the hooks count them)"
    )
    max_wall_time_s: Annotated[Optional[float], Flag(("--max-wall-time",), metavar="SECONDS")] = Field(
        None, gt=0, le=MOST_WALL_S, description="Seconds of wall time"
    )
    max_tokens: Optional[int] = Field(
        None,
        ge=1,
        le=MOST_TOKENS,
        description="Tokens the harness reports (input with cache reads and writes, and output)",
    )
    max_cost_usd: Annotated[Optional[float], Flag(metavar="USD")] = Field(
        None, gt=0, le=MOST_USD, description="Dollars: the reported tokens at usd_per_mtok_in and usd_per_mtok_out"
    )
    usd_per_mtok_in: Annotated[Optional[float], Flag(metavar="USD")] = Field(
        None, ge=0, le=MOST_USD_PER_MTOK, description="Dollars per million input tokens, for max_cost_usd"
    )
    usd_per_mtok_out: Annotated[Optional[float], Flag(metavar="USD")] = Field(
        None, ge=0, le=MOST_USD_PER_MTOK, description="Dollars per million output tokens, likewise"
    )

    @model_validator(mode="after")
    def _cost_is_priced(self) -> TaskBudget:
        if (self.usd_per_mtok_in is None) != (self.usd_per_mtok_out is None):
            raise ValueError("give both usd_per_mtok_in and usd_per_mtok_out (input and output are priced apart)")
        if self.max_cost_usd is not None and self.usd_per_mtok_in is None:
            raise ValueError(
                "max_cost_usd needs usd_per_mtok_in and usd_per_mtok_out: the hooks read tokens, no harness's "
                "transcript says dollars"
            )
        return self

    def limits(self) -> dict[str, float]:
        """The budgets set, by name (``LABELS``)."""
        given = {
            "tool_calls": self.max_tool_calls,
            "wall_time_s": self.max_wall_time_s,
            "tokens": self.max_tokens,
            "cost_usd": self.max_cost_usd,
        }
        return {name: float(v) for name, v in given.items() if v is not None}


class Cursor(BaseModel):
    """How far one transcript has been read, and what its last counted message (or running total) was."""

    offset: int = Field(0, ge=0)
    last_id: str = Field("", max_length=200, description="Claude Code: the last message counted (one per block line)")
    last_in: int = Field(0, ge=0)
    last_out: int = Field(0, ge=0)
    total_in: int = Field(-1, ge=-1, description="Codex: the session's running input total last read (-1: none yet)")
    total_out: int = Field(0, ge=0)


class BudgetSpent(BaseModel):
    """budget.json: what the task spent since ``since``, written by the hooks under the task lock."""

    since: str = Field(..., description="When the task's first budget was set (ISO 8601)")
    tool_calls: int = Field(0, ge=0)
    input_tokens: int = Field(0, ge=0)
    output_tokens: int = Field(0, ge=0)
    whispered: dict[str, float] = Field(default_factory=dict, description="budget -> the limit whispered about")
    transcripts: dict[str, Cursor] = Field(default_factory=dict, description="transcript path -> how far it was read")


class BudgetUse(NamedTuple):
    name: str
    spent: float
    limit: float

    @property
    def share(self) -> float:
        return self.spent / self.limit

    def text(self) -> str:
        """``tool calls: 8 of 10 (80%)``."""
        return f"{LABELS[self.name]}: {_amount(self.name, self.spent)} of {_amount(self.name, self.limit)} " + (
            f"({self.share:.0%})"
        )


class BudgetLine(BaseModel):
    """One budget as show_task and the page show it."""

    name: str = Field(..., description="tool_calls, wall_time_s, tokens or cost_usd")
    spent: float
    limit: float
    text: str


class BudgetInput(BaseModel):
    """``strict-loop budget``: a person sets or raises the task's budgets; 0 removes one, an omitted one stays."""

    task_id: Optional[TaskId] = Field(None, description="Omit when one task runs")
    max_tool_calls: Optional[int] = Field(None, ge=0, le=MOST_CALLS, description="Tool calls (0: no bound)")
    max_wall_time_s: Annotated[Optional[float], Flag(("--max-wall-time",), metavar="SECONDS")] = Field(
        None, ge=0, le=MOST_WALL_S, description="Seconds of wall time since the first budget was set (0: no bound)"
    )
    max_tokens: Optional[int] = Field(None, ge=0, le=MOST_TOKENS, description="Tokens (0: no bound)")
    max_cost_usd: Annotated[Optional[float], Flag(metavar="USD")] = Field(
        None, ge=0, le=MOST_USD, description="Dollars (0: no bound)"
    )
    usd_per_mtok_in: Annotated[Optional[float], Flag(metavar="USD")] = Field(
        None, ge=0, le=MOST_USD_PER_MTOK, description="Dollars per million input tokens"
    )
    usd_per_mtok_out: Annotated[Optional[float], Flag(metavar="USD")] = Field(
        None, ge=0, le=MOST_USD_PER_MTOK, description="Dollars per million output tokens"
    )

    model_config = {"extra": "forbid"}

    def changes(self) -> dict[str, Optional[float]]:
        """The limits given: 0 becomes None (no bound)."""
        given = self.model_dump(exclude={"task_id"}, exclude_none=True)
        return {k: (None if v == 0 and k.startswith("max_") else v) for k, v in given.items()}


class BudgetResult(BaseModel):
    task_id: str
    budget: TaskBudget
    spent: list[BudgetLine] = Field(default_factory=list)
    resumed: bool = Field(False, description="The task was paused by a spent budget, and goes on now")
    detail: str = ""


def uses(budget: TaskBudget, spent: BudgetSpent, at: Optional[float] = None) -> list[BudgetUse]:
    """Each budget set, with what is spent of it (wall time up to ``at``, default now)."""
    limits = budget.limits()
    moment = now().timestamp() if at is None else at
    have = {
        "tool_calls": float(spent.tool_calls),
        "wall_time_s": max(0.0, moment - parse(spent.since).timestamp()),
        "tokens": float(spent.input_tokens + spent.output_tokens),
        "cost_usd": cost(budget, spent),
    }
    return [BudgetUse(name, have[name], limit) for name, limit in limits.items()]


def cost(budget: TaskBudget, spent: BudgetSpent) -> float:
    """The tokens spent at the budget's rates (0 without rates)."""
    rate_in, rate_out = budget.usd_per_mtok_in or 0.0, budget.usd_per_mtok_out or 0.0
    return (spent.input_tokens * rate_in + spent.output_tokens * rate_out) / 1_000_000


def lines(budget: TaskBudget, spent: Optional[BudgetSpent], since: str) -> list[BudgetLine]:
    """show_task's and the page's view: each budget set, what is spent (nothing yet without ``budget.json``)."""
    found = spent if spent is not None else BudgetSpent(since=since)
    return [BudgetLine(name=u.name, spent=u.spent, limit=u.limit, text=u.text()) for u in uses(budget, found)]


def load_spent(found: Optional[dict[str, Any]]) -> Optional[BudgetSpent]:
    """budget.json's content (as ``base.jsontext.read_object`` reads it), or None when there is none or it does not
    validate: then counting starts again."""
    if found is None:
        return None
    try:
        return BudgetSpent.model_validate(found)
    except ValueError:
        return None


def _amount(name: str, value: float) -> str:
    if name == "cost_usd":
        return f"${value:,.2f}"
    if name == "wall_time_s":
        from strict_loop.base.timefmt import human_duration

        return human_duration(value)
    return f"{value:,.0f}"
