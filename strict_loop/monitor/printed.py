"""Whether a call failed (``failed``): its error flag or exit code, else what it printed, for a harness that sends no
exit code (Codex's ``PostToolUse`` hands the output text alone); and what a run measured (``measure``). Pure.

Why apart from ``outcomes``: this is a reading of its own, one that grows with every toolchain whose words it learns
(a check's failure summary, a compiler's or linter's diagnostic line, a program's last words before it exits), and
it must not call a healthy run failed: a passing run's log lines say "ERROR" too, a test may be named "3 failed
attempts", a log shown with ``kubectl logs`` ends in someone else's error. So a check fails on its summary unless an
all-passed summary ends it; any other command fails on its last line, read past the lines that trail an error
(stack frames, hints, a version banner), unless it only showed stored text.
"""

from __future__ import annotations

import re
from typing import NamedTuple, Optional

from strict_loop.model.monitoring import Kind
from strict_loop.model.turns import Turn
from strict_loop.monitor import fingerprint as fp
from strict_loop.monitor import outcomes
from strict_loop.monitor.calls import shellwork


def failed(turn: Turn, kind: Kind, command: str) -> bool:
    """Whether the turn failed: its error flag or exit code, else (no exit code came, as from Codex) what a check
    printed, or a tool's result that opens with its error (``Error executing tool x: ...``, ``MCP error -32602``)."""
    if turn.error or turn.exit_code not in (None, 0) or kind == "invalid":
        return True
    if command and (echoed := outcomes.echoed_exit(turn.output, command)) is not None:
        return echoed != 0  # the status the command printed itself (`; echo "exit=$?"`), not the echo's 0
    if turn.exit_code == 0 and command and shellwork.piped(command):
        return reads_failed(command, turn.output)  # the 0 is the last command's (``make | tail -40``), not the run's
    if turn.error is not None or turn.exit_code is not None:
        return False
    if command:
        return reads_failed(command, turn.output)
    return kind != "read" and bool(_TOOL_ERROR.match(turn.output[:100]))


def selected(command: str, output: str, exit_code: Optional[int]) -> bool:
    """Whether a check's output is only the lines a filter chose (``| grep -E 'error|BUILD'``, ``| head -2``, ``grep
    -c``) and no exit code of its own says how it ended: the lines that would say it passed may be the ones left out,
    so it passed only where a final summary says so."""
    if exit_code not in (None, 0) or (exit_code == 0 and not shellwork.piped(command)):
        return False
    return shellwork.filtered(command) and not any(_ALL_PASSED.search(line) for line in output.splitlines()[-20:])


_TOOL_ERROR = re.compile(r"\s*(?:Error executing tool\b|MCP error -?\d+|Error: )")
"""How a tool that is not a shell says it failed, first thing in its result (the MCP SDK's servers, many tools)."""


