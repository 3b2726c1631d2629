"""What a turn's result says about the work, as opposed to what the turn tried. Pure text functions.

An edit is an attempt; progress is what attempts achieve. So the detector needs, for each turn: did something that
judges the work (a test, build, lint or type-check run; diagnostics an editor reports after a save; a person) pass or
fail, and if it failed, with which failure signature (error class, location, normalised message); is a background job
still running; is the content known at all (an export that lost it, a write with no text, is unknown and never "the
same" as anything). What a failure says is missing (a module, a program, a package) is read in ``missing``.
"""

from __future__ import annotations

import re
from typing import Any, Optional

from strict_loop.monitor import fingerprint as fp

# a count from its first digit, not a denominator (``attempt 4/10 failed``) nor a log time's milliseconds before its
# level (``08:52:03,118 ERROR``); unittest's FAILED (...) by its key=count pairs: linear
FAILS = re.compile(
    # CTest's "4 tests failed out of 11"; not a count heading its message ("     11 Error: x" of `uniq -c`)
    r"(?i)(?<![\d/.,:])(\d+) (?:tests? |previous )?(?:fail(?:ed|ing|ures?)|errors?)\b(?!:[ \t]+\S)|"
    r"\bfail(?:ed|ures?)? = (\d+)\b|"  # a tally's key and value: Zephyr's ztest "pass = 7, fail = 4, skip = 0"
    r"(?:failure|FAILED \((?:\w+=\d+, )*?(?:failure|error))s=(\d+)|"
    r"\b(?:Failures|Failed|Errors):[ \t]*(\d+)\b|"  # the count after its word: dotnet test, surefire, PHPUnit
    r"\b\d\d:\d\d \+\d+(?: ~\d+)? -(\d+): Some tests failed|"  # dart and flutter test's last line: passed, failed
    r"(?<![\d/.,:])(\d+) (?:rule\(s\) |rules? |accessibility )?violat(?:ed|ions?)\b"  # axe's rules violated
)
PASSED = re.compile(r"\b(\d+) passed\b|^OK\b|\bAll tests passed\b", re.I | re.M)
GO_FAIL = re.compile(r"^--- FAIL: ", re.M)
VERIFIER = re.compile(
    r"\b(?:test|tests|unittest|pytest|py\.test|jest|vitest|mocha|karma|tox|nox|build|compile|tsc|mypy|pyright|\w*lint|"
    r"ruff|flake8|check|typecheck|type-check|clippy|vet|mvn|gradle|gradlew|make|cargo|javac|gcc|g\+\+|clang|clang\+\+|"
    r"ctest|phpunit|rspec|rubocop|shellcheck|webpack|ninja|msbuild|sbt)(?!\w)",
    re.I,
)
"""Command words of runs that judge the work: their pass or fail is an outcome, not just an output."""
_VERIFIER_WORD = re.compile(VERIFIER.pattern.removeprefix(r"\b").removesuffix(r"(?!\w)"), re.I)
_VERIFIER_SCRIPT = re.compile(r"(?:[\w.]+-|run_?)?" + _VERIFIER_WORD.pattern + r"(?:[:-][\w:.-]+)?(?:\.\w+)?", re.I)
_CHAIN = re.compile(r"&&|\|\||;|\|")
_DIAG_HEAD = re.compile(r"New problems detected after saving the file|<workspace_diagnostics>", re.I)
_DIAG_GATES = ("new problems detected after saving the file", "<workspace_diagnostics>")
_DIAG_LINE = re.compile(r"^\s*-\s*\[(?:[\w ]+ )?Error\]\s*(?:Line \d+:)?\s*(?P<msg>.+)$", re.I)
RUNNING = re.compile(
    r"<status>\s*running\s*</status>|\b(?:status|state)\W{0,12}(?:running|in[_ ]progress|pending|queued|working|"
    r"building|progressing|provisioning|deploying|starting|initializing)\b|\(health: starting\)|_IN_PROGRESS\b|"
    r"\bstill (?:running|building|in progress|pending)\b|\bin[_ ]progress\b|"
    r"\bnot (?:yet )?(?:finished|complete|done)\b|"
    r"\s\d+/\d+\s+(?-i:Pending|ContainerCreating|PodInitializing|Init:\d+/\d+)\s",
    re.I,
)
"""A background job that has not finished: polling it is waiting, not an attempt (a CI run in progress, CloudFormation's
``UPDATE_IN_PROGRESS``, a build's state ``WORKING`` or ``BUILDING``, a container's ``(health: starting)``, a pod
creating)."""
UNKNOWN = re.compile(
    r"^\s*(?:\[(?:no content rendered|content (?:not )?(?:available|captured)|output (?:omitted|not "
    r"captured))[^\]]*\]|no result content)\s*$",
    re.I,
)
"""Placeholders a recorder leaves where the content was lost (SpecStory's, a session logger's ``No result content``)."""
NO_OUTPUT = re.compile(r"^\s*\((?:[\w.-]{1,40} completed with no output|No content)\)\s*$")
"""Claude Code's word to the model for an empty result (``(Bash completed with no output)``): nothing was printed."""
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
    "newString",  # OpenCode's edit
)
_READER = re.compile(r"^\s*(?:cat|tail|head|less|more|grep|rg|ls|wc|stat|file|find|du|sleep|echo|printf)\b")
"""Programs that only show or wait: ``tail -2 build.log`` reads a log, it does not build."""


