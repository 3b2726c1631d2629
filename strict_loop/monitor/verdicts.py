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
from strict_loop.monitor import shellwork
from strict_loop.monitor.person import (
    HEAD_CHARS,
    OBSERVED,
    Word,
    read,
)
from strict_loop.monitor.toolkinds import MAX_PERSON_TEXT, WRAPPERS, spoken, step_words


def recaused(word: Word, raw: str, window: list[TurnFacts]) -> Word:
    """A pasted failure read from the line that carries its cause: a line the person's previous paste showed too
    (``dependency failed to start: container db is unhealthy``), while this paste shows an error line of its own, is
    the wrapper around both (as an agent's failing step is read, ``novelty._error``)."""
    if not word.failure or word.refused:
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
        if (f.verdict == "pass" and f.actor == "person") or (f.said and f.prog in ("fewer failures", "higher score")):
            break
        asked = asked or (f.prog in RESETS and not _hint(f, cur, span[:k]))
        if f.reports and not asked:
            counted.append(f)
        elif f.defied and asked:
            earlier.append(f)
    counted += [f for f in earlier if any(c.defied == f.defied for c in counted)]  # the ban stands through requests
    counted.sort(key=lambda f: f.i)
    attempts = [f for f in w if f.actor == "agent" and (f.edited or f.kind == "run") and not f.reports]
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
        return f"refused `{f.action[:60]}`"
    if f.defied and f.defied.startswith(_PLACE):
        return (
            f"edited `{f.paths[0] if f.paths else f.writes[0]}` after being told not to touch {f.defied[len(_PLACE) :]}"
        )
    if f.defied == DEPS:
        return f"added a dependency (`{f.action[:60]}`) after being told not to"
    return f"ran `{f.action[:60]}` after being told not to"


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
        and OBSERVED.search(word.text[:HEAD_CHARS])
        and not _seen(word.failure, fsig, window)
    ):
        reports = 0  # "still getting <an error nothing showed before>": a new symptom, a report once it comes back
    if reports and word is not None and word.failure and _pasted_again(lines, window):
        reports = 2  # much the same paste again: the attempts between changed nothing the person sees
    asks = fp.digest(fp.loose(word.text)) if word is not None and verdict is None and word.text else None
    forbids = forbidden(word.text) if word is not None else []
    return {
        "asks": asks,
        "reports": reports,
        "quote": quoted,
        "said": said,
        "refused": bool(word and word.refused),
        "topic": topic(word.text) if word is not None else [],
        "forbids": forbids,
        "lifts": _lifts(word.text, forbids, window) if word is not None and asks else [],
    }


def defied(command: str, paths: list[str], window: list[TurnFacts], args: dict[str, Any]) -> Optional[str]:
    """The ban a call runs against, if the person said not to run it, or not to edit where it writes (in their words or
    beside a refusal; putting files back as git has them obeys), or not to add dependencies: its step and every flag
    the ban named, its command word, the place, or ``DEPS``. A ban stands through the person's later requests until one
    names what it bans ("ok, push it now")."""
    if not any(e.forbids for e in window):
        return None  # nothing was said not to run or edit (most sessions): the call is not parsed for it
    call = (step_words(command), set(command.split()), {w for p in shellwork.segments(command) for w in p.split()[:4]})
    back = shellwork.put_back(command) if "git" in command else None
    places = [where for where in ("/" + p.strip("/") + "/" for p in paths) if not _restored(where, back)]
    adds: Optional[bool] = None  # asked once, of the first dependency ban met
    lifted: set[str] = set()
    for e in reversed(window):
        lifted.update(e.lifts)
        if e.actor == "person" or e.refused:
            for ban in e.forbids:
                if ban in lifted:
                    continue
                if ban == DEPS:
                    adds = _adds(command, paths, args) if adds is None else adds
                if adds if ban == DEPS else _breaks(ban, call, places):
                    return ban
    return None


def _restored(where: str, back: Optional[list[str]]) -> bool:
    """Whether a written place (``/path/``) is one the command put back as git has it (or lies under one it put
    back)."""
    if back is None:
        return False
    return not back or any(f"/{b.strip('/').removeprefix('./')}/" in where for b in back)


def _adds(command: str, paths: list[str], args: dict[str, Any]) -> bool:
    """Whether a call adds a dependency: a package installed by name, or an entry added to a manifest (by a file tool
    or a patch)."""
    sides = shellwork.edit_sides(args) or (
        shellwork.edit_sides({"patch": command}) if "*** Begin Patch" in command else None
    )
    return shellwork.adds_package(command) if sides is None else shellwork.adds_dependency(paths, *sides)


