"""Pure text normalization for comparing agent turns: noise out, meaning kept. ``strict`` removes only what is noise
in every context (timings, pids, hex ids, temp names, line counters, dates, whitespace), so a changed number elsewhere
is news (a poll that moved); ``loose`` also folds every number, to tell two actions or two errors of one kind."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable
from functools import lru_cache
from typing import Any, Optional

from strict_loop.monitor import catalog

_NOT_LOWERED = ("\u0130", "\u0131", "\u017f")  # re.I reads them as i, i, s; str.lower does not (the Kelvin sign: k)


def _fold(text: str) -> Optional[str]:
    """``text`` lowercased, for literal gates in front of case-insensitive patterns (a gate is a literal one of which
    the pattern cannot match without): every ASCII letter such a pattern matches is then there as itself; None when a
    character would hide one (then no gate applies)."""
    return text.lower() if text.isascii() or not any(c in text for c in _NOT_LOWERED) else None


folded = lru_cache(maxsize=4)(_fold)  # kept for the few texts last read: a turn's helpers fold the same output


class Later:
    """A pattern compiled when it is first used: the person's long patterns (tens of languages) cost milliseconds to
    compile, which a process that never reads a person's message (a command, a hook's fallback) need not pay."""

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self.pattern, self.flags = pattern, flags
        self._compiled: Optional[re.Pattern[str]] = None

    def search(self, text: str) -> Optional[re.Match[str]]:
        if self._compiled is None:
            self._compiled = re.compile(self.pattern, self.flags)
        return self._compiled.search(text)


def may_match(low: Optional[str], gates: Iterable[str]) -> bool:
    """Whether a case-insensitive pattern gated by ``gates`` (lowercase) may match the text ``low`` was folded from."""
    return low is None or any(g in low for g in gates)


_TS = re.compile(r"\d\d{3}-\d{2}-\d{2}[T ]\d{2}(?P<sep>[:_])\d{2}(?P=sep)\d{2}(?:[.,_]\d+)?(?:Z|[+-]\d{2}:?\d{2})?")
_TIME = re.compile(r"\d(?<!\w\d)\d?:\d{2}:\d{2}(?:[.,]\d+)?\b")
"""``\\b\\d{1,2}:...``, its boundary read after its first digit: a pattern led by a class is tried where one is."""
_UNIT = re.compile(
    r"\d(?<!\w\d)(?=(?P<num>\d*(?:\.\d+)?))(?P=num)\s*(?=[msuµhdbBkKMGTl])(?:(?P<dur>(?:ms|msec|us|µs|secs?|seconds?|s|mins?|minutes?|m|hrs?|hours?|h|days?|d)(?:\d+(?:\.\d+)?(?:ms|h|m|s))*)"
    r"(?P<ago>\s+ago)?|(?P<size>bytes|B|[kKMGT]i?B|[kKMG])(?:/s)?|(?P<lines>(?:more )?lines))\b"
)
"""``\\b\\d+(?:\\.\\d+)?`` and a unit, the number taken whole (no unit starts with a digit, a dot or a space: a shorter
one never found a unit, and trying each cost a run of 16,000 digits 16,000 tries of every unit)."""
_EPOCH = re.compile(r"1(?<![\w.]1)[5-9]\d{8}(?:\d{3}){0,2}(?:\.\d+)?\b")
"""A Unix time in seconds, milliseconds or microseconds, 2017 to 2033 (``"time":1717412165403`` in a JSON log line)."""
_GLUED_NUMBER = re.compile(r"(?<=[A-Za-z_])\d{7,}(?:[-_.]\d+)*")
"""A long number glued to a name (``patch1729001412-61733``, ``run_20240611093000``): new each run; a count stays."""
_RANDOM_ID = re.compile(
    r"\b(?:[a-z]{1,8}_)?(?=[A-Za-z0-9]{10,}\b)(?=[A-Za-z]*\d+[A-Za-z]+\d)(?=[a-z0-9]*[A-Z])"
    r"(?=[A-Z0-9]*[a-z])\w+"
)  # a random id (``req_Vn9sG3hM1dQe5c``), not ``base64Encode``
_HEX = "[0-9a-fA-F]"
_UUID = re.compile(rf"{_HEX}(?<!\w{_HEX}){_HEX}{{7}}-{_HEX}{{4}}-{_HEX}{{4}}-{_HEX}{{4}}-{_HEX}{{12}}\b")
"""``\\b[0-9a-f]{8}-...`` under re.I (no other character folds to a-f), led by its class: scanned for in C."""


def _unit(m: re.Match[str]) -> str:
    """A number with a unit: a duration or an age, a byte count, a line count (all counters, none news)."""
    return "<dur>" if m.group("dur") else "<size>" if m.group("size") else "<n> lines"


_LABELLED_ID = re.compile(
    r"[iI][dD](?:(?<=ID)|(?<=[A-Za-z_-]Id)|(?<![A-Za-z]id)(?<=id))([\"']?[=:]\s*[\"']?)[\w+/.=-]{6,}"
)
"""``id``, ``ID``, ``xId``, ``x_id``, ``x-id`` and a value, led by its first letter's class: scanned for in C."""
_IDS = tuple(f"{i}{q}{s}" for i in ("id", "Id", "ID") for q in ("", '"', "'") for s in "=:")


