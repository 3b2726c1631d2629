"""What counts as progress: whether a turn moved the work forward, compared with the turns before it.

Progress is an outcome, never an attempt: writing new content is an attempt; progress is a check that passes, a check
with fewer failures or a different failure than before, a higher verifier score, a person's new request, a repeated
call whose output changed in substance (not only in timestamps, ages, ids or counters), new lines paged in. The
detector's repetition signals count only what came after the last such turn, so healthy repetition (polling, paging, a
test-driven loop whose failures fall or change) stays quiet, and an edit-test loop that keeps failing the same way
does not. Pure.

Why apart from ``novelty``: ``novelty`` reads what one turn is (its digests, its failure, its verdict); these rules
weigh it against the window, and change when a kind of progress is found to be none (a flaky test failing in fewer of
its repeats) or a new one is.
"""

from __future__ import annotations

from typing import Optional

from strict_loop.model.monitoring import TurnFacts, TurnProgress

FELL = frozenset({"fewer failures", "higher score"})
"""Progress on the failures themselves: fewer of them, or a higher score."""
NOVEL_LINES = 3
"""How many never-seen output lines make a turn carry new information (all of them, for a shorter output)."""


def progress(f: TurnFacts, window: list[TurnFacts], outputs: dict[str, set[str]], fresh: int) -> Optional[TurnProgress]:
    """How ``f`` moved the work forward compared with the earlier turns of ``window``, if it did; ``fresh`` is how many
    of its output lines were never seen in the window (a repeated call's output that only reordered old lines is not
    new). Only outcomes count: an edit is an attempt, a person repeating a complaint is a failed check, not news, and a
    person's failing count is held against theirs before, an agent's against the same command's (tsc's
    errors and jest's failed tests count other things)."""
    scores = [e.score for e in window if e.score is not None]
    if f.score is not None and scores and f.score > max(scores):
        return "higher score"
    alike = [e for e in window if (e.actor == "person" if f.actor == "person" else e.step == f.step)]
    counted = [e for e in alike if e.fails is not None]  # a count is held against the same command's, or theirs
    since = counted[max((k for k, e in enumerate(counted) if not e.fails), default=-1) + 1 :]  # since it was last 0
    if f.fails is not None and since and f.fails < min(e.fails or 0 for e in since):
        return "fewer failures"  # a new low: a count back down where it was (a flaky test's repeats) has not moved
    if f.diags and _fewer_errors(f, alike):
        return "fewer failures"  # a build's error lines, fewer than any run of it printed since it last passed
    if f.verdict == "pass" and not f.logerr and not _passed_before(f, window):  # a build that passed and then
        return "check passes"  # showed the restarted thing's error (`up --build && logs`) passed nothing it was for
    if f.asks is not None and f.asks not in {e.asks for e in window}:
        return "a new request"
    if f.verdict == "fail" and f.actor == "agent" and not f.refused:
        failures = [e for e in window if e.verdict == "fail"]
        # the errors of the last failure that showed any: a person's word between ("same error for 10 min") shows none
        shown = next((e.errs for e in reversed(failures) if e.errs), [])
        if failures and (f.fsig in {e.fsig for e in failures} or set(f.errs) & set(shown)):
            return None  # the same failure, or the earlier failure's error still shows: not moved on
        if failures and f.fclass is not None and failures[-1].fclass == f.fclass:
            return None  # a timeout after a timeout, in other words: the same kind of wall, not moved on
        if failures:
            return "different failure"
    if f.kind in ("write", "person") or f.unknown or f.reports:
        return None
    if f.kind == "read" and f.novel:
        return "new lines paged in"
    earlier = outputs.get(f.sig)
    if earlier and f.out not in earlier and fresh >= _needed(f, window):
        return "new output"
    return None


def _fewer_errors(f: TurnFacts, alike: list[TurnFacts]) -> bool:
    """Whether a build printed fewer error lines than every run of the same step since it last passed (a new low:
    GCC 14's new errors fixed a few at a time, the one not reached yet in every run). Apart from a test runner's count
    of failing tests, which counts other things."""
    since = alike[max((k for k, e in enumerate(alike) if e.verdict == "pass"), default=-1) + 1 :]
    counts = [e.diags for e in since if e.diags]
    return bool(counts) and (f.diags or 0) < min(counts)


def _passed_before(f: TurnFacts, window: list[TurnFacts]) -> bool:
    """Whether the same check passed the same way with no file written since: a pass after an edit says the edit
    broke nothing (a green suite re-run after each rename is progress, not a loop)."""
    for e in reversed(window):
        if e.kind == "write" and not e.failed:
            return False
        if e.verdict == "pass" and e.sig == f.sig and e.out == f.out:
            return True
    return False


def _needed(f: TurnFacts, window: list[TurnFacts]) -> int:
    """New lines a repeated call's output needs to count as news: one, unless the agent itself wrote files since the
    previous call (then the change may be its own doing, e.g. a search finding what it just inserted: a real page of
    news)."""
    for e in reversed(window):
        if e.sig == f.sig:
            return 1
        if e.kind == "write" and not e.failed:
            return NOVEL_LINES
    return 1