def _breaks(ban: str, call: tuple[str, set[str], set[str]], places: list[str]) -> bool:
    """Whether a call (its step, its words, its programs and subcommands) or the places it writes break ``ban``."""
    step, words, verbs = call
    if ban.startswith(_PLACE):
        return any(f"/{ban[len(_PLACE) :]}/" in place for place in places)
    if ban.startswith(_VERB):
        verb, *flags = ban[len(_VERB) :].split()
        return verb in verbs and words.issuperset(flags)
    parts = ban.split()
    named = [p for p in parts if p.startswith(("-", "+"))]
    name = " ".join(p for p in parts if p not in named)
    wanted = {p.removeprefix("+") for p in named}
    return (name == step or (name in WRAPPERS and name in verbs)) and words.issuperset(wanted)  # "never use sudo"


def _lifts(text: str, again: list[str], window: list[TurnFacts]) -> list[str]:
    """The bans said before that a new request names, and so lifts ("ok, push it now", "now edit settings.py"); one
    it says ``again`` ("remember: don't push") stands."""
    low = text.lower()
    bans = dict.fromkeys(b for e in window if e.actor == "person" or e.refused for b in e.forbids)
    return [b for b in bans if b not in again and _named(b, low)][:6]


def _named(ban: str, low: str) -> bool:
    """Whether a message names what ``ban`` bans: the place's last part, the command's last word, or dependencies
    ("ok, add tenacity as a dependency", "install it")."""
    if ban == DEPS:
        return re.search(r"\b(?:dependenc|package|librar|install)", low) is not None
    if ban.startswith(_PLACE):
        return ban[len(_PLACE) :].rsplit("/", 1)[-1].lower() in low
    words = [w.removeprefix("+") for w in ban.removeprefix(_VERB).split() if not w.startswith("-")]
    return bool(words) and re.search(rf"\b{re.escape(words[-1].lower())}", low) is not None


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
        again = word.weight == 0 and any(e.actor == "person" and e.fsig == fsig for e in window)
        return (word.weight or int(again)), quote(word.text) or None
    return 0, None  # a call made again that the person let run this time is their approval, not a report


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


FORBID = re.compile(
    r"(?:^|[.!;,:]\s*|\b(?:and|but|also|so|please)\s+)(?:please\s+)?(?:don'?t|do not|never|stop|no more)\s+(?:ever\s+)?"
    r"(?:run|running|use|using|execute|executing|call|calling)\s+(?P<what>`[^`\n]{1,80}`|(?!(?:the|it|this|that|any|"
    r"anything|them|these|those|again|anymore|a|an|or|and|but|so|not|me|my|your|our)\b)[\w./:+-]+(?:\s+(?!(?:to|for|on|"
    r"in|with|again|anymore|it|this|that|the|and|or|but|unless|until|before|after|when|because|instead|yet|now)\b)"
    r"[\w./:+-]+)?(?:\s+(?:with\s+)?-[\w-]+)*)",
    re.I,
)
"""The person telling the agent not to run a command, at the start of a clause ("don't run `npm install`", "never use
sed -i"; "if you don't run npm install first" is no ban, and "stop running the migrations" names no command)."""


