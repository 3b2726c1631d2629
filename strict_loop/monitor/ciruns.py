"""A check run elsewhere, read back: a CI run's verdict from what ``gh run view``, ``gh pr checks``, ``glab ci`` and
the like print, and its failure named by the step that failed. Pure text functions.

Why apart from ``outcomes``: the CI providers' command lines and output forms change on their own schedule, and a
check read back has its own cycle (push, wait, read), which the signals treat apart (``ci_failure``).
"""

from __future__ import annotations

import re
from typing import Optional

from strict_loop.model.monitoring import Verdict
from strict_loop.monitor import shellwork
from strict_loop.monitor.outcomes import running

REMOTE_CHECK = re.compile(
    r"^\s*(?:gh\s+(?:run\s+(?:view|watch|list)|pr\s+checks)|glab\s+ci\s+(?:view|status|list)|"
    r"az\s+pipelines\s+runs?\s+show|circleci\b|buildkite-agent\b)"
)
"""Commands that read a check run elsewhere (a CI run): their own exit code says the reading worked, their output
says whether the check passed."""
_FAILED_STEP = re.compile(
    r"^[ \t]+[X✗][ \t]+(?P<step>[^\n]+?)\s*$|^[^\t\n]+\t(?P<logstep>[^\t\n]+)\t.*##\[error\]|"
    r"^(?P<check>[^\t\n]+)\tfail\t",
    re.M,
)
_STEP_TAIL = re.compile(r" in \d+\w*(?: \(ID \d+\))?$")


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
    first = next((line for line in head.splitlines() if line.strip()), "")
    mark = _mark(first, tail)
    if mark is None:
        return None, None  # a run still going is polled, not judged; or nothing says
    if mark == "pass":
        return "pass", None
    step = _FAILED_STEP.search(head) or _FAILED_STEP.search(tail)
    name = (step.group("step") or step.group("logstep") or step.group("check") or "") if step else ""
    return "fail", f"{CI_STEP} '{_STEP_TAIL.sub('', name.strip())[:120] or 'the run'}' failed"


CI_STEP = "CI step"
"""How the failure of a CI run read back starts (``remote_verdict``): a check whose cycle (push, wait, read) is long."""


def ci_failure(ftext: Optional[str]) -> bool:
    """Whether a failure is a CI run's, read back (``remote_verdict``)."""
    return (ftext or "").startswith(CI_STEP)


_CHECK_ROW = re.compile(r"^[^\t\n]+\t(pass|fail|pending|skipping)\t", re.M)
"""``gh pr checks`` as a pipe reads it: one row per check, its state in the second column."""


def _mark(first: str, tail: str) -> Optional[str]:
    """'fail', 'pass', or None, from the first row (a run's own mark, or ``gh run list``'s newest run as tab-separated
    status and conclusion) or, for ``gh pr checks``, from every check's state; a failed step's log says ##[error]."""
    if "##[error]" in tail or "completed with 'failure'" in tail:
        return "fail"
    row = " ".join(first.replace("\t", " ").split()).lower()
    if running(first) or re.search(r"\b(?:queued|in_progress|waiting|requested)\b", row):
        return None
    if row.startswith(("x ", "✗ ", "completed failure")):
        return "fail"
    if row.startswith(("✓ ", "completed success")):
        return "pass"
    if row.startswith(("* ", "pending")):  # a run still going, by its mark
        return None
    states = _CHECK_ROW.findall(tail)
    if states:
        return "fail" if "fail" in states else None if "pending" in states else "pass"
    return None
