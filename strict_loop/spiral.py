"""The spiral detector: pure decisions over a bounded window of per-turn facts.

``facts()`` turns a raw :class:`Turn` into small comparable facts (digests,
error fingerprint, touched paths); ``SpiralDetector.evaluate`` looks at the
window ending with the newest turn and returns every signal that fires, one
method per pattern. No I/O here: file content hashes, if any, are passed in by
the caller, and the window is whatever the caller keeps (its size is bounded,
so the cost of a turn does not grow with the length of the run).
"""

from __future__ import annotations

import re
import shlex
from typing import Any, Literal, Optional

from pydantic import BaseModel, Field

from . import fingerprint as fp
from .settings import SpiralThresholds
from .turns import Turn

Kind = Literal["write", "read", "search", "run", "message", "invalid", "other"]
SignalKind = Literal[
    "identical_calls", "equivalent_outcomes", "repeated_error", "file_oscillation", "alternation",
    "monologue", "error_rate", "self_diagnosis", "score_drop",
]


class TurnFacts(BaseModel):
    """What the detector remembers of one turn (small, so the window stays cheap to store)."""

    i: int
    tool: str
    kind: Kind
    sig: str = Field(..., description="digest of tool + exact arguments")
    asig: str = Field(..., description="digest of tool + loosely normalized arguments")
    out: str = Field(..., description="digest of the strictly normalized output")
    lines: list[str] = Field(default_factory=list, description="digests of output lines (last 80)")
    novel: bool = True
    empty: bool = False
    failed: bool = False
    err: Optional[str] = None
    etpl: Optional[str] = Field(None, description="the error fingerprint with quoted parts masked")
    fclass: Optional[str] = Field(None, description="a specific failure class (e.g. circular dependency), if recognized")
    paths: list[str] = Field(default_factory=list)
    fstate: dict[str, str] = Field(default_factory=dict, description="path -> content digest after the turn")
    talk: bool = False
    score: Optional[float] = None
    fails: Optional[int] = Field(None, description="failing-test count read from the output, if any")
    brief: str = ""


class Signal(BaseModel):
    kind: SignalKind
    turns: list[int] = Field(..., description="Turn numbers the signal is about")
    evidence: str


WRITE_TOOLS = {"edit", "create", "write", "write_file", "apply_patch", "multiedit", "replace", "insert", "patch", "notebookedit"}
READ_TOOLS = {"open", "goto", "scroll_down", "scroll_up", "read", "view", "read_file", "cat"}
SEARCH_TOOLS = {"find_file", "search_dir", "search_file", "grep", "glob", "find", "ls", "search"}
EDITOR_WRITE_COMMANDS = {"create", "str_replace", "insert", "undo_edit", "write"}
READ_COMMANDS = {"cat", "head", "tail", "less", "more", "nl", "wc", "sed", "awk", "git", "diff", "stat", "file", "echo", "pwd"}
SEARCH_COMMANDS = {"grep", "rg", "find", "ls", "tree", "locate", "which", "ag", "fd"}
PATH_KEYS = ("path", "file_path", "filename", "file", "target_file", "notebook_path")
FAILS = re.compile(r"(\d+) (?:failed|failures?|errors?)\b|failures=(\d+)|FAILED \(.*?(?:failures|errors)=(\d+)", re.I)
NOVEL_LINES = 3
"""How many never-seen output lines make a turn carry new information (all of them, for a shorter output)."""
SELF_TALK = re.compile(
    r"\b(?:i broke|broke (?:it|the \w+|something)|(?:messed|screwed) (?:it |this |things )?up|(?:let me|let's|i(?:'ll| will| need to)) (?:restore|revert|undo)|"
    r"same (?:mistake|error|issue|problem) (?:again|as before)|(?:isn't|is not|still not|not) working|stuck in a loop|going in circles|"
    r"running out of ideas|this is (?:insane|hopeless)|still (?:fail\w*|broken|the same (?:error|output|result)))",
    re.I,
)


def _command_word(command: str) -> str:
    try:
        words = shlex.split(command.strip().splitlines()[0])
    except (ValueError, IndexError):
        words = command.split()
    for word in words:
        if "=" in word and not word.startswith("-"):
            continue  # VAR=value prefix
        return word.rsplit("/", 1)[-1]
    return ""


