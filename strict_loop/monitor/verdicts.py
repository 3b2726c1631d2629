"""The person's word in the session: what a message counts for among the turns before it, and the ``person_reports``
signal's count. A report of the same problem after an attempt, a complaint of going in circles, a refusal repeated or a
call run (or a place edited) after the person said not to, each is a failed check; a new request ends the run (unless
it names what the person reports), their approval too, but not a ban: it stands, and a breach of it counts, until a
request names it. Pure: works on the detector's window.

Why apart from ``person``: ``person`` reads one message's words (what it says); this weighs it against the window
(whether it says it again, of the same failure, after an attempt), and changes with the signal's rules.
"""

from __future__ import annotations

import re
from typing import Any, Optional

from strict_loop.model.monitoring import Kind, TurnFacts, Verdict
from strict_loop.monitor import fingerprint as fp
from strict_loop.monitor.calls.wrappings import MAX_PERSON_TEXT, spoken
from strict_loop.monitor.person import (
    DEPS,
    HEAD_CHARS,
    OBSERVED,
    REFUSED_CALL,
    SAYS_FAILS,
    Word,
    breach,
    forbidden,
    lifted_by,
    read,
    recalled,
    says_same,
)
from strict_loop.monitor.progress import FELL


def recaused(word: Word, raw: str, window: list[TurnFacts]) -> Word:
    """A pasted failure read from the line that carries its cause: a line the person's previous paste showed too
    (``dependency failed to start: container db is unhealthy``), while this paste shows an error line of its own, is
    the wrapper around both (as an agent's failing step is read, ``novelty._error``)."""
    if not word.failure or word.refused or fp.raised(word.failure):  # an exception raised is a cause, never a wrapper
        return word
    before = next((e for e in reversed(window) if e.actor == "person" and e.verdict == "fail" and e.lines), None)
    if before is None or fp.digest(fp.strict(word.failure)) not in before.lines:
        return word
    own = fp.error_line(raw[:MAX_PERSON_TEXT], frozenset(before.lines))
    return word._replace(failure=own[:300]) if own else word


RESETS = ("a new request",)
"""What ends a run of the person's reports besides their approval: their new request, unless it names what they
report ("use the code search: the statusbar is built in X" between two "I still see the old badge on the statusbar"):
a hint where to look is no new task. An agent's check that passes does not (the build passing says nothing of what
the person sees)."""


def reports(w: list[TurnFacts], repeats: int, window: int) -> Optional[tuple[list[int], str]]:
    """The person's failed checks closed by the newest turn, counted back to their last approval or new request
    (reports with no attempt between them count once), when they reach ``repeats``: their turns and the evidence."""
    cur = w[-1]
    if not cur.reports:
        return None
    counted: list[TurnFacts] = []
    earlier: list[TurnFacts] = []  # bans broken before the person's last new request: they count if broken again
    span = w[-window:]
    asked = False
    for k in range(len(span) - 1, -1, -1):
        f = span[k]
        if (f.verdict == "pass" and f.actor == "person") or (f.said and f.prog in FELL):
            break
        reason = k > 0 and _wordless_refusal(span[k - 1]) and f.actor == "person"  # why they refused the call before
        asked = asked or (f.prog in RESETS and not reason and not _hint(f, cur, span[:k]))
        if f.reports and not asked:
            if counted and (_moved(f, counted[-1], w) or _measured_apart(f, counted[-1])):
                break  # "still red" of a failure that moved on since, "p99 now 420ms" after "1.1s": another state
            counted.append(f)
        elif f.defied and asked:
            earlier.append(f)
    counted += [f for f in earlier if any(c.defied == f.defied for c in counted)]  # the ban stands through requests
    counted.sort(key=lambda f: f.i)
    circling = any(f.reports >= 2 for f in counted)  # "you've opened X three times now": the looking is the loop
    tried = ("run", "read", "search") if circling else ("run",)
    attempts = [f for f in w if f.actor == "agent" and (f.edited or f.kind in tried) and not f.reports]
    # the problem said before any attempt is its first report, not a repeat ("it's light again" in the request)
    counted = [f for f in counted if f.refused or f.defied or any(a.i < f.i for a in attempts)]
    if not counted:
        return None
    groups: list[list[TurnFacts]] = []
    for f in counted:
        if groups and not (f.refused or f.defied) and not any(groups[-1][-1].i < a.i < f.i for a in attempts):
            groups[-1].append(f)  # no attempt since the last report: the same report, said twice (a refusal is
            # an attempt of its own, refused)
        elif groups and _unanswered(groups[-1][-1], f, w):
            groups[-1].append(f)  # the person's objection to a breach, or a dependency added in several calls (a
            # third such call unanswered counts again: nobody may be watching)
        else:
            groups.append([f])
    score = sum(max(g.reports for g in group) + (len([g for g in group if g.defied]) >= 3) for group in groups)
    if score < repeats or not any(w[-window:][0].i <= a.i < cur.i for a in attempts):
        return None
    said = "; ".join(dict.fromkeys(_said(f) for f in counted))
    breaches = [f for f in counted if f.defied]
    if len(groups) == 1 and len(breaches) >= 3 and max(f.reports for f in counted) < 2:  # nobody answered them
        return [f.i for f in counted], f"the agent went against the person's word {len(breaches)} times: {said}"
    if len(groups) == 1:  # one report that counts twice: going in circles, or the same paste shown again
        return [f.i for f in counted], f"after the agent's attempts, the person said: {said}"
    what = "said it still fails" if any(f.quote for f in counted) else "said no"
    evidence = f"the person {what} {len(groups)} time(s) after attempts: {said}"
    return [f.i for f in counted], evidence


