"""What runs elsewhere, read back: a CI run's verdict from what ``gh run view``, ``gh pr checks``, ``glab ci`` and
the like print, its failure named by the step that failed; and the workloads a status read lists, failing when their
newest pod is in a crash loop or cannot pull its image (``kubectl get pods``), or their containers exited non-zero or
keep restarting (``docker compose ps``); and a log tail read after a restart: the error it shows though the command
that showed it succeeded (``logged_error``), its lines as restart loops compare them (``log_tail``). Pure text
functions.

Why apart from ``outcomes`` and ``printed``: these read what a command reports about something running somewhere
else, not about its own run, in forms that change on the providers' schedule (CI providers, Kubernetes, Compose); a
check read back has its own cycle (push, wait, read), which the signals treat apart (``ci_failure``); and a workload's
state is its newest replica's (during a rollout the old ReplicaSet's pods are still listed, crashing as they did
before the fix).
"""

from __future__ import annotations

import re
from typing import Optional

from strict_loop.model.monitoring import Verdict
from strict_loop.monitor import catalog, outcomes
from strict_loop.monitor import fingerprint as fp
from strict_loop.monitor.calls import shellwork
from strict_loop.monitor.outcomes import running

REMOTE_CHECK = re.compile(
    r"^\s*(?:gh\s+(?:run\s+(?:view|watch|list)|pr\s+checks)|glab\s+ci\s+(?:view|status|list)|"
    r"az\s+pipelines\s+runs?\s+show|circleci\b|buildkite-agent\b)"
)
"""Commands that read a check run elsewhere (a CI run): their own exit code says the reading worked, their output
says whether the check passed."""
_FAILED_STEP = re.compile(
    r"^[ \t]+[X✗][ \t]+(?P<step>[^\n]+?)\s*$|^[^\t\n]+\t(?P<logstep>[^\t\n]+)\t.*##\[error\]|"
    r"^(?P<check>[^\t\n]+)\tfail\t|^[X\u2717] {2}(?P<row>\S[^\n]*?) {2,}",  # `gh pr checks`: piped, at a terminal
    re.M,
)
_STEP_TAIL = re.compile(r" in \d+\w*(?: \(ID \d+\))?$")
_FAILED_JOB = re.compile(r"^[X\u2717][ \t]+(?P<job>[^\n]+?) in \d+\w*(?: \(ID \d+\))\s*$", re.M)
"""A failed job's row, where no step under it is shown (``gh run watch``'s JOBS list: ``X pytest (3.11) in 2m11s (ID
31163455310)``): the run failed in that job; another job failing is another failure."""


def remote_verdict(command: str, output: str) -> tuple[Optional[Verdict], Optional[str]]:
    """A CI run's verdict read from what ``gh run view`` and the like printed, and its failure: ('fail', "CI step
    'X' failed"), ('pass', None), or (None, None) while it runs or when nothing says. The run's own mark is its first
    line's (``X``, ``✓``, ``*``); a failed step's log (``--log-failed``) marks its errors ``##[error]``. Both views of
    one failure name the same step, so they are one failure."""
    if "gh " not in command and not any(w in command for w in ("glab", "pipelines", "circleci", "buildkite")):
        return None, None
    if not any(REMOTE_CHECK.match(part) for part in shellwork.segments(command)):
        return None, None
    head, tail = output[:4000], output[-8000:]
    title = _TITLE.search(head)  # past `gh run watch`'s banner, or a chained `gh run rerun`'s line
    first = title.group(0) if title else next((line for line in head.splitlines() if line.strip()), "")
    mark = _mark(first, tail)
    if mark is None:
        return None, None  # a run still going is polled, not judged; or nothing says
    if mark == "pass":
        return "pass", None
    step = _FAILED_STEP.search(head) or _FAILED_STEP.search(tail)
    name = next((g for g in step.group("step", "logstep", "check", "row") if g), "") if step else ""
    if not name and (job := _FAILED_JOB.search(head)):
        name = job.group("job")
    return "fail", f"{CI_STEP} '{_STEP_TAIL.sub('', name.strip())[:120] or 'the run'}' failed"


