"""Recurrence: what comes back. One failing step retried with varied arguments whose errors come back in a cycle;
one command failing the same way run after run; the same thing missing again and again; a file put back to an
earlier version; the same outcome after each restart of a server, and one step hanging on every rerun; the same
reads and searches made again, each getting back what it did before.

A build tried in different orderings fails with error A, then B, C, D, then A
again: each error alone looks new, but the step is going round in circles and no
reordering will get out. It is seen as soon as an error recurs: the step's
failures since its last success, with its arguments varied, hold an error that
came back after at least one other error, with no file changed in between. Pure: works on the detector's window.

Restart and hang loops are a signal of their own: each restart looks like a new attempt (a kill, a start, a redeploy
with a new name), and the check after it often succeeds as a command (``curl`` returns, ``lsof`` prints pids), so
neither the failure signals nor the repetition signals see it. What gives it away is the outcome after each restart:
the same port conflict, the same 409, still "0 peers", still pending. The remedy differs too: find what holds the port
or the other instance, read the log to its cause, or wait with a timeout, instead of restarting once more.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Optional

from strict_loop.model.monitoring import TurnFacts
from strict_loop.monitor import catalog, printed, readback
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
        if f.edited and not f.failed and f.step != cur.step:
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
    name = cls.name if cls is not None and cls.name in catalog.SPECIFIC_CLASSES else None
    if name is None and all(MISSING.search(e) for e in errors):
        name = "circular dependency"
    return Cycle(turns=[f.i for f in chain], errors=errors, command=cur.action[:80], failure_class=name)


def missing_again(w: list[TurnFacts], repeats: int, window: int) -> Optional[tuple[list[int], str]]:
    """The same file, module or program missing again and again while the agent varies what it does (an output that
    never appears, a path looked up from the wrong folder): a success in between does not end it, strong progress
    does. The missing thing must be the error itself, not a warning printed beside it."""
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
    """A file the newest write put back to an earlier version, for at least the ``minimum``-th time (the first revert
    is a correction; the second is going back and forth): the path, its writes and the reverting ones."""
    cur = w[-1]
    for path in cur.paths or [""]:
        writes = [f for f in w if f.kind == "write" and (not path or path in f.paths)]
        reverts = [f for k, f in enumerate(writes) if _reverts(f, writes[:k], path)]
        if reverts and reverts[-1] is cur and len(reverts) >= minimum:
            return path, writes, reverts
    return None


def _reverts(f: TurnFacts, earlier: list[TurnFacts], path: str) -> bool:
    """Whether write ``f`` puts ``path`` back: it swaps an earlier edit's text back, or restores an earlier content (not
    the latest)."""
    if f.undo is not None and any(e.edit == f.undo for e in earlier):
        return True
    state = f.fstate.get(path)
    states = [e.fstate[path] for e in earlier if path in e.fstate]
    return state is not None and len(states) >= 2 and state in states[:-1] and state != states[-1]


STRONG = frozenset({"check passes", "fewer failures", "higher score", "a new request"})
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


def _elsewhere(cur: TurnFacts, passed: TurnFacts) -> bool:
    """Whether a passing check says nothing of the failing one: a local build passing while a CI run fails."""
    return readback.ci_failure(cur.ftext) and passed.step != cur.step and passed.actor == "agent"


def same_failures(w: list[TurnFacts], step_run: bool, window: int) -> list[TurnFacts]:
    """The failures like the newest one since the last progress, oldest first (the newest included): a check's by
    its failure signature; a command's that is no check (``step_run``) by its step and error line, until it succeeds.
    A check that passed once and then failed the same way with nothing edited between is flaky: that pass was luck."""
    cur = w[-1]
    same: list[TurnFacts] = []
    for f in reversed(w[-window:]):
        if f.prog in ("fewer failures", "higher score") or (f.verdict == "pass" and not _elsewhere(cur, f)):
            if same and f.step == same[-1].step and not any(f.i < e.i < same[-1].i and e.edited for e in w):
                continue
            break
        if step_run and f.step == cur.step and f.kind == "run" and (not f.failed or f.prog == "new output"):
            if f is cur:
                return [cur]  # it printed something new: a reproduction being worked on
            break  # the command succeeded since, or printed something new
        if f.refused:
            continue
        if (
            (f.step == cur.step and f.failed and f.err == cur.err)
            if step_run
            else (f.verdict == "fail" and f.fsig == cur.fsig)
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
        meanwhile += f", though {len(others)} other command(s) succeeded between them (`{others[0][:80]}`)"
    evidence = f"`{cur.action}` failed the same way on each of its last {len(runs)} runs ({cur.etext}){meanwhile}"
    return [f.i for f in runs], evidence


@dataclass(frozen=True)
class Loop:
    turns: list[int]
    evidence: str


def _outcome_key(f: TurnFacts) -> Optional[str]:
    """What a turn showed, comparably: its failure (numbers and paths folded), else its call and its output; a job
    still running after each restart (a CI run pending after each rerun) has no outcome yet."""
    if f.failed and f.err is not None:  # a failure of a class a log names alike is that log's outcome: the port held
        specific = f.fclass in catalog.SPECIFIC_CLASSES  # when the start fails and when its log says so after a kill
        return f"logerr\0{printed.LOGGED}{f.fclass}" if specific else f"err\0{f.err}"
    if f.fclass is not None:
        return f"class\0{f.fclass}"
    if f.verdict == "fail" and f.fsig is not None and f.actor == "agent":  # a check read elsewhere (a CI run's)
        return f"check\0{f.fsig}"
    if f.failed and not f.empty:  # a failure no error line names is known by what it printed
        return f"fail\0{f.out}"
    if f.logerr is not None and f.kind == "run" and not f.empty:  # a log tail showing the same error
        return f"logerr\0{f.logerr}"
    if f.kind in ("run", "read", "search") and not f.unknown and not f.empty and not f.running:  # a job mid-run
        return f"probe\0{f.asig}\0{f.out}"  # by the call's loose digest: `sleep 5 && x` and `sleep 8 && x` are one
    return None


def _echo(f: TurnFacts, key: str) -> bool:
    """Whether a restart that succeeded printed only its confirmation (``deployment.apps/api restarted``,
    ``Container x Started``): the same after every restart by construction, it says nothing of the outcome."""
    return f.restart and not f.failed and key.startswith("probe")


def restart_loop(w: list[TurnFacts], repeats: int, window: int) -> Optional[Loop]:
    """The loop closed by the newest turn: ``repeats`` restarts after which the same outcome came back each time."""
    cur = w[-1]
    key = _outcome_key(cur)
    if key is None or cur.kind == "write" or _echo(cur, key):
        return None
    recent = since_strong(w[-window:], restarts=True)
    starts = [k for k, f in enumerate(recent) if f.restart and not _never_started(f)]
    if len(starts) < repeats:
        return None
    seen_after: list[TurnFacts] = []  # the first turn after each restart (or the restart itself) showing the outcome
    for a, b in zip(starts, starts[1:] + [len(recent)], strict=True):
        hit = next((f for f in recent[a:b] if _outcome_key(f) == key and not _echo(f, key)), None)
        if hit is not None:
            seen_after.append(hit)
    if len(seen_after) < repeats or seen_after[-1] is not cur:
        return None
    if key.startswith("logerr") and _shows_more(seen_after):
        return None  # the same error in a log tail that also shows a line no earlier one did: something moved
    if key.startswith("probe") and any(f.edited for f in recent[starts[0] :]):
        return None  # a status read after each change and restart is checking the work, not a loop
    restarted = list(dict.fromkeys(_command(recent[k]) for k in starts))
    named = "; ".join(f"`{a}`" for a in restarted[:3])
    what = cur.etext if cur.failed and cur.etext else cur.brief.split(" -> ", 1)[-1][:120]
    return Loop(
        turns=sorted({recent[k].i for k in starts} | {f.i for f in seen_after}),
        evidence=f"{len(starts)} restarts ({named}) and after {len(seen_after)} of them the same outcome came back: "
        f"{what}",
    )


def hang_loop(w: list[TurnFacts], repeats: int, window: int) -> Optional[Loop]:
    """One step that hung and was cut off on each of its last ``repeats`` runs, with no progress between."""
    cur = w[-1]
    if not cur.hang:
        return None
    recent = since_strong(w[-window:])
    # what a cut-off run printed before it was cut is partial, and a file read is a look, not an outcome: only strong
    # progress, a status or run of another kind that moved, or a hang that got further ends a hang loop
    moved = [k for k, f in enumerate(recent) if (f.prog and not f.hang and f.kind != "read") or _further(f, recent[:k])]
    recent = recent[moved[-1] :] if moved else recent
    hung = [f for f in recent if f.hang and f.step == cur.step]
    if len(hung) < repeats:
        return None
    return Loop(
        turns=[f.i for f in hung],
        evidence=f"`{cur.action[:80]}` hung and was cut off {len(hung)} times (it timed out or was interrupted each "
        "time it ran)",
    )


def watched_failure(w: list[TurnFacts], repeats: int, window: int) -> Optional[Loop]:
    """The same workloads a status read shows failing (pods in a crash loop or that cannot pull their image) read again
    and again with nothing edited or restarted between, and nothing else moving: it cannot clear by waiting. Not a
    check rerun with other arguments (exploring), nor a CI run's log read again (each read greps another part)."""
    cur = w[-1]
    if not (cur.actor == "agent" and cur.kind == "run" and cur.verdict == "fail"):
        return None
    if not readback.shown_failing(cur.ftext):
        return None
    recent = since_progress(w[-window:])[0]
    seen = [f for f in recent if f.actor == "agent" and f.verdict == "fail" and f.fsig == cur.fsig]
    if len(seen) < repeats or any(f.edited or f.restart for f in w if seen[0].i < f.i <= cur.i):
        return None
    return Loop(
        turns=[f.i for f in seen],
        evidence=f"`{cur.action[:80]}` showed the same failure {len(seen)} times ({cur.ftext}) with nothing edited or "
        "restarted between: reading it again will not change it",
    )