_FAILED_OUTPUT = re.compile(
    r"^(?:[\u2502\u2503][ \t]*)?(?:FAILED\b|FAIL\b|ERROR\b|[Ee]rror(?:\[\w+\])?:|fatal:|npm ERR!|npm error\b|"
    r"Traceback \(most recent call last\)|"
    r"E\s{2,}\S|\S+:\d+:(?:\d+:)? error\b|BUILD FAILED|BUILD FAILURE|g?make(?:\[\d+\])?: \*\*\*|ninja: build stopped|"
    r"(?:collect2|ld(?:\.lld|\.gold)?|clang(?:\+\+)?|g(?:cc|\+\+)|cc1(?:plus)?|link|lld-link): (?:fatal )?error\b)|"
    # a nonzero count of failures or errors that ends a clause (a summary, not a log line "attempt 1 failed:
    # retrying" or a test named "after 3 failed attempts"); a line a runner marks passed is never one
    r"^(?![ \t]*(?:[\u2713\u2714\u221a]|PASS\b|ok\b))(?![^\n]*(?:\bPASSED|\.\.\. ok)[ \t]*(?:\[[ \d%]+\])?[ \t]*$)"
    r"(?![^\n]*\b0 remaining\b)[^\n]*\b[1-9]\d* (?:tests? )?(?:failed|failing|failures?|errors?|Error\(s\))"
    r"(?=[ \t]*(?:$|[,.;|()\]!]|in\b|out of\b|generated\b|detected\b|found\b|and\b))|"
    r"^[ \t]*[1-9]\d* fail[ \t]*$|^[ \t]*\S*[ \t]*fail[ \t]+[1-9]\d*[ \t]*$|"
    # a test its runner marks failed at its line's end (Gradle's "Class > method() FAILED", pytest -v's "::t FAILED")
    r"^[^\n]*[\w)\]](?<!\b0)[ \t]+FAILED(?:[ \t]+\[[ \d%]+\])?[ \t]*$|"
    r"^(?:Tests?|Test Suites):[^\n]*\b[1-9]\d* failed|"
    r"\b(?:Failures|Failed|Errors):[ \t]*[1-9]|"  # the count after its word (surefire, PHPUnit, dotnet test)
    # a diagnostic in the compilers' and linters' file:line forms, not a warning or a note
    r"\(\d+,\d+\): (?:fatal )?error [A-Z]*\d+:|^[ \t]*\S+:\d+:\d+ - error\b|"
    rf"^{fp.LOCATED}(?!{fp.MINOR}|[A-Z]: \[Corrected\])\S|"
    # a level prefix in brackets (Maven, sbt) and a verdict banner in any case
    r"^\[(?:ERROR|FATAL|error)\][ \t]+\S|^\[INFO\] BUILD FAILURE|"
    r"^(?:(?:warning|error): )?(?:[x\u00d7\u2717\u2718][ \t]+)?(?:[Bb]uild|BUILD|[Cc]ompilation|Test [Rr]un|Tests?) "
    r"(?:FAILED|[Ff]ailed)\b|^[ \t]*thread '[^'\n]{0,200}' panicked at |"
    r"^Failed(?:!|\b to compile)|^(?:FAILURES|ERRORS)!|^[Ee]rror (?:during|while|in)\b|"
    r"^\*\* (?:[A-Z]+ )+FAILED \*\*|^Testing failed:|"  # xcodebuild's banner, and its list of what failed
    # a formatter's check that would change files
    r"\b[1-9]\d* files? would be (?:reformatted|changed|fixed)\b|^[Ww]ould reformat\b|Code style issues found",
    re.M,
)
"""What a check prints when it fails, for harnesses that send no exit code (Codex's PostToolUse)."""
_ALL_PASSED = re.compile(
    r"^=*[ \t]*(?:\d+ (?:passed|skipped|deselected|xfailed|xpassed|warnings?)(?:, )?)+(?: in [\d.]+s\b.*?)?[ \t]*=*$|"
    r"^OK(?: \([^)]*\))?$|^ok[ \t]+\S+[ \t]+(?:[\d.]+s|\(cached\))|^\d+ passing \(\d+m?s\)$|"
    r"^\d+ (?:examples|tests|runs)(?:, \d+ assertions)?, 0 failures\b(?!.*\b[1-9]\d* errors)|"
    r"BUILD SUCCESS(?:FUL)?\b|^Build succeeded\.?$|^test result: ok\.|^\*\* (?:[A-Z]+ )+SUCCEEDED \*\*",
)
"""A final summary that says every check passed: an error-looking line above it was a log line of a passing run."""


