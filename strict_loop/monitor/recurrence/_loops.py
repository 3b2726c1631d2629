"""Actions that loop with an outcome that does not change: a restart after which the same outcome comes back, a step
that hangs on every rerun, failing workloads read again and again, the same reads and searches made again, lookups
that keep finding nothing, a measurement that does not move whatever is changed before it. Pure: works on the
detector's window."""

from __future__ import annotations

import re
from typing import Optional

from strict_loop.model.monitoring import TurnFacts
from strict_loop.monitor import catalog, readback
from strict_loop.monitor import fingerprint as fp
from strict_loop.monitor.calls import jobs
from strict_loop.monitor.recurrence._window import STRONG, Loop, after_last, since_progress, since_strong


def _outcome_key(f: TurnFacts) -> Optional[str]:
    """What a turn showed, comparably: its failure (numbers and paths folded), else its call and its output; a job
    still running after each restart (a CI run pending after each rerun) has no outcome yet."""
    if f.failed and f.err is not None:  # a failure of a class a log names alike is that log's outcome: the port held
        specific = f.fclass in catalog.SPECIFIC_CLASSES  # when the start fails and when its log says so after a kill
        return f"logerr\0{readback.LOGGED}{f.fclass}" if specific else f"err\0{f.err}"
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
    named = "; ".join(fp.code(a) for a in restarted[:3])
    what = cur.etext if cur.failed and cur.etext else cur.ftext if cur.verdict == "fail" and cur.ftext else None
    what = what or cur.brief.split(" -> ", 1)[-1][:120]
    return Loop(
        turns=sorted({recent[k].i for k in starts} | {f.i for f in seen_after}),
        evidence=f"{len(starts)} restarts ({named}) and after {len(seen_after)} of them the same outcome came back: "
        f"{what}",
    )


def hang_loop(w: list[TurnFacts], repeats: int, window: int) -> Optional[Loop]:
    """One step that hung and was cut off on each of its last ``repeats`` runs, with no progress between (a check
    started in the background, by the command that started it: its stop cut it off)."""
    cur = w[-1]
    if not cur.hang:
        return None
    recent = since_strong(w[-window:])
    # what a cut-off run printed before it was cut is partial, and a file read is a look, not an outcome: only strong
    # progress, a status or run of another kind that moved, or a hang that got further ends a hang loop
    moved = [
        k
        for k, f in enumerate(recent)
        if (f.prog and not f.hang and f.kind != "read") or _further(f, recent[:k]) or _failed_otherwise(f, recent[:k])
    ]
    recent = recent[moved[-1] :] if moved else recent
    hung = [f for f in recent if f.hang and f.step == cur.step]
    if len(hung) < repeats:
        return None
    named = (jobs.check_start(w, cur.job) or cur).action[:80]  # a background check by the command that started it
    return Loop(
        turns=[f.i for f in hung],
        evidence=f"{fp.code(named)} hung and was cut off {len(hung)} times (it timed out or was interrupted each time "
        "it ran)",
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
        evidence=f"{fp.code(cur.action[:80])} showed the same failure {len(seen)} times ({cur.ftext}) with nothing "
        "edited or restarted between: reading it again will not change it",
    )


def _shows_more(tails: list[TurnFacts]) -> bool:
    """Whether the newest log tail shows a line that none before it showed: noise folded and the restart's own report
    left out (``readback.log_lines``). A debug line added, or a step the restarted thing got further to, is news; a tail
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
    settings before it (where a token often sits), at most 100 characters; a tool that stops a job, by its name."""
    if f.tool.lower() in jobs.JOB_STOP_TOOLS:
        return f.action[:100]
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


def _failed_otherwise(f: TurnFacts, before: list[TurnFacts]) -> bool:
    """Whether a hang printed an error none of the step's earlier hangs did: a dev server under ``timeout`` that died
    of a busy port, then of a refused database connection, then of a missing table is cut off each time by design,
    and each time got past what stopped it before."""
    prev = [e for e in before if e.hang and e.step == f.step]
    return bool(f.hang and f.err and prev and all(e.err and e.err != f.err for e in prev))


