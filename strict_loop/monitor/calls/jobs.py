"""Background jobs: a command a harness runs in the background (Claude Code's ``run_in_background``), what it printed
read back (``BashOutput`` before Claude Code 2.1, the task's output file with Read or ``tail`` since, Codex's
``write_stdin`` to a command still running), the job stopped (``TaskStop``, ``KillShell``, a Ctrl-C), and the harness's
notice that one ended. Each call is tied to its job by the job's id.

Why: what a job printed after each restart is that restart's outcome, as a log read is; a check started in the
background has not passed yet, and how it ended, read back, is its verdict; a check stopped while it printed nothing
new was cut off, as a timeout cuts off a command run in the foreground. Pure: text, and the detector's window.
"""

from __future__ import annotations

import re
from typing import Any, Literal, NamedTuple, Optional

from strict_loop.model.monitoring import TurnFacts
from strict_loop.model.turns import Turn
from strict_loop.monitor.calls.shellwork import MAX_COMMAND
from strict_loop.monitor.outcomes import is_verifier

JobAct = Literal["start", "read", "stop"]
JOB_READ_TOOLS = frozenset({"bashoutput", "taskoutput", "bashoutputtool", "write_stdin", "tasknotification"})
"""Tools that read what a background job printed so far, by its shell's, task's or session's id (Claude Code before
2.1; Codex's ``write_stdin`` to a command still running, whose Ctrl-C stops it)."""
JOB_IDS = ("task_id", "bash_id", "shell_id", "session_id")
"""The arguments by which those tools name the job."""
JOB_STOP_TOOLS = frozenset({"killshell", "killbash", "taskstop"})
"""Tools that stop a background job by its id (Claude Code's ``TaskStop``, ``KillShell`` before it)."""
_JOB_FILE = re.compile(r"/tasks/([\w-]{1,80})\.output\b")
"""Where Claude Code writes a background task's output (its Bash result names the file), read back with its Read tool
or a shell's ``tail``: the job's status, as ``BashOutput`` was."""


def job_act(tool: str, args: dict[str, Any]) -> Optional[JobAct]:
    """What a call does to a background job: starts one (a shell command the harness runs in the background), reads
    what one printed so far, or stops one. A job's output read after each restart is the outcome of that restart, as a
    log read is; a check started in the background has not passed yet."""
    name = tool.lower()
    if args.get("run_in_background") is True and isinstance(args.get("command"), str):
        return "start"
    if name in JOB_READ_TOOLS:
        return "stop" if "\x03" in str(args.get("chars") or "") else "read"
    if name in JOB_STOP_TOOLS:
        return "stop"
    where = args.get("file_path") or args.get("path") or args.get("command")
    return "read" if isinstance(where, str) and _JOB_FILE.search(where[:MAX_COMMAND]) else None


_NOTICE = re.compile(
    r"\A\s*<task-notification>\s*<task-id>(?P<id>[^<]{1,80})</task-id>.*?<status>(?P<status>\w{1,20})</status>"
    r"(?:\s*<summary>(?P<summary>[^<]{0,400})</summary>)?.*?</task-notification>\s*\Z",
    re.S,
)
_EXITED = re.compile(r"(?:\[exited with code (-?\d+)\]|<exit_code>(-?\d+)</exit_code>)")
"""How Claude Code says a background job ended: at its output file's end, and in ``BashOutput``'s result."""


def job_notice(text: str) -> Optional[dict[str, Any]]:
    """The turn a background job's end is, where Claude Code (2.1) tells the model in a message of the person's
    (``<task-notification>``: the task, its status, "Background command "x" failed with exit code 1"): a status read
    of the agent's, never the person's words. Not a failure of its own: what the job printed says why it ended (the
    output file read), and the same notice after each restart is the same outcome seen again. None for any other
    message."""
    m = _NOTICE.match(text[:MAX_COMMAND]) if text.lstrip().startswith("<task-notification>") else None
    if m is None:
        return None
    summary = m.group("summary") or f"background task {m.group('status')}"
    return {"actor": "agent", "tool": "TaskNotification", "args": {}, "output": summary}


_GUTTER = re.compile(r"^ *\d+(?:\u2192|\t)", re.M)
_ENVELOPE = re.compile(
    r"(?m)<status>(?!running<)\w{0,20}</status>|<exit_code>-?\d+</exit_code>|</?(?:stdout|stderr)>|"
    r"<timestamp>[^<\n]*</timestamp>|^\[exited with code -?\d+\]$"
)
"""What ``BashOutput`` wraps a job's output in (its exit code, streams, time, a status the exit code says): not the
job's own words. ``running`` stays: a job still running has no outcome yet."""


def job_output(output: str) -> str:
    """What a background job printed, as it printed it: without ``BashOutput``'s envelope, or the line numbers a file
    viewer puts before each line of its output file (Claude Code's Read, as its transcript keeps it)."""
    if "\u2192" in output[:200] or "\t" in output[:200]:
        output = _GUTTER.sub("", output)
    return _ENVELOPE.sub("", output).strip("\n") if "</" in output or "[exited" in output else output