def reads_failed(command: str, output: str) -> bool:
    """Whether a command failed, read from what it printed (the last 3,000 characters), for a harness that sends no
    exit code: a check (tests, a build, a linter) that reports failures, or any command whose last line is an error
    it raised (``OSError: [Errno 98] Address already in use``, ``fatal: ...``)."""
    if ("ok=" in output or "Failed" in output) and _RECAP_FAILED.search(output[-3000:]):
        return True
    said = _EXIT_SAID.search(output[:300])
    if said:  # the harness's own line for the exit code (Codex's shell output to the model) settles it
        return said.group(1) != "0"
    if outcomes.hung(output):
        return True  # cut off before it could pass (the harness's own words: timed out, interrupted)
    parts = shellwork.last_pipeline(command)  # its first command printed what came back
    if parts and _GH.match(parts[0]) and _GH_FAILED.match(output.lstrip()[:200]):
        return True  # the GitHub CLI heads its refusals: `X Pull request ... is not mergeable`, `GraphQL: ...`
    tail = _TASK_PREFIX.sub("", output[-3000:]) if ": " in output else output[-3000:]  # turbo's `web:build: ...`
    if outcomes.is_verifier(command) and _FAILED_OUTPUT.search(tail) and not _passed_at_end(tail):
        return True
    end = outcomes.last_line(tail)
    last = _boxed(tail) if end == "\u2575" else _head_line(tail, end)
    last = last.lstrip(_FAIL_MARKS)  # `✖ Packages installation failed, see above.`: the words after the mark
    logs = _LOGS.match(parts[0]) if parts else None
    shown = (_SHOWN.match(parts[0]) or logs) if parts else None
    own = last.startswith(f"{shown.group(1).split()[0]}:") if shown else False
    if shown and not (own or last.endswith(_NO_PROGRAM) or (logs and _READER_OWN.match(last))):
        return False  # a log shown or searched is not a command failing, unless the reader itself says it failed
    if _tallied(tail) or _FAILED_ANYWHERE.search(tail):
        return True  # a tally of failures, or a unit of the run that failed (a package, a crate, a monorepo task)
    if _OWN_ERROR.search("\n".join(tail.splitlines()[-_NEAR_END:])) or (
        _NODE_FOOTER.match(end) and _THROWN.search(tail)
    ):
        return True  # `ERROR: Validate failed: ...` under a hint the tool adds; Node's uncaught error, then its version
    says = _LAST_SAYS.search(last) or (end != last and _LAST_SAYS.search(end))  # its own last words too, indented
    said_failed = fp.raised(last) or bool(_LAST_ERROR.match(last)) or bool(says)
    return said_failed and not _NONE.search(last)


def ends_failing(output: str) -> bool:
    """Whether an output's last line says in words that the command failed (``4 packets transmitted, 0 received, 100%
    packet loss``, ``Configuring incomplete, errors occurred!``): that line is its error where no other names one."""
    return bool(_LAST_SAYS.search(outcomes.last_line(output[-3000:])))


_TALLY = re.compile(
    r"\b(?:ERRORS?|FAIL(?:ED|URES?)?)=[1-9]|"
    r"(?<![\w.])[1-9]\d* (?:tests? )?(?:failed|failing|failures?|[Ee]rrors?)(?=[ \t]*(?:$|[^\w\s:=]|in\b|and\b))"
)
"""A closing tally of failures: ``1 error and 0 warnings``, ``PASS=0 ERROR=1 TOTAL=1``, ``✅ 12 OK 🚫 4 Errors``."""
_CLOCK = re.compile(r"^\d{1,2}:\d{2}:\d{2}(?:[.,]\d+)?\s*")


def _tallied(tail: str) -> bool:
    """Whether any command's last three lines tally failures (its log clock cut off): a run that judges the work by a
    program no list of checks names (``dbt run``, a data pipeline's own runner) says so itself at its end."""
    lines = [_CLOCK.sub("", ln.strip()) for ln in tail.splitlines()[-40:]]
    lines = [ln for ln in lines if ln and not _RULE.match(ln)]
    return any(_TALLY.search(ln) and " 0 remaining" not in ln for ln in lines[-3:]) and not _passed_at_end(tail)


