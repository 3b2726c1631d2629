"""Recurrence: one failing step retried with varied arguments whose errors come back in a cycle.

A build tried in different orderings fails with error A, then B, C, D, then A
again: each error alone looks new, but the step is going round in circles and no
reordering will get out. It is seen as soon as an error recurs: the step's
failures since its last success, with its arguments varied, hold an error that
came back after at least one other error, with no file changed in between. Pure: works on the detector's window.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Optional

from strict_loop.model.monitoring import TurnFacts
from strict_loop.monitor import fingerprint as fp

MISSING = re.compile(
    r"no module named|not found|no such file|missing|cannot find|can't find|could not find|unable to "
    r"find|requir(?:es?|ed)\b|need(?:s|ed)?\b|not installed|undefined reference|unresolved|cannot import|could not "
    r"resolve|not available",
    re.I,
)
"""Errors that say something the step depends on is absent: a cycle of them is a circular dependency."""


@dataclass(frozen=True)
class Cycle:
    turns: list[int]
    errors: list[str]
    """The errors in order, as a person reads them, the recurring one first and last."""
    command: str
    failure_class: Optional[str]

    @property
    def evidence(self) -> str:
        kind = f"likely a {self.failure_class}" if self.failure_class else "a cycle of errors"
        return (
            f"`{self.command}` failed {len(self.turns)} times in a row with its arguments varied, and its errors "
            f"came back in a cycle ({kind}): {' -> '.join(self.errors)}"
        )


def error_cycle(w: list[TurnFacts], window: int) -> Optional[Cycle]:
    """The cycle closed by the newest turn, if its error came back after other errors of the same step."""
    cur = w[-1]
    if not cur.failed or cur.err is None or cur.kind not in ("run", "write", "other"):
        return None
    chain: list[TurnFacts] = []
    for f in reversed(w[-window:]):
        if f.kind == "write" and not f.failed and f.step != cur.step:
            break  # the code changed: what failed before is not the same attempt
        if f.step != cur.step:
            continue
        if not f.failed:
            break  # the step succeeded: what came before is not part of this cycle
        chain.append(f)
    chain.reverse()
    previous = [k for k, f in enumerate(chain[:-1]) if f.err == cur.err]
    if not previous:
        return None
    cycle = chain[previous[-1] :]
    others = {f.err for f in cycle[1:-1]}
    if not others or None in others or len({f.sig for f in cycle}) < 2:
        return None
    errors = [f.etext or "failed" for f in cycle]
    cls = fp.classify(errors)
    name = cls.name if cls is not None and cls.name in fp.SPECIFIC_CLASSES else None
    if name is None and all(MISSING.search(e) for e in errors):
        name = "circular dependency"
    return Cycle(turns=[f.i for f in chain], errors=errors, command=cur.action[:80], failure_class=name)
