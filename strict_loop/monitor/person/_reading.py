"""Whether one message of the person says the work still fails (a repeat, going in circles, a refusal), or asks,
approves or says the attempt helped (``_asking``): ``read``."""

from __future__ import annotations

import re
from typing import NamedTuple, Optional

from strict_loop.monitor import fingerprint as fp
from strict_loop.monitor.calls.toolkinds import MAX_PERSON_TEXT, PLACEHOLDER, feedback, refusal, text_of
from strict_loop.monitor.person import _asking as asking
from strict_loop.monitor.person._phrases import CIRCLES, TOLD_BEFORE, TOLD_GATES
from strict_loop.monitor.person._phrases import CIRCLES_GATES as _CIRCLES_GATES
from strict_loop.monitor.person._phrases import CLAUSE_START as _CLAUSE_START
from strict_loop.monitor.person._still import STILL_FAILING

_ATTEMPT_FAILED = (
    r"^\W*(?:(?:no|nope|nah|hmm+|ugh|well|sorry|unfortunately|ok|okay)\b\W+)*(?:(?:that|this|it|you|"
    r"(?:the |your |that |this )?(?:fix|change|patch|update))\s+)?(?:still\s+)?(?:didn'?t|did not|has not|hasn'?t|"
    r"did nothing|nothing)\s*(?:work(?:ed)?|help|fix|solve|change|happen(?:ed|s)?|changed|(?:do|did) anything|"
    r"make (?:a|any) difference)"
    r"(?:\s+(?:it|this|that|anything|a thing|the (?:issue|problem|bug|error)))?(?:\s+(?:at all|either|again|still|for "
    r"me))?(?=\s*(?:$|[.,;:!?)\-]))|"
    r"^\W*(?:(?:it'?s|it is|still|exactly)\s+)?(?:the\s+)?same(?:\s+(?:thing|again))?\W*$|"
    r"^\W*(?:(?:this|that|here we go|not this)\s+)again\b(?=\s*(?:$|[.!?]))|"
    r"^\W*(?:the |your |that |this )?(?:fix|change|patch|update) (?:is not|isn'?t|does not|doesn'?t) "
    r"(?:work(?:ing)?|help(?:ing)?)\b(?=\s*(?:$|[.,;:!?)\-]))|"
    r"^\W*(?:still\s+)?no (?:luck|dice|joy)\b(?=\s*(?:$|[.,;:!?)\-]))"
)
"""A verdict on the attempt, said first and alone ("didn't work.", "nothing happened", "same", "no luck"): the problem
stayed. "nothing happens when I click Save" is a symptom (first reported or not), read as one."""
_DELIVERABLE = (
    r"missing (?:the |any |some )?(?:unit |integration |e2e |edge[- ]case )?(?:tests?|docs?|documentation|types|"
    r"typings|readme|changelog|coverage)\b"
)
"""Work not done yet ("still missing tests for the parser"): a request, unlike "still missing the header"."""
_OTHER_LANGUAGES = "|".join(f"(?:{pattern})" for _, _, pattern in STILL_FAILING)
"""The same in the languages people most often write to an agent in (``STILL_FAILING``, a row each)."""
_OPENS = (
    rf"{_CLAUSE_START}(?:(?:it'?s|it is|it|that'?s|this is|and|but|yet|hmm+|ugh|nope|no|lol|lmao|bruh|dude|ok|okay|"
    r"well|so)\s+)?still\s+(?!(?:need|needs|"
    r"needed|want|wants|wanted|have|has|had|got|gotta|to|think|thinking|prefer|like|love|works?|good|fine|ok|okay|great|"
    r"correct|right|valid|true|relevant|useful|possible|a bit|a little|slightly|somewhat|too|kind of|kinda|more|less|"
    r"waiting|learning|reading|deciding|planning|in progress|todo|open|unclear|curious|wondering|on track|passes|on|"
    rf"one|{_DELIVERABLE}|"
    r"passing|green|compiles|supported|used|uses|using|part of|the plan|the case|here|around|i|we|you|he|she|they|a|an|"
    r"looks? (?:good|great|fine|ok|okay|right|correct|nice)|working (?:fine|well|great|ok|okay|as))\b)[\w'\"`#$/-]|"
    rf"{_CLAUSE_START}(?:(?:dude|bruh|lol|ugh|nope|no|hmm+|well|so|and|but)\W+)?(?:(?:it'?s|it is|that'?s|thats)\s+)?"
    r"(?:exactly |literally |still |just )?(?:the )?same(?:[.!]|\s+(?!(?:for|as|with|"
    r"goes|here|way|applies|should|needs?|in|on|to|idea|logic|pattern|approach|style|format|structure|design|rules?|"
    r"layout|size|color|colour|name|order|thing for)\b)[\w'\"`#$-]+(?:\s+[\w'\"`#$/.-]+){0,3}?\s*(?:[.,;:!]|$))|"
    r"\byou(?:'ve| have)?\s+(?:just\s+|literally\s+|went and\s+)?(?:(?!(?:can|could|should|would|will|may|might|must|"
    r"need|needs|have|had|to|want|do|did|don't)\b)[\w-]+\s+)?(?:did|done|ran|run|wrote|put|made|broke|broken|undid|"
    r"undone|(?!(?:fixed|solved|resolved|nailed|improved|helped|saved|mentioned|asked|said|explained|answered)\b)\w+ed)"
    r"\b[^.!?\n]{0,50}?\bagain\b|^\W*again\s*[.!?]|"
    r"\b(?:original|old|first|previous)\b[^.!?\n]{0,60}?\b(?:is|are) back\b|^\W*still\s*[.!]+\s+\S|"
    r"(?<!\S)(?!(?:try|do|run|check|test|it|this|that|thanks|sorry|back|you|once|over|and|green|working|works|passing|"
    r"fine|ok|okay|good|great|normal|online|up|alive|fast|clean|stable|healthy|soon|later|tomorrow|again)\s)\S+\s+again"
    r"\s*[.!]+(?=\s|$)|"
    r"\bback to the (?:original|old|first|same) (?:crash|error|bug|issue|problem|behaviou?r|failure|exception)\b|"
    r"\b(?:not|n'?t)\s+(?:work(?:ing)?|fixed|resolved|solved)\s+still\b|"
    r"\bnot (?:\w+ed|sent|shown|built|run|found|seen|done|written|thrown|working|firing|rendering|showing|loading) "
    r"again\b|"
    r"(?<!\bshould )(?<!\bmust )(?<!\bto )\b(?:is|are|was|looks?|stays?|remains?|stayed|remained)\s+(?:(?:still\s+)?"
    r"(?:exactly|byte-for-byte|literally|completely|totally|100%|still)\s+(?:the same|identical|unchanged)\b"
    r"(?!\s+(?:to (?!before)|as (?!before)|in|for|across|between|when)\b)|(?:the same|identical|unchanged) "
    r"(?:as|to) before\b)"
)
"""A clause that opens on the news: "still white", "same. white.", "you did it again", "the old error is back", "the
plan output is byte-for-byte the same"; not "still need tests", "still works", "same for the footer"."""
_NEG = r"(?:does|did|is|was|are|were|do|has|have|had|can|ca|could|would|should|wo|ai)n'?t"
PERSIST = fp.Later(
    rf"(?<!\bshould )(?<!\bmust )(?<!\bwill )(?<!\bcan )(?<!\bto )(?<!\bwould )(?<!\bcould )"
    r"\bstill\b,?(?!\s+(?:want|wants|need|needs|prefer|would like|have to|got to|gotta|one (?:more )?thing)\b|"
    rf"\s+{_DELIVERABLE})"
    rf"(?:\s+\w+){{0,3}}?\s+(?:fail\w*|broken|error(?:s|ing)?|not|{_NEG}|no|the same|same|shows?|"
    r"showing|see|seeing|getting|get|happen\w*|there|empty|blank|missing|wrong|crash\w*|hang\w*|stuck|loading|says|"
    r"prints|redirects|lands|resets|flickers|freezes|spins|bounces|disconnects|dies|times out|opens|closes|loops|"
    r"reloads|drops|duplicates|renders|rendering|flashes|overlaps|leaks|logs (?:me )?out|kicks (?:me )?out|pops up|"
    r"truncated|cut off|blocked|frozen|duplicated|ignored|shown|displayed|visible|present|red|unpopulated|"
    r"an? (?:issue|problem|bug)|cannot|only|zero|0|doing (?:it|this|that|the same)|does nothing|nothing|throws?|"
    r"throwing)\b|"
    # a measurement that stayed: "p99 is still ~850", "still 450k gzipped", "still ~1.8s"; "none of this is moving it"
    r"\bstill\s+(?:at\s+)?(?:~|\u2248|about\s+|around\s+|like\s+)\d|\bstill\s+(?:at\s+)?\d[\d.,]*\s*(?:%|ms|\u00b5s|us|ns|"
    r"s|sec|secs|seconds|mins?|k|kb|mb|gb|x|rps|qps|req/s)(?!\w)|"
    r"\bnone of (?:this|that|it|these|those|them) (?:is |are |was |were |has |have )?(?:moving|moved|changing|changed|"
    r"helping|helped|improving|improved|working|worked)\b|"
    # what the attempts did (a change, not what the person clicks): "shrinking the batch does nothing", "the number
    # doesn't even wiggle", "again 0.7131.", "every. single. run."
    r"\b(?:chang|shrink|increas|decreas|lower|rais|add|remov|bump|tweak|adjust|tun|swapp|switch|restart|reinstall|"
    r"clear|delet|rebuild|rerun|retry|reduc|sett|disabl|enabl|upgrad|downgrad|pinn)ing\b[^.!?\n]{0,40}?\b(?:does|did) "
    r"(?:nothing|not help|n'?t help)\b|"
    r"\b(?:does|did|do|is|has)(?:n'?t|nt| not) (?:even )?(?:budge|budged|wiggle|wiggled|move|moved)\b"
    r"(?!\s+(?:to|into|the|it|them|this|that|on|up|down|over)\b)|"
    # what it is said not even to do, as a person sees it: "the button doesnt even change", "it doesn't even open"
    r"\b(?:does|did|do|is|has)(?:n'?t|nt| not) even (?:change|changed|open|opened|show|showed|load|loaded|render|"
    r"rendered|respond|responded|react|reacted|register|registered|fire|fired|trigger|triggered|start|started|"
    r"compile|compiled|appear|appeared|update|updated|flicker|blink)\b|"
    rf"{_CLAUSE_START}again\s+(?:[\d.,/]*\d%?|the same|same|empty|blank|nan|null|oom|zero)(?=\s*(?:[.!,;:]|$))|"
    r"\bevery\W{1,3}single\W{1,3}(?:time|run|build|job|attempt)\b|"
    r"\b(?:fail\w*|broken|errors?|crash\w*|happen\w*|same|back|wrong|stuck|blank|empty|missing|gone|down) again\b|"
    r"\b(?:broke|breaks|breaking|fails|failing|crashes|crashing)(?: \w+)? again\b|"
    r"\b(?:errors?|issues?|problems?|bugs?|crash(?:es)?|failures?|exceptions?)\s+(?:is|are|was|were|came|comes|has "
    r"come|have come) back\b(?!\s+(?:in|on|online|to|from|up)\b)|"
    r"\b(?:it|errors?|bugs?|issues?|problems?|crash(?:es)?)\s+(?:has\s+|have\s+)?(?:reappeared|reappears|keeps "
    r"reappearing)\b|\bagain (?:the same|fail\w*|broken|errors?|crash\w*|nothing)\b|"
    r"(?<!not the )(?<!no longer the )\bsame (?:(?:\d{1,3}|two|three|four|five|couple of|few) )?"
    r"(?:error|errors|issue|problem|result|output|behaviou?r|bug|message|"
    r"exception|failure|crash|traceback|backtrace|stack ?trace|warnings?|[1-5]\d\d)\b"
    r"(?!\s+(?:handling|handler|format|formatting|codes?|types?|class|classes|messages? format)\b)|"
    r"\bsame thing (?:happens|happened|happening|again)\b|"
    r"\b(?:not|n'?t|never|nothing(?:'s| has)?) (?:been )?(?:fixed|resolved|solved|changed)\b"
    r"(?!\s+(?:in|on|for|about|to)\b)|\bstill\s+(?:an?\s+|http\s+)?[1-5]\d\d\b(?!\s+(?:more|left|remaining|to|of|out|ms|"
    r"[a-z]+s)\b)|\bno (?:change|difference|improvement|effect)\b(?!\s+(?:needed|required|necessary|to)\b)|"
    r"\bsame as before\b(?!\s+(?:but|for|"
    r"with|on|in)\b)|\bstill\W*$|^\W*(?:still|again)(?:\W*$|\s*[:\n])|"
    # the whole message a state that stayed ("still a string", "still an empty array"), not "still a good idea"
    r"^\W*(?:(?:it'?s|it is|that'?s|nope|no)\W+)?still an? (?!(?:bit|little|few|couple|lot|good|great|nice|fine|valid|"
    r"useful|possible|draft|work in progress|wip|todo|question)\b)[\w'\"`$/.-]+(?:\s+[\w'\"`$/.-]+){0,2}[\s.!]*$|"
    r"\b(?:errors?|issues?|problems?|bugs?|failures?)\s+still\s+(?:persists?|remains?|exists?|occurs?|occurring)\b|"
    r"(?<!\bone )(?<!\ban )\b(?:errors?|issues?|problems?|bugs?|failures?)\s+(?:persists?|remains?)\b"
    r"(?!\s+(?:in|to|on|across|for|open|unchanged|visible|that)\b)|\byou did it again\b|\bsame old (?:error|issue|"
    r"problem|bug|thing)\b|(?:n't|\bnot) (?:work|working|help|helping) again\b|"
    r"\b(?:it|this|that)\s+(?:still\s+)?persists\b|"
    r"\bkeeps? (?:failing|crashing|breaking|showing up|popping up)\b|"
    r"\bsame thing\b(?=\s*(?:[,.;:!\-]|$))|\bstill[.!]+\s+(?:not|broken|failing|the same)\b|"
    r"\b(?:it'?s|its|it is|that'?s|this is|now|even|getting|got|made it|makes it) (?:even |much |way |a lot |only )?"
    r"worse\b(?!\s+(?:for|if|when|with|on)\b)|"
    r"\bstill (?:doing|does) (?:the|that|this) (?:same )?thing\b|"
    r"\b(?:it|this|that|errors?|bugs?|issues?|problems?)\s+keeps? (?:happening|coming back|showing up)\b|"
    rf"{TOLD_BEFORE}|{_ATTEMPT_FAILED}|{_OTHER_LANGUAGES}|{_OPENS}",
    re.I,
)
"""Words that say the problem persists after an attempt ("that made it worse" too): a repeat, whatever its words."""
SEEN_AGAIN = re.compile(
    r"\b(?:seeing|getting|see|get|it'?s|it is|that'?s|shows?|showing|does|did) (?:exactly |basically |pretty much |"
    r"kind of |just )?(?:the )?same (?:\w+\s+){0,2}as (?:before|last time|earlier|previously)\b|"
    r"\bsame as (?:yesterday|this morning|last night|last week|the last (?:run|build|deploy|time))\b|"
    r"\bwhat it (?:did|does|was doing|showed) (?:last time|before)\b|\b(?:it'?s|it is|i'?m (?:still )?(?:seeing|"
    r"getting)|i (?:still )?(?:see|get)) (?:exactly |basically |just )?the same (?:\w+\s+)?(?:page|screen|error|"
    r"result|output|problem|issue|behaviou?r|message|crash|thing|bug|failure|state|response)\b(?!\s+(?:as|that)\b)|"
    r"\b(?:fails?|failing|breaks?|crash(?:es)?|errors? out) (?:exactly |just )?(?:like|as) (?:before|last time)\b|"
    r"\b(?:it|that|this|the (?:fix|change|patch))\s+(?:didn'?t|did not|hasn'?t|has not)\s+(?:fix(?:ed)?|change(?:d)?|"
    r"solve(?:d)?|help(?:ed)?)\s+(?:anything|a thing|it|the (?:problem|issue|bug))\b|"
    r"\bnothing(?:'s| is| has)? (?:different|changed)(?=\s*(?:[.!;,]|$))|(?:^|[.!?]\s*)like (?:before|last time)\W*$|"
    r"\b(?:didn'?t|did not) do (?:anything|a thing)\b|\bbut not the (?:problem|issue|bug|behaviou?r)\b|"
    r"\bsame (?:\w+\s+){0,2}as (?:the |my |our )?(?:overnight|first|last|previous|original|earlier) (?:run|time|one|"
    r"build|job|attempt)\b|"
    r"\b(?:it'?s|it is|they'?re) back\b(?! (?:up|to|in|on|online|end|from)\b)|\b(?:you said|you claimed|tu as dit "
    r"que)\b[^.!?]{0,40}?(?:fixed|resolved|working|sorted|solved|corrig|r[\u00e9e]gl)",
    re.I,
)
"""The person seeing again what they saw before, wherever in a long message ("I'm seeing the same thing as before",
"it's the same white page on refresh", "that's what it did last time too"): a report, not a request."""
_SEEN_AGAIN_GATES = ("same", "what it", "like ", " as ", "n't", " not ", "nothing", "back", "said", "dit")
"""Lowercase literals one of which ``SEEN_AGAIN`` cannot match without."""
_NOPE = re.compile(
    r"^\W*(?:(?:lol|haha|ugh|hmm+|ok|well)\W+)?(?:nope|nah|no)\b(?=[\s,.!-]*(?:$|[^\w\s,.!-]+\s*$|it|still|same|also "
    r"same|again|doesn|didn|the|that|this|"
    r"not(?!\s+(?:that|this|the|those|these|there|here|in|on|yet)\b)|"
    r"nothing|that didn)|(?<=nope)\s*[.!]+(?:\s|$))",
    re.I,
)
"""A bare no first ("nope", "no, still broken", "nope. new terminal, jot --version -> 0.3.1": a "nope" said as a
sentence of its own, then what they see): read apart, as no literal gates it. "no. use the v2 endpoint" corrects the
plan."""
_PERSIST_GATES = (
    ("still", "again", "back", "reappear", "same", "fixed", "resolved", "solved", "changed", "no change")
    + ("no difference", "no improvement", "no effect", "persist", "remain", "keep")
    + ("didn", "did not", "did nothing", "has not", "hasn", "nothing", "isn", "is not")
    + ("doesn", "does not", "no luck", "no dice", "no joy", "identical", "unchanged")
    + ("does nothing", "help", "budge", "wiggle", "move", "single", "none of", "worse")
    + TOLD_GATES
    + tuple(gate for _, gates, _ in STILL_FAILING for gate in gates)
)
"""Lowercase literals one of which ``PERSIST`` cannot match without (its every branch names one): most requests hold
none, and the pattern is not tried."""


