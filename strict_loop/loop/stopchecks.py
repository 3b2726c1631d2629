"""Running the machine-checkable stop rules and deciding the verdict.

Commands run with ``cwd`` = workspace root in their own process group, without the
project's own secrets in their environment (``commandrun``). When the command ends, times
out, or we are interrupted (Ctrl-C, SIGTERM), the whole group goes with it, so a backgrounded
``sleep 300 &`` or a leaked ``yes`` cannot outlive the check.

Path and text checks look only inside the workspace: symlinks are resolved first and
anything leaving the root is refused; text checks read regular files of at most
``MAX_TEXT_BYTES``, never opening a FIFO or a device (which could block or never end).
"""

from __future__ import annotations

import errno
import os
import re
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Optional

from strict_loop.base import masking
from strict_loop.base.fsio import Unreadable, file_kind, read_regular
from strict_loop.loop.commandrun import run_command
from strict_loop.model.records import CheckResult, LimitResult, StopReport, StopVerdict, TaskState
from strict_loop.model.settings import StopChecks, parse_text_pattern, workspace_path_problem

MAX_TEXT_BYTES = 16 * 1024 * 1024
"""Largest file a text check reads; a bigger one fails the check instead of eating memory."""


def _locate(root: Path, rel: str) -> tuple[Optional[str], str]:
    """The real path of ``rel`` (symlinks resolved) if it stays inside the workspace, else None and why."""
    problem = workspace_path_problem(rel)
    if problem:
        return None, f"{rel} refused: it {problem}; stop-check paths are relative to the workspace root"
    base = os.path.realpath(root)
    real = os.path.realpath(os.path.join(base, rel))
    if os.path.commonpath([base, real]) != base:
        return None, f"{rel} refused: it resolves (through a symlink) outside the workspace root"
    return real, ""


def check_path(root: Path, rel: str) -> CheckResult:
    """Passes when ``rel`` is a regular file or a directory inside the workspace (never opened)."""
    real, why = _locate(root, rel)
    if real is None:
        return CheckResult(kind="path", target=rel, passed=False, detail=why)
    try:
        mode = os.stat(real).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return CheckResult(kind="path", target=rel, passed=False, detail="missing")
    except OSError as exc:
        return CheckResult(kind="path", target=rel, passed=False, detail=f"cannot be checked ({exc.strerror})")
    if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
        return CheckResult(
            kind="path", target=rel, passed=False, detail=f"is a {file_kind(mode)}, not a regular file or directory"
        )
    return CheckResult(kind="path", target=rel, passed=True, detail="exists")


def _read_text(root: Path, rel: str) -> tuple[Optional[str], str]:
    """The content of a regular file inside the workspace, or None and why not (a FIFO or device is never read)."""
    real, why = _locate(root, rel)
    if real is None:
        return None, why
    try:
        data = read_regular(real, MAX_TEXT_BYTES)
    except Unreadable as exc:
        if exc.kind == "big":
            return (
                None,
                f"{rel} is larger than {MAX_TEXT_BYTES // (1024 * 1024)} MiB, the cap for text checks; check "
                "a smaller file",
            )
        if exc.kind == "link":  # only when a link was swapped in after _locate resolved the path
            return None, f"{rel} cannot be read ({os.strerror(errno.ELOOP)})"
        return None, f"{rel} cannot be read: it is a {file_kind(exc.mode)}, not a regular file"
    except (FileNotFoundError, NotADirectoryError):
        return None, f"{rel} is missing"
    except OSError as exc:
        return None, f"{rel} cannot be read ({exc.strerror})"
    return data.decode("utf-8", errors="replace"), ""


def check_text(root: Path, spec: str) -> CheckResult:
    rel, pattern, is_regex = parse_text_pattern(spec)
    content, why = _read_text(root, rel)
    if content is None:
        return CheckResult(kind="text", target=spec, passed=False, detail=why)
    found = bool(re.search(pattern, content, re.MULTILINE)) if is_regex else pattern in content
    what = f"regex {pattern!r}" if is_regex else repr(pattern)
    return CheckResult(
        kind="text", target=spec, passed=found, detail=f"{rel} {'contains' if found else 'lacks'} {what}"
    )


def run_checks(checks: StopChecks, root: Path, env: Optional[Mapping[str, str]] = None) -> list[CheckResult]:
    """Every check's result; secrets in ``env`` (default: ours) are masked in every detail."""
    env = os.environ if env is None else env
    results = [run_command(c, root, checks.command_timeout_s, checks.output_tail_chars, env) for c in checks.commands]
    results += [check_path(root, p) for p in checks.paths_exist]
    results += [check_text(root, t) for t in checks.text_patterns]
    return [r.model_copy(update={"detail": masking.mask(r.detail, env)}) for r in results]


def limit_results(state: TaskState) -> list[LimitResult]:
    lim, cnt = state.contract.limits, state.counters
    return [
        LimitResult(
            name="max_iterations",
            value=cnt.iteration,
            limit=lim.max_iterations,
            hit=cnt.iteration >= lim.max_iterations,
        ),
        LimitResult(
            name="max_no_progress_rounds",
            value=cnt.consecutive_no_progress,
            limit=lim.max_no_progress_rounds,
            hit=cnt.consecutive_no_progress >= lim.max_no_progress_rounds,
        ),
    ]


def decide(
    state: TaskState, checks: list[CheckResult], limits: list[LimitResult], not_run: str = ""
) -> tuple[StopVerdict, str]:
    """The verdict, in precedence order: terminal status, goal met, limit hit, continue.

    ``not_run`` says why the contract's checks were not run (skipped, or refused as untrusted): the verdict then rests
    on the status and the limits, and a 'continue' gives that reason.
    """
    failed = [c for c in checks if not c.passed]
    if state.status in ("blocked", "failed"):
        return state.status, state.stop_reason or f"task is {state.status}"
    if state.status == "completed" and failed:
        return (
            "completed",
            f"recorded as completed, but {len(failed)} stop check(s) fail now; start a new task to fix the regression",
        )
    if checks and not failed:
        return "goal_met", f"all {len(checks)} stop checks pass"
    hit = [lim for lim in limits if lim.hit]
    if hit:
        return "limit_reached", "; ".join(f"{lim.name} reached ({lim.value}/{lim.limit})" for lim in hit)
    if not checks and state.status == "completed":
        return "completed", "recorded as completed (no machine stop checks defined)"
    if failed:
        names = ", ".join(f"{c.kind} {c.target[:60]!r}" for c in failed[:3])
        more = f" and {len(failed) - 3} more" if len(failed) > 3 else ""
        return "continue", f"{len(failed)} of {len(checks)} stop checks fail: {names}{more}"
    if not_run:
        return "continue", not_run
    return "continue", "no machine stop checks defined; the loop continues until recorded as completed"


def report(state: TaskState, checks: list[CheckResult], checked_at: str, not_run: str = "") -> StopReport:
    """The stop report for ``state``: the checks' results, the hard limits, and the verdict.

    Output is kept for failing checks only: a passing command's output tells the agent nothing it must act on.
    """
    limits = limit_results(state)
    verdict, reason = decide(state, checks, limits, not_run)
    checks = [c if not c.passed or not c.output_tail else c.model_copy(update={"output_tail": ""}) for c in checks]
    passed = sum(c.passed for c in checks)
    return StopReport(
        task_id=state.task_id,
        checked_at=checked_at,
        iteration=state.counters.iteration,
        status=state.status,
        verdict=verdict,
        should_stop=verdict != "continue",
        reason=reason,
        passed=passed,
        failed=len(checks) - passed,
        checks=checks,
        limits=limits,
    )