_TITLE = re.compile(r"^[X✓✗*] [^\n]{1,300} · \d+[ \t]*$", re.M)
"""A run's title row as ``gh run view`` and ``gh run watch`` print it (``X feat/export CI · 9214387725``): its mark."""


CI_STEP = "CI step"
"""How the failure of a CI run read back starts (``remote_verdict``): a check whose cycle (push, wait, read) is long."""


def ci_failure(ftext: Optional[str]) -> bool:
    """Whether a failure is a CI run's, read back (``remote_verdict``)."""
    return (ftext or "").startswith(CI_STEP)


_CHECK_ROW = re.compile(r"^[^\t\n]+\t(pass|fail|pending|skipping)\t", re.M)
"""``gh pr checks`` as a pipe reads it: one row per check, its state in the second column."""


_CHECKS_SAY: dict[str, Optional[str]] = {
    "some checks were not successful": "fail",
    "all checks were successful": "pass",
    "some checks are still pending": None,
}
"""The line ``gh pr checks`` opens with at a terminal, and the verdict it says."""


def _mark(first: str, tail: str) -> Optional[str]:
    """'fail', 'pass', or None, from the first row (a run's own mark, or ``gh run list``'s newest run as tab-separated
    status and conclusion) or, for ``gh pr checks``, from every check's state; a failed step's log says ##[error]."""
    if "##[error]" in tail or "completed with 'failure'" in tail:
        return "fail"
    row = " ".join(first.replace("\t", " ").split()).lower()
    if row in _CHECKS_SAY:  # `gh pr checks` at a terminal: its summary line first
        return _CHECKS_SAY[row]
    if running(first) or re.search(r"\b(?:queued|in_progress|waiting|requested)\b", row):
        return None
    if row.startswith(("x ", "✗ ", "completed failure")):
        return "fail"
    if row.startswith(("✓ ", "completed success")):
        return "pass"
    if row.startswith(("* ", "pending")):  # a run still going, by its mark
        return None
    if _FAILED_JOB.search(tail):  # its title row cut off (`| tail -4`), a job's own mark in the JOBS list says it
        return "fail"
    states = _CHECK_ROW.findall(tail)
    if states:
        return "fail" if "fail" in states else None if "pending" in states else "pass"
    return None


_STATUS_READ = re.compile(
    rf"^\s*(?:kubectl\s+{shellwork.GLOBAL_FLAGS}get\s+(?:pods?|po|all)\b|(?:docker|podman)(?:-compose|\s+compose)?\s+ps\b)"
)
_FAILING_STATES = (
    r"(?:Init:)?(?:CrashLoopBackOff|ImagePullBackOff|ErrImagePull|InvalidImageName|Error|OOMKilled|RunContainerError|"
    r"CreateContainerConfigError|CreateContainerError)"
)
_FAILING_STATE = re.compile(_FAILING_STATES)
_STATE_ROW = re.compile(
    rf"^(?P<name>[\w.-]+)\s+(?:\d+/\d+\s+(?P<pod>{_FAILING_STATES})\s|"
    r".*\s(?P<exited>Exited \((?!0\))\d+\)|Restarting \(\d+\)))",
    re.M,
)
_POD_ROW = re.compile(
    r"^(?P<name>[\w.-]+)\s+\d+/\d+\s+(?P<state>\S+)\s+\d+(?: \([^)\n]{1,20}\))?\s+(?P<age>(?:\d{1,6}[smhdy]){1,3})\b",
    re.M,
)
"""A row of ``kubectl get pods``: name, ready, status, restarts (``13 (2m ago)``), age (``44s``, ``5m10s``)."""
_AGE_PART = re.compile(r"(\d+)([smhdy])")
_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "y": 31536000}
CRASHING = "keeps crashing"  # a workload failing any other way (CrashLoopBackOff, Error, OOMKilled, Exited)
_STATE_KIND = {"ImagePullBackOff": "cannot pull its image", "ErrImagePull": "cannot pull its image"}
_STATE_KIND |= {"InvalidImageName": "cannot pull its image", "CreateContainerConfigError": "cannot be created"}
_STATE_KIND |= {"CreateContainerError": "cannot be created"}
_FAILING_KINDS = (*set(_STATE_KIND.values()), CRASHING)
_REPLICA = re.compile(r"-(?:[a-z0-9]{6,10}-)?[a-z0-9]{5}$|-\d+$")
"""A pod's or a Compose container's suffix (``api-7d9f8c6b5-x2kqp``, ``shop-api-1``): another on every restart."""


