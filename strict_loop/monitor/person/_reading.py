"""Whether one message of the person says the work still fails (a repeat, going in circles, a refusal), or asks,
approves or says the attempt helped (``_asking``): ``read``. The words that say it persists are ``_persists``'s."""

from __future__ import annotations

import re
from typing import NamedTuple, Optional

from strict_loop.monitor import fingerprint as fp
from strict_loop.monitor.calls.wrappings import MAX_PERSON_TEXT, PLACEHOLDER, feedback, refusal, text_of
from strict_loop.monitor.person import _asking as asking
from strict_loop.monitor.person._bans import ruled
from strict_loop.monitor.person._persists import NOPE, PERSIST, PERSIST_GATES, SEEN_AGAIN, SEEN_AGAIN_GATES
from strict_loop.monitor.person._phrases import CIRCLES, TOLD_BEFORE
from strict_loop.monitor.person._phrases import CIRCLES_GATES as _CIRCLES_GATES


def _says(pattern: re.Pattern[str] | fp.Later, gates: tuple[str, ...], text: str) -> bool:
    """``pattern`` in ``text``, read behind its literals first (in C): a pattern of many branches is slow to fail."""
    return fp.may_match(fp.folded(text), gates) and bool(pattern.search(text))


def _persist(text: str) -> bool:
    """Whether ``text`` says the problem persists (``PERSIST``, or a bare no first)."""
    return bool(NOPE.match(text)) or _says(PERSIST, PERSIST_GATES, text)


BROKEN = re.compile(
    r"\b(?:(?:does|did|is|was|are|were|do)(?:n'?t| not) (?:work|working|load|loading|show|showing|change|help|fix|"
    r"render|compile|build|run|start|appear|updated|applied|saved|deployed)|not (?:working|loading|showing|there|"
    r"fixed|updated|applied|saved|deployed|running|starting|responding|connecting)|broken|fails?|failing|"
    r"keeps? (?:restarting|crashing|dying)|(?:connection|permission) (?:refused|"
    r"denied)|"
    r"failed|crash(?:es|ed|ing)?|errors?|exception|wrong|nope|no luck|blank|empty|missing|unpopulated|stuck|hangs?|"
    r"broke|disappeared|(?:won'?t|can'?t|isn'?t|aren'?t|doesn'?t|didn'?t|couldn'?t) (?:start|load|open|close|save|"
    r"respond|update|work|show|render|compile|build|run|connect|clickable|responsive|running|starting|working|loading)|"
    r"does nothing|white screen|dies|died|oom|ooms|oomed|out of memory|"
    r"(?:getting|get|got|gives?|gave|returns?|returning|throws?|with) (?:an? |http |status )?[45]\d\d)\b",
    re.I,
)
TOLD = re.compile(TOLD_BEFORE, re.I)
"""The person saying they said it before: a complaint even as a question ("why do you keep ignoring this?")."""
NEGATED = re.compile(r"\b(?:no|without|zero|free of)\s+(?:\w+\s+){0,2}(?:errors?|failures?|warnings?|issues?)\b", re.I)
OBSERVED = re.compile(r"\bstill\b(?:\s+\w+){0,2}?\s+(?:get|gets|getting|see|sees|seeing|have|has|having)\b", re.I)
""""still getting/seeing/have ...": what the person observes is what persists (a paste that follows is the thing said
to persist), unlike "still does not work", a verdict on something said before, with any paste as its evidence."""
_PASTED = re.compile(r"\b[A-Z]\w*(?:Error|Exception)\b:.*")
SAYS_FAILS = "the person says it still fails"
"""The failure signature of a report in the person's own words: the failure they reported before, if any."""
REFUSED_CALL = "the person refused this call"
"""The failure a refusal with no words of the person's reports."""


TYPOS = {"sitll": "still", "stlil": "still", "stll": "still", "stilll": "still", "borken": "broken", "brokne": "broken"}
TYPOS |= {"agian": "again", "agin": "again", "smae": "same", "saem": "same", "wokring": "working", "workign": "working"}
TYPOS |= {"wroking": "working", "fiexd": "fixed", "fixd": "fixed", "eror": "error", "erorr": "error", "errror": "error"}
TYPOS |= {"youve": "you've", "youre": "you're", "weve": "we've", "ive": "i've", "havent": "haven't", "isnt": "isn't"}
"""Slips of the keys a person in a hurry makes in the words that carry the news ("sitll borken", "youve"), read as
meant."""
_TYPO = re.compile(r"\b(?:" + "|".join(sorted(TYPOS, key=len, reverse=True)) + r")\b", re.I)