def _says(pattern: re.Pattern[str] | fp.Later, gates: tuple[str, ...], text: str) -> bool:
    """``pattern`` in ``text``, read behind its literals first (in C): a pattern of many branches is slow to fail."""
    return fp.may_match(fp.folded(text), gates) and bool(pattern.search(text))


def _persist(text: str) -> bool:
    """Whether ``text`` says the problem persists (``PERSIST``, or a bare no first)."""
    return bool(_NOPE.match(text)) or _says(PERSIST, _PERSIST_GATES, text)


BROKEN = re.compile(
    r"\b(?:(?:does|did|is|was|are|were|do)(?:n'?t| not) (?:work|working|load|loading|show|showing|change|help|fix|"
    r"render|compile|build|run|start|appear|updated|applied|saved|deployed)|not (?:working|loading|showing|there|"
    r"fixed|updated|applied|saved|deployed|running|starting|responding|connecting)|broken|fails?|failing|"
    r"keeps? (?:restarting|crashing|dying)|(?:connection|permission) (?:refused|"
    r"denied)|"
    r"failed|crash(?:es|ed|ing)?|errors?|exception|wrong|nope|no luck|blank|empty|missing|unpopulated|stuck|hangs?|"
    r"broke|disappeared|(?:won'?t|can'?t|isn'?t|aren'?t|doesn'?t|didn'?t) (?:start|load|open|close|save|respond|"
    r"update|work|show|render|compile|build|run|connect|clickable|responsive|running|starting|working|loading)|"
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


TYPOS = {"sitll": "still", "stlil": "still", "stll": "still", "stilll": "still", "borken": "broken", "brokne": "broken"}
TYPOS |= {"agian": "again", "agin": "again", "smae": "same", "saem": "same", "wokring": "working", "workign": "working"}
TYPOS |= {"wroking": "working", "fiexd": "fixed", "fixd": "fixed", "eror": "error", "erorr": "error", "errror": "error"}
"""Slips of the keys a person in a hurry makes in the words that carry the news ("sitll borken"), read as meant."""
_TYPO = re.compile(r"\b(?:" + "|".join(sorted(TYPOS, key=len, reverse=True)) + r")\b", re.I)


class Word(NamedTuple):
    """What one message of the person says about the work."""

    verdict: Optional[str]  # "fail", "pass" or None (a request, a question, a new symptom, nothing readable)
    weight: int  # how much a failed check counts toward person_reports: 1 a repeat, 2 going in circles, 0 otherwise
    failure: Optional[str]  # a pasted error (its line), else None
    text: str  # the words, without placeholders, on one line
    refused: bool = False


def read(raw: str) -> Word:
    """What the person's message says (see the module's docstring for what counts as a failed check): by its head,
    else, after a paste, by its last line (``<a terminal's output>\n\nstill nothing``: their words after what they
    saw)."""
    word = _read_head(raw)
    if word.verdict is not None:
        return word
    lines = [line for line in raw[:MAX_PERSON_TEXT].splitlines() if line.strip()]
    if len(lines) < 2 or len(lines[-1].split()) > _LAST_WORDS:
        return word
    last = _read_head(lines[-1])
    if last.verdict != "fail":
        return word
    return Word("fail", last.weight, last.failure or _pasted_error(raw[:MAX_PERSON_TEXT]), word.text or last.text)


_LAST_WORDS = 8  # how short a last line after a paste is to be read as the person's own words on it


def _read_head(raw: str) -> Word:
    """What the message says by its head (people put their words first; a paste follows)."""
    if refusal(raw[:MAX_PERSON_TEXT]):  # a refusal counts by the words the person gave with it
        words = feedback(raw[:MAX_PERSON_TEXT])
        inner = read(words) if words else Word(None, 0, None, "")
        return Word("fail", inner.weight, inner.failure, inner.text, refused=True)
    text = _TYPO.sub(lambda m: TYPOS.get(m.group(0).lower(), m.group(0)), text_of(raw))  # "agıan" matches too
    if not text:
        return Word(None, 0, None, "")
    pasted = _pasted_error(raw[:MAX_PERSON_TEXT])
    head = _head(text)
    again = _says(SEEN_AGAIN, _SEEN_AGAIN_GATES, head)
    persists = (again or _persist(head)) and not NEGATED.search(head)
    question = text[:HEAD_CHARS].rstrip().endswith("?")  # the message's end, not where its head was cut
    opening = _DANGLING.sub("", head[:40])  # a cut that ends on "still" says nothing yet
    said_first = _persist(opening) and not asking.ASKED.match(head)  # "still the same... debug it": the news first
    complaint = persists and bool(asking.WHY.match(head) or TOLD.search(head) or said_first)  # a question that reports
    instructed = bool(asking.INSTRUCTION.match(head))
    requested = instructed or ((bool(asking.ASKED.match(head)) or question) and not complaint)
    if _says(CIRCLES, _CIRCLES_GATES, head) and not instructed:
        return Word("fail", 2, pasted, text)
    if _status_question(text):
        return Word(None, 0, None, "")
    if (after := _after_status_question(text)) is not None:
        return after  # "how's it going?", "still pending?": asks how it stands, asks for nothing new
    if asking.BETTER.match(head):
        return Word(None, 0, None, text)  # "better. still slow-ish though": the attempt moved it; what is left is news
    brief = _short_opening(head)  # a short first sentence that says it persists carries the news
    short = brief is not None and (brief == head or _persist(brief))
    if persists and not requested and (BROKEN.search(head) or pasted or short or said_first or again or complaint):
        return Word("fail", 1, pasted, text)
    if _reported_aside(head):
        return Word("fail", 1, pasted, text)  # "go on with the plan - also, I still see X": a report beside a request
    if (
        asking.RESOLVED.search(head) or asking.APPROVAL.search(head) and not BROKEN.search(NEGATED.sub(" ", head))
    ) and not requested:
        return Word("pass", 0, None, text)
    if (pasted or _reported_broken(head)) and not requested:
        return Word("fail", 0, pasted, text)  # a failure they saw: a repeat only if it is the same as before
    if len(text.split()) <= 4 and PLACEHOLDER.search(raw[:MAX_PERSON_TEXT]):
        return Word(None, 0, None, "")  # "now this [Image #1]": what they see, which is unknown; no new request
    return Word(None, 0, None, text)


_HEDGE = re.compile(
    r"\b(?:should(?:n'?t)?|must(?:n'?t)?|needs? to|(?:don'?t |do not )?want\w*|once|unless|"
    r"in case|so that|to avoid|never)\b",
    re.I,
)


def _status_question(text: str) -> bool:
    """A short question how the work stands, alone or with a short remark after it that neither asks for anything nor
    reports ("is it done?? its been 25 min", "hows it going? the webhooks are queueing up")."""
    if len(text.split()) <= 8 and asking.STATUS_QUESTION.match(text):
        return True
    split = _status_first(text)
    if split is None:
        return False
    asked, rest = split[0], split[1].lstrip("? ").strip()
    if not (rest and len(asked.split()) <= 8 and len(rest.split()) <= SHORT_WORDS) or "?" in rest:
        return False
    return not (asking.INSTRUCTION.match(rest) or asking.ASKED.match(rest) or read(rest).verdict is not None)


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
    return (asked, rest) if mark and asking.STATUS_QUESTION.match(asked + "?") else None


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
        if not _persist(words) or NEGATED.search(words) or asking.INSTRUCTION.match(words) or words.endswith("?"):
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