FORBID_EDIT = re.compile(
    r"(?:^|[.!;,:]\s*|\b(?:and|but|also|so|please|wait)\s+)(?:please\s+)?(?:don'?t|do not|never|stop)\s+(?:ever\s+)?"
    r"(?:edit|touch|modify|change|write to|delete|rewrite|hand-edit)(?:ing)?\s+(?:anything\s+(?:in|under|inside)\s+|"
    r"(?:any\s+)?(?:files?\s+(?:in|under|inside)\s+)?)(?:the\s+)?`?\.?/?(?P<path>[\w.-]*/[\w./-]*[\w-]|[\w-]+\.[a-z]{1,5}\b)",
    re.I,
)
"""The person telling the agent not to edit a place: a folder or a file named as a path ("don't edit anything under
src/api/generated/", "never touch `settings.py`"); "don't change the API" names no place."""
_PLACE = "place:"
"""How a ban on a place is kept among the banned commands (``TurnFacts.forbids``)."""
FORBID_VERB = re.compile(
    r"(?:^|[.!;,:]\s*|\b(?:and|but|also|so|please|just|then)\s+|\bsaid(?:\s+\w+){0,4}?\s+)(?:please\s+)?"
    r"(?:(?:don'?t|do not|never|no more|stop)\s+(?:ever\s+)?(?P<force>force[- ]?)?"
    r"(?P<verb>push|commit|deploy|merge|publish|release)(?:ing|es|s)?|no\s+"
    r"(?P<noforce>force[- ]?)?(?P<noverb>push|commit|deploy|merg|publish|releas)ing)\b"
    r"(?!\s+(?:button|notification))",
    re.I,
)
"""The person forbidding what a command word does ("don't push", "never deploy", "don't force push", "NO force
pushing"): any command whose program or subcommand is that word (``git push``, ``fly deploy``, ``gh pr merge``), a
force push by its flags."""
_VERB_OF = {"merg": "merge", "releas": "release"}
"""The command word of a ban said as "no ...ing" where the word drops its e ("no merging": ``merge``)."""
_VERB = "verb:"
FORBID_DEPS = re.compile(
    r"\b(?:(?:no|zero|without(?:\s+adding)?(?:\s+any)?)\s+(?:new|more|additional|extra|third[- ]party|external)|"
    r"(?:don'?t|do not|never|stop)\s+(?:add|install|introduce|pull\s+in|bring\s+in|use)(?:ing)?(?:\s+(?:any|a))?"
    r"(?:\s+(?:new|more|additional|extra|third[- ]party|external))?)\s+"
    r"(?:dependenc(?:y|ies)|deps|packages?|librar(?:y|ies)|libs|modules|crates|gems)\b",
    re.I,
)
"""The person forbidding new dependencies ("NO new dependencies", "don't add any packages", "without adding new
libraries"); "no packages were found" says nothing new is banned."""
DEPS = "deps:"
_DEP_GATES = ("dependenc", "deps", "package", "librar", "libs", "modules", "crates", "gems")
_BAN_GATES = ("don", "do not", "never", "stop", "no ")
"""Lowercase literals one of which each ban pattern (``FORBID``, ``FORBID_EDIT``, ``FORBID_VERB``) cannot match
without."""
_FORCE = ("--force", "-f", "--force-with-lease")


def forbidden(text: str) -> list[str]:
    """The commands the person says not to run, each as its step (``toolkinds.step_words``) and the flags it was said
    with ("sed -i": ``sed -n`` is not banned), the command words and the places not to edit, at most six. Read behind
    the words every ban starts with (most messages have none)."""
    found: list[str] = []
    folded = fp.folded(text[:MAX_PERSON_TEXT])
    if fp.may_match(folded, _DEP_GATES) and FORBID_DEPS.search(text[:MAX_PERSON_TEXT]):
        found.append(DEPS)
    if not fp.may_match(folded, _BAN_GATES):
        return found
    for m in FORBID.finditer(text[:MAX_PERSON_TEXT]):
        what = m.group("what").strip("`")
        step = step_words(what)
        if step:
            found.append(" ".join([step, *_targets(what, step), *(w for w in what.split() if w.startswith("-"))]))
    found += [_PLACE + m.group("path").strip("/") for m in FORBID_EDIT.finditer(text[:MAX_PERSON_TEXT])]
    for m in FORBID_VERB.finditer(text[:MAX_PERSON_TEXT]):
        verb = (m.group("verb") or _VERB_OF.get(m.group("noverb").lower(), m.group("noverb"))).lower()
        found += (
            [f"{_VERB}{verb} {flag}" for flag in _FORCE] if m.group("force") or m.group("noforce") else [_VERB + verb]
        )
    return list(dict.fromkeys(found))[:6]


_REDIRECT = re.compile(r"\s\d*[<>&]")


def _targets(what: str, step: str) -> list[str]:
    """The words a banned command names after its step, marked ``+``: the script, target or subcommand ``npm run
    build``, ``make deploy`` and ``manage.py flush`` run (a call breaks the ban only with them; ``npm run typecheck``
    does not break "don't run `npm run build`"), its redirections and the commands it pipes into left out."""
    last = _REDIRECT.split(re.split(r"&&|\|\||;", what)[-1].split("|", 1)[0], 1)[0]
    named = set(step.split())
    words = [w.strip("'\"") for w in last.split() if not w.startswith("-") and "=" not in w]
    return ["+" + w for w in words if w and w.rsplit("/", 1)[-1] not in named][:3]


_SUBJECT = re.compile(r"[A-Za-z][A-Za-z0-9_.-]{5,}")
_COMMON = frozenset(
    ("please", "should", "really", "thanks", "something", "anything", "everything", "nothing", "working", "before")
    + ("always", "whether", "another", "because", "actually", "already", "proceed", "continue", "implement")
    + ("analyze", "ultrathink", "problem", "errors", "broken", "change", "changes", "changed", "properly", "correct")
    + ("correctly", "instead", "within", "without", "folder", "update", "updated", "shouldn", "couldn", "wouldn")
    + ("failing", "failed", "failure", "showing", "button", "screen", "server", "function", "doesnt", "didnt")
    + ("returns", "return", "output", "result", "results", "message", "script", "command", "running")
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