def failing_count(output: str) -> Optional[int]:
    """The failing count a check printed (0: it said it passed; None: no count), its patterns read behind literals. A
    run still going has no count yet (``0 failing ... 1 pending``: the failing check is running again)."""
    low = fp.folded(output)
    if running(output):
        return None
    fails = FAILS.finditer(output) if fp.may_match(low, (" fail", " error", "s=", " violat")) else ()
    counts = [int(g) for m in fails for g in m.groups() if g]
    if counts:
        return max(counts)
    go = len(GO_FAIL.findall(output)) if "--- FAIL: " in output else 0
    if go:
        return go
    return 0 if fp.may_match(low, ("passed", "ok")) and PASSED.search(output) else None


def is_verifier(command: str) -> bool:
    """Whether a shell command runs something that judges the work (tests, a build, a linter, a type checker) in the
    foreground: a check sent to the background (``nohup cargo test > log &``) prints its pid, not its verdict."""
    lines = command.strip().splitlines()
    return bool(lines) and any(_judges(part) for part in _CHAIN.split(_BACKGROUND.split(lines[0])[-1]))


_BACKGROUND = re.compile(r"(?<![&>|])&(?![&>])")
"""The ``&`` that sends what comes before it to the background (not ``&&``, nor a redirection's ``2>&1``, ``&>``)."""


_NOT_A_CHECK = re.compile(
    r"^\s*(?:sudo\s+)?(?:rm|rmdir|mkdir|cp|mv|cd|pushd|touch|chmod|chown|ln|tar|unzip|zip|git|gh|curl|wget|scp|rsync|"
    r"kill|pkill|killall|lsof|ps|which|type|export|source|open|cargo\s+(?:tree|update|search|info|add|remove|metadata|"
    r"fetch|install|new|init|clean|vendor|generate-lockfile|pkgid)|\S*gradlew?\s+(?:-\S+\s+)*(?:dependencies|tasks)|"
    r"\S*mvnw?\s+(?:-\S+\s+)*(?:dependency|help|versions):\S+)\b"
)
"""Programs that move, fetch or manage files, processes and packages, or ask a build tool what it has (``cargo tree``,
``gradle dependencies``): a word like ``build`` in their arguments names a file or a branch, and they judge nothing."""
_SCRIPT_NAME = 4
"""How many leading words (or the word after ``run``) may name a check by a script name with a suffix (``npm run
test:unit``, ``yarn lint-fix``); further on, such a word is an argument (``--name build-artifacts``)."""