def rereads(w: list[TurnFacts], repeats: int, window: int) -> Optional[Loop]:
    """``repeats`` of the agent's last ``window`` calls read or searched again what an earlier call had, each getting
    back the same, with no edit among them: the agent going over what it has already seen (the same files, the same
    searches) instead of changing anything. Commands run between the reads do not end it (a rebuild that shows the
    same thing, then the same files read again); an edit, a check passing or the person's new request does."""
    cur = w[-1]
    if cur.actor != "agent" or cur.kind not in ("read", "search"):
        return None
    start = len(w) - len(after_last(w, lambda f: f.prog == "a new request"))
    calls = [k for k in range(start, len(w)) if w[k].actor == "agent"][-window:]
    if len(calls) < window or any(w[k].edited or w[k].prog in STRONG for k in calls):
        return None
    again = [w[k] for k in calls if w[k].kind in ("read", "search") and _seen(w[k], w[:k])]
    if len(again) < repeats or again[-1] is not cur:
        return None
    ran = sum(w[k].kind == "run" for k in calls)
    unchanged = f"changed ({ran} command(s) ran between)" if ran else "run or changed"
    return _lookups(
        again,
        f"{len(again)} of the agent's last {len(calls)} calls read or searched again what an earlier call had, each "
        f"getting back the same, and nothing was {unchanged}",
    )


def _seen(f: TurnFacts, before: list[TurnFacts]) -> bool:
    """Whether an earlier call was the same and got back the same."""
    return any(e.sig == f.sig and e.out == f.out for e in before)


def found_nothing(w: list[TurnFacts], repeats: int, window: int) -> Optional[Loop]:
    """``repeats`` of the agent's last ``window`` calls looked and found nothing (no match, no such file), no edit or
    passing run among them: looking in the wrong place (the wrong folder, a path the person gave left unexpanded), each
    miss a new guess. A person saying where it is does not end it; finding it does."""
    if not w[-1].found_nothing:
        return None
    calls = after_last(
        [f for f in w if f.actor == "agent"][-window:],
        lambda f: f.edited or (f.kind == "run" and not f.failed and not f.found_nothing),  # a query's empty answer
    )
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


_STILL_SHARE = 0.8
"""A measurement is unmoved when this share of its numbers is (one planning time jumping is no effect)."""


def unmoved(w: list[TurnFacts], repeats: int, window: int, tolerance: float) -> Optional[Loop]:
    """One report (a query plan with its timings, a benchmark, a memory sample, by its shape: however the command that
    prints it is chained or flagged) printed ``repeats`` times with a change before each (an edit, an index created, a
    setting, the command's own flags), its numbers unmoved: the changes have no effect on what it measures. Its numbers
    must jitter (a measurement taken again, not a script's fixed counts printed again: verifying that a refactor changed
    nothing is no loop); a failing run is the failure signals' to judge, and a passing check is progress kept (a
    refactor keeping the tests green), but for a benchmark, whose pass says nothing of what it measures."""
    cur = w[-1]
    if cur.shape is None or cur.failed or cur.actor != "agent":
        return None
    if cur.verdict == "pass" and not _BENCHMARK.search(cur.action):
        return None
    recent = after_last(w[-window:], _moved_on)
    runs = [k for k, f in enumerate(recent) if f.kind == "run" and f.shape == cur.shape][-repeats:]
    if len(runs) < repeats or any(recent[k].failed for k in runs):
        return None
    changed = (  # something done between, or the measuring command itself varied (a flag, a setting before it)
        recent[b].asig != recent[a].asig
        or any(e.edited or (e.kind == "run" and e.shape != cur.shape) for e in recent[a + 1 : b])
        for a, b in zip(runs, runs[1:], strict=False)
    )
    if not all(changed) or not _jitters(tolerance, [recent[k].nums for k in runs]):
        return None
    return Loop(
        turns=[recent[k].i for k in runs],
        evidence=f"{fp.code(cur.action[:80])} printed the same report after each of {len(runs) - 1} changes before "
        f"it, its numbers within {tolerance:.0%} (last: {cur.reading})",
    )


_BENCHMARK = re.compile(r"\bbench|benchmark", re.I)
"""A benchmark as its command names it (``go test -bench``, ``cargo bench``, ``pytest --benchmark-only``, ``npm run
bench``): it passes whatever its timings, so its pass is no progress on them."""


def _moved_on(f: TurnFacts) -> bool:
    """Whether a turn starts the count anew: a person's new request, a falling failure count or a rising score, or a
    checkout of another revision (what runs after it is other code). A build that passes between the runs does not:
    it is how a change reaches what is measured."""
    return f.checkout or (f.prog in STRONG and f.prog != "check passes")


def _jitters(tolerance: float, runs: list[list[float]]) -> bool:
    """Whether the numbers of each run jitter only: most stay within ``tolerance`` of their size, and at least two
    differ from run to run (numbers measured again; fixed counts printed again never differ)."""
    if len({len(nums) for nums in runs}) != 1:
        return False
    spans: list[float] = [
        (max(vals) - min(vals)) / (max(abs(v) for v in vals) or 1) for vals in zip(*runs, strict=True)
    ]
    still = [span <= tolerance for span in spans]
    return sum(still) >= _STILL_SHARE * len(spans) and sum(0 < span <= tolerance for span in spans) >= 2
