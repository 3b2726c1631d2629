"""What each harness puts around the person's words, and the words themselves: its placeholders (a screenshot, a
collapsed paste), a refusal of a call reported in the call's result, the feedback an agent's result embeds (Cline), the
editor's context around a request (Codex's IDE extension, Claude Code's tags).

Why apart from ``toolkinds``: these wrappings change with each harness's version and with how people write to it, not
with which tools write, read or search. Pure text functions.
"""

from __future__ import annotations

import re
from typing import Optional

from strict_loop.monitor import fingerprint as fp

MAX_PERSON_TEXT = 4000
"""A person's message is read up to here (a pasted log keeps its head, where people put their words)."""

PLACEHOLDER = re.compile(
    r"\[(?:Image|Pasted text|File|Screenshot)\b[^\]\n]{0,60}\]|\[Request interrupted by user[^\]\n]{0,60}\]", re.I
)
"""What a harness puts where the person's content is not text (a screenshot, a collapsed paste, an interruption)."""
REFUSAL = re.compile(
    r"The user denied this operation|The user doesn'?t want to (?:proceed with this tool use|take this action)|"
    r"tool use was rejected|(?:was|were) (?:rejected|declined|denied) by the user|rejected by (?:the )?user|"
    r"user (?:declined|rejected|denied|cancelled|canceled) (?:this|the|to)|Permission for this tool use was denied|"
    r"User denied this command|Command denied by user|rejected by user|The user rejected permission to use this|"
    r"The user has specified a rule which prevents you from using this",
    re.I,
)
"""A refusal the harness reports in a tool's result: the person said no to this very call, at the prompt or by a rule
of theirs (Claude Code, Cline, Codex, Gemini CLI, OpenCode word it differently)."""
_REFUSAL_GATES = ("denied", "doesn", "rejected", "declined", "cancelled", "canceled", "specified a rule")
"""Lowercase literals one of which ``REFUSAL`` cannot match without: an agent's every output is searched for one."""


def refusal(text: str) -> Optional[re.Match[str]]:
    """``REFUSAL`` in ``text``, read behind its literals first (in C)."""
    return REFUSAL.search(text) if fp.may_match(fp.folded(text), _REFUSAL_GATES) else None


_FEEDBACK = re.compile(r"<feedback>\s*(?P<text>.*?)\s*</feedback>", re.S | re.I)
_SAID = re.compile(
    r"(?:the user said|the user provided the following feedback|with the following feedback)\W*:?\s*(?P<text>.+)",
    re.S | re.I,
)


def feedback(raw: str) -> str:
    """The person's own words beside a refusal (Cline's ``<feedback>``, Claude Code's "the user said:"), or ''."""
    m = _FEEDBACK.search(raw) or _SAID.search(raw)
    return m.group("text").strip() if m else ""


_REQUEST_MARK = "## My request for Codex:"
"""What Codex's IDE extension and app put before the person's own words, after the editor's context (the active file,
the open tabs, the files mentioned): the words are what follows it."""
_HARNESS_BLOCKS = ("ide_opened_file", "ide_selection", "system-reminder", "task-notification")
"""What Claude Code puts beside the person's words, each in its tag: the file open in their editor, its selection, a
reminder."""


def own_words(message: str) -> str:
    """A person's message without what the harness wraps around their words (the editor's context, a reminder), as
    much of it as is read (``MAX_PERSON_TEXT``). By ``str.find``: a tag opened and never closed costs one scan."""
    at = message.find(_REQUEST_MARK)
    words = message[at + len(_REQUEST_MARK) :] if at >= 0 else message
    for tag in _HARNESS_BLOCKS:
        start = words.find(f"<{tag}>", 0, MAX_PERSON_TEXT)
        while start >= 0:
            end = words.find(f"</{tag}>", start)
            if end < 0:
                break
            words = words[:start] + " " + words[end + len(tag) + 3 :]
            start = words.find(f"<{tag}>", start, MAX_PERSON_TEXT)
    return words[:MAX_PERSON_TEXT]


def spoken(actor: str, output: str) -> Optional[str]:
    """What a person said in this turn: a person turn's text (its own words: ``own_words``), the feedback an agent's
    result embeds (Cline), or the refusal a harness reports in the result of a call the person said no to; None when
    the person said nothing."""
    if actor == "person":
        return own_words(output)
    head = output[:MAX_PERSON_TEXT]
    found = refusal(head)
    if found:
        return head[found.start() :]  # the refusal, with any feedback that follows it
    m = _FEEDBACK.search(head) if "<feedback>" in head.lower() else None
    return m.group("text") if m else None


_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'", "\u2032": "'", "\uff07": "'"})
"""Typographic apostrophes a phone, a Mac or a chat box puts in "didn’t", read as the ASCII one the patterns name."""


def text_of(raw: str) -> str:
    """The person's words on one line, bounded, with a harness's placeholders (images, interruptions) taken out and
    typographic apostrophes made plain."""
    return " ".join(PLACEHOLDER.sub(" ", raw[:MAX_PERSON_TEXT]).translate(_APOSTROPHES).split())
