"""Running the machine-checkable stop rules and deciding the verdict.

Commands run with ``cwd`` = workspace root in their own process group, without the
project's own secrets in their environment. Their output is read from a pipe into a
bounded in-memory tail (nothing goes to disk, the command never blocks on a full
pipe), and secrets are masked in what is kept. When the command ends, times out, or
we are interrupted (Ctrl-C, SIGTERM), the whole group goes with it, so a backgrounded
``sleep 300 &`` or a leaked ``yes`` cannot outlive the check.

Path and text checks look only inside the workspace: symlinks are resolved first and
anything leaving the root is refused; text checks read regular files of at most
``MAX_TEXT_BYTES``, never opening a FIFO or a device (which could block or never end).
"""

from __future__ import annotations

import atexit
import errno
import os
import re
import selectors
import signal
import stat
import subprocess
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Mapping, Optional

from . import secrets
from .fsio import Unreadable, file_kind, read_regular
from .models import CheckResult, LimitResult, StopChecks, StopReport, StopVerdict, TaskState
from .settings import parse_text_pattern, workspace_path_problem

MAX_TEXT_BYTES = 16 * 1024 * 1024
"""Largest file a text check reads; a bigger one fails the check instead of eating memory."""
_CHUNK = 64 * 1024
_POLL_S = 0.05
_TERM_GRACE_S = 2.0
_DRAIN_GRACE_S = 1.0
_SLACK_BYTES = 8192
"""Kept beyond the tail, so a secret cut at the buffer's start lies outside what is stored."""


_RUNNING: set[int] = set()
_RUNNING_LOCK = threading.Lock()


def kill_running() -> None:
    """SIGKILL the group of every stop command still running in this process.

    Registered with ``atexit``: when the interpreter ends while a worker thread (an MCP tool call)
    is still running a command, the command does not outlive us. A server that turns SIGTERM into
    a clean exit gets the same for free.
    """
    with _RUNNING_LOCK:
        groups = list(_RUNNING)
    for pgid in groups:
        _signal_group(pgid, signal.SIGKILL)


atexit.register(kill_running)


class _Tail:
    """The last ``cap`` bytes of a stream: memory only, never a file, whatever the stream's size."""

    def __init__(self, cap: int) -> None:
        self.cap, self.buf = cap, bytearray()

    def add(self, data: bytes) -> None:
        self.buf += data
        if len(self.buf) > self.cap:
            del self.buf[: len(self.buf) - self.cap]


def run_command(command: str, cwd: Path, timeout_s: float, tail_chars: int,
                env: Optional[Mapping[str, str]] = None) -> CheckResult:
    env = os.environ if env is None else env
    started = time.monotonic()
    tail = _Tail(tail_chars * 4 + _SLACK_BYTES if tail_chars > 0 else 0)
    # SIGTERM/SIGHUP are turned into exceptions before the command starts: one that lands while
    # Popen returns must still reach the ``finally`` below, never end us with the group alive.
    with _terminate_raises():
        proc: Optional[subprocess.Popen] = None
        try:
            proc = subprocess.Popen(
                command, shell=True, cwd=cwd, env=secrets.command_env(env), stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True,
            )
            with _RUNNING_LOCK:
                _RUNNING.add(proc.pid)
            timed_out = _pump(proc, tail, started + timeout_s)
        except OSError as exc:
            if proc is not None:
                raise
            return CheckResult(kind="command", target=command, passed=False,
                               detail=secrets.mask(f"could not start: {exc}", env))
        finally:  # also on Ctrl-C or SIGTERM: nothing of the group survives us
            if proc is not None:
                _end_group(proc)
                _drain(proc, tail)
    code = proc.returncode
    duration = time.monotonic() - started
    text = secrets.mask(bytes(tail.buf).decode("utf-8", errors="replace"), env)
    if timed_out:
        detail = f"timed out after {timeout_s:g}s; process group killed"
    else:
        detail = "exit code 0" if code == 0 else f"exit code {code}"
    return CheckResult(
        kind="command", target=command, passed=(code == 0 and not timed_out), detail=detail,
        exit_code=None if timed_out else code, timed_out=timed_out, duration_s=round(duration, 3),
        output_tail=text[-tail_chars:] if tail_chars > 0 else "",
    )


def _pump(proc: subprocess.Popen, tail: _Tail, deadline: float) -> bool:
    """Read output until the leader exits (True if the deadline passed first). Never reaps the leader."""
    assert proc.stdout is not None
    fd = proc.stdout.fileno()
    pidfd = _pidfd(proc.pid)
    try:
        with selectors.DefaultSelector() as sel:
            sel.register(fd, selectors.EVENT_READ)
            if pidfd is not None:
                sel.register(pidfd, selectors.EVENT_READ)
            while not _exited(proc):
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return True
                for key, _ in sel.select(remaining if pidfd is not None else min(remaining, _POLL_S)):
                    if key.fd != fd:
                        continue
                    data = os.read(fd, _CHUNK)
                    if data:
                        tail.add(data)
                    else:  # the pipe closed; the pidfd (or the poll) still tells when the leader ends
                        sel.unregister(fd)
        return False
    finally:
        if pidfd is not None:
            os.close(pidfd)


