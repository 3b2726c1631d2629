"""Running the machine-checkable stop rules and deciding the verdict.

Commands run with ``cwd`` = workspace root in their own process group, so a
timeout kills the whole tree (a shell's children included); output goes to a
temp file and only the tail is kept, so a chatty command cannot eat memory.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import tempfile
import time
from pathlib import Path

from .models import CheckResult, LimitResult, StopChecks, StopReport, StopVerdict, TaskState
from .settings import parse_text_pattern


def run_command(command: str, cwd: Path, timeout_s: float, tail_chars: int) -> CheckResult:
    started = time.monotonic()
    with tempfile.TemporaryFile() as out:
        try:
            proc = subprocess.Popen(
                command,
                shell=True,
                cwd=cwd,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        except OSError as exc:
            return CheckResult(kind="command", target=command, passed=False, detail=f"could not start: {exc}")
        timed_out = False
        try:
            code = proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            timed_out = True
            _kill_group(proc)
            code = proc.wait()
        duration = time.monotonic() - started
        tail = _read_tail(out, tail_chars)
    if timed_out:
        detail = f"timed out after {timeout_s:g}s; process group killed"
    else:
        detail = "exit code 0" if code == 0 else f"exit code {code}"
    return CheckResult(
        kind="command",
        target=command,
        passed=(code == 0 and not timed_out),
        detail=detail,
        exit_code=None if timed_out else code,
        timed_out=timed_out,
        duration_s=round(duration, 3),
        output_tail=tail,
    )


def _kill_group(proc: subprocess.Popen) -> None:
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=2)
            return
        except subprocess.TimeoutExpired:
            continue


def _read_tail(fh, tail_chars: int) -> str:
    if tail_chars <= 0:
        return ""
    fh.seek(0, os.SEEK_END)
    size = fh.tell()
    fh.seek(max(0, size - tail_chars * 4))
    text = fh.read().decode("utf-8", errors="replace")
    return text[-tail_chars:]


def _resolve(root: Path, rel: str) -> Path:
    path = Path(rel).expanduser()
    return path if path.is_absolute() else root / path


def check_path(root: Path, rel: str) -> CheckResult:
    exists = _resolve(root, rel).exists()
    return CheckResult(kind="path", target=rel, passed=exists, detail="exists" if exists else "missing")


def check_text(root: Path, spec: str) -> CheckResult:
    rel, pattern, is_regex = parse_text_pattern(spec)
    path = _resolve(root, rel)
    try:
        content = path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return CheckResult(kind="text", target=spec, passed=False, detail=f"{rel} is missing")
    except (IsADirectoryError, PermissionError) as exc:
        return CheckResult(kind="text", target=spec, passed=False, detail=f"{rel} cannot be read ({exc.strerror})")
    found = bool(re.search(pattern, content, re.MULTILINE)) if is_regex else pattern in content
    what = f"regex {pattern!r}" if is_regex else repr(pattern)
    return CheckResult(kind="text", target=spec, passed=found, detail=f"{rel} {'contains' if found else 'lacks'} {what}")


def run_checks(checks: StopChecks, root: Path) -> list[CheckResult]:
    results = [run_command(c, root, checks.command_timeout_s, checks.output_tail_chars) for c in checks.commands]
    results += [check_path(root, p) for p in checks.paths_exist]
    results += [check_text(root, t) for t in checks.text_patterns]
    return results


def limit_results(state: TaskState) -> list[LimitResult]:
    lim, cnt = state.contract.limits, state.counters
    return [
        LimitResult(name="max_iterations", value=cnt.iteration, limit=lim.max_iterations, hit=cnt.iteration >= lim.max_iterations),
        LimitResult(
            name="max_no_progress_rounds",
            value=cnt.consecutive_no_progress,
            limit=lim.max_no_progress_rounds,
            hit=cnt.consecutive_no_progress >= lim.max_no_progress_rounds,
        ),
    ]


def decide(state: TaskState, checks: list[CheckResult], limits: list[LimitResult]) -> tuple[StopVerdict, str]:
    """The verdict, in precedence order: terminal status, goal met, limit hit, continue."""
    failed = [c for c in checks if not c.passed]
    if state.status in ("blocked", "failed"):
        return state.status, state.stop_reason or f"task is {state.status}"
    if state.status == "completed" and failed:
        return "completed", f"recorded as completed, but {len(failed)} stop check(s) fail now; start a new task to fix the regression"
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
    return "continue", "no machine stop checks defined; the loop continues until recorded as completed"


def report(state: TaskState, checks: list[CheckResult], checked_at: str) -> StopReport:
    """The stop report for ``state``: the checks' results, the hard limits, and the verdict."""
    limits = limit_results(state)
    verdict, reason = decide(state, checks, limits)
    passed = sum(c.passed for c in checks)
    return StopReport(
        task_id=state.task_id, checked_at=checked_at, iteration=state.counters.iteration, status=state.status,
        verdict=verdict, should_stop=verdict != "continue", reason=reason, passed=passed,
        failed=len(checks) - passed, checks=checks, limits=limits,
    )