_POD = re.compile(r"-(?:<hex>-[a-z0-9]{5}|[a-z0-9]{8,10}-(?=[a-z0-9]*\d)[a-z0-9]{5})\b")
_STRICT: list[tuple[re.Pattern[str], Any, tuple[str, ...]]] = [
    # (pattern, replacement, substrings one of which must be in the text for the pattern to be tried: a cheap gate)
    (re.compile(r"\.\.\.\[(clipped|truncated) \d+ char(?:acter)?s\]"), r"...[\1]", ("...[",)),
    # where a log line came from, said before it (``kubectl logs --prefix``'s ``[pod/api-6d8f/api]``, Compose's
    # ``api-1  | ``): the same line from another pod, replica or way of reading the logs is the same line
    (re.compile(r"^(?:\[pod/[\w.-]+/[\w.-]+\]|[\w.-]+[-_]\d+[ \t]+\|)[ \t]?", re.M), "", ("[pod/", " |", "\t|")),
    (_TS, "<ts>", ("-",)),
    (_TIME, "<time>", (":",)),
    (_EPOCH, "<ts>", ()),
    (_UUID, "<uuid>", ("-",)),
    (re.compile(r"0x[0-9a-fA-F]+"), "<addr>", ("0x",)),
    (re.compile(r"\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{7,64}\b"), "<hex>", ()),
    (_GLUED_NUMBER, "<n>", ()),  # after the hex ids: a hash is folded whole
    (_POD, "-<pod>", ("-",)),  # a pod's generated suffix
    (re.compile(r"(?<=[A-Za-z0-9]-)[a-z]{24,}\b"), "<id>", ("-",)),  # a generated suffix (Xcode's DerivedData/App-x)
    # a value labelled as an id (``RequestID: EFPCNFEB088BEZFY``, ``x-request-id=...``, ``"traceId":"..."``)
    (_LABELLED_ID, lambda m: m.group(0)[:2] + m.group(1) + "<id>", _IDS),
    (_RANDOM_ID, "<id>", ()),  # after a labelled id: a HostID's base64 is folded whole
    (re.compile(r"(/tmp|/var/folders|/private/var)/[^\s'\":]+"), "<tmp>", ("/tmp", "/var/", "/private/")),
    (re.compile(r"\btmp[a-z0-9_]{4,}\b", re.I), "<tmp>", ("tmp", "TMP", "Tmp")),
    (re.compile(r"[pP](?<!\w[pP])(?:(?<=p)(?:id|rocess)|(?<=P)ID)[ =:]*\d+"), "pid <n>", ("pid", "PID", "process")),
    (re.compile(r"[Ll](?<!\w[Ll])(?:ine|INE) \d+\b"), "line <n>", ("ine ", "INE ")),
    (_UNIT, _unit, ()),
    (re.compile(r"\[\d+\]"), "[<n>]", ("[",)),
    # a process's id as pino and bunyan print it (``INFO (44935):``, ``(4242 on web-1)``) and Node's ``(node:4242)``
    (re.compile(r"\((?:node:\d+|(?<=[A-Z] \()\d{1,7}(?: on [\w.-]+)?)\)"), "(<pid>)", ("(",)),
    (re.compile(r"(?<=[A-Z] )\d{1,7}(?= --- \[)"), "<pid>", (" --- [",)),  # Spring Boot's "INFO 4242 --- [main]"
]
_NUMBER = re.compile(r"\d+(?:\.\d+)?")
_SPACE = re.compile(r"\s+")


def _denoise(text: str) -> str:
    for pattern, repl, gate in _STRICT:
        if not gate or any(g in text for g in gate):
            text = pattern.sub(repl, text)
    return text