def failing_status(command: str, output: str) -> Optional[str]:
    """What a status read shows failing, whatever its own exit code, by workload (the replica's suffix aside); None
    when it shows none. A workload whose newest pod is not failing (a rollout's new pod still starting or running,
    the old ones still crashing) shows no failure: what the last change did is not known yet."""
    if not any(_STATUS_READ.match(part) for part in shellwork.segments(command)):
        return None
    text = output[-8000:]
    failing = set()
    for row in _STATE_ROW.finditer(text):
        state = (row.group("pod") or "").removeprefix("Init:")
        failing.add((_REPLICA.sub("", row.group("name")), _STATE_KIND.get(state, CRASHING)))
    settled = _newest_not_failing(text)
    return "; ".join(sorted(f"{name}: {how}" for name, how in failing if name not in settled)[:4]) or None


def _newest_not_failing(text: str) -> set[str]:
    """The workloads whose youngest pod (by the age column) is in no failing state."""
    newest: dict[str, tuple[int, str]] = {}
    for row in _POD_ROW.finditer(text):
        name = _REPLICA.sub("", row.group("name"))
        age = sum(int(n) * _SECONDS[unit] for n, unit in _AGE_PART.findall(row.group("age")))
        if name not in newest or age < newest[name][0]:
            newest[name] = (age, row.group("state"))
    return {name for name, (_, state) in newest.items() if not _FAILING_STATE.fullmatch(state)}


def shown_failing(ftext: Optional[str]) -> bool:
    """Whether a verdict's failure is one ``failing_status`` reads (a workload a status read shows failing), which a
    wait cannot change, unlike a check run with other arguments."""
    return bool(ftext) and all(part.endswith(_FAILING_KINDS) for part in (ftext or "").split("; "))


def failed_job(command: str, output: str) -> Optional[str]:
    """The failure of a job run elsewhere (a batch, training or data job) that a status read shows failed (``status:
    FAILED``, ``state: JOB_STATE_FAILED``, ``"result_state": "FAILED"``): the error its log lines show, else its reason
    field; None for any other output. Each resubmission has a new id, so it is known by what failed, never by its id."""
    if not _JOB_READ.search(command[:2000]) or not _JOB_FAILED.search(output[:8000]):
        return None
    raised = _RAISED.findall(output[-4000:])
    reason = _JOB_REASON.search(output[:8000]) or _JOB_ROW.search(output[:8000])
    said = raised[-1] if raised else reason.group("why") if reason else None
    return f"{JOB_FAILED}: {fp.readable(said, 200)}" if said else JOB_FAILED


JOB_FAILED = "the job failed"
"""How ``failed_job`` names a failure: its read's other lines (the state field, the job's id) are no errors."""