def _moved(before: TurnFacts, after: TurnFacts, w: list[TurnFacts]) -> bool:
    """Whether the agent's checks (or runs) last failed, before the second of two reports (the first naming nothing:
    "still red", "still red lol"), in a way none failed before the first: the person sees the same colour while the
    failure moved on (a CI run failing at a later step each push), so the second reports another failure."""
    if any(f.reports != 1 or f.refused or f.defied for f in (before, after)) or before.topic:
        return False  # the first report named what fails ("the badge is still old"): a "still" after it is of that
    checks = [e for e in w if e.actor == "agent" and e.i < after.i and failed_as(e)]
    earlier = {failed_as(e) for e in checks if e.i < before.i}  # a failure seen before comes back: not moved on
    return bool(earlier) and checks[-1].i > before.i and failed_as(checks[-1]) not in earlier


_MEASURE = re.compile(r"(?<![\w.,])(\d{1,9}(?:\.\d{1,6})?)\s?(ms|s|secs?|seconds?|mins?|minutes?|%)(?!\w)", re.I)
_SECONDS = {"ms": 0.001, "min": 60.0, "mins": 60.0, "minute": 60.0, "minutes": 60.0}


def _measure(text: Optional[str]) -> Optional[tuple[float, str]]:
    """The first duration or percentage a person's words quote, in seconds or percent, and which of the two."""
    m = _MEASURE.search(text or "")
    if m is None:
        return None
    unit = m.group(2).lower()
    return (float(m.group(1)), "%") if unit == "%" else (float(m.group(1)) * _SECONDS.get(unit, 1.0), "s")


def _measured_apart(before: TurnFacts, after: TurnFacts) -> bool:
    """Whether two reports quote a measure of one kind that moved by a sixth or more ("p99 dropped to 1.1s. still way
    off", then "p99 now 420ms. still higher than normal"): the attempts between moved it, so the second says how it
    stands now, not that nothing changed ("still ~850ms" after "850ms" is the same)."""
    a, b = _measure(before.quote), _measure(after.quote)
    return a is not None and b is not None and a[1] == b[1] and abs(a[0] - b[0]) > max(a[0], b[0]) / 6


def failed_as(f: TurnFacts) -> Optional[str]:
    """How a failing check or run is known: a check's failure signature, a run's error line."""
    return f.fsig if f.verdict == "fail" else f.err


def failing_since(before: list[TurnFacts], after: list[TurnFacts]) -> Optional[tuple[str, Optional[str]]]:
    """The agent's newest failure since the person last reported one, when it fails otherwise than its last failure
    before that report did: what the person's next report, not said to be a repeat, is about (its signature, text)."""
    now = next((e for e in reversed(after) if e.actor == "agent" and failed_as(e)), None)
    then = next((e for e in reversed(before) if e.actor == "agent" and failed_as(e)), None)
    if now is None or then is None or failed_as(then) == failed_as(now):
        return None
    return now.fsig if now.verdict == "fail" and now.fsig else fp.digest(now.err or ""), now.ftext or now.etext


def _unanswered(last: TurnFacts, f: TurnFacts, w: list[TurnFacts]) -> bool:
    """Whether ``f`` is the person's first word after the breach ``last`` (their objection to it), or adds a dependency
    after ``last`` added one with no word from the person between them (the manifest edited, the package installed,
    the lockfile: one breach in several calls). A command or an edit the person banned counts each time it runs."""
    if not last.defied or f.refused or (f.defied and not f.defied == last.defied == DEPS):
        return False
    return not any(last.i < e.i < f.i and e.actor == "person" for e in w)


