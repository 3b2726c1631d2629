"""The window's baselines: what a repetition is counted from (the last turn that made progress), and the loop a
signal reports. Shared by the failure readings and the loop readings."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Optional

from strict_loop.model.monitoring import TurnFacts
from strict_loop.monitor.progress import FELL

STRONG = FELL | {"check passes", "a new request"}
"""Progress that ends a restart loop or a thing missing again: a check passing, a person's new request. New output
does not (a restarted process has a new pid, which a status check prints)."""


def since_strong(w: list[TurnFacts], restarts: bool = False) -> list[TurnFacts]:
    """The turns from the last one that made strong progress on (all of them when none did). With ``restarts``, a
    restart's own passing build (`up -d --build`, a deploy that succeeded) is no progress: it passes after every
    restart by construction, and the outcome shows only in what the restarted thing does next."""
    for k in range(len(w) - 1, 0, -1):
        if w[k].prog in STRONG and not (restarts and w[k].restart and w[k].prog == "check passes"):
            return w[k:]
    return w


def since_progress(turns: list[TurnFacts]) -> tuple[list[TurnFacts], Optional[TurnFacts]]:
    """The turns from the last one that made progress on (it is the new baseline), and that turn (None if none did)."""
    for k in range(len(turns) - 1, 0, -1):
        if turns[k].prog is not None:
            return turns[k:], turns[k]
    return turns, None


def after_last(turns: list[TurnFacts], ends: Callable[[TurnFacts], bool]) -> list[TurnFacts]:
    """The turns after the last one that ``ends`` a count (all of them when none does): a checkout, a person's new
    request, an edit. Unlike ``since_strong`` and ``since_progress``, whose turn of progress is the new baseline, the
    turn that ended the count is not part of what comes after."""
    for k in range(len(turns) - 1, -1, -1):
        if ends(turns[k]):
            return turns[k + 1 :]
    return turns


def since_cause(w: list[TurnFacts]) -> list[TurnFacts]:
    """The turns after the last log that named another cause before the newest log's cause first showed (all of them
    when none did): a status failing the same way (pods crashing) before and after a log named a new cause is two
    failures, not one; logs that go back to a cause seen before are no news.
    Read from the logs of calls that did not fail themselves (a failing run's own error line is its failure)."""
    logs = [(k, _PATHS.sub("<p>", f.logerr)) for k, f in enumerate(w) if f.logerr and _logged(f)]
    first = next((k for k, cause in logs if cause == logs[-1][1]), 0)  # where the newest log's cause first showed
    other = [k for k, cause in logs if k < first]
    return w[other[-1] + 1 :] if other else w


def _logged(f: TurnFacts) -> bool:
    return not f.failed and f.actor == "agent"


_PATHS = re.compile(r"(?:/[\w.@-]+)+")
"""Paths in a logged error: the same error logged in a container and on the host names other folders."""


@dataclass(frozen=True)
class Loop:
    turns: list[int]
    evidence: str