class Word(NamedTuple):
    """What one message of the person says about the work."""

    verdict: Optional[str]  # "fail", "pass" or None (a request, a question, a new symptom, nothing readable)
    weight: int  # how much a failed check counts toward person_reports: 1 a repeat, 2 going in circles, 0 otherwise
    failure: Optional[str]  # a pasted error (its line), else None
    text: str  # the words, without placeholders, on one line
    refused: bool = False
    new: bool = False  # a failure the person says is new ("different thing now"): never the one reported before
    rules: tuple[str, ...] = ()  # the commands the person's deny rules ban, as a refusal quotes them (``_bans.ruled``)


def read(raw: str) -> Word:
    """What the person's message says (see the module's docstring for what counts as a failed check): by its head,
    else, after a paste, by its last line (``<a terminal's output>\n\nstill nothing``: their words after what they
    saw)."""
    word = _read_head(raw)
    if word.weight == 1 and not word.refused and _marked_new(word.text[:HEAD_CHARS]):
        return word._replace(weight=0, new=True)  # "still no good. this time 'not_accepted'": said to be new
    if word.verdict is not None:
        return word
    lines = [line for line in raw[:MAX_PERSON_TEXT].splitlines() if line.strip()]
    if len(lines) < 2 or len(lines[-1].split()) > _LAST_WORDS:
        return word
    last = _read_head(lines[-1])
    if last.verdict != "fail":
        return word
    return Word("fail", last.weight, last.failure or _pasted_error(raw[:MAX_PERSON_TEXT]), word.text or last.text)


_BUT = re.compile(r"\W*(?:but|mas|pero|aber|mais|ma)\b", re.I)
_THIS_TIME = re.compile(
    r"\b(?:this time (?:it|i|we|the|a|an)\b|now (?:i get|i'm getting) a "
    r"different\b|(?:diff|different|new|another|other) (?:error|exception|traceback|thing|problem|issue|message|"
    r"status|response)(?: now)?\b|now (?:\w+\s+){1,2}(?:gives|shows|says|throws|returns)\b|"
    r"\b(?:goes|gets|got|went|makes it|made it) (?:through|past|further|farther|to [\w.-]+)(?: \w+)?\s+now\b|"
    r"(?:diesmal|dieses mal) (?:kommt|steht|sagt|ist|zeigt)\b|"
    r"cette fois(?:-ci)?,? (?:c'est|\u00e7a|il|j'ai)\b|esta vez (?:sale|dice|da|es|aparece)\b|"
    r"desta vez (?:d[\u00e1a]|diz|aparece|[\u00e9e])\b|ahora (?:me )?(?:sale|dice|da|aparece)\b|"
    r"agora (?:d[\u00e1a]|diz|aparece)\b|(?:ora|adesso) (?:d[\u00e0a]|dice|esce|compare)\b|"
    r"jetzt (?:kommt|steht|sagt|zeigt)\b|maintenant (?:c'est|il (?:dit|affiche))\b)|\u4eca\u5ea6\u306f|"
    r"(?:уже|теперь) (?:друг(?:ая|ой|ое)|вот так)|друг(?:ая|ой|ое) (?:ошибка|проблема)",
    re.I,
)
"""The person marking what they see as new ("this time it says 'not_accepted'", "diff error now", "now clicking gives
...", "it goes to stripe now, then ...", "ahora sale ...", 今度は, diesmal, cette fois, esta vez, "уже другая",
"теперь вот так"): a failure they saw (where the attempt got further, what stops it there), a repeat only if it is the
same as one before."""


def _marked_new(head: str) -> bool:
    return (
        bool(_THIS_TIME.search(head)) and not _SAME_WORD.search(head) and not _says(SEEN_AGAIN, SEEN_AGAIN_GATES, head)
    )


_SAME_WORD = re.compile(r"\b(?:same|again|identical|gleich|m\u00eame|mismo|mesmo)\b|\u540c\u3058", re.I)


def says_same(text: str) -> bool:
    """Whether the person's words call what they see the same as before ("same error", "mismo", "同じ")."""
    return bool(_SAME_WORD.search(text[:HEAD_CHARS]))


