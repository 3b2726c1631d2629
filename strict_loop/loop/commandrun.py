"""Running one stop command: its own process group, a bounded in-memory tail, nothing outliving it.

Why a module of its own: the process-group handling (timeouts, Ctrl-C/SIGTERM/SIGHUP while the
command starts or runs, worker threads at interpreter exit) is subtle and independent of what a
stop check means (``stopchecks``). Output is read from a pipe into a bounded tail (nothing goes to
disk, the command never blocks on a full pipe), and secrets are masked in what is kept.
"""

from __future__ import annotations

import atexit
import os
import selectors
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Optional

from strict_loop.base import masking
from strict_loop.model.records import CheckResult

_CHUNK = 64 * 1024
_POLL_S = 0.05
_TERM_GRACE_S = 2.0
_DRAIN_GRACE_S = 1.0
_SLACK_BYTES = 8192
"""Kept beyond the tail, so a secret cut at the buffer's start lies outside what is stored."""


class _Groups:
    """The process groups of the stop commands running in this process, and how many are still being started.

    Process-wide by nature: ``atexit`` must find every command, whichever thread (an MCP tool call) started it.
    """

    def __init__(self) -> None:
        self.running: set[int] = set()
        self.starting = 0
        self.changed = threading.Condition()

    @contextmanager
    def start(self) -> Iterator[Callable[[int], None]]:
        """Count a command as starting until its group id is registered (or its start failed)."""
        with self.changed:
            self.starting += 1
        try:
            yield self.add
        finally:
            with self.changed:
                self.starting -= 1
                self.changed.notify_all()

    def add(self, pgid: int) -> None:
        with self.changed:
            self.running.add(pgid)

    def discard(self, pgid: int) -> None:
        with self.changed:
            self.running.discard(pgid)

    def kill_all(self, wait_s: float = 2.0) -> None:
        """SIGKILL every running group, after waiting (briefly) for those being started to get a group id."""
        with self.changed:
            self.changed.wait_for(lambda: self.starting == 0, timeout=wait_s)
            groups = list(self.running)
        for pgid in groups:
            _signal_group(pgid, signal.SIGKILL)


_GROUPS = _Groups()


def kill_running() -> None:
    """SIGKILL the group of every stop command still running in this process.

    Registered with ``atexit``: when the interpreter ends while a worker thread (an MCP tool call)
    is still running a command, the command does not outlive us, even one whose start was under way.
    A server that turns SIGTERM into a clean exit gets the same for free.
    """
    _GROUPS.kill_all()


atexit.register(kill_running)


class _Tail:
    """The last ``cap`` bytes of a stream: memory only, never a file, whatever the stream's size."""

    def __init__(self, cap: int) -> None:
        self.cap, self.buf = cap, bytearray()

    def add(self, data: bytes) -> None:
        self.buf += data
        if len(self.buf) > self.cap:
            del self.buf[: len(self.buf) - self.cap]


@contextmanager
def own_group(start: Callable[[], subprocess.Popen]) -> Iterator[subprocess.Popen]:
    """The process ``start`` makes (in a new session: its own process group), ended with its whole group when the block
    ends: normally, on an exception, on Ctrl-C, SIGTERM or SIGHUP (see ``_terminate_raises``), or at interpreter exit.

    A signal that lands while ``start`` runs is held until the group id is known, then raised; one raised inside
    Popen would leave a running group nobody knows of. ``start``'s own errors (OSError) pass through."""
    with _terminate_raises() as held:
        proc: Optional[subprocess.Popen] = None
        try:
            try:
                with _GROUPS.start() as register:
                    proc = start()
                    register(proc.pid)
            finally:
                held.started()  # a held signal is raised now (instead of a start error, too)
            yield proc
        finally:
            if proc is not None:
                end_group(proc)


def run_command(
    command: str, cwd: Path, timeout_s: float, tail_chars: int, env: Optional[Mapping[str, str]] = None
) -> CheckResult:
    env = os.environ if env is None else env
    started = time.monotonic()
    tail = _Tail(tail_chars * 4 + _SLACK_BYTES if tail_chars > 0 else 0)
    proc: Optional[subprocess.Popen] = None
    try:
        with own_group(
            lambda: subprocess.Popen(
                command,
                shell=True,
                cwd=cwd,
                env=masking.command_env(env),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        ) as proc:
            timed_out = pump(proc, tail.add, started + timeout_s) == "timeout"
    except OSError as exc:
        if proc is not None:
            raise
        return CheckResult(
            kind="command", target=command, passed=False, detail=masking.mask(f"could not start: {exc}", env)
        )
    finally:
        if proc is not None:
            drain(proc, tail.add)
    code = proc.returncode
    duration = time.monotonic() - started
    text = masking.mask(bytes(tail.buf).decode("utf-8", errors="replace"), env)
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
        output_tail=text[-tail_chars:] if tail_chars > 0 else "",
    )