def _passed_at_end(tail: str) -> bool:
    """Whether one of the last three meaningful lines is an all-passed summary that no failure line follows, and no
    unit of the run failed before it."""
    lines = [ln.strip() for ln in tail.splitlines() if ln.strip() and not _RULE.match(ln.strip())]
    end = lines[-3:]
    at = next((k for k in range(len(end) - 1, -1, -1) if _ALL_PASSED.search(end[k])), None)
    if at is None or _FAILED_ANYWHERE.search(tail):
        return False
    return not any(_FAILED_OUTPUT.search(ln) for ln in end[at + 1 :])


_TASK_PREFIX = re.compile(r"^[\w@/.-]{1,80}:[A-Za-z][\w:.-]{0,40}: ?", re.M)
"""The task a monorepo runner prefixes each line with (turbo's ``web:build: Failed to compile.``): read past it, as a
file's ``path:12:5:`` is not (a task's name starts with a letter)."""
_FAILED_ANYWHERE = re.compile(
    r"^(?:FAIL[ \t]+\S+[ \t]+(?:[\d.]+s|\[build failed\]|\[setup failed\])|test result: FAILED\.|"
    r"[ \t]*Failed:[ \t]+[\w@/.-]+#[\w:.-]+|[ \t]*ERR_PNPM_[A-Z_]+[ \t])",
    re.M,
)
"""A line that says the run failed wherever it stands: one unit's failure among several (Go's ``FAIL\tpkg\t0.03s``,
cargo's ``test result: FAILED.``, turbo's ``Failed:    web#build``), after which a unit's pass line ending the output
(``ok\tpkg/client\t0.02s``) is no pass of the run; pnpm's error code (`` ERR_PNPM_PEER_DEP_ISSUES  Unmet peer``)."""


_RULE = re.compile(r"^[=\-_*#~. ]{3,}$")
_TRAILER = re.compile(
    r"^(?:\s|[+^~|{}\]\[\u00d7\u2500-\u257f]|-\s|(?:hint|note|help|tip):|\[notice\]|Node\.js v\d|Require stack:|"
    r"LINE \d+:|At line:\d|(?:Please|Check|See|Try|To|For|Is|Are|and|or|Aborting|Did you)\b|\^|from \S+:\d+:in\b|"
    r"[\w.-]+@[\w.-]+\s*$|exit status [1-9]\d*$|(?!(?i:error|fatal|fail|exception|caused|traceback))[A-Z][\w ]{0,30}:$|"
    r"\([^()\n]*\)\s*$|info\b|Tasks: TOP =>|(?:Confirm|If|Make sure|Ensure|Consider|Verify)\b|\S+:\d+:in [`']|"
    r"Emitted 'error' event\b|\[\w+\]\s*-{5,}\s*$|>?\s*\d{1,7}\s*\|(?:\s|$)|Action:$|Identify and stop\b|"
    r"(?:DETAIL|HINT|CONTEXT|QUERY|LINE \d+):\s)"
)
"""Lines that trail an error without being it: stack frames and indented detail, advice (``hint:``, ``Please make sure
...``, ``Check the spelling ...``), a package manager's notice, node's version banner, a source pointer, a label that
heads indented detail (Bundler's ``In Gemfile:``), a line in parentheses (SQLAlchemy's ``(Background on this error at:
...)``), Yarn's ``info`` lines after its error, Rake's ``Tasks: TOP => db:migrate``, PostgreSQL's ``DETAIL:`` and
``HINT:`` after its ``ERROR:``."""


def _head_line(tail: str, last: str, reach: int = 30) -> str:
    """The last meaningful line (``last``), or, when the output ends in trailer lines, the line those trail (within
    ``reach`` lines); ``last`` itself when nothing above the trailers reads as an error."""
    lines = [ln for ln in tail.splitlines() if ln.strip()]
    if not lines or not (_TRAILER.match(lines[-1]) or lines[-1].startswith(_NPM_LOG)):
        return last
    for line in reversed(lines[-reach:]):
        text = line.strip()
        if not (_TRAILER.match(line) or text.startswith(_NPM_LOG)):
            return text
        if _SAYS_ITSELF.match(text):
            return text  # a trailer that is the verdict itself (PowerShell's error id, go run's exit status)
    return last