_CLOCKS = [entry for entry in _STRICT if entry[1] not in (_unit, "line <n>", "[<n>]")]
"""The noise that is no measure: times, ids, hashes, addresses, temporary paths, pids (not a duration, size, count)."""
_MEASURE = re.compile(r"(?<!\d)-?\d{1,15}(?:\.\d{1,15})?(?!\d)")
"""A number as a run measures it: at most 15 digits either side of its point (a longer run of digits is an id, and no
float holds it: it stays in the shape as it is)."""


def measured(text: str) -> tuple[str, list[float]]:
    """What a printout measured: its shape (times and ids folded, every number masked) and its numbers, in order."""
    for pattern, repl, gate in _CLOCKS:
        if not gate or any(g in text for g in gate):
            text = pattern.sub(repl, text)
    return _SPACE.sub(" ", _MEASURE.sub("#", text)).strip(), [float(n) for n in _MEASURE.findall(text)]


def strict(text: str) -> str:
    return _SPACE.sub(" ", _denoise(text)).strip()


def loose(text: str) -> str:
    return _NUMBER.sub("<n>", strict(text)).replace('"', "'")


def digest(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8", "replace"), digest_size=8).hexdigest()


def canonical_args(args: dict[str, Any]) -> str:
    return json.dumps(args, sort_keys=True, ensure_ascii=False, default=str)


def loose_with_lines(text: str, cap: int = 400) -> tuple[str, list[str]]:
    """``loose(text)`` and the digests of its non-blank lines, in one pass."""
    lines = [" ".join(line.split()) for line in _NUMBER.sub("<n>", _denoise(text)).replace('"', "'").splitlines()]
    lines = [line for line in lines if line]
    return " ".join(lines), [digest(line) for line in lines[:cap]]


def strict_with_lines(text: str, cap: int = 400) -> tuple[str, list[str]]:
    """``strict(text)`` and the digests of its non-blank lines (the unit of 'new information'), in one pass."""
    lines = [" ".join(line.split()) for line in _denoise(text).splitlines()]
    lines = [line for line in lines if line]
    return " ".join(lines), [digest(line) for line in lines[:cap]]


_EXCEPTION_LINE = re.compile(r"^\s*(?:[\w.]+\.)?[A-Z]\w*(?:Error|Exception|Exit|Interrupt|Fault)\b\s*(?::|$)")
_MARKED_LINE = re.compile(
    r"^\s*(?:E\s{2,}|e: \S|error[:\[]|ERROR\b|ERR_PNPM_\w+|fatal(?: error)?:|FAILED\b|\[?FAIL(?:ED)?[:.\]]|--- FAIL: |"
    r"\u25cf |"
    r"\S+:\d+:(?:\d+:)?\s*(?:(?:fatal )?error|E\d{3}))|(?<!\S)\S+[:(]\d+[:,]\d+\)?:? -? ?error \w+\d+:",
    re.I,
)
"""Searched, not matched: the compiler branch (``x.cs(3,5): error CS1002:``) may sit anywhere on the line. It starts
only where a word does (``(?<!\\S)``): any later start in the same word finds the same end, so trying each of them
cost a long line without spaces (compact JSON) quadratic time, for the same first match."""
_TALLY = r"\b\d+ (?:tests? )?(?:passed|passing|failed|failing|skipped|ignored|pending|succeeded|errors?|failures?)\b"
_TALLIED = re.compile(rf"{_TALLY}[^\n]{{0,80}}?{_TALLY}", re.I)  # two counts of a tally: a line of any runner's tally
_FAILING = re.compile(r"\b\d+ (?:tests? )?(?:failed|failing|errors?|failures?)\b", re.I)
_WRAPPER = re.compile(
    r"failed to solve|did not complete successfully|returned a non-zero (?:code|exit status)|make(?:\[\d+\])?: \*\*\*|"
    r"subprocess-exited-with-error|Command .{0,200} failed with (?:a )?(?:non-?zero )?exit code|"
    r"Process completed with exit code|"
    r"could not compile|aborting due to|^Found \d+ errors?\b|^Tests?:\s|^Test Suites:|^FAIL\s*$|^FAIL\t|"
    r"^FAIL\s+\S+\s+[\d.]+s$|\bexit status \d+$|(?<!\d)\d+ errors? generated|^FAILED \((?:failures|errors)=|ELIFECYCLE|"
    r"^npm (?:ERR!|error) (?:code|errno|A complete log|Lifecycle|Failed at|command|path|workspace|location)\b|"
    r"compilation terminated|\bld returned \d+ exit status|linker command failed with exit code|ninja: build stopped|"
    r"^FAILED: \S|^FAILURE: Build failed|^Execution failed for task|^> A failure occurred while executing|"
    r"^(?:warning: )?BUILD FAIL(?:ED|URE)\b|^\[error\] (?:Total time:|stack trace is suppressed)|"
    r"^>?\s*(?:Go to the documentation|Run with --|Get more help|See the log|For more (?:details|information))\b|"
    r"^\d+ (?:tests?|examples?|specs?|properties|doctests?), \d+ (?:failures?|errors?)\b|"
    r"^=*\s*\d+ (?:failed|passed|errors?|skipped|deselected|xfailed|xpassed|warnings?)(?:, \d+ \w+)* in [\d.]+m?s\b|"
    r"\b\d+ errors? and \d+ warnings?\b|\(\d+ errors?, \d+ warnings?\)|"
    r"(?-i:(?:\b[A-Z]+=\d+\b\W*){3})|^-- (?:Configuring|Generating) incomplete, errors occurred|"
    r"^(?:Test Files|Tests)\s+\d+ (?:failed|passed)\b|"  # vitest's tallies: "Tests  14 failed | 110 passed (124)"
    r"^Failed:\s+\S+#\S+|ERROR: command finished with error: command \(|"  # turbo's: "Failed:    @nw/ui#build"
    + _TALLIED.pattern,  # any runner's tally: "0 tests passed, 1 failed", "2 passing; 1 failing"
    re.I,
)
"""Lines that only say a sub-process failed (a build wrapping the step that did) or sum a run up ("could not compile
... due to 1 previous error", "Found 1 error", "Tests: 1 failed"): the step's own error says more, and it is what
tells one failure from the next. Nor does the advice after it (Gradle's "Go to the documentation to learn how to
Fix dependency resolution errors."). A tally (``1 error and 0 warnings``, ``PASS=0 WARN=0 ERROR=1 TOTAL=1``) only
counts."""
_ERROR_LINE = re.compile(
    r"(?:error|exception|failed|failure|fatal|cannot|can't|could not|couldn't|not found|no such|"
    r"denied|refused|invalid|unexpected|is required|timed? ?out|abort|panic|segmentation|killed|"
    r"not permitted|unrecognized|does not exist|no matches|not defined|undefined (?:reference|symbol)|unresolved "
    r"(?:external|reference)|multiple definition of|E\d{3}\b)",
    re.I,
)
_ERROR_GATES: tuple[str, ...] = ("error", "exception", "fail", "fatal", "cannot", "can't", "could", "not ")
_ERROR_GATES += ("no such", "denied", "refused", "invalid", "unexpected", "is required", "timeout", "time out")
_ERROR_GATES += ("timed out", "timedout", "abort", "panic", "segmentation", "killed", "unrecognized", "no matches")
_ERROR_GATES += ("undefined reference", "undefined symbol", "unresolved ", "multiple definition")
"""Literals (lowercase) one of which ``_ERROR_LINE`` cannot match without, but for its E-code (``_E_CODE``)."""
_E_CODE = re.compile(r"[Ee]\d{3}")


def _errorish(line: str) -> bool:
    """Whether ``_ERROR_LINE`` may match the line, read in C first: one of its words, or an E-code, is there."""
    return may_match(_fold(line), _ERROR_GATES) or bool(_E_CODE.search(line))


_DECORATION = re.compile(
    r"^(?:[=\-_*#~. ]{6,}|[=\-_*#~. ]{3,}(?![=\-_*#~. ])[\w ()]{0,40}(?<![=\-_*#~. ])[=\-_*#~. ]{3,})$|"
    r"^Traceback \(most recent call last\):$|^\.\.\.\[(?:truncated|clipped)|^>?\s{0,8}\d{1,7}\s{0,8}\|(?:\s|$)"
)
"""A rule (``=====``), a banner (``==== 2 failed in 0.1s ====``), a traceback's head, a clipping marker, a line of a
code frame (``> 119 |   setTimeout(...)``: source that Babel, Next.js or rustc quote under an error, never one; pm2's
``0|api  | Error: ...`` is a log line of process 0). The
rule runs are cut where they end (the lookarounds): ``^R{3,}M{0,40}R{3,}$`` alone, where R and M share the space, tried
every split of a long line of spaces and rule characters (seconds on one line of 16,000)."""
_EXC_TYPE = re.compile(r"\b([A-Z][A-Za-z]*(?:Error|Exception|Exit|Interrupt|Warning))\b")
ERROR_LINES = 80
"""How many of an output's last lines are read for its error line."""
ERROR_LINE_CHARS = 2000
"""How much of each such line the error patterns read, its head and its tail (an error often ends a long line): a line
of compact JSON or minified code runs to the clip size (16,000), and seven patterns over it cost tens of
milliseconds; no line of the corpora is longer, and the error line kept is its first 300 characters anyway."""


def _bounded(line: str) -> str:
    half = (ERROR_LINE_CHARS - 5) // 2
    return line if len(line) <= ERROR_LINE_CHARS else f"{line[:half]} ... {line[-half:]}"


def error_line(output: str, ambient: frozenset[str] = frozenset()) -> Optional[str]:
    """The most telling error line: the last exception line, else the last marked error line, else any error-like line.

    Lines in ``ambient`` (digests of lines also seen in successful outputs: environment noise) are skipped.
    Bounded whatever the output: its last ``ERROR_LINES`` lines, each to ``ERROR_LINE_CHARS`` characters.
    """
    cut = (_bounded(ln.strip()) for ln in output.splitlines()[-ERROR_LINES:])
    lines = [ln for ln in cut if ln and not _DECORATION.match(ln)]
    wrapped = False  # a line passed over as a wrapper: only then can the second pass find one
    for wrappers in (False, True):
        if wrappers and not wrapped:
            break
        for pattern in (_EXCEPTION_LINE, _MARKED_LINE, _ERROR_LINE):
            for k in range(len(lines) - 1, -1, -1):
                line = lines[k]
                if pattern is _ERROR_LINE and not _errorish(line) or not pattern.search(line):
                    continue
                if not wrappers and _WRAPPER.search(line):
                    wrapped = True
                    continue
                if not (ambient and digest(strict(line)) in ambient):
                    if len(line) <= 12 and k + 1 < len(lines):  # a bare marker ("ERROR:"): its message is next
                        line = f"{line} {lines[k + 1]}"
                    elif line.startswith("\u25cf ") and k + 2 < len(lines) and lines[k + 1].startswith("expect("):
                        line = f"{line}: {lines[k + 2]}"  # jest's test title, then which of its assertions failed
                    return line[:300]
    return None


def located_line(output: str, ambient: frozenset[str] = frozenset()) -> Optional[str]:
    """The last diagnostic in the compilers' ``file:line:col: message`` form that names no error word (Go's
    ``list.go:14:61: undefined: pb.ListReq``, go vet's): a cause where a run failed, read only there (a ``grep -n``
    hit looks the same). Bounded as ``error_line`` is."""
    for raw in reversed(output.splitlines()[-ERROR_LINES:]):
        line = _bounded(raw.strip())
        if _LOCATED.match(line) and not (ambient and digest(strict(line)) in ambient):
            return line[:300]
    return None


LOCATED = r"(?:vet: )?\S+\.\w{1,10}:\d+:\d+:? "
"""The start of a diagnostic in the compilers' ``file:line:col: message`` form (go vet's with its prefix)."""
MINOR = r"(?:\w+ )?(?:warning|note|info|hint|remark|\[?Warning)\b"
"""A level that says the located line is no failure: a warning or a note."""
_LOCATED = re.compile(rf"{LOCATED}(?!{MINOR}|[A-Z]{{1,3}}\d{{3,4}}\b)\S")
"""A located diagnostic in words; not a linter's coded finding (``C0104: Disallowed name``, ``F401``), which a run made
to reproduce the linter's own behaviour prints as its intended output."""


def error_like(line: str) -> bool:
    """Whether a line reads as an error (one of ``_ERROR_LINE``'s words, read behind its gates, or an E-code)."""
    line = _bounded(line)
    return _errorish(line) and bool(_ERROR_LINE.search(line))


def raised(line: str) -> bool:
    """Whether the line names an exception it raised (``TypeError: ...``): a cause, never a wrapper around one."""
    return bool(_EXCEPTION_LINE.search(line))


_QUOTED = re.compile(r"(['\"`]).*?\1")


def summary(line: str) -> bool:
    """Whether an output line only wraps or sums up a failure (see ``_WRAPPER``)."""
    return bool(_WRAPPER.search(line.strip()))


GIVEN = "<a>"
"""What ``error_template`` puts where an error echoes a word its command was given."""


def error_template(fingerprint: Optional[str], given: Iterable[str] = ()) -> Optional[str]:
    """The fingerprint with quoted parts masked ('No module named <q>' whichever module it was), then each word its
    command was given that it echoes (``No such container: <a>`` whichever name was tried)."""
    if not fingerprint:
        return None
    template = _QUOTED.sub("<q>", fingerprint)
    forms = sorted({form for word in given for form in (word, loose(word)) if len(form) > 2}, key=len, reverse=True)
    if not forms:
        return template
    words = "|".join(map(re.escape, forms))  # one pattern, each word whole: "api" is given, "rapid" is not
    return re.sub(rf"(?<![\w-])(?:{words})(?![\w-])", GIVEN, template)


def error_fingerprint(output: str, ambient: frozenset[str] = frozenset()) -> Optional[str]:
    """A stable name for 'the same error': exception type plus the normalized error line (None if no line reads like
    one)."""
    return line_fingerprint(error_line(output, ambient), output)


def line_fingerprint(line: Optional[str], output: str) -> Optional[str]:
    """``error_fingerprint`` of an output whose error line was read already (``line``; None if it has none)."""
    if line is None:
        return None if output.strip() else "<failed with no output>"
    norm = loose(line)
    if _TALLIED.search(line):  # a tally names no cause: what it counts failing tells one from the next
        norm = f"{norm} [{' '.join(_FAILING.findall(line))}]"
    if _NOT_RAISED.search(line):
        return f"did not raise: {norm[:200]}"
    exc = _EXC_TYPE.search(line)
    name = exc.group(1) if exc else "error"
    if re.match(rf"(?:[\w.]+\.)?{name}\b", norm):  # the line names its type already: no doubled prefix
        return norm[:200]
    return f"{name}: {norm[:200]}"


_NOT_RAISED = re.compile(r"DID NOT RAISE\s*(?:<class\s*)?['\"]?([\w.]+)['\"]?>?", re.I)
_READABLE_NOISE = re.compile(rf"\d(?:{_TS.pattern[2:]}|{_TIME.pattern[2:]})")  # _TS|_TIME, led by their digit
_DOUBLED = re.compile(
    r"^((?:[\w.]+\.)?[A-Z]\w*(?:Error|Exception|Exit|Interrupt|Fault|Warning)):\s*(?:[\w.]+\.)?(\w+):\s*"
)


_BOX = "".join(map(chr, range(0x2500, 0x2580))) + " "
"""Box-drawing characters a tool frames its messages with (terraform's ``│ Error: ...``): no words."""


def code(text: str) -> str:
    """``text`` as a Markdown code span: in backticks, or, when it holds some (a Go struct tag in a ``sed``), in a run
    one longer than its longest, spaced (CommonMark), so a person's page shows the command whole."""
    if "`" not in text:
        return f"`{text}`"
    fence = "`" * (max(len(run) for run in re.findall(r"`+", text)) + 1)
    return f"{fence} {text} {fence}"


def readable(line: str, cap: int = 160) -> str:
    """An error line as a person reads it: timestamps out, pytest's DID NOT RAISE said plainly, a doubled
    type prefix once (``IndexError: IndexError: x`` -> ``IndexError: x``); never a normalization placeholder."""
    text = " ".join(_READABLE_NOISE.sub("", line).split()).lstrip(_BOX).strip(" -:")
    text = text[1:] if text.startswith("[") and "]" not in text else text  # a bracket only when it is half a pair
    text = (text[:-1] if text.endswith("]") and "[" not in text else text).strip(" -:")
    raised = _NOT_RAISED.search(text)
    if raised:
        prefix = text[: raised.start()].strip(" -:")
        prefix = "" if prefix.lower() in ("", "failed", "e failed", "e") else prefix + ": "
        text = f"{prefix}did not raise {raised.group(1).rsplit('.', 1)[-1]}"
    doubled = _DOUBLED.match(text)
    if doubled and doubled.group(1).rsplit(".", 1)[-1] == doubled.group(2):
        text = f"{doubled.group(1)}: {text[doubled.end() :]}"
    return text if len(text) <= cap else text[: cap - 3] + "..."


def classify(texts: Iterable[str]) -> Optional[catalog.FailureClass]:
    """The first known failure class found in the given texts (most specific classes first)."""
    blob = "\n".join(texts)
    low = folded(blob)
    for name, pattern, remedy, gates in catalog.FAILURES:
        if may_match(low, gates) and pattern.search(blob):
            return catalog.FailureClass(name, remedy)
    return None