def _shows_more(tails: list[TurnFacts]) -> bool:
    """Whether the newest log tail shows a line that none before it showed: noise folded and the restart's own report
    left out (``printed.log_lines``). A debug line added, or a step the restarted thing got further to, is news; a tail
    that only repeats lines seen after earlier restarts is not, though a middle one moved (retries added, then the
    same error after each restart)."""
    seen = set().union(*(f.tail for f in tails[:-1]))
    return not seen.issuperset(tails[-1].tail)


def _never_started(f: TurnFacts) -> bool:
    """A start whose own program was not found started nothing: the same call failing again is a repeated failure
    (its signals say so), not a restart that changed nothing."""
    return f.failed and (f.missing or "").startswith("program ")


def _command(f: TurnFacts) -> str:
    """A restart as the evidence names it: its command, without the tool's name and without the ``NAME=value``
    settings before it (where a token often sits), at most 100 characters."""
    action = f.action.split(" ", 1)[1] if " " in f.action else f.action
    return _SETTINGS.sub("", action)[:100]


_SETTINGS = re.compile(r"^(?:\s*(?:export\s+)?\w+=(?:'[^']*'|\"[^\"]*\"|\S*)\s+)+")


def _further(f: TurnFacts, before: list[TurnFacts]) -> bool:
    """Whether a hang got further than the step's earlier hangs: it printed more lines than any of them, and a line
    none of them printed comes after one they did (a suite cut off at a later test after a fix is progress). A run that
    printed more than the one cut off before it, but no more than an earlier one, got no further; nor did one whose
    new lines all come before what the earlier hangs printed (the commands chained ahead of the step: ``make clean &&
    timeout 60 make test``)."""
    prev = [e for e in before if e.hang and e.step == f.step]
    if not (f.hang and prev and len(f.lines) > max(len(e.lines) for e in prev)):
        return False
    seen: set[str] = set().union(*(e.lines for e in prev))
    shared = next((k for k, line in enumerate(f.lines) if line in seen), -1)
    return any(line not in seen for line in f.lines[shared + 1 :])


