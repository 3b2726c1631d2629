"""Reading the person's word: a report that the work still fails, a complaint of going in circles, a refusal, an
approval, or a request. Pure text functions.

Why apart from ``outcomes``: the person is the one judge every harness has live (Claude Code's and Codex's
``UserPromptSubmit``, the Hermes plugin, a refusal inside a tool result), and reading them badly costs both ways.
An instruction that names a failure ("make sure there are no build errors") is not a report of one; a question,
a request or a new symptom is new direction; only the same problem reported again after an attempt (in new words,
pasted again, or with "still"/"again"/"not fixed") or a complaint of going in circles is a failed check. One message
is read here: what a whole message says in ``_reading``, the words that say it still fails in ``_persists`` (English)
and ``_still`` (a row per other language), going in circles and "I told you" in ``_phrases``, the ways they ask,
approve or say it helped in ``_asking``, what they say not to do and whether a call does it in ``_bans``;
``verdicts`` weighs it against the turns before it.
"""

from strict_loop.monitor.person._bans import DEPS, FORCE_FLAGS, breach, defied, forbidden, lifted_by, recalled
from strict_loop.monitor.person._persists import PERSIST
from strict_loop.monitor.person._phrases import CIRCLES
from strict_loop.monitor.person._reading import HEAD_CHARS, OBSERVED, REFUSED_CALL, SAYS_FAILS, Word, read, says_same

__all__ = ["CIRCLES", "DEPS", "FORCE_FLAGS", "HEAD_CHARS", "OBSERVED", "PERSIST", "REFUSED_CALL", "SAYS_FAILS", "Word"]
__all__ += ["breach", "defied", "forbidden", "lifted_by", "read", "recalled", "says_same"]
