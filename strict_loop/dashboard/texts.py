"""Text as the page shows it: whole where it can be, cut only at a word's end with an ellipsis where it must, and in
terms the person sees.

Why: a cut mid-sentence can say the opposite of the whole ("... 4 edit(s) between them did not change it" cut to
"... between them did"), and a turn number is the monitor's own count, which neither the agent nor the person ever
saw. The server sends whole text up to a generous bound (the page cuts for a glance and shows the whole one click
away); past that bound it cuts here, at a word, and says so.
"""

from __future__ import annotations

import re

ELLIPSIS = "…"
GLANCE = 2000
"""Characters of a diagnosis, a reason or a goal sent to the page; the page shows fewer, the rest one click away."""
LONG = 4000
"""Characters of a turn's arguments or output sent to the page (the ledger holds them whole)."""

_TURN_LIST = re.compile(r" \(turns? \d+(?:(?:, | and )\d+)*\)")
_SINCE_TURN = re.compile(r"\bsince turn \d+ brought\b")


def shorten(text: str, cap: int, tail: int = 0) -> str:
    """``text`` whole when it fits in ``cap`` characters; else cut at the last word's end before it, with an ellipsis
    (a single word longer than most of ``cap``, a path or a token, is cut where it must be). ``tail``: that many
    characters of the end are kept too, from a word's start (an error sits at the end of an output)."""
    if len(text) <= cap:
        return text
    if tail:
        end = text[len(text) - tail :]
        space = min((i for i in (end.find(" "), end.find("\n")) if i >= 0), default=-1)
        end = end[space + 1 :] if 0 <= space < tail * 0.4 else end
        return shorten(text, cap - len(end) - 1) + " " + end
    cut = text[: max(cap - len(ELLIPSIS), 0)]
    space = max(cut.rfind(" "), cut.rfind("\n"), cut.rfind("\t"))
    if space > cap * 0.6:
        cut = cut[:space]
    return cut.rstrip(" \t\n,;:") + ELLIPSIS


def person_terms(text: str) -> str:
    """``text`` without the monitor's internal turn numbers ("(turns 14, 16)", "since turn 14 brought"), which the
    page cannot point to: the times of the turns are what it shows."""
    return _SINCE_TURN.sub("since a call brought", _TURN_LIST.sub("", text))


def shown(value: object, cap: int = GLANCE) -> str:
    """A text of the monitor or of the loop (a diagnosis, evidence, a whisper, a reason) as the page shows it."""
    return shorten(person_terms(str(value or "")), cap)
