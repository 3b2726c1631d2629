"""The progress monitor's formats: a turn's facts, a signal, monitor.json, an alert, the view every result carries.

Why in ``model`` and not beside the detector: they are stored (monitor.json, alerts.jsonl) and returned (every
result's ``supervisor``, detect_spiral's verdict), so storage, results and the schemas need them without the
detector's logic; the detector (``strict_loop.monitor``) imports them from here.
"""

from __future__ import annotations

from typing import Any, Literal, Optional

from pydantic import BaseModel, ConfigDict, Field, field_serializer

__all__ = [
    "Action",
    "Alert",
    "Kind",
    "MonitorState",
    "MonitorView",
    "TurnProgress",
    "Signal",
    "SignalKind",
    "SpiralVerdict",
    "SupervisorMessage",
    "TurnFacts",
    "Verdict",
    "Whisper",
]

Verdict = Literal["pass", "fail"]
"""What judged the work said: a check run, editor diagnostics, a person."""

Kind = Literal["write", "read", "search", "run", "message", "invalid", "person", "other"]
TurnProgress = Literal[
    "new output",
    "fewer failures",
    "higher score",
    "new file content",
    "new lines paged in",
    "check passes",
    "different failure",
    "a new request",
]
"""'new file content' is no longer made (an edit is an attempt); it stays so that older monitor.json files load."""


