"""What the person said not to do, and whether a call does it: a command not to run (by its step, the flags and the
script or target named), a place not to edit, a command word not to use ("don't push", "no force pushing"), no new
dependencies. A ban stands through the person's later requests until one names what it bans. Pure: reads one
message, and weighs a call against the window's bans.

Why apart from ``_reading`` and ``verdicts``: the ways people say "don't" and the ways a call can break it change with
the harnesses' tools and the shells' forms, not with how a report of a failure is read or counted.
"""

from __future__ import annotations

import re
from typing import Any, Optional

from strict_loop.model.monitoring import TurnFacts
from strict_loop.monitor import fingerprint as fp
from strict_loop.monitor.calls import shellwork
from strict_loop.monitor.calls.toolkinds import WRAPPERS, step_parts, step_words
from strict_loop.monitor.calls.wrappings import MAX_PERSON_TEXT

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
FORBID_QUOTED = re.compile(
    r"(?:^|[.!;:(]\s*|\b(?:and|but|also|so|please|und|aber|bitte|et|mais|y|pero|e|ma|en|maar)\s+)(?:(?:please|bitte)\s+)?"
    r"(?:no|kein(?:e[nrs]?)?|pas de|nada de|niente|geen)\s+(?P<quoted>`[^`\n]{1,80}`(?:\s*(?:,|/|\bor\b|\boder\b|"
    r"\band\b|\bund\b|\bou\b|\bo\b|\bof\b)\s*(?:(?:no|kein(?:e[nrs]?)?)\s+)?`[^`\n]{1,80}`){0,5})",
    re.I,
)
"""The person naming commands not to run in quotes after a "no", in English or the person's own language ("and NO
`sudo`", "bitte KEIN `db:reset`, `db:drop` oder `db:schema:load`"), at the start of a clause ("there's no `pytest` in
the venv" is no ban)."""


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
_BAN_GATES = ("don", "do not", "never", "stop", "no ", "kein", "pas de", "nada de", "niente", "geen")
"""Lowercase literals one of which each ban pattern (``FORBID``, ``FORBID_EDIT``, ``FORBID_VERB``) cannot match
without."""
FORCE_FLAGS = ("--force", "-f", "--force-with-lease")
"""The flags that make a push a force push: "don't force push" bans each."""


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
    named = [m.group("what").strip("`") for m in FORBID.finditer(text[:MAX_PERSON_TEXT])]
    named += [q for m in FORBID_QUOTED.finditer(text[:MAX_PERSON_TEXT]) for q in _QUOTE.findall(m.group("quoted"))]
    found += [ban for ban in map(_command_ban, named) if ban]
    found += [_PLACE + m.group("path").strip("/") for m in FORBID_EDIT.finditer(text[:MAX_PERSON_TEXT])]
    for m in FORBID_VERB.finditer(text[:MAX_PERSON_TEXT]):
        verb = (m.group("verb") or _VERB_OF.get(m.group("noverb").lower(), m.group("noverb"))).lower()
        forced = m.group("force") or m.group("noforce")
        found += [f"{_VERB}{verb} {flag}" for flag in FORCE_FLAGS] if forced else [_VERB + verb]
    return list(dict.fromkeys(found))[:6]


_RULE = re.compile(r'\{"permission":"bash","pattern":"(?P<pattern>[^"\n]{1,200})","action":"deny"\}')
"""A shell rule of the person's that denied a call, as OpenCode quotes it in the refusal (``The user has specified a
rule which prevents you from using this specific tool call. Here are some of the relevant rules [...]``)."""


def ruled(text: str) -> list[str]:
    """The commands the person's own deny rules ban, as ``forbidden`` names them (``git push *``: ``git push``), from
    the rules a refusal quotes (at most six; ``*`` alone bans no command of its own)."""
    patterns = [m.group("pattern").rstrip("* ") for m in _RULE.finditer(text[:MAX_PERSON_TEXT])]
    found = [_command_ban(what) for what in patterns if what and "*" not in what.split()[0]]
    return list(dict.fromkeys(ban for ban in found if ban))[:6]


def _command_ban(what: str) -> Optional[str]:
    """A command said not to be run, as a ban: its step, the targets it names and the flags it was said with (``sed
    -i``: ``sed -n`` is not banned); None when it names no command."""
    step, given = step_parts(what)
    return " ".join([step, *_targets(given), *(w for w in what.split() if w.startswith("-"))]) if step else None


THAT_AGAIN = re.compile(
    r"\b(?:don'?t|do not|never|stop)\s+(?:ever\s+)?(?:do(?:ing)?|run(?:ning)?|try(?:ing)?)\s+(?:that|this|it)\s+"
    r"(?:again|anymore|any more)\b|\bstop doing (?:that|this)\b|\bnot (?:that|this) again\b",
    re.I,
)
"""The person banning what the agent just did without naming it as a command ("flutter clean + pods takes 8 minutes,
please don't do that again", "stop doing that")."""
_GENERIC = frozenset({"run", "the", "and", "for", "all", "get", "set", "new", "dev", "null", "tail", "head", "grep"})
_GENERIC |= frozenset({"echo", "cat", "sudo", "true", "then", "tmp", "src", "bin", "usr", "with", "not"})
"""Words of a command that name nothing of it when a message says them (plumbing, folders, the commonest verbs)."""


