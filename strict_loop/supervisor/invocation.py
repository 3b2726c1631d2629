"""One invocation's child: the harness run headless in its own process group, its output followed line by line.

Why here: the supervisor owns the run's lifetime. Whatever ends it (the wall clock, a pause, a signal, a damaged
state file, a full disk) ends the child's whole group, so nothing the run started outlives it; what the child
prints is kept within bounds (a line, a record), so a runaway harness costs neither memory nor the disk.
"""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Optional

from strict_loop.headless.wiring import Wiring
from strict_loop.supervisor.orphans import Launch

KILL_GRACE_S = 5.0
"""Seconds between SIGTERM and SIGKILL when a child's process group is stopped."""
POLL_S = 0.2
DRAIN_S = 1.0
"""After the child exits: how long its stdout is still read (a grandchild holding it open does not hold the run)."""
MAX_LINE_CHARS = 8 << 20
"""One line of the child's is read in pieces beyond this: memory stays bounded whatever it prints."""
MAX_RECORD_CHARS = 64 << 20
"""Of its stdout (and of its stderr) kept in the invocation's files; then one note."""
CAPPED_NOTE = '{"strict_loop": "the rest of this output was not recorded (over 64 MiB)"}\n'


@dataclass
class ChildResult:
    """How a child ended: its exit code (None when killed before it reported), and why we stopped it, if we did."""

    exit_code: Optional[int]
    timed_out: bool = False
    stopped: Optional[str] = None  # "interrupted", "paused": the supervisor ended it


def end_group(proc: subprocess.Popen, grace_s: float = KILL_GRACE_S) -> None:
    """SIGTERM the child's whole process group, then SIGKILL what is left after ``grace_s``."""
    for sig, wait in ((signal.SIGTERM, grace_s), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            proc.wait(timeout=wait)
        except subprocess.TimeoutExpired:
            continue
        if sig == signal.SIGTERM:  # the leader is gone; its children may not be
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        return


def run_child(
    wiring: Wiring,
    cwd: Path,
    raw: IO[str],
    stderr_file: IO[str],
    on_line: Callable[[str], Optional[str]],
    timeout_s: float,
    tick: Callable[[], Optional[str]],
    grace_s: float = KILL_GRACE_S,
    on_spawn: Callable[[int], None] = lambda pid: None,
) -> ChildResult:
    """Run the child in its own process group (``on_spawn`` gets its pid before it runs); each stdout line goes to
    ``raw`` and ``on_line``.

    ``on_line`` and ``tick`` (called about every 0.2 s) return a reason to stop the child now (e.g. the task was
    paused, or a signal arrived), else None. Past ``timeout_s`` the whole group is killed.
    """
    proc = _spawn(wiring, cwd, on_spawn)
    errors = threading.Thread(target=_copy, args=(proc.stderr, stderr_file), daemon=True)
    try:
        errors.start()
        return _follow(proc, raw, on_line, timeout_s, tick, grace_s)
    except BaseException:  # a damaged state file, a task folder removed, a full disk: the child must not outlive us
        end_group(proc, grace_s)
        raise
    finally:
        if errors.is_alive():
            errors.join(timeout=2)  # what it printed last, before the caller closes the file


def _follow(
    proc: subprocess.Popen[str],
    raw: IO[str],
    on_line: Callable[[str], Optional[str]],
    timeout_s: float,
    tick: Callable[[], Optional[str]],
    grace_s: float,
) -> ChildResult:
    """Read the child's stdout until the child exits or we end it (see ``run_child``).

    The run ends when the child process exits, not when stdout closes: a grandchild it left behind (a detached
    server, a ``sleep &``) may hold stdout open for ever. After the exit its output is drained for ``DRAIN_S`` at
    most, and the whole group is killed, so nothing the run started outlives it."""
    lines: queue.Queue[Optional[str]] = queue.Queue()
    reader = threading.Thread(target=_pump, args=(proc.stdout, lines), daemon=True)
    reader.start()
    deadline, eof, exited_at, kept = time.monotonic() + timeout_s, False, None, 0
    stop: Optional[str] = None
    while stop is None:
        now = time.monotonic()
        if now >= deadline:
            end_group(proc, grace_s)
            reader.join(timeout=2)
            return ChildResult(None, timed_out=True)
        if proc.poll() is not None:
            exited_at = exited_at or now
            if eof or now - exited_at >= DRAIN_S:
                break
        try:
            line = lines.get(timeout=POLL_S) if not eof else _wait(proc)
        except (queue.Empty, subprocess.TimeoutExpired):
            stop = tick()
            continue
        if line is None:
            eof = True
        elif line:
            kept = _keep(raw, line, kept)
            stop = on_line(line) or tick()
    end_group(proc, grace_s)  # after an exit too: what the child left in its group goes with it
    reader.join(timeout=0.5)
    return ChildResult(proc.returncode, stopped=stop)


def _keep(raw: IO[str], line: str, kept: int) -> int:
    """Copy one line of the child's into its record, up to ``MAX_RECORD_CHARS`` in all (then one note); a record that
    cannot be written (a full disk) stops being written and the run goes on. Returns the characters kept so far."""
    if kept >= MAX_RECORD_CHARS:
        return kept
    text = line if line.endswith("\n") else line + "\n"
    capped = kept + len(text) > MAX_RECORD_CHARS
    try:
        raw.write(CAPPED_NOTE if capped else text)
        raw.flush()
    except (OSError, ValueError):
        return MAX_RECORD_CHARS
    return MAX_RECORD_CHARS if capped else kept + len(text)


def _wait(proc: subprocess.Popen[str]) -> str:
    """Wait a poll's time for the child whose stdout closed ("" once it exited; TimeoutExpired while it runs)."""
    proc.wait(timeout=POLL_S)
    return ""


def _spawn(wiring: Wiring, cwd: Path, on_spawn: Callable[[int], None]) -> subprocess.Popen[str]:
    """The child, started in its own process group (so that a kill reaches everything it started), recorded by
    ``on_spawn`` before it runs (``orphans.Launch``), sent SIGTERM by the kernel if we die (Linux; the watchdog and the
    record cover the rest)."""
    with Launch(on_spawn) as preexec:
        return subprocess.Popen(
            wiring.argv,
            cwd=cwd,
            env=wiring.env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,  # copied line by line into the caller's file, which may mask it
            text=True,
            encoding="utf-8",
            errors="replace",
            start_new_session=True,
            preexec_fn=preexec,
        )


def _pump(stream: Optional[IO[str]], out: queue.Queue[Optional[str]]) -> None:
    """Read the child's stdout line by line into ``out`` (a line over ``MAX_LINE_CHARS`` in pieces: memory stays
    bounded whatever the child prints); None marks its end."""
    try:
        if stream is not None:
            while line := stream.readline(MAX_LINE_CHARS):
                out.put(line)
    except (OSError, ValueError):
        pass
    finally:
        out.put(None)


def _copy(stream: Optional[IO[str]], out: IO[str]) -> None:
    """The child's stderr, line by line, into ``out`` up to ``MAX_RECORD_CHARS``; the rest is read and dropped."""
    kept = 0
    try:
        if stream is not None:
            while line := stream.readline(MAX_LINE_CHARS):
                kept = _keep(out, line, kept)
    except (OSError, ValueError):
        pass