class TurnFacts(BaseModel):
    """What the detector remembers of one turn (small, so the window stays cheap to store)."""

    i: int
    tool: str
    kind: Kind
    sig: str = Field(..., description="digest of tool + exact arguments")
    asig: str = Field(..., description="digest of tool + loosely normalized arguments (a write's text is kept exact)")
    step: str = Field("", description="digest of the step retried: tool + command word, or tool + the file it targets")
    out: str = Field(..., description="digest of the strictly normalized output")
    lines: list[str] = Field(default_factory=list, description="digests of output lines (last 80)")
    novel: bool = True
    prog: Optional[TurnProgress] = Field(None, description="how this turn moved the work forward, if it did")
    empty: bool = False
    found_nothing: bool = Field(False, description="a lookup whose output says it found nothing (no match, no file)")
    failed: bool = False
    err: Optional[str] = None
    etpl: Optional[str] = Field(
        None, description="the error fingerprint with quoted parts and the words its command was given masked"
    )
    etext: Optional[str] = Field(None, description="the error line as a person reads it (noise and placeholders out)")
    fclass: Optional[str] = Field(
        None, description="a specific failure class (e.g. circular dependency), if recognized"
    )
    paths: list[str] = Field(default_factory=list)
    fstate: dict[str, str] = Field(default_factory=dict, description="path -> content digest after the turn")
    talk: bool = False
    score: Optional[float] = None
    fails: Optional[int] = Field(None, description="failing-test count read from the output, if any")
    diags: Optional[int] = Field(
        None, description="distinct error lines a build printed in file:line form, all of them (no filter cut some)"
    )
    brief: str = ""
    actor: Literal["agent", "person"] = "agent"
    verdict: Optional[Verdict] = Field(
        None, description="pass/fail of what judged the work: a check run, editor diagnostics, a person"
    )
    fsig: Optional[str] = Field(
        None, description="digest of the failure signature (error class, location, normalised message)"
    )
    ftext: Optional[str] = Field(None, description="the failure as a person reads it")
    missing: Optional[str] = Field(None, description="what a failure says is missing: 'module mypy', 'program javac'")
    unknown: bool = Field(
        False, description="the content was lost (an export's placeholder, an empty read): never 'the same'"
    )
    running: bool = Field(False, description="its output says a job is still running (a status read mid-run)")
    polls: int = Field(0, description="unchanged polls of a running job in a row, this one included")
    since: Optional[float] = Field(None, description="when those polls began (epoch seconds, from Turn.ts)")
    waited: float = Field(0.0, description="seconds the agent slept over those polls (its own sleeps), or in this call")
    prior: Optional[int] = Field(None, description="the turn of the poll before this one in their run")
    ts: Optional[float] = None
    asks: Optional[str] = Field(
        None, description="digest of what a person asked for here (not a complaint): new direction"
    )
    edit: Optional[str] = Field(None, description="digest of path + (removed, added) of a replacing edit")
    undo: Optional[str] = Field(None, description="digest of the edit that would undo this one")
    swaps: list[tuple[str, str]] = Field(
        default_factory=list, description="(edit, undo) digests of a command's further `sed -i` substitutions"
    )
    errs: list[str] = Field(
        default_factory=list, description="digests of the tests a failed check names, else its error lines"
    )
    reports: int = Field(
        0, description="how much a person's failed check counts: 1 the same problem again, 2 going in circles"
    )
    quote: Optional[str] = Field(None, description="the person's words, as a diagnosis quotes them")
    said: Optional[str] = Field(None, description="digest of the person's words (a harness may repeat them)")
    refused: bool = Field(False, description="the person refused this very call")
    topic: list[str] = Field(default_factory=list, description="digests of the longer words a person's message names")
    forbids: list[str] = Field(default_factory=list, description="the commands (by step) the person says not to run")
    defied: Optional[str] = Field(None, description="the step the agent ran though the person said not to")
    lifts: list[str] = Field(default_factory=list, description="the bans said before that a new request names")
    writes: list[str] = Field(
        default_factory=list, description="files a shell command wrote (sed -i, a redirection, git checkout --)"
    )
    restart: bool = Field(False, description="the command kills, restarts, starts or redeploys something")
    hang: bool = Field(False, description="the command timed out or was cancelled while it hung")
    job: Optional[str] = Field(None, description="the background job this call starts, reads or stops: its id")
    check: bool = Field(False, description="it starts a check in the background (tests, a build): a job meant to end")
    piped: Optional[str] = Field(
        None, description="it starts a background job whose command ends in a pipe: that command (its 0 is the pipe's)"
    )
    checkout: bool = Field(False, description="the command checked out another revision (a git bisect step)")
    shape: Optional[str] = Field(None, description="digest of what a run printed with its numbers masked")
    nums: list[float] = Field(default_factory=list, description="the numbers it printed there (the last 24)")
    reading: Optional[str] = Field(None, description="the line a person reads that measurement by")
    logerr: Optional[str] = Field(
        None,
        description="soon after a restart, the error a run printed though it succeeded (a log tail): its fingerprint",
    )
    tail: list[str] = Field(
        default_factory=list,
        description="where logerr is: digests of the log tail's lines, without the restart's own report",
    )

    @property
    def edited(self) -> bool:
        """An edit by any means: a file tool's write, or a shell command that wrote files."""
        return self.kind == "write" or bool(self.writes)

    @property
    def action(self) -> str:
        """The action part of ``brief`` (without its outcome)."""
        return self.brief.split(" -> ")[0]


SignalKind = Literal[
    "identical_calls",
    "nothing_found",
    "equivalent_outcomes",
    "no_effect",
    "repeated_error",
    "error_cycle",
    "file_oscillation",
    "alternation",
    "monologue",
    "error_rate",
    "self_diagnosis",
    "score_drop",
    "same_failure",
    "stalled_poll",
    "person_reports",
    "restart_loop",
    "job_failure",
    "budget_spent",
]


class Signal(BaseModel):
    kind: SignalKind
    turns: list[int] = Field(..., description="Turn numbers the signal is about")
    evidence: str
    failure_class: Optional[str] = Field(
        None, description="The failure class the signal's errors point to (e.g. circular dependency), if any"
    )
    escalate: bool = Field(
        True, description="False: whisper, but do not climb the ladder (a job polled patiently, not yet for long)"
    )


class SupervisorMessage(BaseModel):
    model_config = ConfigDict(defer_build=True)  # built on first use: most tool calls never need it

    kind: Literal["whisper", "pause", "notice"] = Field(
        ..., description="whisper = a hint; pause = stop and wait for a person"
    )
    level: int = Field(0, ge=0, description="Escalation level: 1-2 whispers, 3 paused")
    text: str
    signal: Optional[str] = Field(None, description="The detector signal behind the message, if any")


