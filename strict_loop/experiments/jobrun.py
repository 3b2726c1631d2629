"""One run of a watched job: its own process group, its output streamed to a capped, masked log, its progress read.

Why apart from ``watch``: this is the part that touches processes and file descriptors; ``watch`` decides.
The job is the person's argv (never a shell string), started in a new session so that the whole group
(data-loader workers, ``torchrun`` ranks) is killed together when it ends, when a NaN shows up, when the
watch's time is up, or when we get SIGINT/SIGTERM. Limits (RLIMIT_AS, RLIMIT_FSIZE) are set in the child
before it executes, so they bind the job and everything it starts, never us.
"""

from __future__ import annotations

import os
import resource
import subprocess
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Optional

from strict_loop.base import masking
from strict_loop.base.errors import LoopError
from strict_loop.experiments import joblog
from strict_loop.experiments.joblog import JobProgress
from strict_loop.experiments.remedies import WatchSettings
from strict_loop.loop import commandrun
from strict_loop.supervisor.orphans import Launch

TAIL_BYTES = 64 * 1024
"""Log kept in memory for the classifier: errors sit at the end."""
_POLL_S = 0.1
_CHUNK = 64 * 1024


@dataclass(frozen=True)
class RunOutcome:
    """How a run ended: ``stopped`` is why we ended it ('nan', 'diverged', 'timeout', 'signal'), None if it ended
    itself."""

    returncode: Optional[int]
    log: Path
    tail: str
    progress: JobProgress
    duration_s: float
    stopped: Optional[str] = None
    log_capped: bool = False


class _Log:
    """Masked lines to a file of at most ``cap`` bytes, a tail in memory, progress folded from each line."""

    def __init__(self, path: Path, cap: int, env: Mapping[str, str], s: WatchSettings) -> None:
        self.fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        self.cap, self.written, self.capped = cap, 0, False
        self.secrets = masking.secret_values(env)
        self.pattern = joblog.compile_pattern(s.progress_pattern)
        self.s = s
        self.partial = b""
        self.tail: deque[str] = deque()
        self.tail_len = 0
        self.progress = JobProgress()

    def feed(self, data: bytes) -> None:
        data = self.partial + data
        *lines, self.partial = data.split(b"\n")
        if len(self.partial) > _CHUNK:  # a line without end (a progress bar's \r): take it as a line
            lines.append(self.partial)
            self.partial = b""
        for raw in lines:
            self._line(raw.decode("utf-8", errors="replace"))

    def close(self) -> None:
        if self.partial:
            self._line(self.partial.decode("utf-8", errors="replace"))
            self.partial = b""
        os.close(self.fd)

    def _line(self, line: str) -> None:
        line = masking.mask_with(line.rstrip("\r"), self.secrets)  # the values found once per run
        self.tail.append(line)
        self.tail_len += len(line) + 1
        while self.tail_len > TAIL_BYTES and len(self.tail) > 1:
            self.tail_len -= len(self.tail.popleft()) + 1
        if not self.s.metrics_file:
            self.progress = joblog.fold(
                self.progress, joblog.from_line(line, self.pattern), self.s.metric, self.s.divergence_factor
            )
        data = (line + "\n").encode()
        if self.written + len(data) > self.cap:
            if not self.capped:
                self.capped = True
                self._write(f"[strict-loop watch: log capped at {self.cap} bytes; later lines are dropped]\n".encode())
            return
        self._write(data)
        self.written += len(data)

    def _write(self, data: bytes) -> None:
        """A log line to disk; a full disk (the failure being watched, often) stops the log, never the watch: the
        tail in memory still classifies the run."""
        try:
            os.write(self.fd, data)
        except OSError:
            self.capped = True
            self.written = self.cap