_LAST_WORDS = 8  # how short a last line after a paste is to be read as the person's own words on it
_CIRCLES_ASKED = re.compile(
    r"(?:^|[.!?]\s+)(?:are|aren'?t|r) (?:we|you|u)\b[^.!?\n]{0,40}?\b(?:circles?|loop|round)\b[^.!?\n]{0,30}\?", re.I
)
"""Going in circles asked, not said ("are you going in circles? thats the 4th check run"): the person's doubt counts as
one report, not as the two that "we're going in circles" is."""
_FIRST_THEN = re.compile(
    r"\b(?:first|1st) (?:time|try|run|attempt)\b.{0,80}?\b(?:second|2nd) (?:time|try|run|attempt)|"
    r"\b(?:second|2nd) (?:time|try|run|attempt)\W{1,3}(?:the )?(?:first|1st) (?:time|try|run|attempt|one)\b",
    re.I,
)
"""A sequence described ("works first time. second time same email -> 500", "ran it again (2nd time, first run
worked)"): its "second time" counts no attempts."""


def _read_head(raw: str) -> Word:
    """What the message says by its head (people put their words first; a paste follows)."""
    if refusal(raw[:MAX_PERSON_TEXT]):  # a refusal counts by the words the person gave with it
        words = feedback(raw[:MAX_PERSON_TEXT])
        inner = read(words) if words else Word(None, 0, None, "")
        said_no = any(NOPE.match(clause) for clause in _CLAUSE.split(words))  # "... IS the full reindex. no"
        return Word("fail", inner.weight or int(said_no), inner.failure, inner.text, True, rules=tuple(ruled(raw)))
    text = _TYPO.sub(lambda m: TYPOS.get(m.group(0).lower(), m.group(0)), text_of(raw))  # "agıan" matches too
    if not text or all(_HARNESS_COMMAND.match(line) for line in text.splitlines() if line.strip()):
        return Word(None, 0, None, "")  # "/add app/views/x.erb": what the harness reads, no new direction
    pasted = _pasted_error(raw[:MAX_PERSON_TEXT])
    head = _head(text)
    again = _says(SEEN_AGAIN, SEEN_AGAIN_GATES, head)
    contrasted = _contrasted(head)  # "looks different now, but march is STILL double": said after the change granted
    persists = (again or _persist(head) or contrasted) and not NEGATED.search(head)
    question = text[:HEAD_CHARS].rstrip().endswith("?")  # the message's end, not where its head was cut
    opening = _DANGLING.sub("", head[:40])  # a cut that ends on "still" says nothing yet
    said_first = _persist(opening) and not asking.ASKED.match(head)  # "still the same... debug it": the news first
    complaint = persists and bool(asking.WHY.match(head) or TOLD.search(head) or said_first)  # a question that reports
    instructed = bool(asking.INSTRUCTION.match(head))
    requested = instructed or ((bool(asking.ASKED.match(head)) or question) and not complaint)
    if _says(CIRCLES, _CIRCLES_GATES, head) and not instructed and not _FIRST_THEN.search(head):
        return Word("fail", 1 if _CIRCLES_ASKED.search(head) else 2, pasted, text)  # asked: a doubt, said once
    if _status_question(text):
        return Word(None, 0, None, "")
    if (after := _after_status_question(text)) is not None:
        return after  # "how's it going?", "still pending?": asks how it stands, asks for nothing new
    if asking.BETTER.match(head):
        return Word(None, 0, None, text)  # "better. still slow-ish though": the attempt moved it; what is left is news
    if praised := asking.PRAISED.match(head):  # praise first: what follows is news, or what was to stay the same
        return Word(None, 0, None, text) if _moved_on(head[praised.end() :]) else Word("pass", 0, None, text)
    if (worked := asking.WORKED.match(head)) and not _moved_on(head[worked.end() :]):
        return Word("pass", 0, None, text)  # "error filter works. 207 rows. can u ...": what it was for works; a
        # failure said after it ("css ok. links ... STILL 404") is read as any report is (it may be one said before)
    if _WORKS_NOW_BUT.match(head) and not _STILL_AGAIN.search(head):
        return Word("pass", 0, None, text)  # "login works on android now 👍 but avatar upload fails": then new work
    brief = _short_opening(head)  # a short first sentence that says it persists carries the news
    short = brief is not None and (brief == head or _persist(brief)) or contrasted
    if persists and not requested and (BROKEN.search(head) or pasted or short or said_first or again or complaint):
        return Word("fail", 1, pasted, text)
    if _reported_aside(head):
        return Word("fail", 1, pasted, text)  # "go on with the plan - also, I still see X": a report beside a request
    if (
        asking.RESOLVED.search(head) or asking.APPROVAL.search(head) and not BROKEN.search(NEGATED.sub(" ", head))
    ) and not requested:
        return Word("pass", 0, None, text)
    if ((pasted or _reported_broken(head)) and not requested) or _WHY_SO.match(head):
        return Word("fail", 0, pasted, text)  # a failure they saw: a repeat only if it is the same as before
    if len(text.split()) <= 4 and PLACEHOLDER.search(raw[:MAX_PERSON_TEXT]):
        return Word(None, 0, None, "")  # "now this [Image #1]": what they see, which is unknown; no new request
    return Word(None, 0, None, text)