class MonitorView(BaseModel):
    """What the progress monitor has to tell the agent; it rides on every tool result for a task (as ``supervisor``)."""

    model_config = ConfigDict(
        defer_build=True, title="Supervisor"
    )  # built on first use; the title keeps the published schemas as they were

    paused: bool = Field(False, description="True while the task is paused: stop working and wait")
    messages: list[SupervisorMessage] = Field(default_factory=list)


class Whisper(BaseModel):
    turn: int
    level: int
    text: str
    signal: str
    adopted: Optional[bool] = None


class Alert(BaseModel):
    """One line of alerts.jsonl: a pause with its diagnosis."""

    model_config = ConfigDict(defer_build=True)  # built on first use: most tool calls never need it

    id: str
    ts: str
    task_id: str
    turn: int
    level: int
    signals: list[Signal]
    diagnosis: str
    recent: list[str]
    recommended_action: str
    delivery: dict[str, str] = Field(
        default_factory=dict, description="channel -> outcome (no channel URL is ever recorded)"
    )

    @classmethod
    def notice(cls, alert_id: str, task_id: str, level: int, diagnosis: str, action: str) -> Alert:
        """An alert that is no spiral's (the agent waits, a usage limit, the loop's files changed): no turn, signal or
        recent turns, stamped now."""
        from strict_loop.base.timefmt import now_iso

        return cls(
            id=alert_id,
            ts=now_iso(),
            task_id=task_id,
            turn=0,
            level=level,
            signals=[],
            diagnosis=diagnosis,
            recent=[],
            recommended_action=action,
        )


class MonitorState(BaseModel):
    """monitor.json: the detector's window and the ladder; bounded whatever the length of the run."""

    turns: int = Field(0, ge=0, description="tool_call turns seen")
    window: list[TurnFacts] = Field(default_factory=list)
    level: int = Field(0, ge=0, le=3)
    firings_at_level: int = 0
    last_fired: Optional[int] = None
    paused: bool = False
    paused_at: Optional[int] = Field(None, description="The turn that paused the task (while paused)")
    whispers: list[Whisper] = Field(default_factory=list, max_length=20)
    muted_until: dict[str, int] = Field(default_factory=dict, description="signal kind -> turn until which it is muted")
    last_signals: list[Signal] = Field(default_factory=list)
    alerts: int = 0
    notice: Optional[str] = Field(
        None, description="What a person's resume tells the agent, until a result has carried it once"
    )

    @field_serializer("window", when_used="json")
    def _lean(self, window: list[TurnFacts]) -> list[dict[str, Any]]:
        """Each turn without the fields it leaves at their defaults (most of them, in most turns). Why: monitor.json
        is read and written on every tool call and read by every detect_spiral, and parsing it was most of what
        detect_spiral cost (at 42 turns, 39 KB became 16 KB and parsing took 0.17 ms instead of 0.41). The ladder's
        own fields stay whole: the hooks' gate reads ``paused`` from the raw JSON."""
        return [f.model_dump(mode="json", exclude_defaults=True) for f in window]


class SpiralVerdict(BaseModel):
    """detect_spiral's answer."""

    model_config = ConfigDict(defer_build=True)  # built on first use: most tool calls never need it

    detected: bool
    level: int = Field(..., description="0 quiet, 1 whispered, 2 whispered twice, 3 paused")
    paused: bool
    signals: list[Signal]
    diagnosis: str
    recent: list[str] = Field(..., description="The last turns, one line each")
    recommended_action: str
    whisper: Optional[str] = Field(None, description="The hint the agent gets (or got) for this pattern")
    turns_seen: int = 0
    fired_at: Optional[int] = Field(
        None,
        description="The turn where it first fired (a replay), the turn that paused the task "
        "(a paused task), or the turn it last fired (a task whispered to)",
    )
    supervisor: MonitorView = Field(
        default_factory=MonitorView, description="Whispers and pause orders from the progress monitor; obey them"
    )


Action = Literal["none", "whisper", "whisper2", "pause"]