def classify_tool(tool: str, args: dict[str, Any]) -> Kind:
    name = tool.lower()
    command = args.get("command") if isinstance(args.get("command"), str) else ""
    if name == "message":
        return "message"
    if name in ("invalid_format", "format_error"):
        return "invalid"
    if name in ("str_replace_editor", "str_replace_based_edit_tool", "text_editor"):
        return "write" if command in EDITOR_WRITE_COMMANDS else "read"
    if name in WRITE_TOOLS:
        return "write"
    if name in READ_TOOLS:
        return "read"
    if name in SEARCH_TOOLS:
        return "search"
    if command:
        word = _command_word(command)
        if word in SEARCH_COMMANDS:
            return "search"
        if word in READ_COMMANDS:
            return "read"
        return "run"
    return "other"


def turn_paths(turn: Turn) -> list[str]:
    if turn.paths is not None:
        return [p for p in turn.paths if isinstance(p, str)][:20]
    out = [turn.args[k] for k in PATH_KEYS if isinstance(turn.args.get(k), str)]
    command = turn.args.get("command")
    if not out and isinstance(command, str) and turn.tool.lower() in ("open", "create"):
        parts = command.split()
        if len(parts) >= 2:
            out.append(parts[1].strip("\"'"))
    return out[:20]


def _brief(turn: Turn, kind: Kind, failed: bool) -> str:
    args = turn.args.get("command") if isinstance(turn.args.get("command"), str) else fp.canonical_args(turn.args)
    args = " ".join(str(args).split())
    if turn.tool == "str_replace_editor" and turn.args.get("path"):
        args = f"{turn.args.get('command')} {turn.args.get('path')}"
    last = next((ln.strip() for ln in reversed(turn.output.splitlines()) if ln.strip()), "")
    outcome = fp.error_line(turn.output) if failed else last
    return f"{turn.tool} {args[:90]} -> {'FAILED: ' if failed else ''}{(outcome or '(no output)')[:90]}"


def _failing_count(output: str) -> Optional[int]:
    counts = [int(g) for m in FAILS.finditer(output) for g in m.groups() if g]
    return max(counts) if counts else None


def facts(turn: Turn, index: int, window: list[TurnFacts], fstate: Optional[dict[str, str]] = None) -> TurnFacts:
    """Comparable facts of ``turn``; ``window`` (earlier turns) decides whether its output is new."""
    kind = classify_tool(turn.tool, turn.args)
    failed = bool(turn.error) or (turn.exit_code not in (None, 0)) or kind == "invalid"
    ambient = frozenset(d for f in window if not f.failed for d in f.lines)
    err = fp.error_fingerprint(turn.output, ambient) if failed else None
    if kind == "invalid":  # the harness rejected the action: its message is the error
        last = next((ln for ln in reversed(turn.output.splitlines()) if ln.strip()), "")
        err = f"rejected by the harness: {fp.loose(last)[:160]}"
    fclass = fp.classify([turn.output]) if failed else None
    canonical = fp.canonical_args(turn.args)
    # A write's output echoes the file it changed: compare it loosely (line numbers move).
    if kind == "write":
        loose_text, lines = fp.loose_with_lines(turn.output)
        out_digest = fp.digest(loose_text)
    else:
        strict_text, lines = fp.strict_with_lines(turn.output)
        out_digest = fp.digest(strict_text)
    seen = {d for f in window for d in f.lines}
    new = [d for d in lines if d not in seen]
    novel = bool(new) and len(new) >= min(NOVEL_LINES, len(lines))
    return TurnFacts(
        i=index, tool=turn.tool, kind=kind,
        sig=fp.digest(turn.tool + "\0" + canonical),
        asig=fp.digest(turn.tool + "\0" + fp.loose(canonical)),
        out=out_digest, lines=lines[-80:],
        novel=novel, empty=not turn.output.strip(), failed=failed, err=err, etpl=fp.error_template(err),
        fclass=fclass.name if fclass and fclass.name in fp.SPECIFIC_CLASSES else None,
        paths=turn_paths(turn), fstate=fstate or {}, talk=bool(SELF_TALK.search(turn.thought)),
        score=turn.score, fails=_failing_count(turn.output), brief=_brief(turn, kind, failed),
    )


