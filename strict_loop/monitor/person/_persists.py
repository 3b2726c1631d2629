"""The words that say the work still fails, in English (and, through ``_still``'s rows, the other languages
people write in): ``PERSIST``, the same seen again (``SEEN_AGAIN``), a bare no first (``NOPE``). Pure patterns.

Why apart from ``_reading``: these grow with every way a person says "still broken" (each round of sessions adds
some); ``_reading`` decides what a whole message says, which changes for other reasons (where a message's words
are, a paste, a question first).
"""

from __future__ import annotations

import re

from strict_loop.monitor import fingerprint as fp
from strict_loop.monitor.person._phrases import CLAUSE_START as _CLAUSE_START
from strict_loop.monitor.person._phrases import TOLD_BEFORE, TOLD_GATES
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
    # the same, hedged: "18,263. barely moved", "hardly changed", "pretty much the same", "no real change"
    r"\b(?:barely|hardly|scarcely) (?:moved|moves|changed|changes|budged|any (?:change|difference))\b"
    r"(?!\s+(?:to|into|the|it|them|this|that|on|up|down|over)\b)|"
    r"(?:^|[.!?;,]\s*|\b(?:is|are|was|looks?|stays?|stayed)\s+)(?:pretty much|basically|practically|virtually|"
    r"essentially|more or less) (?:the same|identical|unchanged)\b(?!\s+(?:as|to|for|in|across|between|when)\b)|"
    r"\bno real (?:change|difference|improvement)\b|"
    # what it is said not even to do, as a person sees it: "the button doesnt even change", "it doesn't even open"
    r"\b(?:does|did|do|is|has)(?:n'?t|nt| not) even (?:change|changed|open|opened|show|showed|load|loaded|render|"
    r"rendered|respond|responded|react|reacted|register|registered|fire|fired|trigger|triggered|start|started|"
    r"compile|compiled|appear|appeared|update|updated|flicker|blink)\b|"
    rf"{_CLAUSE_START}again\s+(?:[\d.,/]*\d%?|the same|same|empty|blank|nan|null|oom|zero)(?=\s*(?:[.!,;:]|$))|"
    # a state that stayed, said first in a clause of its own: "search still stale. is it moving?", "cache still old"
    r"^\W*(?:(?:the|my|our|your) )?[\w.-]+(?: [\w.-]+)? (?:is |are )?still (?!(?:want|need|have|to|fine|ok|okay|good|"
    r"great|green|there|here|open|on|up|alive|valid|correct|right|free|ready|new|fresh|fast)\b)"
    r"[a-z-]{3,}(?<!s)(?<!ing)(?=\s*(?:[.!,;]|$))|"
    r"\bevery\W{1,3}single\W{1,3}(?:time|run|build|job|attempt)\b|"
    r"\b(?:fail\w*|broken|errors?|crash\w*|happen\w*|same|back|wrong|stuck|blank|empty|missing|gone|down) again\b|"
    r"\b(?:broke|breaks|breaking|fails|failing|crashes|crashing)(?: \w+)? again\b|"
    # a symptom the person sees, said of it with "again" ("it overlaps again", "the header covers the content again",
    # "it disappears again when I scroll"): a symptom's verb as said of the thing, never the bare verb of a request;
    # not a hang ("it's hanging again, ..."), said as often of the run still going as of a new one
    r"\b(?:overlaps|overlapping|covers|covering|hides|hiding|disappears|disappeared|disappearing|vanish(?:es|ed|ing)|"
    r"flickers|flickering|freezes|freezing|froze|spins|spinning|disconnects|disconnected|dies|"
    r"died|timed out|times out|loops|looping|resets|drops|dropped|duplicates|duplicated|jumps|jumping|shifts|shifting|"
    r"glitches|glitching|lags|lagging|logs (?:me )?out|logged (?:me )?out|kicks (?:me )?out|kicked (?:me )?out|"
    r"redirects|redirected|overflows|overflowing|scrolls away|cuts off|cut off)\b[^.!?\n]{0,40}?\bagain\b|"
    # a clause opening on "again" that tells what is seen ("again the header is hidden", "and again it shows 0
    # items"); not "again, run the tests"; "it's doing it again"
    rf"{_CLAUSE_START}(?:(?:and|but|now|so)\s+)?again,?\s+(?:it|it'?s|this|that|they|the|my|our|same|still|nothing|"
    r"no)\b(?!\s+(?:way|one|next)\b)|\b(?:it'?s|its|it is|it keeps) doing (?:it|that|this|the same(?: thing)?) again\b|"
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
    r"\bsame as (?:yesterday|this morning|last night|last week|the last (?:run|build|deploy|time)|"
    r"an? (?:hour|while) ago|(?:\d+|a few|two|three|ten|twenty) (?:min(?:ute)?s?|hours?) ago)\b|"
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
    r"\b(?:it'?s|it is|they'?re) back\b(?! (?:up|to|in|on|online|end|from)\b)|"
    # what the person tried on their side, then "same": "tried incognito, same", "hard refresh -> same thing"
    r"\b(?:tried|retried|restarted|reloaded|refreshed|hard[- ]?refresh\w*|cleared|rebuilt|reinstalled|redeployed|"
    r"incognito|logged (?:out|in))\b[^.!?\n]{0,40}?(?:,|->|\u2192|\s-|\u2014|:)\s*(?:still\s+)?(?:the\s+)?same"
    r"(?:\s+(?:thing|result|error|page|screen))?(?=\s*(?:[.!;,]|$))|\b(?:you said|you claimed|tu as dit "
    r"que)\b[^.!?]{0,40}?(?:fixed|resolved|working|sorted|solved|corrig|r[\u00e9e]gl)",
    re.I,
)
"""The person seeing again what they saw before, wherever in a long message ("I'm seeing the same thing as before",
"it's the same white page on refresh", "that's what it did last time too"): a report, not a request."""
SEEN_AGAIN_GATES = ("same", "what it", "like ", " as ", "n't", " not ", "nothing", "back", "said", "dit")
"""Lowercase literals one of which ``SEEN_AGAIN`` cannot match without."""
NOPE = re.compile(
    r"^\W*(?:(?:lol|haha|ugh|hmm+|ok|well)\W+)?(?:nope|nah|no)\b(?=[\s,.!-]*(?:$|[^\w\s,.!-]+\s*$|it|still|same|also "
    r"same|again|doesn|didn|the|that|this|"
    r"not(?=\W*$|\s+(?:fixed|working|work|works|loading|showing|rendering|displaying|gone|better|changed|resolved|"
    r"solved|really|quite|even|at all|happening|it|yet fixed)\b)|"  # "no, not fixed"; not "no, not pypi" (a correction)
    r"nothing|that didn)|(?<=nope)\s*[.!]+(?:\s|$))",
    re.I,
)
"""A bare no first ("nope", "no, still broken", "nope. new terminal, jot --version -> 0.3.1": a "nope" said as a
sentence of its own, then what they see): read apart, as no literal gates it. "no. use the v2 endpoint" corrects the
plan."""
PERSIST_GATES = (
    ("still", "again", "back", "reappear", "same", "fixed", "resolved", "solved", "changed", "no change")
    + ("no difference", "no improvement", "no effect", "persist", "remain", "keep")
    + ("didn", "did not", "did nothing", "has not", "hasn", "nothing", "isn", "is not")
    + ("doesn", "does not", "no luck", "no dice", "no joy", "identical", "unchanged")
    + ("does nothing", "help", "budge", "wiggle", "move", "single", "none of", "worse", "barely", "hardly", "scarcely")
    + ("pretty much", "basically", "practically", "virtually", "essentially", "more or less", "no real")
    + TOLD_GATES
    + tuple(gate for _, gates, _ in STILL_FAILING for gate in gates)
)
"""Lowercase literals one of which ``PERSIST`` cannot match without (its every branch names one): most requests hold
none, and the pattern is not tried."""