def job_id(args: dict[str, Any]) -> str:
    """Which job a call reads or stops: its id, by the tool's argument or by the output file it reads (``sleep 60 &&
    tail`` of the file and a Read of it read one job), else the call's file or command."""
    if found := next((args[k] for k in JOB_IDS if k in args), None):
        return str(found)
    where = str(args.get("file_path") or args.get("command") or "")
    return m.group(1) if (m := _JOB_FILE.search(where[:MAX_COMMAND])) else where


_STARTED = re.compile(r"running in background with ID: ([\w-]{1,80})")


def job_of(act: Optional[JobAct], args: dict[str, Any], output: str) -> Optional[str]:
    """The id of the background job a call starts (as its result names it: "Command running in background with ID:
    b8x2k"), reads or stops: at most 80 characters, as a fact kept in the window."""
    if act == "start":
        return m.group(1) if (m := _STARTED.search(output[:400])) else None
    return job_id(args)[:80] or None if act else None


def job_exit(output: str) -> Optional[int]:
    """The exit code a background job ended with, where its output says it (``BashOutput``'s ``<exit_code>``, the
    output file's last ``[exited with code 1]``)."""
    found = _EXITED.findall(output[:300]) or _EXITED.findall(output[-300:])
    return int(next(code for code in found[-1] if code)) if found else None


class Shown(NamedTuple):
    """A turn as the background job it concerns shows it (``turn``), and what it does to that job."""

    turn: Turn
    act: Optional[JobAct]
    ref: Optional[str] = None
    """The job's id."""
    check: bool = False
    """It starts a check (tests, a build): a job meant to end, with a verdict."""
    checked: bool = False
    """It reads how such a check ended: that check's verdict."""
    hung: Optional[str] = None
    """It stops such a check while it hung: the step of the command that started it."""
    piped: Optional[str] = None
    """It reads a job whose command ends in a pipe (``docker build . 2>&1 | tail -45``): that command, by which what
    the job printed says whether it failed (the 0 it ended with is its last pipe's)."""


def as_shown(turn: Turn, window: list[TurnFacts]) -> Shown:
    """A turn about a background job as the job shows it, and what it does to the job: the harness's notice that one
    ended is the agent's status read, never the person's word; a job's output read, without a viewer's line numbers or
    ``BashOutput``'s envelope, with the job's exit code (never that of the `tail` reading it)."""
    if turn.actor == "person" and (notice := job_notice(turn.output)) is not None:
        turn = turn.model_copy(update=notice)
    act = job_act(turn.tool, turn.args)
    if act is None:
        return Shown(turn, act)
    ref = job_of(act, turn.args, turn.output)
    said = job_exit(turn.output) if act == "read" else None
    piped = next((f.piped for f in reversed(window) if f.job == ref and f.piped), None) if act == "read" else None
    if act == "read":
        code = said if said is not None else turn.exit_code
        update = {"output": job_output(turn.output), "exit_code": code}
        if code == 0 and piped is not None:  # the pipe's 0: what the job printed says how it ended
            update |= {"exit_code": None, "error": None}
        turn = turn.model_copy(update=update)
    command = turn.args.get("command")
    check = act == "start" and isinstance(command, str) and is_verifier(command)
    checked = said is not None and check_start(window, ref) is not None
    return Shown(turn, act, ref, check, checked, hung(ref, window) if act == "stop" else None, piped)


def check_start(window: list[TurnFacts], ref: Optional[str]) -> Optional[TurnFacts]:
    """The turn that started the background job ``ref`` as a check (what a diagnosis names it by), if the window holds
    one."""
    return next((f for f in reversed(window) if f.check and f.job == ref), None) if ref else None


def hung(ref: Optional[str], window: list[TurnFacts]) -> Optional[str]:
    """The step of a check started in the background that this stop cuts off while it hangs: read twice or more since
    it started, the last read showing no line the job's earlier reads did not (a job that stopped printing, stopped:
    what a timeout does to a command run in the foreground), or read once showing what an earlier run of it showed
    when it was cut off. A server is no check: its log idles while it serves."""
    start = check_start(window, ref)
    if start is None:
        return None
    reads = [f for f in window if f.job == ref and f.i > start.i]
    if len(reads) == 1 and _stuck_as_before(start, reads[0], window):
        return start.step
    if len(reads) < 2 or not set(reads[-1].lines) <= set().union(*(f.lines for f in reads[:-1])):
        return None
    return start.step


def _stuck_as_before(start: TurnFacts, read: TurnFacts, window: list[TurnFacts]) -> bool:
    """Whether a run read once shows nothing an earlier run of the same command, cut off while it hung, had not shown
    (``Blocking waiting for file lock`` again): it hangs where that one did, and a second look would show no more."""
    cut = [f for f in window if f.hang and f.step == start.step and f.job not in (None, start.job)]
    return bool(read.lines) and any(
        set(read.lines) <= set().union(*(f.lines for f in window if f.job == stop.job and f.i < stop.i and not f.check))
        for stop in cut
    )