def _judges(part: str) -> bool:
    """Whether one command of a chain runs a check: a verifier word as a word of its own (``npm test``, ``python -m
    pytest``), a script named so (``./gradlew``, ``scripts/check.sh``), or a package script in command position."""
    part = part.strip().lstrip("(")
    if _READER.match(part) or _NOT_A_CHECK.match(part):
        return False
    if any(_VERIFIER_WORD.fullmatch(w.lstrip("-")) for w in part.split() if w.startswith("--")):
        return True  # a check asked for by flag: node --test, black --check, cmake --build
    words = [w.strip("'\"()") for w in part.split() if not w.startswith("-") and "=" not in w]
    script = True
    for n, word in enumerate(words):
        if "/" in word:  # a path: its file's name, or any folder of the script run (python tests/run.py)
            names = [p.split(".")[0] for p in word.strip("/").split("/")]
            if any(_VERIFIER_SCRIPT.fullmatch(p) for p in names) if script else _VERIFIER_WORD.fullmatch(names[-1]):
                return True
            script = False
        elif _VERIFIER_WORD.fullmatch(word.split(".")[0]) or (
            (n < _SCRIPT_NAME or words[n - 1] == "run") and _VERIFIER_SCRIPT.fullmatch(word)
        ):
            return True
    return False


def diagnostics(output: str) -> Optional[str]:
    """The first error an editor reported after a save (Cline: 'New problems detected after saving the file'), if
    any."""
    if not fp.may_match(fp.folded(output), _DIAG_GATES) or not _DIAG_HEAD.search(output):
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


_PROMPT = re.compile(r"[^\n]{0,120}?[$%#>] ")
"""A terminal's prompt before the command it echoes (``me@mac:proj me$ ``, ``jonas@mbp app % ``)."""


def without_echo(command: str, output: str) -> str:
    """The output without the prompt line a terminal capture starts with (Cursor's), which echoes the command, wrapped
    where the terminal wrapped it: the command's words are no output (``--failed`` is no error, a flag no news)."""
    line = command.strip().split("\n", 1)[0]
    prompt = _PROMPT.match(output) if line and len(line) <= 4000 and line[0] in output[:120] else None
    if prompt is None:
        return output
    k = prompt.end()
    for ch in line:  # the echo, wrapped anywhere by the terminal
        while output.startswith("\n", k) and ch != "\n":
            k += 1
        if not output.startswith(ch, k):
            return output
        k += 1
    return output[k:].lstrip("\r\n") if k == len(output) or output[k] in "\r\n" else output


def unknown_content(kind: str, args: dict[str, Any], output: str) -> bool:
    """Whether what the turn did or got is unknown: an export's placeholder, a read that came back empty, a write
    whose text was not kept. Unknown is never 'the same' as anything."""
    if UNKNOWN.match(output):
        return True
    if kind == "read" and not output.strip():
        return True
    if "clipped" in args:
        return True  # the arguments were cut to fit: two such calls are never known to be the same
    if kind == "write":  # what it wrote: a content key, else a shell command or patch; neither kept is unknown
        return not any(args.get(k) for k in _CONTENT_KEYS + _COMMAND_KEYS)
    return False


_COMMAND_KEYS = ("command", "cmd", "input", "rendered", "old_str", "old_string")


_CLIPPED = re.compile(
    r"\.\.\.\s?\[(?:clipped|truncated)(?: \d+ \w+)?\]|<response clipped>|\[\.\.\. omitted \d+ of \d+ lines \.\.\.\]|"
    r"\u2026\d+ tokens truncated\u2026"
)


def clipped(output: str) -> bool:
    """Whether part of the output was cut (a clipping marker): what was cut is unknown."""
    return ("..." in output or "\u2026" in output) and bool(_CLIPPED.search(output)) or "<response clipped>" in output


HANG = re.compile(
    r"^(?:[Cc]ommand timed out after|\[Request interrupted by user|Terminated$|Killed$|timeout: sending signal|"
    r"g?make(?:\[\d+\])?: \*\*\* \[[^\]\n]{1,200}\] (?:Terminated|Killed)$|"
    r"Command did not complete within its \S+ timeout|"  # Claude Code 2.1 then moves it to the background
    r"Command was (?:automatically cancelled because it exceeded the timeout|cancelled by user before it could "
    r"complete)|(?:shell|bash) tool terminated command after exceeding timeout|User aborted the command)",
    re.M,
)
"""The harness's or the shell's own word that a command was cut off (a harness's tool timeout, the person's interrupt,
``timeout``'s signal): never a program's own "timed out" message, which it printed and then ended."""


