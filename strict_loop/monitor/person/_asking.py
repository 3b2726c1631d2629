"""What a person's message asks for or grants: an instruction, a question, a question about how the work stands, the
attempt helping, an approval. Pure patterns.

Why apart from ``_reading``: these decide that a message is no report of a failure, whatever failure words are in it
("make sure there are no build errors", "still pending?", "better. still slow-ish though", "not broken anymore").
They grow with the ways people ask and approve; ``_reading`` reads the ways they say it still fails, and decides.
"""

from __future__ import annotations

import re

INSTRUCTION = re.compile(
    r"^\W*(?:please\s+)?(?:make sure|ensure|(?:double[- ]?)?check (?:that|if|whether)|verify|confirm|remember|"
    r"don'?t|do not|never|always|avoid|keep(?!\s+(?:getting|seeing|having))|add|implement|create|write|update|build|"
    r"run|set up|next|then|also|let'?s|can you|could "
    r"you|would you|i want|we need|i need|make|use|remove|delete|rename|move|refactor|skip|forget|try|change|show|"
    r"apply|copy|port|mirror|reuse|translate|localize|convert|rewrite|generate|document|format|sort|split|merge|wrap|"
    r"hide|put|give|handle|support|allow|ignore|review|document|style|pick|reference|prioritize|do|go|debug|"
    r"investigate|look into|find|retry|re-?run|summari[sz]e|explain|throw|raise|catch|revert|undo|restore|replace|"
    r"disable|enable|install|upgrade|clean|(?:fix|log|test|return|deploy|commit|push|print)(?=\s+(?:the|a|an|this|that|"
    r"it|all|any|my|our|these|those|each|every|`))|"
    r"now(?!\s+(?:it|it's|its|this|that|we|i|i'm|there|there's|nothing|the)\b))\b"
    r"(?!\s+(?:still|is|are|was|were|isn'?t|doesn'?t|didn'?t|fails|failed|broke|broken|keeps|shows|says|"
    r"gives|throws|returns|crashes|has|had|looks|did|does|made|changed|worked|works)\b)",
    re.I,
)
"""A message that starts by asking for something: a failure it names is what to avoid, not what happened. A
question (but "why ...?") asks too."""
WHY = re.compile(r"^\W*(?:but\s+)?why\b", re.I)  # a question that complains ("why is it still empty?")
ASKED = re.compile(
    r"^\W*(?:(?:ok(?:ay)?|so|and|also|btw|hey|quick (?:q|question)|just curious|one more thing)\W+)*"
    r"(?:is|are|does|did|do|can|could|should|will|would|has|have)\b(?:[^.!?\n]|\.(?=\d)){0,200}\?|"
    r"^\W*(?:(?:i'?m |just )?(?:curious|wondering) (?:whether|if))\b[^.!?\n]{0,200}\?|"
    r"^\W*(?:if|when|whenever|in case|unless|once)\b[^.;?!\n]{0,100},\s*(?!(?:it|it's|this|that|i|i'm|we|you|the|there|"
    r"nothing|still)\b)[a-z]+",
    re.I,
)
"""A question first (its answer is asked for) or a condition and what to do then ("if the error persists, fall back to
the cache"): the message asks, whatever it names."""
STATUS_QUESTION = re.compile(
    r"^\W*(?:(?:so|and|hey|ok(?:ay)?|well|hmm+)\W+)?(?:how(?:'?s| is| are)\s+(?:it|things|we|that|everything|the \w+)"
    r"(?:\s+(?:going|looking|doing|coming along))?|any\s+(?:luck|progress|news|updates?)(?:\s+(?:yet|so far))?|"
    r"(?:is|are|did|does|has)\s+(?:the \w+|\w+)\s+(?:\w+\s+)?(?:yet|now|done|green|working|fixed|up|"
    r"running|ready|deployed|passing|finished|complete|through|ok|okay|healthy|alive)|"
    r"(?:done|ready|green|up|fixed|working|finished) yet|"
    r"status|what(?:'s| is) the status|where are we(?: at)?|what(?:'?s| is) (?:going on|happening)|"
    r"(?:what'?s|what is|why is (?:it|this|that)) taking (?:so|this|that) long|"
    r"how (?:much )?long(?:er)?(?: now| still| left)?|"
    r"how long (?:does|will|should|is) (?:it|this|that|an? \w+)(?: (?:usually|normally|typically))? (?:going to )?"
    r"take(?: (?:usually|normally|typically))?|"
    r"eta|(?:is|are) (?:it|you|this|that) (?:still |actually |even |really )?(?:stuck|hung|frozen|alive|"
    r"doing anything))"
    r"\s*(?:yet|now|so far)?\s*\?*\s*$|"
    r"^\W*still\s+(?:pending|running|building|deploying|waiting|queued|going|in progress|on it|at it)\s*\?+\s*$|"
    r"^\W*(?:(?:dude|bro|man|hey|ok|so|um+)\W+)?(?:it'?s|its|it has|that'?s|this has|you'?ve)\s+been\s+"
    r"(?:\w+\s+){0,3}?(?:like|about|almost|over|nearly|"
    r"more than)?\s*"
    r"\d+\s*(?:s|secs?|seconds?|m|mins?|minutes?|h|hrs?|hours?)\b(?:\s+(?:now|already))?\s*\?*\s*$|"
    r"^\s*(?:(?:hello|hey|and|so|well|um+|uh+|hm+)\s*)?[?!.\u2026]*\?[?!.\u2026]*\s*$|"
    r"^\W*(?:why (?:is|isn'?t) (?:it|this|that) (?:not )?(?:done|finished|ready) yet|(?:still )?not (?:done|finished) "
    r"yet)\s*\?+\s*$",
    re.I,
)
"""A short question about how the work stands: not a report (nothing was seen) and not a new request. "still
broken?" after a claimed fix is a report said as a question; "still pending?" asks how a job stands, and "it's been
like 15 min??" is the same question said as impatience, as is "??" alone."""
STATUS_ELSEWHERE = re.compile(
    r"^\W*(?:(?:y|e|und|alors|\u043d\u0443|\u0438|e a[i\u00ed]|e agora|y ahora)\W+)?"
    # "já faz uns 25 min... tá travado?": how long it has been, said first
    r"(?:(?:j[a\u00e1] faz|ya van|ya son|schon|d[e\u00e9]j[a\u00e0]|\u0443\u0436\u0435) (?:uns |unos |like )?\d{1,3} ?"
    r"(?:min\w*|h|horas?|Stunden?|heures?|\u043c\u0438\u043d\w*)\W+)?"
    r"(?:(?:ya |j[a\u00e1] |ainda n[a\u00e3]o |todav[i\u00ed]a no |"
    r"a[u\u00fa]n no )?(?:termin[o\u00f3]u?|terminaste|acab[o\u00f3]u?|acabaste|est[a\u00e1] list[oa]|"
    r"t[a\u00e1] pronto|est[a\u00e1] pronto|passou|rodou|travou|(?:t[a\u00e1]|est[a\u00e1]) travad[oa])|"
    r"c[o\u00f3]mo va(?:s| eso)?|como (?:est[a\u00e1]|t[a\u00e1]) indo|"
    r"cu[a\u00e1]nto (?:falta|tarda|m[a\u00e1]s)|quanto (?:tempo )?falta|alg[u\u00fa]n avance|alguma novidade|"
    r"e a[i\u00ed]|(?:ist es|bist du|seid ihr) (?:schon |jetzt )?fertig|schon fertig|wie weit bist du|"
    r"wie lange (?:noch|dauert (?:das|es))|wie sieht'?s aus|c'est (?:bon|fini|pr[e\u00ea]t)|(?:tu as|t'as) fini|"
    r"[c\u00e7]a avance|o[u\u00f9] en est-on|combien de temps (?:encore|[c\u00e7]a prend)|(?:hai )?finito|"
    r"a che punto (?:sei|siamo)|quanto manca|(?:\u043d\u0443 )?(?:\u0447\u0442\u043e|\u043a\u0430\u043a) "
    r"\u0442\u0430\u043c|\u0433\u043e\u0442\u043e\u0432\u043e|"
    r"\u0434\u043e\u043b\u0433\u043e(?: \u0435\u0449[\u0435\u0451])?|"
    r"\u0441\u043a\u043e\u043b\u044c\u043a\u043e \u0435\u0449[\u0435\u0451])\s*\?+\s*$|"
    r"^\W*(?:\u600e\u4e48)?(?:\u8fd8\u6ca1(?:\u597d|\u5b8c|\u8dd1\u5b8c)\u5417?|"
    r"(?:\u597d|\u5b8c|\u8dd1\u5b8c|\u641e\u5b9a|\u5f04\u597d|\u5b8c\u6210)\u4e86(?:\u5417|\u6ca1\u6709?)|"
    r"\u8fd8\u8981\u591a\u4e45|\u8fdb\u5ea6(?:\u600e\u4e48\u6837|\u5982\u4f55)\u4e86?|\u600e\u4e48\u6837\u4e86|"
    r"まだ(?:終わらない|かかる|ですか)?|(?:全部)?(?:終わった|まわった|回った|通った)|どうなった|あと(?:どのくらい|何分)|"
    r"進捗(?:は|どう)|다 ?됐어|끝났어|아직이야|얼마나 (?:더|걸려))\W*"
    # "まだ終わらない？もう10分くらい経ってるけど": how long it has been, said after
    r"(?:(?:もう|已经)\d{1,3}(?:分|分钟|時間|小时)(?:くらい|ぐらい|了)?(?:経って(?:る|ます)(?:けど|よ)?|了)?\W*)?$",
    re.I,
)
"""The same short question in the person's own language ("¿ya terminó?", "ainda não terminou?", "ist es fertig?",
"ça avance ?", "a che punto sei?", "готово?", "怎么还没好", "还要多久", "まだ終わらない？", "다 됐어?"), asked alone: a
remark beside it is read in English only, so "terminou? agora adiciona o footer" stays a request."""
BETTER = re.compile(
    r"^\W*(?:(?:ok(?:ay)?|yes|yeah|hm+|nice|good|great)\W+)?(?:(?:much|a (?:bit|lot|little)|way|slightly|somewhat|"
    r"definitely|clearly)\s+)?(?:better|improved|faster|closer|progress|getting (?:there|closer)|almost(?: there)?)\b"
    r"(?!\s+(?:to|if|would|not)\b)|"
    # what the attempt was for works now, and the rest is said after it ("refunds ok. still wrong though - ..."); an
    # "ok" alone names nothing that works ("ok, still the same", "ok. but it still fails")
    r"^\W*(?:(?:ok(?:ay)?|yes|yeah|nice|good|great)\W+)?(?:(?!(?:not|no|never|nothing|none|\w+n't)\b)[\w']+\W+){0,3}?"
    r"(?:(?:is|are)\s+)?(?:(?<=\w )(?:ok|okay)|fine|fixed|correct|works|working)(?:\s+now)?\s*[.,;:!]+\s*(?:but\s+)?"
    r"(?:(?:it|its|it's|that's|thats)\s+|(?:the\s+)?[\w/.-]+(?:\s+[\w/.-]+)?\s+(?:is\s+|are\s+)?)?still\b|"
    r"^\W*ok(?:ay)?\W+(?:(?!(?:not|no|never|nothing|still)\b)[\w']+\W+){0,3}?[\w']+\s+now\b\W+but\b|"
    # a measure said first to have fallen: "down to 3.1%, still firing", "dropped to 19s"
    r"^\W*(?:(?:ok(?:ay)?|nice|good|hm+)\W+)?(?:it'?s\s+|its\s+)?(?:down|dropped|fell|went down)\s+to\s+~?\d",
    re.I,
)
"""The person saying first that the attempt helped, whatever is still left ("better. still slow-ish though", "closer,
but the header still overlaps", "ok rows now. but it's still wrong: ..."): the problem moved, so what follows is no
repeat of it."""
APPROVAL = re.compile(
    r"(?<!\bstill )(?<!\bshould )(?<!\bmust )(?<!\bnothing )(?<!\bnever )(?<!\blonger )(?<!\bwhatever )"
    # "go build works so its there" gives a reason, approves nothing
    r"(?<!\bwhichever )\b(?:works(?: now)?(?!,?\s+so\s+(?:it|its|it's|that|the|this|i|we|you)\b)|"
    r"working now|that fixed it|fixed now|it'?s fixed|"
    r"perfect|looks good|lgtm|all good|great,? thanks?|thank you|nice,? (?:it )?works|did the trick|"
    r"(?:are|is|all) green(?: now)?|\w+s fine now|(?:that|this) did it|confirmed (?:fixed|working)|"
    r"(?<!no )(?<!not )(?<!n\u00e3o )(?<!non )funciona(?:!|\b(?! (?:a|o|la|el)\b))|(?<!n\u00e3o )(?<!nao )funcionou|"
    r"funziona (?:ora|adesso)|funktioniert jetzt|\u00e7a (?:marche|fonctionne)|het werkt|"
    r"\u0437\u0430\u0440\u0430\u0431\u043e\u0442\u0430\u043b\u043e|\u76f4\u308a\u307e\u3057\u305f|"
    r"(?:udah|sudah) (?:jalan|bisa|beres))\b(?![,;]?\s+but\b)",
    re.I,
)
"""The person's approval; "works, but ..." is not one."""
RESOLVED = re.compile(
    r"(?:\bno more (?:\w+ )?(?:errors?|crash(?:es)?|failures?|warnings?)|(?:\bnot|n't|\bno longer) (?:broken|failing|"
    r"crashing|erroring|crash|fail)(?: \w+)? anymore|\bno longer (?:broken|fails|failing|crash\w*)|\b(?:passes|passing|"
    r"pass) now|\b(?:error|warning|crash|bug|issue|problem)s? (?:is|are) gone)\b(?![,;]?\s+but\b)",
    re.I,
)
"""The person's approval that names the failure gone ("not broken anymore", "the error is gone", "passes now"): an
approval though a failure word is in it."""
PRAISED = re.compile(
    r"^\W*(?:(?:ok(?:ay)?|nice|wow|yay|oba|eba|uau)\W+)?(?:ficou (?:muito )?(?:lind[oa]|[o\u00f3]tim[oa]|perfeit[oa]|"
    r"show|top|massa|demais)|qued[o\u00f3] (?:genial|perfect[oa]|precios[oa]|lind[oa]|incre\u00edble)|"
    r"looks (?:great|perfect|amazing|beautiful)|works (?:perfectly|great)|sieht (?:super|toll|perfekt) aus|"
    r"c'est (?:parfait|nickel))\b",
    re.I,
)
"""The person praising the result first ("ficou lindo. pode colocar na loja", "looks great"): what follows is news,
not the problem said again, even where it says something stays the same (the product page "continua igual", as
asked)."""
WORKED = re.compile(
    r"^\W*(?:(?:ok(?:ay)?|yes|yeah|nice|good|great|cool)\W+)?(?:(?!(?:not|no|never|nothing|none|if|when|whether|unless|"
    r"once|until|sure|see|check|should|must|might|may|maybe|hopefully|barely|kinda|half|only|still|first|1st|time|"
    r"whatever|whichever|do|try|use|pick|anything|something|"
    r"\w+n'?t)\b)"
    r"[\w'/#-]+(?:\.[\w'/#-]+)*\s+)"
    r"{1,4}(?:(?:is|are)\s+)?(?:works|working|fixed|fine|ok|okay|correct)(?:\s+now)?(?:[.!]+(?=\s|$)|\s*$)",
    re.I,
)
"""What the attempt was for, said first to work, as a sentence of its own ("error filter works. 207 rows. can u ...",
"login fixed. now the avatar"): its failure word names what works ("error" is the filter's), so it is no report; what
follows is news."""
