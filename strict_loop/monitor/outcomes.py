"""What a turn's result says about the work, as opposed to what the turn tried. Pure text functions.

An edit is an attempt; progress is what attempts achieve. So the detector needs, for each turn: did something
that judges the work (a test, build, lint or type-check run; diagnostics an editor reports after a save; a
person) pass or fail, and if it failed, with which failure signature (error class, location, normalised
message); is a background job still running; is the content known at all (an export that lost it, a write
with no text, is unknown and never "the same" as anything); and what thing was missing when a program or
module was not found, so a diagnosis can name it.
"""

from __future__ import annotations

import re
from typing import Any, Optional

from strict_loop.model.monitoring import Verdict
from strict_loop.monitor import fingerprint as fp

VERIFIER = re.compile(
    r"\b(?:test|tests|pytest|py\.test|jest|vitest|mocha|karma|tox|nox|build|compile|tsc|mypy|pyright|lint|eslint|ruff|flake8|"
    r"pylint|check|typecheck|type-check|clippy|mvn|gradle|gradlew|make|cargo|javac|gcc|g\+\+|clang|ctest|phpunit|rspec)\b",
    re.I,
)
"""Command words of runs that judge the work: their pass or fail is an outcome, not just an output."""
_CHAIN = re.compile(r"&&|\|\||;|\|")
_DIAG_HEAD = re.compile(r"New problems detected after saving the file|<workspace_diagnostics>", re.I)
_DIAG_LINE = re.compile(r"^\s*-\s*\[(?:[\w ]+ )?Error\]\s*(?:Line \d+:)?\s*(?P<msg>.+)$", re.I)
_FEEDBACK = re.compile(r"<feedback>\s*(?P<text>.*?)\s*</feedback>", re.S | re.I)
_DENIED = re.compile(r"\bThe user denied this operation\b", re.I)
COMPLAINT = re.compile(
    r"\b(?:still|again|same (?:error|issue|problem|thing|result)|(?:does|did|is|was|are)(?:n'?t| not) "
    r"(?:work|working|fix|fixed|change|changed|help|right)|not working|persists?|broken|nothing "
    r"(?:changed|happens)|no change|doesn'?t|didn'?t|wrong)\b",
    re.I,
)
"""A person saying the work still fails ("still truncated", "doesn't work, always the same error")."""
APPROVAL = re.compile(
    r"\b(?:works(?: now)?|that fixed it|fixed now|perfect|looks good|lgtm|all good|great,? thanks?)\b", re.I
)
PERSON_SAYS_FAILS = "the person says it still fails"
RUNNING = re.compile(
    r"<status>\s*running\s*</status>|\b(?:status|state)\W{0,3}(?:running|in[_ ]progress|pending|queued)\b|"
    r"\bstill (?:running|building|in progress)\b|\bin[_ ]progress\b|\bnot (?:yet )?(?:finished|complete|done)\b|"
    r"\s\d+/\d+\s+(?-i:Pending|ContainerCreating|PodInitializing|Init:\d+/\d+)\s",
    re.I,
)
"""A background job that has not finished: polling it is waiting, not an attempt."""
UNKNOWN = re.compile(
    r"^\s*\[(?:no content rendered|content (?:not )?(?:available|captured)|output (?:omitted|not "
    r"captured))[^\]]*\]\s*$",
    re.I,
)
"""Placeholders an export leaves where the content was lost (Cursor via SpecStory: ``[no content rendered by
SpecStory]``)."""
_CONTENT_KEYS = (
    "content",
    "diff",
    "new_str",
    "new_string",
    "edits",
    "file_text",
    "patch",
    "text",
    "code_edit",
    "instructions",
)
_MISSING = [
    (re.compile(r"No module named ['\"]?([\w.\-]+)"), "module"),
    (re.compile(r"Cannot find module ['\"]([^'\"]+)['\"]"), "module"),
    (re.compile(r"(?:^|[\s:])([\w.+\-/]+): (?:command )?not found\b"), "program"),
    (re.compile(r"\bcommand not found:? ([\w.+\-]+)"), "program"),
    (re.compile(r"'([\w.+\-]+)' is not recognized as an internal or external command"), "program"),
    (re.compile(r"\bENOENT\b.{0,60}?['\"]([^'\"]+)['\"]"), "file"),
    (re.compile(r"(?:can't open file|No such file or directory:?) ['\"]?([\w.+\-/]+)"), "file"),
]


_READER = re.compile(r"^\s*(?:cat|tail|head|less|more|grep|rg|ls|wc|stat|file|find|du|sleep|echo|printf)\b")
"""Programs that only show or wait: ``tail -2 build.log`` reads a log, it does not build."""


def is_verifier(command: str) -> bool:
    """Whether a shell command runs something that judges the work (tests, a build, a linter, a type checker)."""
    lines = command.strip().splitlines()
    return bool(lines) and any(VERIFIER.search(part) and not _READER.match(part) for part in _CHAIN.split(lines[0]))


WAIT = re.compile(r"^\s*(?:sleep\s+\d+(?:\.\d+)?[smh]?\s*(?:&&|;)|watch\s+-n\s*\d+|timeout\s+\d+\S*\s+\S+.*\bwait\b)")
"""A command that waits before it looks (``sleep 60 && tail build.log``): the agent is polling something."""


def waits(command: object) -> bool:
    return isinstance(command, str) and bool(WAIT.match(command))