class SpiralDetector:
    """Signals of non-progress over a window of turn facts, one method per pattern."""

    def __init__(self, thresholds: SpiralThresholds | None = None) -> None:
        self.t = thresholds or SpiralThresholds()

    @property
    def window_size(self) -> int:
        t = self.t
        return max(t.identical_window, t.equivalent_window, t.error_window, t.command_window, t.churn_window, 2 * t.max_cycle,
                   t.monologue_turns, t.error_rate_window, t.self_talk_window, t.score_drops + 1)

    def evaluate(self, window: list[TurnFacts], muted: frozenset[str] = frozenset()) -> list[Signal]:
        """Every signal that fires on the newest turn of ``window`` (oldest first), minus ``muted`` kinds."""
        if not window or self._progressing(window):
            return []
        checks = (self.identical_calls, self.equivalent_outcomes, self.repeated_error, self.file_oscillation,
                  self.alternation, self.monologue, self.error_rate, self.self_diagnosis, self.score_drop)
        found = []
        for check in checks:
            signal = check(window)
            if signal is not None and signal.kind not in muted:
                found.append(signal)
        return found

    # -- progress that suppresses every signal ------------------------------------------

    def _progressing(self, w: list[TurnFacts]) -> bool:
        scores = [f.score for f in w[-3:] if f.score is not None]
        if len(scores) >= 2 and scores[-1] > scores[-2]:
            return True
        cur = w[-1]
        if cur.kind == "write" and not cur.failed and cur.paths:
            seen = {p for f in w[:-1] for p in f.paths}
            if any(p not in seen for p in cur.paths):
                return True  # a new file: the work is spreading, not circling
        counts = [f.fails for f in w[-self.t.error_window:] if f.fails is not None]
        return len(counts) >= 2 and counts[-1] < counts[-2] and w[-1].fails is not None

    # -- one method per pattern -----------------------------------------------------------

    def identical_calls(self, w: list[TurnFacts]) -> Optional[Signal]:
        cur = w[-1]
        if cur.kind == "message" or (cur.novel and cur.kind != "write") or (cur.empty and not cur.failed):
            return None
        same = [f for f in w[-self.t.identical_window:] if f.sig == cur.sig]
        if len(same) < self.t.identical_repeats:
            return None
        if cur.kind != "write" and any(f.novel for f in same[1:]):
            return None
        return Signal(kind="identical_calls", turns=[f.i for f in same],
                      evidence=f"the identical call was made {len(same)} times in the last {self.t.identical_window} turns: {cur.brief}")

    def equivalent_outcomes(self, w: list[TurnFacts]) -> Optional[Signal]:
        cur = w[-1]
        if cur.kind == "message" or cur.novel or (cur.empty and not cur.failed):
            return None
        same = [f for f in w[-self.t.equivalent_window:] if f.asig == cur.asig and f.out == cur.out]
        if len(same) < self.t.equivalent_repeats:
            return None
        return Signal(kind="equivalent_outcomes", turns=[f.i for f in same],
                      evidence=f"{len(same)} equivalent actions with the same outcome (differing only in noise): {cur.brief}")

    def repeated_error(self, w: list[TurnFacts]) -> Optional[Signal]:
        """The same error again and again while the agent varies what it does.

        Two ways to see it: the same error (or specific failure class) several times within
        a short window, or one command failing the same way on each of its last runs while
        the code around it keeps changing.
        """
        cur = w[-1]
        if not cur.failed or (cur.err is None and cur.fclass is None):
            return None

        def same_error(f: TurnFacts) -> bool:
            if not f.failed:
                return False
            if (cur.err is not None and f.err == cur.err) or (cur.fclass is not None and f.fclass == cur.fclass):
                return True
            # The same command failing the same way with different details (another module, another path).
            return f.sig == cur.sig and cur.etpl is not None and f.etpl == cur.etpl

        runs = [f for f in w[-self.t.command_window:] if f.sig == cur.sig][-self.t.command_repeats:]
        if cur.kind == "run" and len(runs) == self.t.command_repeats and all(same_error(f) for f in runs):
            return Signal(kind="repeated_error", turns=[f.i for f in runs],
                          evidence=f"`{cur.brief.split(' -> ')[0]}` failed the same way on each of its last {len(runs)} runs "
                                   f"({cur.etpl or cur.err}) while the code around it kept changing")
        if cur.novel:
            return None
        recent = w[-self.t.error_window:]
        # A success of the same kind of action (an accepted edit, a passing run) means things moved.
        ok = [k for k, f in enumerate(recent) if f.kind == cur.kind and not f.failed]
        recent = recent[ok[-1] + 1:] if ok else recent
        same = [f for f in recent if same_error(f)]
        # When nothing at all succeeded since the error first came back, one repeat less may be enough.
        since = [f for f in recent if f.i >= same[0].i] if same else []
        relaxed = self.t.error_relax and since and all(f.failed for f in since)
        if len(same) < (self.t.error_repeats - 1 if relaxed else self.t.error_repeats):
            return None
        actions = len({f.sig for f in same})
        what = f"the same failure class ({cur.fclass})" if cur.fclass and len({f.err for f in same}) > 1 else f"the same error ({cur.err})"
        return Signal(kind="repeated_error", turns=[f.i for f in same],
                      evidence=f"{what} {len(same)} times through {actions} different action(s)")

    def file_oscillation(self, w: list[TurnFacts]) -> Optional[Signal]:
        cur = w[-1]
        if cur.kind != "write":
            return None
        for path, state in cur.fstate.items():
            earlier = [f for f in w[:-1] if path in f.fstate]
            if len(earlier) >= 2 and state in {f.fstate[path] for f in earlier[:-1]} and state != earlier[-1].fstate[path]:
                return Signal(kind="file_oscillation", turns=[f.i for f in earlier] + [cur.i],
                              evidence=f"{path} returned to an earlier state after {len(earlier)} edits")
        recent = w[-self.t.churn_window:]
        for path in cur.paths:
            touching = [f for f in recent if path in f.paths]
            edits = [f for f in touching if f.kind == "write"]
            views = [f for f in touching if f.kind == "read"]
            runs = [f for f in recent if f.kind == "run" and f.i > touching[0].i]
            talk = sum(f.talk for f in touching)
            if len(edits) >= self.t.churn_edits and views and not runs and talk >= 2:
                return Signal(kind="file_oscillation", turns=[f.i for f in touching],
                              evidence=f"edit/view churn on {path}: {len(edits)} edits and {len(views)} views in {len(recent)} turns, "
                                       f"with the agent saying it is going wrong")
        return None

    def alternation(self, w: list[TurnFacts]) -> Optional[Signal]:
        """A-B-A-B or A-B-C-A-B-C: the same cycle of (loosely equal) actions twice, the second time with nothing new."""
        for period in range(2, self.t.max_cycle + 1):
            if len(w) < 2 * period:
                break
            last, prev = w[-period:], w[-2 * period:-period]
            if len({f.asig for f in last}) < 2:
                continue
            if all(a.asig == b.asig for a, b in zip(prev, last)) and not any(f.novel and f.kind != "write" for f in last):
                cycle = " -> ".join(f.tool for f in last)
                return Signal(kind="alternation", turns=[f.i for f in prev + last],
                              evidence=f"a {period}-step cycle ({cycle}) repeated without new information")
        return None

    def monologue(self, w: list[TurnFacts]) -> Optional[Signal]:
        n = self.t.monologue_turns
        tail = w[-n:]
        if len(tail) == n and all(f.kind == "message" for f in tail):
            return Signal(kind="monologue", turns=[f.i for f in tail], evidence=f"{n} turns in a row without a tool call")
        return None

    def error_rate(self, w: list[TurnFacts]) -> Optional[Signal]:
        recent = w[-self.t.error_rate_window:]
        if len(recent) < self.t.error_rate_window or not recent[-1].failed:
            return None
        failed = [f for f in recent if f.failed]
        progress = [f for f in recent if f.novel and f.kind != "write"]  # new information, even from a failing command
        if len(failed) >= self.t.error_rate * len(recent) and len(progress) <= 1:
            return Signal(kind="error_rate", turns=[f.i for f in failed],
                          evidence=f"{len(failed)} of the last {len(recent)} turns failed and none moved forward")
        return None

    def self_diagnosis(self, w: list[TurnFacts]) -> Optional[Signal]:
        """The agent admits trouble repeatedly, and nothing new came back meanwhile (an admission followed by a fix is healthy)."""
        recent = w[-self.t.self_talk_window:]
        talk = [f for f in recent if f.talk]
        if len(talk) < self.t.self_talk_hits or not recent[-1].talk:
            return None
        if any(f.novel and f.kind in ("run", "read", "search") for f in recent):
            return None
        return Signal(kind="self_diagnosis", turns=[f.i for f in talk],
                      evidence=f"the agent said it is going wrong in {len(talk)} of the last {len(recent)} turns, with nothing new coming back")

    def score_drop(self, w: list[TurnFacts]) -> Optional[Signal]:
        scores = [(f.i, f.score) for f in w if f.score is not None][-(self.t.score_drops + 1):]
        if len(scores) == self.t.score_drops + 1 and all(b[1] < a[1] for a, b in zip(scores, scores[1:])):
            trail = " -> ".join(f"{s:g}" for _, s in scores)
            return Signal(kind="score_drop", turns=[i for i, _ in scores], evidence=f"verifier score fell {self.t.score_drops} times in a row ({trail})")
        return None