class _MetricsFile:
    """New complete lines of the job's metrics JSONL, read from where the last read stopped (regular files only)."""

    def __init__(self, root: Path, rel: str) -> None:
        self.root, self.path, self.offset, self.partial, self.overlong = root, root / rel, 0, b"", False
        self.last = float("-inf")
        try:  # a file left by an earlier run: only what this run appends counts
            self.offset = os.stat(self.path, follow_symlinks=False).st_size
        except OSError:
            self.offset = 0

    def read(self, p: JobProgress, s: WatchSettings, *, every_s: float = 0.0) -> JobProgress:
        """``p`` with the lines appended since the last read; ``every_s``: not again that soon (a chatty job's output
        wakes the pump at every chunk)."""
        now = time.monotonic()
        if now - self.last < every_s:
            return p
        self.last = now
        try:
            fd = os.open(self.path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        except OSError:
            return p
        try:
            st = os.fstat(fd)
            if st.st_mode & 0o170000 != 0o100000:
                return p
            if st.st_size < self.offset:  # truncated: start over
                self.offset, self.partial = 0, b""
            data = os.pread(fd, min(st.st_size - self.offset, 16 * 1024 * 1024), self.offset)
        finally:
            os.close(fd)
        self.offset += len(data)
        *lines, partial = (self.partial + data).split(b"\n")
        for line in lines:
            if self.overlong:  # the rest of a line already counted as too long
                self.overlong = False
                continue
            values = joblog.from_json_line(line.decode("utf-8", errors="replace"))
            if values is None:
                p = replace(p, bad_lines=p.bad_lines + 1)
                continue
            p = joblog.fold(p, values, s.metric, s.divergence_factor)
        if len(partial) > joblog.MAX_METRICS_LINE:  # an unterminated line is never held whole
            partial, p = b"", (p if self.overlong else replace(p, bad_lines=p.bad_lines + 1))
            self.overlong = True
        self.partial = partial
        return p


def _limits(s: WatchSettings) -> Optional[Callable[[], None]]:
    """Set in the child before exec: the job's memory and file-size limits."""
    if s.memory_limit_mb is None and s.file_size_limit_mb is None:
        return None
    mem = s.memory_limit_mb * 1024 * 1024 if s.memory_limit_mb else None
    fsize = s.file_size_limit_mb * 1024 * 1024 if s.file_size_limit_mb else None

    def apply() -> None:
        if mem is not None:
            resource.setrlimit(resource.RLIMIT_AS, (mem, mem))
        if fsize is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))

    return apply


def _start(
    argv: list[str], root: Path, env: dict[str, str], s: WatchSettings, on_spawn: Callable[[int], None]
) -> subprocess.Popen:
    """The job in its own session, recorded by ``on_spawn`` before it runs (``orphans.Launch``), its limits set, sent
    SIGTERM by the kernel if we die (Linux)."""
    with Launch(on_spawn, _limits(s)) as preexec:
        return subprocess.Popen(
            argv,
            cwd=root,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=preexec,
        )


def run_job(
    argv: list[str],
    root: Path,
    env: dict[str, str],
    log_path: Path,
    s: WatchSettings,
    deadline: Optional[float],
    tick: Callable[[JobProgress], Optional[str]],
    on_spawn: Callable[[int], None] = lambda pid: None,
) -> RunOutcome:
    """Run ``argv`` in ``root`` until it ends or we end it (``on_spawn`` gets its pid before it runs any code).
    ``tick``, called every 0.1 s with the progress so far (it beats the heartbeat), returns a reason to stop the job
    (a signal arrived), or None."""
    started = time.monotonic()
    log = _Log(log_path, int(s.log_max_mb * 1024 * 1024), env, s)
    mfile = _MetricsFile(root, s.metrics_file) if s.metrics_file else None
    stopped: Optional[str] = None
    proc: Optional[subprocess.Popen] = None
    try:
        try:
            with commandrun.own_group(lambda: _start(argv, root, env, s, on_spawn)) as proc:
                stopped = commandrun.pump(
                    proc, log.feed, stop=lambda: _reason(log, mfile, s, deadline, tick), every_s=_POLL_S
                )
        except OSError as exc:
            if proc is not None:
                raise
            raise LoopError(
                "watch.command",
                f"{argv[0]!r} could not be started ({exc.strerror or exc})",
                "give a program on PATH or a path to an executable after --",
            ) from None
        finally:
            if proc is not None:
                commandrun.drain(proc, log.feed)
        if mfile is not None:
            log.progress = mfile.read(log.progress, s)
    finally:
        log.close()
    assert proc is not None
    return RunOutcome(
        proc.returncode,
        log_path,
        "\n".join(log.tail),
        log.progress,
        round(time.monotonic() - started, 3),
        stopped,
        log.capped,
    )


def _reason(
    log: _Log,
    mfile: Optional[_MetricsFile],
    s: WatchSettings,
    deadline: Optional[float],
    tick: Callable[[JobProgress], Optional[str]],
) -> Optional[str]:
    """Why the job must end now ('signal' from ``tick``, 'nan', 'diverged', 'timeout'), or None."""
    if mfile is not None:
        log.progress = mfile.read(log.progress, s, every_s=_POLL_S)
    reason = tick(log.progress)
    if reason is None and log.progress.nonfinite:
        reason = "nan"
    elif reason is None and log.progress.diverged:
        reason = "diverged"
    elif reason is None and deadline is not None and time.monotonic() >= deadline:
        reason = "timeout"
    return reason
