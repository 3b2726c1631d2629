"""The supervisor's heartbeat: a status line every N seconds on stderr and in latest-status.txt, a bar on a terminal.

Why: an unattended run is watched from afar (``tail latest-status.txt``) or from its terminal; both
need to see that it lives, how fast rounds go and when it will end. The bar is ``rich``'s, imported
only when stderr is a terminal (no bar, and no import cost, in logs, CI and tests).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import IO, Any, Optional

from strict_loop.base.timefmt import rate_and_eta
from strict_loop.loop import reports
from strict_loop.storage.store import TaskStore


def clock(seconds: float) -> str:
    s = int(max(0, seconds))
    return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}"


def status_line(
    task_id: str, rounds: int, max_rounds: int, rounds_at_start: int, invocation: int, elapsed_s: float
) -> str:
    """One line: round, elapsed, rounds/hour and the ETA to the task's max rounds (at this run's pace)."""
    rate, eta = rate_and_eta(rounds, rounds_at_start, elapsed_s, max_rounds)
    return (
        f"[supervisor] {task_id} | round {rounds}/{max_rounds} | invocation {invocation} | elapsed "
        f"{clock(elapsed_s)} | {rate * 3600:.1f} rounds/h | ETA {clock(eta) if eta is not None else 'unknown'}"
    )


class Heartbeat:
    """Beats at most every ``interval_s`` (``beat(force=True)`` at once); ``close`` ends the bar."""

    def __init__(
        self, store: TaskStore, view: Callable[[], Any], interval_s: float, stream: Optional[IO[str]] = None
    ) -> None:
        self.store, self.view, self.interval_s = store, view, interval_s
        self.stream = stream if stream is not None else sys.stderr
        self.started = time.monotonic()
        self.last = float("-inf")
        state = store.load()
        self.rounds_at_start = state.counters.iteration
        self.max_rounds = state.contract.limits.max_iterations
        self.line = ""
        self.note: Optional[Callable[[], str]] = None  # said after the line (a usage limit's wait: ``limits``)
        self.bar_label, self.bar_total, self.bar_start = self.bar_spec()
        self._bar: Any = None
        self._bar_task: Any = None
        if _is_tty(self.stream):
            self._start_bar()

    def bar_spec(self) -> tuple[str, Optional[int], int]:
        """The bar's label, total and start; ``strict-loop watch`` counts steps instead of rounds."""
        return f"{self.store.task_id} rounds", self.max_rounds, self.rounds_at_start

    def compose(self, state: Any, elapsed_s: float, invocation: int) -> tuple[str, Optional[int]]:
        """The status line and the bar's position."""
        line = status_line(
            self.store.task_id, state.counters.iteration, self.max_rounds, self.rounds_at_start, invocation, elapsed_s
        )
        return line, state.counters.iteration

    def _start_bar(self) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

        self._bar = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=Console(file=self.stream),
            transient=False,
        )
        self._bar.start()
        self._bar_task = self._bar.add_task(self.bar_label, total=self.bar_total, completed=self.bar_start)

    def due(self) -> bool:
        return time.monotonic() - self.last >= self.interval_s

    def beat(self, invocation: int, *, force: bool = False) -> Optional[str]:
        """Write the status line if due (or forced); returns it, or None when not due."""
        if not force and not self.due():
            return None
        self.last = time.monotonic()
        with self.store.locked():
            state = self.store.load()
            self.line, position = self.compose(state, self.last - self.started, invocation)
            self.line += f" | {self.note()}" if self.note is not None else ""
            reports.write_status(self.store, state, self.line, record=False, sup=self.view(), sync=False)
        if self._bar is not None:
            if position is not None:
                self._bar.update(self._bar_task, completed=position)
            self._bar.console.print(
                self.line, markup=False, highlight=False, soft_wrap=True
            )  # '[supervisor]' is text, not a style
        else:
            print(self.line, file=self.stream, flush=True)
        return self.line

    def close(self) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None


def _is_tty(stream: IO[str]) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False