_NPM_LOG = ("npm ERR! A complete", "npm error A complete")
_FAIL_MARKS = "\u2716\u2717\u2718\u00d7\u274c "
"""The marks a tool puts before its failing verdict (Angular CLI's and listr's ``✖``, ``✗``, ``✘``, ``×``, ``❌``)."""
_SAYS_ITSELF = re.compile(r"\+ FullyQualifiedErrorId : \w+|exit status [1-9]")


_LOGS = re.compile(
    r"^\s*((?:docker|podman)(?: compose)? logs|kubectl logs|journalctl|git (?:log|show|diff|blame)|"
    r"gh (?:pr|issue|release|repo) view|zcat|zgrep|bat|sort|uniq|cut|diff|column|xxd|strings)\b"
)
"""More programs that print stored text (logs, history, files): an error line among it is not theirs."""
_READER_OWN = re.compile(r"^(?:fatal: |Error from server\b|Error response from daemon: )")


_NO_PROGRAM = ("operable program or batch file.", "command not found", "CommandNotFoundException")
"""How a last line ends when the program itself was not found (Windows' two-line message; POSIX shells)."""


def _boxed(tail: str) -> str:
    """The head line of a diagnostic box that ends the output (``╷``, then ``│ Error: No value for required variable``
    and its explanation, then ``╵``: terraform's and OpenTofu's form): what the box says, as a last line would."""
    for line in tail[tail.rfind("\u2577") + 1 :].splitlines():
        text = line.strip().lstrip("\u2502").strip()
        if text:
            return text
    return ""


_EXIT_SAID = re.compile(r"^(?:Exit code:|Process exited with code) (-?\d+)\b", re.M)
"""How Codex heads a shell call's output when it gives it to the model (``Chunk ID``, ``Wall time``, then ``Process
exited with code 2``; older releases ``Exit code: 2``): a recording of the model's view carries it."""
_GH = re.compile(r"^\s*gh\s+(?!(?:pr|issue|release|repo|run)\s+view\b)")
_GH_FAILED = re.compile(r"(?:X |GraphQL: |HTTP [45]\d\d\b|gh: |failed to run git: )")
"""How the GitHub CLI heads what it refused or could not do (its own mark ``X``, the API's ``GraphQL:`` or ``HTTP 4xx``
error), where no exit code says it: not what a view of a pull request or an issue prints (their text is theirs)."""
_SHOWN = re.compile(r"^\s*(cat|tail|head|less|more|grep|egrep|rg|sed|awk|jq|echo|printf)\b")
"""Programs that print what they read: an error line among it is the file's, not theirs."""


_RECAP_FAILED = re.compile(r"^\S+\s+: ok=\d+ [^\n]*\b(?:failed|unreachable)=[1-9]|\.{4}[ \t]*Failed$", re.M)
"""A run's own summary that something failed, whatever line ends it: Ansible's recap, a pre-commit hook's ``Failed``."""
_NONE = re.compile(
    r"\berrors?:?\s*0\b|\b0 errors?\b|\"(?:GET|POST|PUT|PATCH|DELETE|HEAD|OPTIONS) \S+ HTTP/[\d.]+\" \d{3}", re.I
)
"""A last line that says no error happened: zero errors, or a server's access-log line (``"GET /items/99 HTTP/1.1" 404
Not Found``: a running server answered, whatever the status)."""


