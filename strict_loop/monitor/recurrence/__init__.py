"""Recurrence: what comes back, in the detector's window. Pure.

- ``_failures``: a failure that comes back. One failing step retried with varied arguments whose errors come back in
  a cycle; one command failing the same way run after run; a check failing the same way after each edit; the same
  thing missing again and again; a file put back to an earlier version.
- ``_loops``: an action that loops with an outcome that does not change. The same outcome after each restart of a
  server, one step hanging on every rerun, failing workloads read again and again; the same reads and searches made
  again; lookups that keep finding nothing; a measurement that does not move whatever is changed before it.
- ``_window``: what a repetition is counted from (the last progress) and the loop a signal reports.

A build tried in different orderings fails with error A, then B, C, D, then A
again: each error alone looks new, but the step is going round in circles and no
reordering will get out. It is seen as soon as an error recurs: the step's
failures since its last success, with its arguments varied, hold an error that
came back after at least one other error, with no file changed in between.

Restart and hang loops are a signal of their own: each restart looks like a new attempt (a kill, a start, a redeploy
with a new name), and the check after it often succeeds as a command (``curl`` returns, ``lsof`` prints pids), so
neither the failure signals nor the repetition signals see it. What gives it away is the outcome after each restart:
the same port conflict, the same 409, still "0 peers", still pending. The remedy differs too: find what holds the port
or the other instance, read the log to its cause, or wait with a timeout, instead of restarting once more.

A measurement that does not move is one too: each change before it (an index, a buffer size, a heap flag) looks like
progress, and the run after it succeeds, but it prints the same report with numbers that only jitter (a query at
1.7 s after every index). The remedy is to find where the time or memory goes before changing anything else.
"""

from strict_loop.monitor.progress import FELL
from strict_loop.monitor.recurrence._failures import (
    MISSING,
    Cycle,
    error_cycle,
    failing_runs,
    guessed,
    missing_again,
    reverted,
    same_failures,
    told_alike,
)
from strict_loop.monitor.recurrence._loops import (
    found_nothing,
    hang_loop,
    rereads,
    restart_loop,
    unmoved,
    watched_failure,
)
from strict_loop.monitor.recurrence._window import STRONG, Loop, after_last, since_progress, since_strong

__all__ = [
    "FELL",
    "MISSING",
    "STRONG",
    "Cycle",
    "Loop",
    "after_last",
    "error_cycle",
    "failing_runs",
    "found_nothing",
    "guessed",
    "hang_loop",
    "missing_again",
    "rereads",
    "restart_loop",
    "reverted",
    "same_failures",
    "since_progress",
    "since_strong",
    "told_alike",
    "unmoved",
    "watched_failure",
]