_HARNESS_COMMAND = re.compile(
    r"^\s*/(?:add|drop|read-only|ls|tokens|map|add-dir|clear|compact|model|cost|context|exit|help|config|status)"
    r"(?:\s+\S+)*\s*$"
)
"""A harness's own command that only sets what the agent sees or runs on (Aider's ``/add``, Claude Code's ``/compact``):
a request is ``/architect ...`` or ``/ask ...``, or words."""
_WORKS_NOW_BUT = re.compile(
    r"^\W*(?:[^.!?\n]{0,60}?(?<!nothing )(?<!never )(?<!longer )(?<!not )\b(?:works|working|fixed)\b"
    r"(?:\s+[\w-]+){0,3}?\s+now\b|(?:ok(?:ay)?|good|nice|cool|great)\W{1,3}(?:the |that |it )?[\w-]+(?: [\w-]+)?\s+"
    r"(?:works|shows|loads|renders|appears|displays|passes|is back|is fixed)(?:\s+now)?)[^\w\n]{0,12}"
    r"(?:but|though|however)\b",
    re.I,
)
"""What the attempt was for, said to work now ("login works on android now", "ok list shows."), then another problem:
the old one approved, the next one new work (reported again, it is counted from there)."""
_STILL_AGAIN = re.compile(r"\b(?:still|again|anymore|same (?:problem|issue|bug) as)\b", re.I)
_WHY_SO = re.compile(
    r"^\W*(?:but\s+)?why\s+(?:is|does)\s+(?:it|this|that)\s+(?:(?:still|keep)\s+)?(?:doing|happening|happen)"
    r"(?:\s+(?:this|that|it|again))?\b(?!\s+(?:to|with|for|in|on|when|if|here)\b)",
    re.I,
)
"""A why that complains of what the person sees ("why is it doing this, it worked yesterday", "why does it keep doing
that"): a failure seen, neither a new request nor, by itself, a repeat."""
_HEDGE = re.compile(
    r"\b(?:should(?:n'?t)?|must(?:n'?t)?|needs? to|(?:don'?t |do not )?want\w*|once|unless|"
    r"in case|so that|to avoid|never)\b",
    re.I,
)


def _moved_on(rest: str) -> bool:
    """Whether what follows the person's first words says a failure is there (still, broken, but ...)."""
    return bool(_persist(rest) or BROKEN.search(rest) or _BUT.match(rest))


def _status_question(text: str) -> bool:
    """A short question how the work stands, alone or with a short remark before or after it that neither asks for
    anything nor reports ("is it done?? its been 25 min", "hows it going? the webhooks are queueing up", "partner team
    is asking for the hostname, eta?")."""
    if len(text.split()) <= 8 and (asking.STATUS_QUESTION.match(text) or asking.STATUS_ELSEWHERE.match(text)):
        return True
    said = _REMARK.split(text.strip())  # "partner team is asking for the hostname, eta?": asked last
    if len(said) > 1 and len(text.split()) <= 2 * SHORT_WORDS and asking.STATUS_QUESTION.match(said[-1]):
        return not _asks_or_reports(text[: text.rindex(said[-1])])
    split = _status_first(text)
    if split is None:
        return False
    asked, rest = split[0], split[1].lstrip("? ").strip()
    if not (rest and len(asked.split()) <= 8 and len(rest.split()) <= 2 * SHORT_WORDS):
        return False
    if "?" in rest:  # a second question: how it stands again ("..., is it actually doing anything?"), or news
        return bool(asking.STATUS_QUESTION.match(rest))
    return not _asks_or_reports(rest)  # "any update? need this before the demo at 3": why they ask


def _asks_or_reports(remark: str) -> bool:
    """Whether the remark beside a status question asks for something or says what fails: then it is no mere why."""
    clauses = [c.strip() for c in _REMARK.split(remark) if c.strip()]
    asks = any(asking.INSTRUCTION.match(c) or asking.ASKED.match(c) for c in clauses)
    return asks or read(remark).verdict is not None


_REMARK = re.compile(r"[,.;!]+\s+|\s+[-\u2013\u2014]+\s+")
"""Where a remark beside a status question splits into clauses, each of which may ask for something."""


def _after_status_question(text: str) -> Optional[Word]:
    """A status question first and a report after it, however long ("whats taking so long? you've been editing the
    boto3 line for 40 min and the lock still isn't updated"): the report, not a request (the question asks nothing
    new)."""
    split = _status_first(text)
    rest = split[1].lstrip("?! ").strip() if split else ""
    if not rest:
        return None
    word = read(rest)
    return word._replace(text=text) if word.verdict == "fail" else None