def _hint(request: TurnFacts, cur: TurnFacts, before: list[TurnFacts]) -> bool:
    """Whether a request names what the person reports both before and after it ("I still see the old badge on the
    statusbar"; "use the code search: the statusbar is built in scripts/"; "you still haven't fixed the statusbar"):
    where to look, not a new task."""
    last = next((e for e in reversed(before) if e.reports), None)
    return last is not None and bool(set(request.topic) & set(cur.topic) & set(last.topic))


def _said(f: TurnFacts) -> str:
    """How a counted report is named in the evidence: the person's words, a call they refused, or one they had said
    not to run."""
    if f.quote:
        return f"“{f.quote}”"
    if f.refused:
        return f"refused {fp.code(f.action[:60])}"
    return breach(f)


def heard(actor: str, output: str, window: list[TurnFacts]) -> tuple[Optional[Word], Optional[str]]:
    """What the person said in this turn, and its digest; None for words a harness repeats (Cline puts the person's
    feedback in a tool result and the export has it as the person's own line too): counted once."""
    said_raw = spoken(actor, output)
    if said_raw is None:
        return None, None
    word = recaused(read(said_raw), said_raw, window)
    said = fp.digest(fp.loose(word.text)) if word.text else None
    if said is not None and any(e.said == said and e.actor != actor for e in window[-3:]):
        return None, said
    return word, said


def voice(
    word: Optional[Word],
    said: Optional[str],
    lines: list[str],
    verdict: Optional[Verdict],
    fsig: Optional[str],
    sigs: tuple[str, str],
    kind: Kind,
    window: list[TurnFacts],
) -> dict[str, Any]:
    """The person's word as facts: a new request (``asks``), how much a failed check counts, the words to quote."""
    reports, quoted = _reports(word, fsig, sigs, kind, window)
    if reports and word is not None and not word.weight and not word.failure and not word.refused:
        # "it doesn't work" again: the same words only (two different symptoms are not one problem said twice)
        reports = int(any(e.actor == "person" and e.said == said for e in window))
    if (
        reports == 1
        and word is not None
        and word.failure
        and not word.refused
        and (OBSERVED.search(head := word.text[:HEAD_CHARS]) or (_agent_failed(window) and not _SAME.search(head)))
        and not _seen(word.failure, fsig, window)
    ):
        reports = 0  # "still getting <an error nothing showed before>", "still 500 <a traceback none of the agent's
        # failures showed>": a new symptom, a report once it comes back (not when they say it is the same)
    if reports and word is not None and word.failure and _pasted_again(lines, window):
        reports = 2  # much the same paste again: the attempts between changed nothing the person sees
    if word is not None and word.text and not word.refused and window and _wordless_refusal(window[-1]):
        reports, quoted = max(reports, 1), quoted or quote(word.text)  # their words on the call they just refused
    asks = fp.digest(fp.loose(word.text)) if word is not None and verdict is None and word.text else None
    said_not = forbidden(word.text) + list(word.rules) + recalled(word.text, window) if word is not None else []
    forbids = list(dict.fromkeys(said_not))[:6]
    return {
        "asks": asks,
        "reports": reports,
        "quote": quoted,
        "said": said,
        "refused": bool(word and word.refused),
        "topic": topic(word.text) if word is not None else [],
        "forbids": forbids,
        "lifts": lifted_by(word.text, forbids, window) if word is not None and asks else [],
    }


_SAME = re.compile(r"\b(?:same|again|identical|no change|unchanged|exactly)\b", re.I)
"""Words that say what the person pastes is what they saw before, whatever the session showed."""


def _agent_failed(window: list[TurnFacts]) -> bool:
    return any(e.actor == "agent" and e.err for e in window)


def _wordless_refusal(f: TurnFacts) -> bool:
    """A call the person refused with no words of their own (Claude Code's bare "no"): what they type next is why."""
    return f.refused and not f.reports and not f.quote