def _pidfd(pid: int) -> Optional[int]:
    """A descriptor that becomes readable when ``pid`` exits (Linux 5.3+), or None: then we poll."""
    try:
        return os.pidfd_open(pid)  # type: ignore[attr-defined]
    except (AttributeError, OSError):
        return None


def _exited(proc: subprocess.Popen) -> bool:
    """Has the leader exited? Asked without reaping it, so its pid (the group id) cannot be reused
    by an unrelated process before we signal the group."""
    if proc.returncode is not None:
        return True
    try:
        return os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:
        return True
    except AttributeError:  # no waitid on this platform
        return proc.poll() is not None


def _end_group(proc: subprocess.Popen) -> None:
    """SIGTERM the group while the leader still runs (a grace period), then SIGKILL what is left; reap."""
    if not _exited(proc):
        _signal_group(proc.pid, signal.SIGTERM)
        deadline = time.monotonic() + _TERM_GRACE_S
        while not _exited(proc) and time.monotonic() < deadline:
            time.sleep(0.02)
    _signal_group(proc.pid, signal.SIGKILL)
    with _RUNNING_LOCK:
        _RUNNING.discard(proc.pid)  # before reaping: once reaped, the group id may name someone else
    proc.wait()


def _signal_group(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _drain(proc: subprocess.Popen, tail: _Tail) -> None:
    """Keep what the ended group left in the pipe. A process that left the group (setsid) may
    hold the pipe open: give up after a grace period; closing our end stops its writes."""
    assert proc.stdout is not None
    fd = proc.stdout.fileno()
    deadline = time.monotonic() + _DRAIN_GRACE_S
    try:
        with selectors.DefaultSelector() as sel:
            sel.register(fd, selectors.EVENT_READ)
            while (remaining := deadline - time.monotonic()) > 0 and sel.select(remaining):
                data = os.read(fd, _CHUNK)
                if not data:
                    break
                tail.add(data)
    except OSError:
        pass
    finally:
        proc.stdout.close()


@contextmanager
def _terminate_raises() -> Iterator[None]:
    """While a command runs in the main thread, SIGTERM and SIGHUP raise SystemExit instead of
    ending us on the spot, so the ``finally`` that kills the command's group runs."""
    sigs = [s for s in (signal.SIGTERM, getattr(signal, "SIGHUP", None)) if s is not None]
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {s: signal.getsignal(s) for s in sigs}
    mine = [s for s in sigs if previous[s] is signal.SIG_DFL]

    def handler(signum: int, frame: object) -> None:
        signal.signal(signum, signal.SIG_IGN)  # a second one must not cut the cleanup short
        raise SystemExit(128 + signum)

    for s in mine:
        signal.signal(s, handler)
    try:
        yield
    finally:
        for s in mine:
            signal.signal(s, signal.SIG_DFL)


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
        return CheckResult(kind="path", target=rel, passed=False, detail=f"is a {file_kind(mode)}, not a regular file or directory")
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
            return None, f"{rel} is larger than {MAX_TEXT_BYTES // (1024 * 1024)} MiB, the cap for text checks; check a smaller file"
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
    return CheckResult(kind="text", target=spec, passed=found, detail=f"{rel} {'contains' if found else 'lacks'} {what}")


def run_checks(checks: StopChecks, root: Path, env: Optional[Mapping[str, str]] = None) -> list[CheckResult]:
    """Every check's result; secrets in ``env`` (default: ours) are masked in every detail."""
    env = os.environ if env is None else env
    results = [run_command(c, root, checks.command_timeout_s, checks.output_tail_chars, env) for c in checks.commands]
    results += [check_path(root, p) for p in checks.paths_exist]
    results += [check_text(root, t) for t in checks.text_patterns]
    return [r.model_copy(update={"detail": secrets.mask(r.detail, env)}) for r in results]


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


def decide(state: TaskState, checks: list[CheckResult], limits: list[LimitResult], not_run: str = "") -> tuple[StopVerdict, str]:
    """The verdict, in precedence order: terminal status, goal met, limit hit, continue.

    ``not_run`` says why the contract's checks were not run (skipped, or refused as untrusted): the verdict then rests
    on the status and the limits, and a 'continue' gives that reason.
    """
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
        task_id=state.task_id, checked_at=checked_at, iteration=state.counters.iteration, status=state.status,
        verdict=verdict, should_stop=verdict != "continue", reason=reason, passed=passed,
        failed=len(checks) - passed, checks=checks, limits=limits,
    )
