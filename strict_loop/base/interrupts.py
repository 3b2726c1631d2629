"""SIGINT, SIGTERM and SIGHUP as a flag that a long-running loop polls (the supervisor, `strict-loop watch`).

Why: such a loop runs a child in its own process group and must end that group, record the
interruption and exit 130/143/129, never die between two writes. The handler only sets the flag and
wakes a sleeping loop; the loop does the rest at its next check.
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable
from typing import Any, Optional

SIGNAL_EXIT = {signal.SIGINT: 130, signal.SIGTERM: 143, signal.SIGHUP: 129}
"""SIGHUP too: a closed terminal or a dropped ssh session must end the child's group and be recorded like the others
(unless the person started us under ``nohup``: an ignored signal stays ignored)."""


class StopSignals:
    """``install`` takes over SIGINT/SIGTERM/SIGHUP (main thread only: elsewhere the caller's own handling stays in
    force); ``restore`` gives them back; ``signum`` is the first one that arrived, if any."""

    def __init__(self) -> None:
        self.signum: Optional[int] = None
        self.wake = threading.Event()
        self._old: dict[int, Any] = {}

    def install(self) -> None:
        if threading.current_thread() is threading.main_thread():
            self._old = {
                sig: signal.signal(sig, self._on_signal)
                for sig in SIGNAL_EXIT
                if signal.getsignal(sig) is not signal.SIG_IGN
            }

    def restore(self) -> None:
        for sig, handler in self._old.items():
            signal.signal(sig, handler)
        self._old = {}

    def _on_signal(self, signum: int, _frame: Any) -> None:
        self.signum = self.signum or signum
        self.wake.set()

    def exit_code(self) -> int:
        sig = signal.Signals(self.signum or signal.SIGINT)
        return SIGNAL_EXIT.get(sig, 128 + int(sig))

    def name(self) -> str:
        return signal.Signals(self.signum or signal.SIGINT).name

    def sleep(self, seconds: float, tick: Callable[[], None] = lambda: None) -> None:
        """Wait ``seconds``, calling ``tick`` about every 0.5 s, and wake at once on a signal."""
        end = time.monotonic() + seconds
        while self.signum is None and (left := end - time.monotonic()) > 0:
            self.wake.wait(min(left, 0.5))
            tick()
