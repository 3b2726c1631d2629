"""Polls: the agent looking again at something it waits for (a background job read back, ``sleep 600; tail log``), how
many looks in a row brought nothing new, and how long the agent itself waited between them.

Why apart: a wait is judged by how long, never as a repeated attempt; what counts as one more look (the same call with
the same answer, or another look after a wait at what showed before) and how long the agent's own sleeps add up to
change together, and with nothing else. Pure: text, and the detector's window.
"""

from __future__ import annotations

import re
from typing import NamedTuple, Optional

from strict_loop.model.monitoring import TurnFacts
from strict_loop.model.settings import SpiralThresholds
from strict_loop.model.turns import Turn
from strict_loop.monitor import fingerprint as fp
from strict_loop.monitor import outcomes, readback
from strict_loop.monitor.progress import FELL

WAIT = re.compile(
    r"^\s*(?:(?:cd|source|\.|export)\s+[^;&|]+?\s*(?:&&|;)\s*){0,3}"
    r"(?:sleep\s+(\d+(?:\.\d+)?)([smh]?)\s*(?:&&|;)|watch\s+-n\s*(\d+)|"
    r"timeout\s+\d+\S*\s+\S+.*\bwait\b)"
)
"""A command that waits before it looks (``sleep 60 && tail build.log``, after a ``cd`` to where it looks or a ``source
.env`` of what it looks with): the agent is polling something."""
_SLEEP = re.compile(r"^\s*sleep\s+(\d+(?:\.\d+)?)([smh]?)\s*$")
"""A call that only waits (``sleep 120`` between two looks at a background job)."""
_UNIT = {"": 1, "s": 1, "m": 60, "h": 3600}


def waits(command: object) -> bool:
    return isinstance(command, str) and bool(WAIT.match(command))


def slept(command: object) -> float:
    """The seconds a call waits by its own ``sleep`` before it looks, or by being only a sleep (0 for any other)."""
    if not isinstance(command, str):
        return 0.0
    m = WAIT.match(command) or _SLEEP.match(command)
    if m is None or m.group(1) is None:
        return 0.0
    return min(float(m.group(1)) * _UNIT[m.group(2)], 86400.0)


class Polls(NamedTuple):
    looks: int  # looks in a row with nothing new, this one included (0: no look)
    since: Optional[float]  # when they began (epoch seconds, from Turn.ts)
    waited: float  # seconds the agent slept over them (its own sleeps, in the looks and between)
    prior: Optional[int] = None  # the turn of the look before this one in the run


def count(turn: Turn, f: TurnFacts, window: list[TurnFacts], fresh: int) -> Polls:
    """The looks in a row this turn makes: the same call with the same answer (a running job's status, ``sleep 60 &&
    x`` then ``sleep 90 && x``), or, after a wait, another look that shows nothing the window has not seen (``sleep 900;
    dig +short A host @ns1``, then ``sleep 1200; dig +short SOA ... ; dig +short A ...``). An edit, a restart, the
    person's word or progress between two looks of the second kind ends their run. ``fresh``: how many of its lines
    are new."""
    command = turn.args.get("command")
    own = slept(command)
    if f.failed or f.unknown or f.restart or f.kind in ("write", "message", "person"):
        return Polls(0, None, own)  # a restart, or a wait sent to the background (its start says only that), looks at
        # nothing
    if f.verdict == "fail" and not readback.ci_failure(f.ftext):  # pods in a crash loop: no poll; a CI run's still is
        return Polls(0, None, own)
    f.running = outcomes.running(turn.output)
    if not (f.running or waits(command)):
        return Polls(0, None, own)
    action = fp.loose(f.action) if own else None  # a wait's look by its command (its description says how long)
    prev = next(
        (e for e in reversed(window) if e.asig == f.asig or (action and e.polls and fp.loose(e.action) == action)), None
    )
    if prev is None or not prev.polls or prev.out != f.out:  # else the same look with the same answer
        prev = next((e for e in reversed(window) if e.polls), None) if own and not fresh else None
        if prev is None or any(_ends(e) for e in window if e.i > prev.i):
            return Polls(1, f.ts, own)
    between = sum(e.waited for e in window if e.i > prev.i and not e.polls)  # bare sleeps between two looks
    return Polls(prev.polls + 1, prev.since, prev.waited + between + own, prev.i)


def _ends(f: TurnFacts) -> bool:
    """Whether a turn between two looks ends their run: something was changed or restarted, the person asked for
    something or said how it stands, or a check passed."""
    person = f.actor == "person" and bool(f.asks or f.verdict)  # "is it stuck??" asks nothing new: the looks go on
    return f.edited or f.restart or person or f.prog == "check passes" or f.prog in FELL


class Stall(NamedTuple):
    turns: list[int]
    escalate: bool
    evidence: str


def stalled(w: list[TurnFacts], t: SpiralThresholds) -> Optional[Stall]:
    """Looks in a row with nothing new: ``poll_whisper`` of them, or three after ``poll_wait_s`` of the agent's own
    waits (``sleep 900`` between looks at a DNS record that never changes), or three while the person asked twice how
    it stands ("is it stuck??"). A whisper; the ladder climbs only after a
    long stretch, in looks and (when turns carry times) in wall time, so a long build is never paused for being long."""
    cur = w[-1]
    if cur.polls < 3:
        return None
    by_i = {f.i: f for f in w}
    looks = [cur]
    while looks[-1].prior is not None and looks[-1].prior in by_i:  # the run of looks, back to its first
        looks.append(by_i[looks[-1].prior])
    looks.reverse()
    asked = [f for f in w if looks[0].i < f.i < cur.i and f.actor == "person" and not (f.asks or f.verdict)]
    if cur.polls < t.poll_whisper and not (cur.waited >= t.poll_wait_s or len(asked) >= 2):
        return None
    if cur.polls < t.poll_whisper and _moved_meanwhile(w, looks):
        return None
    span = cur.ts - cur.since if cur.ts is not None and cur.since is not None else None
    long = cur.polls >= t.poll_pause and (span is None or span >= t.poll_pause_s)
    if len({f.asig for f in looks}) == 1:
        wall = f" over {span / 60:.0f} min" if span is not None else ""
        said = f"a running job was polled {cur.polls} times in a row{wall} with nothing new coming back"
    else:
        said = f"the agent waited {cur.waited / 60:.0f} min over {cur.polls} looks in a row and nothing new came back"
    if len(asked) >= 2:  # "is it stuck??", "how long": the person sees the stall too
        said += f", while the person asked {len(asked)} times how it stands"
    return Stall([f.i for f in looks], long, f"{said}: {cur.brief}")


def _moved_meanwhile(w: list[TurnFacts], looks: list[TurnFacts]) -> bool:
    """Whether another wait between the looks brought news (``sleep 600 && curl`` of the job's stage counters, moving,
    between two reads of its unchanged state): the job moves, only the look at its state does not."""
    seen = {f.i for f in looks}
    return any(f.waited and (f.novel or f.prog) for f in w if looks[0].i < f.i < looks[-1].i and f.i not in seen)