_JOB_READ = re.compile(r"\b(?:describe|show|get|status|view|wait|inspect)\b")
_JOB_FAILED = re.compile(
    r"^[ \t{,]*\"?(?:status|state|phase|job_?[sS]tate|result_?[sS]tate|life_?[cC]ycle_?[sS]tate)\"?[ \t]*[:=][ \t]*"
    r"[\"']?(?:JOB_STATE_)?(?:FAILED|Failed|failed|FAILURE|ERROR|INTERNAL_ERROR|TIMED_?OUT)[\"']?[ \t]*,?[ \t]*$|"
    r"^(?:JOB_STATE_)?(?:FAILED|Failed|FAILURE|ERROR|TIMED_?OUT)\t",
    re.M,
)
"""A job's state field saying it failed, on a line of its own (YAML, JSON, ``key=value``), or first in a row of a
query's text output (``FAILED\tStates.TaskFailed\t...``)."""
_JOB_ROW = re.compile(r"^(?:JOB_STATE_)?(?:FAILED|Failed|FAILURE|ERROR|TIMED_?OUT)\t(?P<why>[^\n]{3,200})", re.M)
_RAISED = re.compile(r"^(?:\S+ )?((?:[a-z_][\w]*\.)+[A-Z]\w+: \S[^\n]*|[A-Z]\w*(?:Error|Exception): \S[^\n]*)$", re.M)
"""An exception its log lines show (``google.api_core.exceptions.Forbidden: 403 GET ...``, ``MemoryError: ...``)."""
_JOB_REASON = re.compile(
    r"^[ \t{,]*\"?(?:status_?[rR]eason|reason|message|error_?[mM]essage|state_?[mM]essage)\"?[ \t]*[:=][ \t]*[\"']?"
    r"(?P<why>[^\n\"']{3,200})",
    re.M,
)


LOGGED = "logged "
"""How ``logged_error`` starts a logged error known by its failure class."""


def logged_error(output: str) -> Optional[str]:
    """The error a run printed though it succeeded (a log tail, a status, an HTTP error status ``curl -i`` showed), as
    its fingerprint; None when it printed none. Read in the last 4,000 characters, as a failing run's error line is."""
    tail = output[-4000:]
    line = fp.error_line(tail)
    if line is None and "HTTP/" in tail:
        line = next(reversed([m.group(0) for m in _ERROR_STATUS.finditer(tail)]), None)
    if line is None:
        return None
    found = fp.classify([line])  # the same refused connection logged as `ERROR db connect failed`, then, retries
    if found is not None and found.name in catalog.SPECIFIC_CLASSES:  # added, as `WARN db not ready attempt 3/30`
        return f"{LOGGED}{found.name}"
    return fp.line_fingerprint(line, output)


_ERROR_STATUS = re.compile(r"^HTTP/[\d.]+ [45]\d\d\b[^\n]{0,80}", re.M)
"""An HTTP response's status line that says it failed (``HTTP/1.1 502 Bad Gateway``, ``HTTP/2 401``)."""


_OWN_REPORT = re.compile(
    r"^\s*(?:\[\+\]|[\u2714\u2713\u2717\u283f]|=>|#\d+\s)|\b(?:(?:creat|remov|start|stopp|restart|recreat|kill|delet|configur|"
    r"patch|updat|scal|pull|wait)(?:ed|ing)|running|healthy|unchanged|built|recreate)\s*(?:[\d.]+m?s)?\s*$|"
    r"\bhas been (?:upgraded|installed|rolled back)\b|^(?:LAST DEPLOYED|REVISION|TEST SUITE):|"
    r"^Successfully (?:installed|uninstalled|built) \S|^(?:added|removed|changed) \d+ packages?\b|"
    r"^Requirement already satisfied:",
    re.I,
)
"""A line where a restart reports what it did, not what the restarted thing said: Compose's and BuildKit's progress
lines (``[+] Running 2/2``, ``\u2714 Container api-1  Removed  0.2s``, ``Container db-1  Starting``, ``=> exporting to
image``), kubectl's ``deployment.apps/api restarted``, ``pod "api-6c8d" deleted`` and Helm's release block (``Release
"api" has been upgraded``, ``REVISION: 17``), and a package install chained before it (pip's ``Successfully installed
websockets-12.0``, npm's ``added 3 packages``): the agent's attempt, not the restarted thing's word. They differ with
the way it was restarted."""