def hung(output: str, command: str = "", exit_code: Optional[int] = None) -> bool:
    """Whether the command hung and was cut off: the output says so at its start or on one of its last lines (read in
    the first and the last 500 characters), or ``timeout``'s own exit status (124) ends a command run under it, or
    (no exit status sent) a run under it stops on a test it started."""
    echoed = echoed_exit(output, command) if exit_code in (None, 0) else None  # none sent, or the 0 of the echo
    code = exit_code if echoed is None else echoed
    if (code == 124 or (code is None and unfinished(output))) and _UNDER_TIMEOUT.search(command[:2000]):
        return True
    if _WAITS.search(command[:2000]) and _WAITED_OUT.search(output[-500:]):
        return True  # `kubectl wait --for=condition=complete --timeout=300s` giving up: cut off by its own limit
    return bool(HANG.search(output[:500]) or HANG.search(output[-500:]))


_WAITS = re.compile(
    r"\bkubectl\b[^|;&\n]*\swait\b|\b(?:aws|gcloud|az)\b[^|;&\n]*\swait\b|"
    r"\s--wait\b(?=[^|;&\n]*$)|\s--wait\s"
)
"""A command whose work is to wait for a condition elsewhere (``kubectl wait``, ``aws ... wait``, ``helm upgrade
--wait``, ``docker compose up --wait``). Not ``kubectl rollout status``: its count of replicas updated moves between
two such timeouts (3 of 12, then 6) while the rollout goes on."""
_WAITED_OUT = re.compile(r"timed out waiting for|Max attempts exceeded|context deadline exceeded", re.I)
"""Its own word that it gave up waiting: what a timeout does to a command that hangs."""


def echoed_exit(output: str, command: str = "") -> Optional[int]:
    """The exit status a command printed on its last line (``; echo "exit=$?"``, ``echo EXIT_CODE=${PIPESTATUS[0]}``):
    the run's, where the harness sends none or the 0 of the ``echo`` that printed it. Where the chain goes on to
    print a log after it (``> train.log 2>&1; echo exit=$?; tail -5 train.log``), the first status line in the
    output's first 2,000 characters."""
    m = _ECHOED.match(last_line(output[-300:]))
    if not m and _ECHOES_STATUS.search(command[:2000]):
        m = next(filter(None, map(_ECHOED.match, output[:2000].splitlines())), None)
    return int(m.group(1)) if m else None


_ECHOED = re.compile(r"^\W{0,3}(?:exit(?:[ _-]?(?:code|status))?|rc)\W{0,3}\s*[=:]\s*(-?\d{1,3})\W{0,3}$", re.I)
_ECHOES_STATUS = re.compile(r"\becho\b[^;&|\n]{0,40}\$(?:\?|\{PIPESTATUS)[^;&|\n]*[;&]+\s*\S")
"""A chain that echoes a step's status and then runs more (``; echo "rc=$?"; tail -5 log``)."""


def unfinished(output: str) -> bool:
    """Whether a test run's output stops on a test it started, with no result after it: cut off, not passed."""
    return bool(_STARTED.match(last_line(output[-2000:])))


_STARTED = re.compile(
    r"^(?:=== (?:RUN|CONT|PAUSE) |\s*RUNS |collecting \.\.\.\s*$|\s*Running \S+ \.\.\.\s*$|\S+\.py::\S+$|"
    r"\s*\S[^\n]{0,200}? \.{3,}(?: \[RUN\])?$|test \S+ has been running for over \d+ seconds$)"
)
"""A runner's line for a step it started (Go's ``=== RUN``, jest's ``RUNS``, pytest's ``collecting ...``, Rust's
``test x has been running for over 60 seconds``, pytest -v's test id before its verdict, a name and its dot leader
with no result after them: unittest's ``test_x (m.T) ...``, Laravel's ``2024_06_03_add ......``, dbt's ``[RUN]``)."""


_UNDER_TIMEOUT = re.compile(r"(?<![\w.-])g?timeout\s+(?:-[-\w=]+\s+)*\d")
"""A command run under coreutils' ``timeout`` (``... && timeout 300 alembic upgrade head``), which exits 124 when
it cut the command off."""