def pump(
    proc: subprocess.Popen,
    sink: Callable[[bytes], None],
    deadline: Optional[float] = None,
    stop: Optional[Callable[[], Optional[str]]] = None,
    every_s: float = _POLL_S,
) -> Optional[str]:
    """Give ``sink`` the group's output until the leader exits (None), the deadline passes ("timeout"), or ``stop``,
    asked at least every ``every_s`` seconds, gives a reason to end it now (that reason). Never reaps the leader."""
    assert proc.stdout is not None
    fd = proc.stdout.fileno()
    pidfd = leader_fd(proc.pid)
    try:
        with selectors.DefaultSelector() as sel:
            sel.register(fd, selectors.EVENT_READ)
            if pidfd is not None:
                sel.register(pidfd, selectors.EVENT_READ)
            while not exited(proc):
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    return "timeout"
                reason = stop() if stop is not None else None
                if reason is not None:
                    return reason
                # the pipe and the pidfd wake us; without a pidfd (or with a stop to ask) we look again every so often
                poll = every_s if stop is not None or pidfd is None else None
                waits = [w for w in (remaining, poll) if w is not None]
                for key, _ in sel.select(min(waits) if waits else None):
                    if key.fd != fd:
                        continue
                    data = os.read(fd, _CHUNK)
                    if data:
                        sink(data)
                    else:  # the pipe closed; the pidfd (or the poll) still tells when the leader ends
                        sel.unregister(fd)
        return None
    finally:
        if pidfd is not None:
            os.close(pidfd)


def leader_fd(pid: int) -> Optional[int]:
    """A descriptor that becomes readable when ``pid`` exits (Linux 5.3+), or None: then we poll."""
    try:
        # Linux only: typeshed declares it only there (used on Linux, the ignore is unused)
        return os.pidfd_open(pid)  # type: ignore[attr-defined, unused-ignore]
    except (AttributeError, OSError):
        return None


def exited(proc: subprocess.Popen) -> bool:
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


def end_group(proc: subprocess.Popen) -> None:
    """SIGTERM the group while the leader still runs (a grace period), then SIGKILL what is left; reap."""
    if not exited(proc):
        _signal_group(proc.pid, signal.SIGTERM)
        deadline = time.monotonic() + _TERM_GRACE_S
        while not exited(proc) and time.monotonic() < deadline:
            time.sleep(0.02)
    _signal_group(proc.pid, signal.SIGKILL)
    _GROUPS.discard(proc.pid)  # before reaping: once reaped, the group id may name someone else
    proc.wait()


def _signal_group(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def drain(proc: subprocess.Popen, sink: Callable[[bytes], None], grace_s: float = _DRAIN_GRACE_S) -> None:
    """Give ``sink`` what the ended group left in the pipe. A process that left the group (setsid) may
    hold the pipe open: give up after a grace period; closing our end stops its writes."""
    assert proc.stdout is not None
    fd = proc.stdout.fileno()
    deadline = time.monotonic() + grace_s
    try:
        with selectors.DefaultSelector() as sel:
            sel.register(fd, selectors.EVENT_READ)
            while (remaining := deadline - time.monotonic()) > 0 and sel.select(remaining):
                data = os.read(fd, _CHUNK)
                if not data:
                    break
                sink(data)
    except OSError:
        pass
    finally:
        proc.stdout.close()


class _Held:
    """A signal that landed while the command was being started, raised once its group is known."""

    def __init__(self) -> None:
        self.starting, self.signum = True, 0

    def started(self) -> None:
        self.starting = False
        if self.signum:
            raise _exit_for(self.signum)


def _exit_for(signum: int) -> BaseException:
    return KeyboardInterrupt() if signum == signal.SIGINT else SystemExit(128 + signum)


@contextmanager
def _terminate_raises() -> Iterator[_Held]:
    """While a command runs in the main thread, SIGTERM and SIGHUP raise SystemExit (and Ctrl-C KeyboardInterrupt)
    instead of ending us on the spot, so the ``finally`` that kills the command's group runs. One that lands
    while Popen is still starting the command is held until ``started()``: raised inside Popen, it would leave
    a running group that nobody knows of."""
    held = _Held()
    sigs = [s for s in (signal.SIGTERM, getattr(signal, "SIGHUP", None), signal.SIGINT) if s is not None]
    if threading.current_thread() is not threading.main_thread():
        yield held
        return
    previous = {s: signal.getsignal(s) for s in sigs}
    mine = [s for s in sigs if previous[s] is (signal.default_int_handler if s == signal.SIGINT else signal.SIG_DFL)]

    def handler(signum: int, frame: object) -> None:
        signal.signal(signum, signal.SIG_IGN)  # a second one must not cut the cleanup short
        if held.starting:
            held.signum = held.signum or signum
            return
        raise _exit_for(signum)

    for s in mine:
        signal.signal(s, handler)
    try:
        yield held
    finally:
        for s in mine:
            signal.signal(s, previous[s])