def recalled(text: str, window: list[TurnFacts]) -> list[str]:
    """The command a "don't do that again" bans: of the commands the agent ran since the person last spoke, the one the
    message names most by its words (the latest of equals), as its step and the target it named. One the message names
    nothing of is no ban: which call "that" was is not known."""
    low = text[:MAX_PERSON_TEXT].lower()
    if not any(gate in low for gate in ("again", "anymore", "any more", "stop doing")) or not THAT_AGAIN.search(low):
        return []
    best: tuple[int, str] = (0, "")
    for f in reversed(window[-12:]):
        if f.actor == "person":
            break
        if f.kind != "run" or " " not in f.action:
            continue
        for part in shellwork.segments(f.action.split(" ", 1)[1]):
            words = {w for w in re.findall(r"[a-z][\w-]{2,}", part.lower()) if w not in _GENERIC}
            score = sum(re.search(rf"\b{re.escape(w)}", low) is not None for w in words)
            if score > best[0]:
                best = (score, part)
    step, given = step_parts(best[1]) if best[0] else ("", [])
    return [" ".join([step, *_targets(given)])] if step else []


_QUOTE = re.compile(r"`([^`\n]+)`")
_PLUMBING = re.compile(r"\d*[<>|&]")
"""A word that starts a redirection, a pipe or a background (``2>&1``, ``>``, ``|``, ``&``): what follows is not the
command's own."""


def _targets(given: list[str]) -> list[str]:
    """The words a banned command is given after its step, marked ``+``: the script, target or subcommand ``npm run
    build``, ``make deploy`` and ``manage.py flush`` run (a call breaks the ban only with them; ``npm run typecheck``
    does not break "don't run `npm run build`"), up to its redirections and the commands it pipes into."""
    named: list[str] = []
    for w in given:
        if _PLUMBING.match(w):
            break
        if not w.startswith("-"):
            named.append("+" + w.strip("'\""))
    return named[:3]


def defied(command: str, paths: list[str], window: list[TurnFacts], args: dict[str, Any]) -> Optional[str]:
    """The ban a call runs against, if the person said not to run it, or not to edit where it writes (in their words or
    beside a refusal; putting files back as git has them obeys), or not to add dependencies: its step and every flag
    the ban named, its command word, the place, or ``DEPS``. A ban stands through the person's later requests until one
    names what it bans ("ok, push it now")."""
    if not any(e.forbids for e in window):
        return None  # nothing was said not to run or edit (most sessions): the call is not parsed for it
    # "dry-run publish, don't publish for real": a command of the chain that only rehearses does nothing banned
    segments = [p for p in shellwork.segments(command) if not _REHEARSAL.intersection(p.lower().split())]
    kept = " && ".join(segments)
    call = (step_words(kept), set(kept.split()), {w for p in segments for w in p.split()[:4]}, _runs(segments))
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
                    if (
                        ban.startswith(_PLACE)
                        and any(f.defied == ban for f in window)
                        and shellwork.deletes_lines(command)
                    ):
                        continue  # taking out the lines it added there against the ban: putting it back
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


def _runs(segments: list[str]) -> set[str]:
    """What each command of a chain runs: its step and the task it names first (``bin/rails db:reset && bin/rails
    db:migrate``: ``rails``, ``db:reset``, ``db:migrate``), not a value a flag takes (``git commit -m tests``)."""
    runs: set[str] = set()
    for segment in segments[:8]:
        step, given = step_parts(segment)
        runs.update([step, *given[:1]] if given and not given[0].startswith("-") else [step])
    return runs


_REHEARSAL = frozenset({"--dry-run", "--dry_run", "--dryrun", "--dry-run=client", "--dry-run=server", "-whatif"})
"""The flags by which a command only says what it would do (``cargo publish --dry-run``, ``helm upgrade --dry-run``,
``Remove-Item -WhatIf``)."""


def _breaks(ban: str, call: tuple[str, set[str], set[str], set[str]], places: list[str]) -> bool:
    """Whether a call (its step, its words, its programs and subcommands, what each command of it runs) or the places it
    writes break ``ban``."""
    step, words, verbs, runs = call
    if ban.startswith(_PLACE):
        return any(f"/{ban[len(_PLACE) :]}/" in place for place in places)
    if ban.startswith(_VERB):
        verb, *flags = ban[len(_VERB) :].split()
        return verb in verbs and words.issuperset(flags)
    parts = ban.split()
    named = [p for p in parts if p.startswith(("-", "+"))]
    name = " ".join(p for p in parts if p not in named)
    wanted = {p.removeprefix("+") for p in named}
    runs_it = name == step or name in runs or (name in WRAPPERS and name in verbs)  # "never use sudo"
    return runs_it and words.issuperset(wanted)


def lifted_by(text: str, again: list[str], window: list[TurnFacts]) -> list[str]:
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


def breach(f: TurnFacts) -> str:
    """How a call that broke a ban is named in the evidence: the place it edited, the dependency it added, the command
    it ran."""
    if f.defied and f.defied.startswith(_PLACE):
        where = f.paths[0] if f.paths else f.writes[0]
        return f"edited {fp.code(where)} after being told not to touch {f.defied[len(_PLACE) :]}"
    if f.defied == DEPS:
        return f"added a dependency ({fp.code(f.action[:60])}) after being told not to"
    return f"ran {fp.code(f.action[:60])} after being told not to"