_FAILING_TEST = re.compile(
    r"^\s*(?:[\u2717\u2715\u2718\u00d7]|\(fail\))[ \t]+(?P<mark>\S[^\n]*?)(?:[ \t]+\[[\d.]+m?s\])?[ \t]*$|"
    r"^(?:FAILED|ERROR)[ \t]+(?P<node>\S+::\S+)|^--- FAIL: (?P<go>\S+)|^FAIL: (?P<unit>\w+ \([\w.]+\))|"
    r"^test (?P<rust>\S+) \.\.\. FAILED$|^rspec \S+ # (?P<rspec>.+)$|^\d+\) (?P<php>[\w\\]+::\w+)|"
    r"^\[ERROR\] (?P<surefire>[\w.$]+) -- Time elapsed: .* <<< (?:FAILURE|ERROR)!|^\s{4,}\d+\) (?P<mocha>\S.*?)$|"
    r"^\s*Failed (?P<dotnet>[\w.]+) \[|^(?P<gradle>\w[\w.$]* > .+?) FAILED$|"
    r"^(?:\d\d:\d\d:\d\d\s+)?\d+ of \d+ (?:FAIL|ERROR)(?: \d+)? (?P<counted>\S+(?: \S+){0,5}?)(?: \.{2,}| \[|$)"
)
"""A line naming one failing test, by the runners' own marks: bun/jest/vitest (``✗``, ``✕``, ``(fail)``), pytest's
``FAILED path::test``, go's ``--- FAIL:``, unittest's ``FAIL: test (module.Class)``, cargo's ``test x ... FAILED``,
RSpec's ``rspec ./spec/x_spec.rb:10 # name``, PHPUnit's ``1) Class::test``, Surefire's ``[ERROR] x.Test.m -- Time
elapsed: ... <<< FAILURE!``, mocha's indented ``1) name`` (its failure list, indented less, names the suite),
``dotnet test``'s ``Failed x.Test [31 ms]``, Gradle's ``Test > m() FAILED``, dbt's ``2 of 7 FAIL 412 name`` (rows)."""


def failing_tests(output: str, cap: int = 50) -> list[str]:
    """The failing tests a run names (its last 400 lines, each read up to 300 characters), sorted: two runs that fail
    "the same way" fail the same tests, whatever their summary count says."""
    names = set()
    for line in output.splitlines()[-400:]:
        m = _FAILING_TEST.match(line[:300])
        if m:
            names.add(_TOOK.sub("", next(v for v in m.groups() if v)))
    return sorted(names)[:cap]


_TOOK = re.compile(r"\s*(?:[(\[]\d+(?:\.\d+)?\s*(?:ms|s|sec)[)\]]|(?<=\s)\d+(?:\.\d+)?\s*m?s)\s*$")
"""The time a runner prints beside a test's name: jest's ``(31 ms)``, vitest's ``12ms``, bun's ``[66.80ms]``."""


_RUNNING_GATES: tuple[str, ...] = ("running", "progress", "pending", "queued", "building", "not finished")
_RUNNING_GATES += ("not complete", "not done", "not yet ", "containercreating", "podinitializing", "init:")
_RUNNING_GATES += ("working", "provisioning", "deploying", "starting", "initializing")
"""Literals (lowercase) one of which ``RUNNING`` cannot match without: read in C first."""


def running(output: str) -> bool:
    return fp.may_match(fp.folded(output), _RUNNING_GATES) and bool(RUNNING.search(output))


SCORE = re.compile(r"\b(?:score|reward|accuracy|pass@1)\b\s*[:=]\s*(-?\d{1,15}(?:\.\d{1,15})?)(?!\d|\.\d|\s*/)", re.I)
"""A score as a verifier prints it, whole (never the start of a longer number, nor a fraction's numerator: ``35/50``
is no score of 3), at most 15 digits either side of its point (no float holds more)."""


