"""What runs elsewhere, read back: a CI run's verdict from what ``gh run view``, ``gh pr checks``, ``glab ci`` and
the like print, its failure named by the step that failed; and the workloads a status read lists, failing when their
newest pod is in a crash loop or cannot pull its image (``kubectl get pods``), or their containers exited non-zero or
keep restarting (``docker compose ps``). Pure text functions.

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