_OWN_ERROR = re.compile(r"^(?:ERROR|FATAL):[ \t]+\S", re.M)
"""A command's own error in capitals, at a line's start (Flyway's, psql's, Liquibase's ``ERROR: ...``)."""
_NEAR_END = 5
"""How many last lines may follow it (a hint, a link to the docs)."""
_NODE_FOOTER = re.compile(r"Node\.js v\d+\.\d+\.\d+\s*$")
"""The line Node prints last after an uncaught exception's stack."""
_THROWN = re.compile(r"^\w*Error(?: \[[A-Z][A-Z0-9_]+\])?: \S", re.M)
_LAST_ERROR = re.compile(
    r"(?:(?!No |Zero |no |zero )[A-Za-z][a-z]+ )?(?:error|fatal|Error|FATAL|ERROR)(?:\[\w+\])?:\s|"
    r"[\w.\-/()@]{1,80}(?::[\w-]{1,20}){0,3}: (?:.{0,300}?[: ] ?)?"
    r"(?i:no such file or directory|command not found|permission denied|cannot access .{0,200}|is a directory|"
    r"(?:is )?not a directory|no matches found|unknown command|not found|connection refused|"
    r"could not resolve host(?:name)?|name or service not known|(?:connection |operation )?timed out|"
    r"network is unreachable|no route to host)(?:(?:: | \().{0,200}|\.)?$|"
    r"operable program or batch file\.$|The system cannot find the (?:file|path) specified\.$|"
    # more heads a failing program's last line starts with
    r"[\w.\-/]{1,80}(?::[\w.\-/]{1,80}){0,3}(?:\[\d+\])?: (?:error|fatal|Error|ERROR|FATAL)\b|"
    r"(?:An? )?(?:error|Error|ERROR)(?: \w+){0,2}? "
    r"(?:from|response from|occurred|during|while|when)\b[^\n]{0,80}?:\s|npm (?:ERR!|error)(?:\s|$)|E: |panic: |"
    r"(?:Unhandled exception\.?|Uncaught(?: exception)?|Exception in thread \"[^\"]*\"|(?:PHP )?Fatal error: Uncaught)"
    r"\s+(?:[\w.$]+\.)?[A-Z]\w*(?:Error|Exception)\b|"
    r"thread '[^']*' panicked at |[\w.\-]+: \(\d+\) |\+ FullyQualifiedErrorId : |exit status [1-9]|error [A-Z]|"
    r"(?:[A-Z]\w*::)+[A-Z]\w*: |(?:Unable to|Could not|Couldn't|Cannot|Failed to) [a-z]\w* |"
    r"(?!(?i:[^\n]*\b(?:none|nothing|no|never|not)\b))(?:[A-Za-z-]+ ){1,3}(?i:failed)(?:[;.!,]|$)|"
    r"(?!(?i:(?:\S+ ){0,2}(?:none|nothing|no|never|not|zero)\b))(?:[A-Za-z][\w-]* ){1,3}failed: \S"
)
"""How a failing command's last line starts, in the words tools and shells print: ``error: ...``, ``ls: x: No such file
or directory``, zsh's ``(eval):cd:1: no such file or directory: x`` and ``zsh: command not found: npm``, ``mv: x/ is not
a directory``, Windows' ``'x' is not recognized ...`` (whose last line is ``operable program or batch file.``) and ``The
system cannot find the file specified.``, a program's ``x: error: ...``, ``curl: (7) ...``, an ``Error from server
...``, ``npm ERR!``, Yarn's ``error An unexpected error ...``, apt's ``E:``, a panic or an uncaught exception (Ruby's
``PG::DuplicateColumn: ...`` too), "connection refused" and "timed out" after a program's name, a few words ending in
"failed." or saying why after it (the AWS CLI's ``Waiter StackDeleteComplete failed: ...``)."""
_LAST_SAYS = re.compile(
    r"(?i:\bcannot connect to the docker daemon\b|\b(?:cannot|can't|could not|unable to) (?:continue|proceed)\b|"
    r"\bconfiguring incomplete, errors occurred\b|\btoo many warnings \(maximum: \d+\)|\bcould not apply \w+|"
    r"^nothing to commit\b|\bBUILD FAILURE\b|\bexit(?:ing|ed)? with (?:status|code):? [1-9]|^Exiting$|^error (?:launch|"
    r"runn|build|connect|load|install|start|open|compil|execut|deploy|upload|download|fetch|resolv)ing\b|"
    r"\bfailed to start\b|\b(?:address|port \d+) (?:is |was )?already in use\b|"
    r"\bversion solving (?:has )?failed\b|\bcould not be resolved to an installable set\b|\bno solution found when "
    r"resolving\b|\brequirements are unsatisfiable\b|\b(?:some |all )?tests? failed[.!]?$|\bis invalid: \S|"
    r"\bconnection to the server \S+ was refused\b|\b100(?:\.0)?% packet loss\b|"
    r"\bis not recognized as (?:the|a) name of a cmdlet\b|"
    # a last sentence saying that something failed ("Direct fetching of that commit failed."), not "0 failed"
    r"\b(?!(?:none|nothing|nobody|no)\b)[a-z]\w* (?:(?:has|have|was|were|had) )?failed[.!]?$)|"
    r"^FAILED: (?!0\b)\S|"  # alembic's, ninja's failed step
    r":in [`'][^'\n]*': .* \((?:[A-Z]\w*::)*[A-Z]\w*\)$"  # Ruby's uncaught exception
)
"""Words that say a command failed anywhere in its last line: it cannot continue (Bundler), its resolver found no
versions that fit (Bundler's, Poetry's and pub's "version solving has failed.", Composer's "could not be resolved to an
installable set", uv's "No solution found"), tests failed (Flutter's), alembic's and ninja's last line ``FAILED: ...``,
kubectl's "is invalid:", Docker's daemon unreachable, kubectl's refused connection, PowerShell's unknown cmdlet, a child
that exited non-zero, ping's "100% packet loss" (nothing came back), Ruby's uncaught exception."""