def found_nothing(output: str, kind: str = "search", failed: bool = False) -> bool:
    """Whether a lookup's whole output says it found nothing: no match, no such file, a glob with no match, a count of
    0, a query's empty answer (short outputs only: one that lists anything found something). An empty output is not
    read so: an export may have lost it. A run that did not fail counts by its answer alone (``{"count":0}``,
    ``Scraped 0 items``): a bare ``0`` is as often ``echo $?``."""
    run = kind == "run"
    if len(output) > 600 or (kind not in ("search", "read") and not (run and not failed)):
        return False
    said = [line for line in output.splitlines() if line.strip() and not _EXIT_LINE.match(line)]
    return bool(said) and all(_NOTHING.match(line) and not (run and line.strip() == "0") for line in said)


_EXIT_LINE = re.compile(r"^(?:Exit code \d+|Command executed(?: successfully \(exit code 0\))?\.|Output:)\s*$")
"""A harness's own line around what a command printed (Claude Code's exit code, Cline's ``Command executed.``)."""
_NOTHING = re.compile(
    r"^\s*(?:No (?:files|matches|results)(?: found)?\b.*|Found 0 \w+.*|0|File (?:does not exist|not found)\b.*|"
    r"\S.*?\bNo such file or directory\W*|\S.*?\bno matches found: .*|"
    # a query's empty answer: Elasticsearch's hits or count, Prometheus's result, SQL's rows, "0 items", [], null
    r"\{.*\"(?:hits|result|results|items|data)\"\s*:\s*\[\s*\]\s*\}+|\{\s*\"count\"\s*:\s*0\s*[,}].*|\[\s*\]|null|"
    r"\{.*\"hits\"\s*:\s*\{\s*\"total\"\s*:\s*(?:\{\s*\"value\"\s*:\s*)?0\s*[,}].*|"
    r"\(0 rows\)|Empty set\b.*|0 rows in set\b.*|\S.*?\b0 (?:items|results|records|rows|entries|documents|hits|"
    r"products|listings|posts|events)\b.*)$",
    re.I,
)
"""A line of a lookup that found nothing: Claude Code's ``No files found`` and ``File does not exist.``, Gemini CLI's
``No matches found for pattern``, Cline's ``Found 0 results.``, ``ls: cannot access 'x': No such file or directory``,
zsh's ``no matches found: *.json``, ``grep -c``'s ``0``; a query that answered nothing."""


def score(output: str, failed: bool) -> Optional[float]:
    """A verifier score printed by a passing command (``score: 0.82``), when the turn carries none."""
    gated = failed or not any(w in output.lower() for w in ("score", "reward", "accuracy", "pass@1"))
    found = [] if gated else SCORE.findall(output)
    return float(found[-1]) if found else None


def last_line(output: str) -> str:
    """The last meaningful line of an output (no decoration, prompt echo, clipping marker or viewer's line number)."""
    for line in reversed(output.splitlines()):
        text = _GUTTER.sub("", line).strip()
        if text and not re.match(
            r"^(?:[=\-_*#~. ]{3,}|\.\.\.\[(?:clipped|truncated)[^\]]*\]|\[Command finished with exit code \d+\])$", text
        ):
            return text
    return ""


_GUTTER = re.compile(r"^ *\d+(?:\u2192|\t)")
_ERRORISH = re.compile(
    r"\b(?:error|exception|fatal|failed|failure|traceback|cannot|can't|undefined|not found|no such|denied|refused)\b",
    re.I,
)
_COUNTS = re.compile(r"\b\d+ (?:passed|failed|failing|errors?|warnings?|skipped)\b", re.I)


def error_digests(output: str, cap: int = 12) -> list[str]:
    """Digests of the failing tests a check names, else of its error lines (counts and summaries aside): a failure has
    moved on only when none of the earlier failure's is still there (a build whose first error varies while the same
    cycle error stays has not; another test failing has, whatever wrapper lines both runs print)."""
    named = failing_tests(output)
    if named:
        return [fp.digest(name) for name in named][:cap]
    found = [
        fp.digest(fp.strict(ln))
        for ln in output.splitlines()
        if _ERRORISH.search(ln) and not _COUNTS.search(ln) and not fp.summary(ln)
    ]
    return list(dict.fromkeys(found))[-cap:]
