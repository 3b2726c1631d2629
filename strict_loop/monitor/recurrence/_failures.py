"""Failures that come back: one failing step retried with varied arguments whose errors come back in a cycle; one
command failing the same way run after run; a check failing the same way after each edit; the same thing missing
again and again; a file put back to an earlier version. Pure: works on the detector's window."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Optional

from strict_loop.model.monitoring import TurnFacts
from strict_loop.monitor import catalog, readback
from strict_loop.monitor import fingerprint as fp
from strict_loop.monitor.progress import FELL
from strict_loop.monitor.recurrence._window import since_cause, since_progress, since_strong

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
            f"{fp.code(self.command)} failed {len(self.turns)} times in a row with its arguments varied, and its "
            f"errors came back in a cycle ({kind}): {' -> '.join(self.errors)}"
        )


def error_cycle(w: list[TurnFacts], window: int) -> Optional[Cycle]:
    """The cycle closed by the newest turn, if its error came back after other errors of the same step."""
    cur = w[-1]
    if not cur.failed or cur.err is None or cur.kind not in ("run", "write", "other"):
        return None
    chain: list[TurnFacts] = []
    for f in reversed(w[-window:]):
        if (f.edited or f.checkout) and not f.failed and f.step != cur.step:
            break  # the code changed (an edit, another revision checked out: a bisect's step): another attempt
        if f.step != cur.step:
            continue
        if not f.failed:
            break  # the step succeeded: what came before is not part of this cycle
        chain.append(f)
        if f is not cur and f.prog in FELL:
            break  # its failures fell (edits chained before the run: sed, then pytest): what came before was improved
            # on
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
    name = cls.name if cls is not None and cls.name in catalog.SPECIFIC_CLASSES else None
    if name is None and all(MISSING.search(e) for e in errors):
        name = "circular dependency"
    return Cycle(turns=[f.i for f in chain], errors=errors, command=cur.action[:80], failure_class=name)


def missing_again(w: list[TurnFacts], repeats: int, window: int) -> Optional[tuple[list[int], str]]:
    """The same file, module, program or package missing again and again while the agent varies what it does (an
    output that never appears, a path looked up from the wrong folder): a success in between does not end it, strong
    progress does. The missing thing must be the error itself, not a warning printed beside it."""
    cur = w[-1]
    name = _named(cur.missing)
    if name is None or cur.actor != "agent":
        return None
    base = name.split(" ", 1)[-1].lower()
    hits = [f for f in since_strong(w[-window:]) if f.failed and _named(f.missing) == name and _in_error(base, f)]
    if len(hits) < repeats or len({f.asig for f in hits}) < 2:
        return None
    shown = _unglobbed(cur.missing or "")
    evidence = f"{shown} was missing {len(hits)} times through {len({f.asig for f in hits})} different action(s)"
    return [f.i for f in hits], evidence


def _in_error(name: str, f: TurnFacts) -> bool:
    """Whether ``name`` is in the failure's error line as printed (its fingerprint folds the digits of
    ``Adafruit_BME280.h``)."""
    return name in (f.etext or "").lower() or name in (f.err or "").lower()


def _unglobbed(missing: str) -> str:
    """``file docs/a/*.png`` (a glob that matched nothing) as ``file docs/a``: the folder was not where looked."""
    what, _, name = missing.partition(" ")
    return f"{what} {'/'.join(p for p in name.split('/') if not any(c in p for c in '*?[')).rstrip('/')}"


def _named(missing: Optional[str]) -> Optional[str]:
    """What was missing, by its kind and last path part: ``file docs/a/x.png`` and ``file x.png`` are one file, and
    ``file docs/a/*.png`` is ``file a``."""
    what, _, name = _unglobbed(missing).partition(" ") if missing else ("", "", "")
    return f"{what} {name.rsplit('/', 1)[-1]}" if name.strip("/") else None


def reverted(w: list[TurnFacts], minimum: int) -> Optional[tuple[str, list[TurnFacts], list[TurnFacts]]]:
    """A file the newest edit (by a file tool or a command's ``sed -i``) put back to an earlier version, for at least
    the ``minimum``-th time (the first revert is a correction; the second is going back and forth): the path, its
    edits and the reverting ones."""
    cur = w[-1]
    for path in cur.paths or cur.writes or [""]:
        writes = [f for f in w if f.edited and (not path or path in f.paths or path in f.writes)]
        reverts = [f for k, f in enumerate(writes) if _reverts(f, writes[:k], path)]
        if reverts and reverts[-1] is cur and len(reverts) >= minimum and not _compared(w, reverts, minimum):
            return path, writes, reverts
    return None


def _compared(w: list[TurnFacts], reverts: list[TurnFacts], minimum: int) -> bool:
    """Whether the reverts are one comparison: an edit that did not make the check pass, taken out once to compare (a
    run without it printed what it never had, neither a failure read nor a pass), then applied again. Going back and
    forth once more is no comparison, nor is taking out an edit the check passed with."""
    last = reverts[-2:]
    runs = [f for f in w if f.kind == "run" and f.actor == "agent" and f.i < last[1].i]
    before = [f for f in runs if f.i < last[0].i][-1:]  # the check with the edit in, before it was taken out
    return (
        len(reverts) == minimum == 2
        and all(f.failed for f in before)  # it failed with the edit too (a revert from a pass is no comparison)
        and any(last[0].i < f.i and f.prog == "new output" for f in runs)
    )


def _reverts(f: TurnFacts, earlier: list[TurnFacts], path: str) -> bool:
    """Whether write ``f`` puts ``path`` back: it swaps an earlier edit's text back, or restores an earlier content (not
    the latest)."""
    undone = {f.undo, *(undo for _, undo in f.swaps)} - {None}
    if undone and any(e.edit in undone or any(d in undone for d, _ in e.swaps) for e in earlier):
        return True
    state = f.fstate.get(path)
    states = [e.fstate[path] for e in earlier if path in e.fstate]
    return state is not None and len(states) >= 2 and state in states[:-1] and state != states[-1]


def _judges(cur: TurnFacts, passed: TurnFacts) -> bool:
    """Whether a pass ends the count of ``cur``'s failures: the same check passing, or the person approving. Another
    command passing (a local ``cargo build`` between failing ``docker build`` runs) says nothing of this one."""
    return passed.actor == "person" or passed.step == cur.step


def guessed(f: TurnFacts, cur: TurnFacts) -> bool:
    """Whether ``f`` failed as ``cur`` did but for the word each was given (``No such container: api``, then ``...:
    platform-api-1``): one step guessing at a name, whichever it tries."""
    return f.failed and f.step == cur.step and cur.etpl is not None and fp.GIVEN in cur.etpl and f.etpl == cur.etpl


def told_alike(f: TurnFacts, cur: TurnFacts) -> bool:
    """Whether ``f`` failed with ``cur``'s cause in other words around it: one error line ends the other, as tools wrap
    a server's answer (``denied: permission_denied: The token ...`` in crane's ``Error: POST https://...: DENIED:
    permission_denied: The token ...``)."""
    if not (f.failed and f.err and cur.err):
        return False
    short, long = sorted((f.err.lower(), cur.err.lower()), key=len)
    cause = short.split(": ", 1)[-1]  # past the class an error line is filed under
    return len(cause) >= _CAUSE_CHARS and long.endswith(cause)


_CAUSE_CHARS = 30
"""How long a cause must be to be told alike inside another line: a short one (``not found``) ends many lines."""


def same_failures(w: list[TurnFacts], step_run: bool, window: int) -> list[TurnFacts]:
    """The failures like the newest one since the last progress, oldest first (the newest included): a check's by
    its failure signature; a command's that is no check (``step_run``) by its step and error line, until it succeeds.
    A check that passed once and then failed the same way with nothing edited between is flaky: that pass was luck.
    Workloads a status read shows failing (pods crashing) fail the same way only while their logs name one cause."""
    cur = w[-1]
    same: list[TurnFacts] = []
    status = not step_run and readback.shown_failing(cur.ftext)  # workloads failing: their logs name the cause
    passed: set[str] = set()  # steps that passed since: their failures before that were dealt with
    for f in reversed(since_cause(w[-window:]) if status else w[-window:]):
        if f.prog in FELL or (f.verdict == "pass" and _judges(cur, f)):
            if same and f.step == same[-1].step and not any(f.i < e.i < same[-1].i and e.edited for e in w):
                continue
            break
        if f.verdict == "pass":
            passed.add(f.step)
            continue
        if step_run and f.step == cur.step and f.kind == "run" and (not f.failed or f.prog == "new output"):
            if f is cur:
                return [cur]  # it printed something new: a reproduction being worked on
            break  # the command succeeded since, or printed something new
        if f.refused:
            continue
        if (
            (f.step == cur.step and f.failed and f.err == cur.err)
            if step_run
            else (f.verdict == "fail" and f.fsig == cur.fsig and (f is cur or f.step not in passed))
        ):
            same.append(f)
    same.reverse()
    return same


def failing_runs(
    w: list[TurnFacts], same_error: Callable[[TurnFacts], bool], repeats: int, window: int
) -> Optional[tuple[list[int], str]]:
    """One command failing the same way on each of its last ``repeats`` runs since the last progress: its turns and
    the evidence (what changed between the runs, and which other commands succeeded meanwhile)."""
    cur = w[-1]
    runs = since_progress([f for f in w[-window:] if f.sig == cur.sig])[0][-repeats:]
    if not (cur.kind == "run" and len(runs) == repeats and all(same_error(f) for f in runs)):
        return None
    edits = [f for f in w if runs[0].i < f.i < cur.i and f.edited and not f.failed]
    meanwhile = (
        f" while {len(edits)} edit(s) between them changed files" if edits else " with no file changed between them"
    )
    others = list(dict.fromkeys(f.action for f in w if runs[0].i < f.i < cur.i and f.kind == "run" and not f.failed))
    if others:  # e.g. installs that succeeded and changed nothing for this command: another environment?
        meanwhile += f", though {len(others)} other command(s) succeeded between them ({fp.code(others[0][:80])})"
    evidence = (
        f"{fp.code(cur.action)} failed the same way on each of its last {len(runs)} runs ({cur.etext}){meanwhile}"
    )
    return [f.i for f in runs], evidence