def rereads(w: list[TurnFacts], repeats: int, window: int) -> Optional[Loop]:
    """Reads and searches only in the last ``window`` calls, ``repeats`` of them made before with the same result: the
    agent going over what it has already seen (the same files, the same searches) instead of running or changing
    anything."""
    last = w[-window:]
    if len(last) < window or any(f.actor != "agent" or f.kind not in ("read", "search") for f in last):
        return None
    start = len(w) - len(last)
    again = [f for k, f in enumerate(last, start) if any(e.sig == f.sig and e.out == f.out for e in w[:k])]
    if len(again) < repeats or w[-1] not in again:
        return None
    return _lookups(
        again,
        f"{len(again)} of the last {len(last)} calls read or searched again what an earlier call had, each getting "
        "back the same, and nothing was run or changed",
    )


def found_nothing(w: list[TurnFacts], repeats: int, window: int) -> Optional[Loop]:
    """``repeats`` of the agent's last ``window`` calls looked and found nothing (no match, no such file), no edit or
    passing run among them: looking in the wrong place (the wrong folder, a path the person gave left unexpanded), each
    miss a new guess. A person saying where it is does not end it; finding it does."""
    if not w[-1].found_nothing:
        return None
    calls = [f for f in w if f.actor == "agent"][-window:]
    acted = [k for k, f in enumerate(calls) if f.edited or (f.kind == "run" and not f.failed)]
    calls = calls[acted[-1] + 1 :] if acted else calls
    dry = [f for f in calls if f.found_nothing]
    if len(dry) < repeats:
        return None
    return _lookups(
        dry,
        f"{len(dry)} of the agent's last {len(calls)} calls looked for something and found nothing (no match, no such "
        "file), with no edit and no passing run among them",
    )


def _lookups(calls: list[TurnFacts], what: str) -> Loop:
    """A loop of lookups, its evidence naming each distinct one (at most 240 characters of them)."""
    named = "; ".join(dict.fromkeys(f.action for f in calls))
    return Loop(turns=[f.i for f in calls], evidence=f"{what}: {named[:240]}")