def log_lines(output: str, loose: bool = False) -> list[str]:
    """The lines of a log tail (in the last 4,000 characters) as digests without their noise (times, durations, a
    process's id in brackets, a pod's suffix): those after the restart's own report, where one came first (or all but
    its report lines). What two tails after two restarts are compared by, so that only a line the restarted thing
    printed anew (a debug line added, a step it got further to, another status code) counts as something that moved;
    a setting it echoes before its first error line (``"host":"db.svc"``, ``sslmode=require``) is known by its key.
    ``loose`` folds numbers too, for a tail whose error is known by its class (``logged_error``): a retry counter
    moving around the same refused connection (``attempt 19/30``) is no news."""
    lines = output[-4000:].splitlines()
    reports = [k for k, line in enumerate(lines) if _OWN_REPORT.search(line)]
    after = lines[reports[-1] + 1 :] if reports else lines
    kept = after if any(line.strip() for line in after) else [ln for k, ln in enumerate(lines) if k not in reports]
    kept = [line for line in kept if not _VOLATILE_HEADER.match(line)]
    if loose:  # a line with no word in it (`...`, `}`, `^`) says nothing new
        kept = [line for line in kept if _WORD.search(line)]
    first = next((k for k, line in enumerate(kept) if fp.error_like(line)), len(kept))
    kept = [_SETTING.sub(lambda m: f"{m[1] or m[2]}<v>", line) for line in kept[:first]] + kept[first:]
    digests = fp.loose_with_lines if loose else fp.strict_with_lines
    return digests(_KEYED_ID.sub("<id>", _ULID.sub("<ulid>", "\n".join(kept))), cap=80)[1]


_WORD = re.compile(r"\w")
_NEWS_KEYS = "(?:msg|message|err|error|event|text|reason|level|status)"
_SETTING = re.compile(
    rf"(\"(?!{_NEWS_KEYS}\")[\w.-]{{1,40}}\":\s?)\"[^\"\n]{{0,200}}\"|"
    rf"(\b(?!{_NEWS_KEYS}=)[\w.-]{{1,40}}=)(?:\"[^\"\n]{{0,200}}\"|[^\s\"]{{1,200}})"
)
"""A setting's value in a line a program logs before its error (``"host":"db.svc"``, ``host=db.svc``): the restarted
thing echoing what the agent changed (a host, a user, an SSL mode) is not news; its messages and levels stay."""


_VOLATILE_HEADER = re.compile(
    r"(?i:etag|set-cookie|age|expires|last-modified|server-timing|cf-ray|x-amzn-trace-id|x-amz-cf-id|x-runtime|"
    r"x-response-time|report-to|nel):\s"
)
"""HTTP response headers whose value changes with every response (``curl -i`` after each restart): no news."""


_KEYED_ID = re.compile(r"(?<==)(?=[a-z\d]{0,11}\d)(?=[a-z\d]{0,11}[a-z])[a-z\d]{2,12}\b")
"""A logfmt value of letters and digits (``tid=2n9``, ``req=a8f3k2``, ``conn=c12``): a thread's, a request's or a
connection's id, new with each process; a value of digits alone (``status=500``) or of letters alone stays."""
_ULID = re.compile(r"[0-7](?<!\w[0-7])[0-9A-HJKMNP-TV-Z]{25}\b")
"""A ULID (a deploy's id, ``deployment-01HYB3K9Q8J5W2X7N4M6PRTVZA``): 26 characters of Crockford's base32. Folded in a
log tail only: no gate keeps it off every output, and a restart's own report is where a new one shows each time."""


def log_tail(output: str, logerr: str, index: int) -> list[str]:
    """A log tail's lines as restart loops compare them. Where its error is known by its class, numbers are folded
    and a middle the harness cut out is no news (the error shows, the same); else a cut middle is a line of its own."""
    if logerr.startswith(LOGGED):
        return log_lines(output, loose=True)
    return log_lines(output) + _cut(output, index)


def _cut(output: str, index: int) -> list[str]:
    """A line of its own for a clipped output's cut middle: unknown, never the same as any other turn's."""
    return [fp.digest(f"clipped\0{index}")] if outcomes.clipped(output) else []