_DECIMAL = re.compile(r"\d\.\d")
REPORT_LINES = 12
"""How many of an output's last lines a measurement is read in: the report's own (a benchmark's, a load test's, a
query plan's), past what a chain printed before the measuring command (a restart's lines, an install's)."""


class Measure(NamedTuple):
    """What a run measured, as ``TurnFacts`` keeps it (``shape``, ``nums``, ``reading``)."""

    shape: Optional[str]
    nums: list[float]
    reading: Optional[str]


def measure(output: str) -> Measure:
    """What a run measured, read in its last lines: the digest of their shape (numbers masked, times and ids folded),
    their numbers (the last 24), and the line a person reads it by (the last with a fraction, else with a number). Two
    runs of one command with one shape printed the same report, and their numbers say whether what it measures moved
    (a query's time, a benchmark's ns/op, a memory sample)."""
    lines = output[-3000:].splitlines()[-REPORT_LINES:]
    shape, numbers = fp.measured("\n".join(lines))
    if not numbers:
        return Measure(None, [], None)
    said = [" ".join(line.split()) for line in lines if any(c.isdigit() for c in line)]
    reading = next((line for line in reversed(said) if _DECIMAL.search(line)), said[-1] if said else None)
    return Measure(fp.digest(shape), numbers[-24:], reading[:120] if reading else None)


DIAGNOSTIC = re.compile(
    r"^[^\s:(]{1,300}(?::\d{1,7}){1,2}: (?:fatal )?error\b|^[^\s:(]{1,300}\(\d{1,7},\d{1,7}\): error\b", re.M
)
"""A compiler's or checker's own error line, by the file and line it is at (gcc, clang, mypy: ``src/a.c:7:3: error:``;
tsc, MSBuild: ``src/a.ts(7,3): error TS2307``): a build that prints no count is counted by these (``error_lines``)."""


def error_lines(output: str) -> Optional[int]:
    """How many distinct error lines a build or checker printed in its own file:line form (None: none): what a build
    that prints no count of its errors is counted by, apart from a test runner's count of failing tests."""
    errors = len(set(DIAGNOSTIC.findall(output))) if fp.may_match(fp.folded(output), (" error",)) else 0
    return errors or None