def _status_first(text: str) -> Optional[tuple[str, str]]:
    """A message that opens with a question how the work stands, split after its first question mark: the question and
    what follows (None for any other message)."""
    asked, mark, rest = text.partition("?")
    if mark and asking.STATUS_QUESTION.match(asked + "?"):
        return asked, rest
    said = _SAID_FIRST.match(text)  # asked without a question mark: "whats going on, its been 10 min"
    return (said.group(1), said.group(2)) if said and asking.STATUS_QUESTION.match(said.group(1)) else None


_SAID_FIRST = re.compile(r"([^,.!?\n]{2,60})[,.!]+\s+(.+)", re.S)
"""A message's first clause, ended by a comma or a full stop, and the rest."""


def _reported_broken(head: str) -> bool:
    """A failure word in a short message or a short first sentence ("its not running. status says ..."), not under a
    modal or a hypothetical ("the tests must not be broken")."""
    opening = _short_opening(head)
    return opening is not None and any(not _HEDGE.search(opening[: m.start()]) for m in BROKEN.finditer(opening))


def _short_opening(head: str) -> Optional[str]:
    """The message's head when it is short, else its first sentence when that is short, else None: where a short
    report is said."""
    if len(head.split()) <= SHORT_WORDS:
        return head
    first = _SENTENCE_END.split(head, 1)[0]
    return first if len(first.split()) <= SHORT_WORDS else None


SHORT_WORDS = 12
"""The most words of a clause read as a report said in brief."""
_CONTRAST = re.compile(r"\b(?:but|pero|aber|mais)\b", re.I)


def _contrasted(head: str) -> bool:
    """A short clause after a "but" that says it persists: what changed granted, what was reported still there ("the
    chart looks different now (no border) but march is STILL double", "se ve distinto pero marzo SIGUE siendo ...")."""
    for m in _CONTRAST.finditer(head):
        clause = _SENTENCE_END.split(head[m.end() :], 1)[0].rstrip(".!?, ")
        if 0 < len(clause.split()) <= SHORT_WORDS and _persist(clause):
            return True
    return False


_SENTENCE_END = re.compile(r"(?<=[.!?])\s|\n")


HEAD_CHARS = 300
"""How much of a message is read for what it says (people put their words first; a paste follows)."""


def _head(text: str) -> str:
    """The start of a message, cut at a sentence's end: a sentence cut off reads as ending where it was cut ("the
    node is still" of "the node is still blue" would say it still fails)."""
    if len(text) <= HEAD_CHARS:
        return text
    cut = text[:HEAD_CHARS]
    end = max(cut.rfind(mark) for mark in (". ", "! ", "? ", ": ", "; ", ", "))
    return cut[: end + 1] if end >= HEAD_CHARS // 3 else _DANGLING.sub("", cut.rsplit(" ", 1)[0])


_DANGLING = re.compile(r"\s+(?:still|again)\W*$", re.I)
"""A word that would end a head cut off mid-sentence and read as the message's end ("... is still")."""


_CLAUSE = re.compile(r"(?<=[.!;?])\s+|\s+[-\u2013\u2014]+\s+")
_ASIDE = re.compile(r"\([^()]{0,200}\)")
_CONNECTOR = re.compile(r"^\W*(?:also|and|but|plus|btw|by the way|however|oh)\b\W*", re.I)


def _reported_aside(head: str) -> bool:
    """Whether a clause of a longer message says the problem persists ("proceed with the plan - also, I still see
    X"): a short clause of its own that is neither an instruction nor a question."""
    for clause in _CLAUSE.split(_ASIDE.sub("", head))[1:]:  # an aside's own "?" ends no clause
        words = _CONNECTOR.sub("", clause).strip()
        persists = _says(PERSIST, PERSIST_GATES, words)  # a bare "no" after other words declines, it reports nothing
        if not persists or NEGATED.search(words) or asking.INSTRUCTION.match(words) or words.endswith("?"):
            continue
        if len(words.split()) <= SHORT_WORDS:
            return True
    return False


def _pasted_error(raw: str) -> Optional[str]:
    """An error the person pasted (a multi-line paste's error line, or a typed ``TypeError: ...``)."""
    line = fp.error_line(raw)
    if line is None:
        return None
    typed = _PASTED.search(line)
    if typed:
        return typed.group(0)[:300]
    if "\n" in raw.strip() and not NEGATED.search(line) and not asking.INSTRUCTION.match(line):
        return line[:300]
    return None