def _reports(
    word: Optional[Word], fsig: Optional[str], sigs: tuple[str, str], kind: Kind, window: list[TurnFacts]
) -> tuple[int, Optional[str]]:
    """How much this turn counts as the person's failed check, and the words to quote: a repeat or a complaint of
    going in circles; a pasted failure they reported before; a refusal of a call (or of an edit of a file) the person
    refused before. ``sigs``: the call's loose digest and its step."""
    asig, step = sigs
    if word is not None and word.refused:  # by the person's words with it, or the same call refused again
        again = any(e.refused and (e.asig == asig or (kind == "write" and e.step == step)) for e in window)
        return max(word.weight, int(again)), quote(word.text) or None
    if word is not None and word.verdict == "fail":
        if word.weight == 1 and _pasted_anew(word, fsig, window):
            return 0, quote(word.text) or None  # "still 500" with another exception pasted: the failure changed
        again = word.weight == 0 and any(e.actor == "person" and e.fsig == fsig for e in window)
        return (word.weight or int(again)), quote(word.text) or None
    return 0, None  # a call made again that the person let run this time is their approval, not a report


def _pasted_anew(word: Word, fsig: Optional[str], window: list[TurnFacts]) -> bool:
    """Whether the person, saying it still fails, pasted a failure never seen before where their last report pasted
    another one, naming none of its words: "still 500" over a new exception each time (``MissingAppKeyException``,
    then ``Permission denied``) is the failure changing, not the same one again."""
    failure = word.failure
    if not failure or says_same(word.text) or word.text.startswith(failure[:40].strip()):
        return False  # no paste (the failure read is their own words), or they call it the same
    last = next((e for e in reversed(window) if e.actor == "person" and e.verdict == "fail"), None)
    if last is None or last.ftext in (None, SAYS_FAILS, REFUSED_CALL) or last.fsig == fsig:
        return False
    # a new paste shares no word of what it names with the last one (a wrapper's noise aside): another failure
    now, then = _named(failure), _named(last.ftext)
    return bool(now and then) and not now & then and not _seen(failure, fsig, window)


def _named(failure: str) -> set[str]:
    """The longer words a failure line names, a dotted or slashed name split into its parts (``com.app.RouteDetail``:
    ``routedetail``), without the words every failure says."""
    return {w.lower() for w in _WORD.findall(failure[:HEAD_CHARS]) if len(w) >= 6} - _COMMON


_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]+")


def _seen(failure: str, fsig: Optional[str], window: list[TurnFacts]) -> bool:
    """Whether a failure the person pasted showed before: reported by them, or a line of an earlier output."""
    line = fp.strict_with_lines(failure)[1][:1]
    return any((fsig is not None and e.fsig == fsig) or (line and line[0] in e.lines) for e in window)


def _pasted_again(lines: list[str], window: list[TurnFacts]) -> bool:
    """Whether the person pasted much the same lines before (four in five, of three or more): a log shown again."""
    if len(lines) < 3:
        return False
    same = [e for e in window if e.actor == "person" and 5 * len(set(lines) & set(e.lines)) >= 4 * len(set(lines))]
    return any(a.edited and a.i > same[0].i for a in window) if same else False


_SUBJECT = re.compile(r"[A-Za-z][A-Za-z0-9_.-]{5,}")
_COMMON = frozenset(
    ("please", "should", "really", "thanks", "something", "anything", "everything", "nothing", "working", "before")
    + ("always", "whether", "another", "because", "actually", "already", "proceed", "continue", "implement")
    + ("analyze", "ultrathink", "problem", "errors", "broken", "change", "changes", "changed", "properly", "correct")
    + ("correctly", "instead", "within", "without", "folder", "update", "updated", "shouldn", "couldn", "wouldn")
    + ("failing", "failed", "failure", "showing", "button", "screen", "server", "function", "doesnt", "didnt")
    + ("returns", "return", "output", "result", "results", "message", "script", "command", "running")
    + ("thought", "worked", "seriously", "happening", "supposed", "finally", "honestly", "literally", "basically")
    + ("expected", "earlier", "yesterday", "minutes", "getting", "trying", "tested", "checked", "restarted")
    + ("refreshed", "reloaded", "anymore", "though", "exactly", "anyway", "strange", "pretty")
)
"""Words of six letters or more that say nothing of what a message is about."""


def topic(text: str) -> list[str]:
    """Digests of the longer words a message names (``statusbar``, ``checkout``): what it is about."""
    words = {w.lower().strip(".-") for w in _SUBJECT.findall(text[:HEAD_CHARS])}
    return sorted(fp.digest(w)[:8] for w in words - _COMMON if len(w) >= 6)


def quote(text: str, cap: int = 100) -> str:
    """A person's words as the diagnosis quotes them: the start of the message, cut at a word."""
    if len(text) <= cap:
        return text
    cut = text[:cap]
    space = cut.rfind(" ")
    return (cut[:space] if space > cap * 0.6 else cut).rstrip(" ,;:.") + "..."
