"""The fixed remedy dispatcher of ``strict-loop watch``, and the settings that declare what it may touch: pure.

Why fixed: seed 001's supervisor ran fixes it built from the log (``pip install <name from the log>``).
Here the remedies are five functions of declared values only: halve a declared batch-size variable,
lower a declared learning-rate variable, resume from the newest checkpoint in a declared folder, wait
and retry, clear a declared cache folder. A remedy runs only when the person allowed it (``--allow``),
within its budget; anything else escalates to a person. The settings are ``watch`` flags, given by the
person who starts the job (as the command itself), never read from the repository or the agent.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field, replace
from typing import Annotated, Optional

from pydantic import AfterValidator, Field, model_validator

from strict_loop.experiments.failures import KINDS, Failure
from strict_loop.model.fields import Flag, Strict
from strict_loop.model.settings import workspace_path_problem

REMEDIES = ("halve-batch", "lower-lr", "resume", "wait-retry", "clear-cache")
DEFAULT_BUDGET = 2
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")


def _env_name(name: Optional[str]) -> Optional[str]:
    if name is not None and (not _ENV_NAME.match(name) or name.upper().startswith(("STRICT_LOOP_", "APPRISE_"))):
        raise ValueError(f"{name[:80]!r} is not a variable name we may set: letters, digits and '_', e.g. BATCH_SIZE")
    return name


def _relative(path: Optional[str]) -> Optional[str]:
    problem = workspace_path_problem(path) if path is not None else ""
    if problem or path in ("", "."):
        raise ValueError(
            f"{str(path)[:80]!r} {problem or 'is the workspace itself'}; give a folder inside the workspace, "
            "e.g. 'checkpoints'"
        )
    return path


def parse_allow(item: str) -> tuple[str, int]:
    """'halve-batch:3' -> ('halve-batch', 3); 'wait-retry' -> ('wait-retry', DEFAULT_BUDGET)."""
    name, _, budget = item.partition(":")
    name = name.strip().replace("_", "-")
    if name not in REMEDIES:
        raise ValueError(f"{item[:80]!r} is not a remedy; choose from {', '.join(REMEDIES)} (optionally NAME:BUDGET)")
    if not budget:
        return name, DEFAULT_BUDGET
    if not budget.isdigit() or not 1 <= int(budget) <= 100:
        raise ValueError(f"{item[:80]!r}: the budget after ':' is a whole number from 1 to 100")
    return name, int(budget)


def _allow(items: list[str]) -> list[str]:
    for item in items:
        parse_allow(item)
    return items


def _regex(pattern: Optional[str]) -> Optional[str]:
    """A progress pattern compiles here, as the job reads it (case-insensitive), or the watch never starts."""
    if pattern is not None:
        try:
            re.compile(pattern, re.IGNORECASE)
        except re.error as exc:
            raise ValueError(f"bad regular expression ({exc})") from None
    return pattern


EnvName = Annotated[Optional[str], AfterValidator(_env_name)]
Folder = Annotated[Optional[str], AfterValidator(_relative)]


class WatchSettings(Strict):
    """How ``strict-loop watch`` reads a job's progress, bounds it, and which remedies it may apply (all declared by
    the person who starts it). Declared variables reach the job as environment variables, and as ``{NAME}`` in its argv."""  # noqa: E501 (the schema's description: rewrapping would change it)

    progress_pattern: Annotated[Optional[str], AfterValidator(_regex), Flag(metavar="REGEX")] = Field(
        None,
        max_length=1000,
        description="Regex over log lines with named groups: (?P<step>...) and metrics such as (?P<loss>...) "
        "(default: 'step N ... loss X')",
    )
    metrics_file: Annotated[Folder, Flag(metavar="PATH")] = Field(
        None,
        max_length=500,
        description='Workspace-relative JSONL file the job appends {"step": N, "loss": X} lines to',
    )
    metric: str = Field(
        "loss",
        min_length=1,
        max_length=64,
        description="The metric checked for NaN/Inf and divergence (lower is better)",
    )
    divergence_factor: float = Field(
        10.0, gt=1, le=1e6, description="Divergence: the metric rises above this many times its best"
    )
    total_steps: Optional[int] = Field(None, ge=1, le=10**12, description="Steps of a full run, for the ETA")
    heartbeat_s: float = Field(
        30.0, gt=0, le=3600, description="Seconds between status lines (stderr and latest-status.txt)"
    )
    max_runs: int = Field(10, ge=1, le=1000, description="Runs of the job at most (the first and every retry)")
    timeout_s: Optional[float] = Field(
        None, gt=0, le=30 * 86400, description="Wall clock for the whole watch; the job is killed after it"
    )
    memory_limit_mb: Optional[int] = Field(
        None, ge=16, le=16 * 1024 * 1024, description="Address-space limit of the job (RLIMIT_AS), MB"
    )
    file_size_limit_mb: Optional[int] = Field(
        None, ge=1, le=16 * 1024 * 1024, description="Largest file the job may write (RLIMIT_FSIZE), MB"
    )
    log_max_mb: float = Field(
        100.0, gt=0, le=100_000, description="Log kept per run, MB; the rest is dropped (the tail is still classified)"
    )
    allow: Annotated[
        list[Annotated[str, Field(max_length=40)]], AfterValidator(_allow), Flag(metavar="REMEDY[:BUDGET]")
    ] = Field(
        default_factory=list,
        max_length=len(REMEDIES),
        description=f"A remedy watch may apply, with its budget (default {DEFAULT_BUDGET}): {', '.join(REMEDIES)}",
    )
    batch_var: Annotated[EnvName, Flag(metavar="NAME")] = Field(
        None, description="Variable holding the batch size (halve-batch)"
    )
    batch_size: Optional[int] = Field(None, ge=1, le=10**7, description="The batch size of the first run")
    min_batch_size: int = Field(1, ge=1, le=10**7, description="halve-batch never goes below this")
    lr_var: Annotated[EnvName, Flag(metavar="NAME")] = Field(
        None, description="Variable holding the learning rate (lower-lr)"
    )
    lr: Optional[float] = Field(None, gt=0, le=1e3, description="The learning rate of the first run")
    lr_factor: float = Field(0.5, gt=0, lt=1, description="lower-lr multiplies the learning rate by this")
    min_lr: float = Field(1e-8, gt=0, le=1e3, description="lower-lr never goes below this")
    checkpoint_dir: Annotated[Folder, Flag(metavar="DIR")] = Field(
        None, max_length=500, description="Workspace-relative folder of checkpoints (resume: the newest file in it)"
    )
    resume_var: Annotated[EnvName, Flag(metavar="NAME")] = Field(
        "RESUME_FROM", description="Variable given the checkpoint to resume from"
    )
    cache_dir: Annotated[Folder, Flag(metavar="DIR")] = Field(
        None, max_length=500, description="Workspace-relative folder clear-cache may empty (no link is followed)"
    )
    retry_wait_s: float = Field(30.0, ge=0, le=86400, description="wait-retry waits this long (doubling each time)")

    @model_validator(mode="after")
    def _declared(self) -> WatchSettings:
        """A remedy that is allowed must have what it changes declared (the dispatcher touches nothing else)."""
        need = {
            "halve-batch": ("batch_var", "batch_size"),
            "lower-lr": ("lr_var", "lr"),
            "resume": ("checkpoint_dir",),
            "clear-cache": ("cache_dir",),
        }
        for name in self.budgets():
            missing = [f"--{f.replace('_', '-')}" for f in need.get(name, ()) if getattr(self, f) is None]
            if missing:
                raise ValueError(
                    f"--allow {name} needs {' and '.join(missing)}: the remedy changes only what is declared"
                )
        return self

    def budgets(self) -> dict[str, int]:
        return dict(parse_allow(item) for item in self.allow)


@dataclass(frozen=True)
class RemedyState:
    """The declared variables as the next run gets them, and the budget each remedy has used."""

    batch_size: Optional[int] = None
    lr: Optional[float] = None
    resume_from: Optional[str] = None
    used: dict[str, int] = field(default_factory=dict)
    waits: int = 0

    @classmethod
    def first(cls, s: WatchSettings) -> RemedyState:
        return cls(batch_size=s.batch_size, lr=s.lr)

    def variables(self, s: WatchSettings) -> dict[str, str]:
        """Environment variables (and argv placeholders) the next run gets."""
        out = {}
        if s.batch_var and self.batch_size is not None:
            out[s.batch_var] = str(self.batch_size)
        if s.lr_var and self.lr is not None:
            out[s.lr_var] = f"{self.lr:.6g}"
        if s.resume_var and self.resume_from is not None:
            out[s.resume_var] = self.resume_from
        return out


@dataclass(frozen=True)
class Decision:
    """``remedy`` None means escalate to a person (``reason`` says why)."""

    remedy: Optional[str]
    reason: str
    state: RemedyState
    wait_s: float = 0.0


def decide(failure: Failure, s: WatchSettings, state: RemedyState, newest_checkpoint: Optional[str]) -> Decision:
    """The first remedy of the failure's catalog entry that is allowed, has budget left and can still change
    something; else escalate. ``newest_checkpoint`` is the workspace-relative newest file in checkpoint_dir."""
    budgets = s.budgets()
    candidates = KINDS[failure.kind].remedies
    if not candidates:
        return Decision(None, f"{failure.title} has no automatic remedy: a person decides", state)
    reasons = []
    for name in candidates:
        if name not in budgets:
            reasons.append(f"{name} is not allowed (--allow {name})")
            continue
        if state.used.get(name, 0) >= budgets[name]:
            reasons.append(f"{name} used its budget of {budgets[name]}")
            continue
        done = _apply(name, s, state, newest_checkpoint)
        if isinstance(done, str):
            reasons.append(done)
            continue
        new, reason, wait = done
        new = replace(new, used={**state.used, name: state.used.get(name, 0) + 1})
        return Decision(name, reason, new, wait)
    return Decision(None, f"no remedy left for {failure.title}: " + "; ".join(reasons), state)


def _apply(
    name: str, s: WatchSettings, st: RemedyState, checkpoint: Optional[str]
) -> tuple[RemedyState, str, float] | str:
    """The remedy's new state, what it did and how long to wait first; or why it cannot help any more."""
    if name == "halve-batch":
        assert st.batch_size is not None
        new_batch = max(s.min_batch_size, st.batch_size // 2)
        if new_batch >= st.batch_size:
            return f"halve-batch: {s.batch_var} is at its floor {s.min_batch_size}"
        return replace(st, batch_size=new_batch), f"{s.batch_var} {st.batch_size} -> {new_batch}", 0.0
    if name == "lower-lr":
        assert st.lr is not None
        new_lr = max(s.min_lr, st.lr * s.lr_factor)
        if not math.isfinite(new_lr) or new_lr >= st.lr:
            return f"lower-lr: {s.lr_var} is at its floor {s.min_lr:g}"
        return replace(st, lr=new_lr), f"{s.lr_var} {st.lr:.6g} -> {new_lr:.6g}", 0.0
    if name == "resume":
        if checkpoint is None:
            return f"resume: no checkpoint in {s.checkpoint_dir}"
        return replace(st, resume_from=checkpoint), f"{s.resume_var}={checkpoint} (the newest checkpoint)", 0.0
    if name == "wait-retry":
        wait = s.retry_wait_s * (2**st.waits)
        return replace(st, waits=st.waits + 1), f"waiting {wait:g}s, then the same run again", wait
    if name == "clear-cache":
        return st, f"emptying {s.cache_dir}", 0.0
    raise AssertionError(name)


def substitute(argv: list[str], variables: dict[str, str]) -> list[str]:
    """The person's argv with ``{NAME}`` of each declared variable replaced by its value (nothing else changes)."""
    out = []
    for arg in argv:
        for name, value in variables.items():
            arg = arg.replace("{" + name + "}", value)
        out.append(arg)
    return out