def diagnostics(output: str) -> Optional[str]:
    """The first error an editor reported after a save (Cline: 'New problems detected after saving the file'), if
    any."""
    if not _DIAG_HEAD.search(output):
        return None
    lines = output.splitlines()
    for k, line in enumerate(lines):
        m = _DIAG_LINE.match(line)
        if m:
            where = next((ln.strip() for ln in reversed(lines[:k]) if ln.strip() and not _DIAG_LINE.match(ln)), "")
            return (
                f"{where}: {m.group('msg').strip()}"[:300] if where and "/" in where else m.group("msg").strip()[:300]
            )
    return None


def person_text(turn_tool: str, actor: str, output: str) -> Optional[str]:
    """What a person said in this turn: a person turn's text, or the feedback an agent's result embeds (Cline)."""
    if actor == "person":
        return output
    m = _FEEDBACK.search(output)
    if m:
        return m.group("text")
    return "" if _DENIED.search(output) else None


_PASTED = re.compile(r"\b[A-Z]\w*(?:Error|Exception)\b:.*")
"""An error a person pasted into their own words ("still the same error, TypeError: ..."): from its type on."""


def person_verdict(text: str) -> tuple[Optional[Verdict], Optional[str]]:
    """A person's verdict and, for a failure, its signature: the error they pasted, else that it still fails."""
    line = fp.error_line(text)
    pasted = _PASTED.search(line) if line is not None else None
    if line is not None and not pasted and COMPLAINT.search(line) and ":" not in line:
        line = None  # "still the same error" is the complaint itself, not an error the person pasted
    if line is not None and (COMPLAINT.search(text) or len(text) > 2 * len(line) or "\n" in text.strip()):
        return "fail", pasted.group(0) if pasted else line
    if COMPLAINT.search(text):
        return "fail", PERSON_SAYS_FAILS
    if APPROVAL.search(text):
        return "pass", None
    return None, None


def unknown_content(kind: str, args: dict[str, Any], output: str) -> bool:
    """Whether what the turn did or got is unknown: an export's placeholder, a read that came back empty, a write
    whose text was not kept. Unknown is never 'the same' as anything."""
    if UNKNOWN.match(output):
        return True
    if kind == "read" and not output.strip():
        return True
    if kind == "write":
        present = [k for k in _CONTENT_KEYS if k in args]
        return bool(present) and all(not args[k] for k in present)
    return False


_CLIPPED = re.compile(r"\.\.\.\[(?:clipped|truncated) \d+ char|<response clipped>")


def clipped(output: str) -> bool:
    """Whether part of the output was cut (a clipping marker): what was cut is unknown."""
    return "..." in output and bool(_CLIPPED.search(output)) or "<response clipped>" in output


def running(output: str) -> bool:
    return bool(RUNNING.search(output))


def missing(text: str) -> Optional[str]:
    """What was missing, named: 'module mypy', 'program javac', 'file setup.py' (None if nothing reads like that)."""
    for pattern, what in _MISSING:
        m = pattern.search(text)
        if m:
            return f"{what} {m.group(1).strip(chr(39) + chr(34))}"
    return None


def last_line(output: str) -> str:
    """The last meaningful line of an output (not a decoration, a prompt echo or a clipping marker)."""
    for line in reversed(output.splitlines()):
        text = line.strip()
        if text and not re.match(
            r"^(?:[=\-_*#~. ]{3,}|\.\.\.\[(?:clipped|truncated)[^\]]*\]|\[Command finished with exit code \d+\])$", text
        ):
            return text
    return ""


def edit_pair(args: dict[str, Any]) -> Optional[tuple[str, str]]:
    """(removed text, added text) of a replacing edit, whitespace-normalised, when the arguments say it: old/new
    strings, a SEARCH/REPLACE block, or a diff's -/+ lines. A later pair that swaps them undoes the edit."""
    for old_key, new_key in (("old_str", "new_str"), ("old_string", "new_string")):
        if isinstance(args.get(old_key), str) and isinstance(args.get(new_key), str):
            return " ".join(args[old_key].split()), " ".join(args[new_key].split())
    for key in ("diff", "content", "patch"):
        text = args.get(key)
        if not isinstance(text, str):
            continue
        block = re.search(r"<<<<<<< SEARCH\n(.*?)\n=======\n(.*?)\n>>>>>>> REPLACE", text, re.S)
        if block:
            return " ".join(block.group(1).split()), " ".join(block.group(2).split())
        if key == "content":
            continue  # a whole file's text: its '-' lines are a list, not a diff
        minus = [ln[1:] for ln in text.splitlines() if ln.startswith("-") and not ln.startswith("---")]
        plus = [ln[1:] for ln in text.splitlines() if ln.startswith("+") and not ln.startswith("+++")]
        if minus or plus:
            return " ".join(" ".join(minus).split()), " ".join(" ".join(plus).split())
    return None


_ERRORISH = re.compile(
    r"\b(?:error|exception|fatal|failed|failure|traceback|cannot|can't|undefined|not found|no such|denied|refused)\b",
    re.I,
)
_COUNTS = re.compile(r"\b\d+ (?:passed|failed|failing|errors?|warnings?|skipped)\b", re.I)


def error_digests(output: str, cap: int = 12) -> list[str]:
    """Digests of the output's error lines (counts and summaries aside): a failure has moved on only when none of the
    earlier failure's error lines is still there (a build whose first error varies while the same cycle error stays
    has not moved on)."""
    found = [
        fp.digest(fp.strict(ln))
        for ln in output.splitlines()
        if _ERRORISH.search(ln) and not _COUNTS.search(ln) and not fp.summary(ln)
    ]
    return list(dict.fromkeys(found))[-cap:]
