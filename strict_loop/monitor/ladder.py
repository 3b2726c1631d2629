"""The progress monitor: the escalation ladder over the spiral detector, as pure functions of its state.

``observe`` folds one turn into a :class:`MonitorState` and says what to do
(whisper, stronger whisper, pause and alert); ``loop.monitoring`` does the I/O (it
keeps the state in ``monitor.json``, writes events and alerts, and hands the alert
to the outbox, whose worker delivers it). Ladder: the first firing whispers (level 1); if the pattern shows up
again, a stronger whisper (level 2); once more and the task is paused (level 3)
until a person resumes it. A quiet stretch resets the ladder and marks the last
whisper as adopted.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from pathlib import Path
from shlex import quote
from typing import Any, Optional

from strict_loop.model.monitoring import (
    Action,
    MonitorState,
    MonitorView,
    Signal,
    SpiralVerdict,
    SupervisorMessage,
    TurnFacts,
    Whisper,
)
from strict_loop.model.settings import MonitorSettings
from strict_loop.model.turns import MAX_THOUGHT_TEXT, Turn, one_line
from strict_loop.monitor import catalog as catalog
from strict_loop.monitor import fingerprint as fp
from strict_loop.monitor.novelty import SELF_TALK
from strict_loop.monitor.spiral import SpiralDetector, facts

MAX_NOTE_CHARS = 1000
"""Of the agent's note, in an alert (a note may be 8000 characters; the page shows it whole)."""


def heard_late(state: MonitorState, turn: int, thought: str) -> MonitorState:
    """The agent's words before turn ``turn``, read only after that turn was judged (Claude Code writes its transcript
    in batches, so a fast call's hook comes before them): if they talk of going wrong, that turn counts as talking
    from the next turn on. Nothing else of a judged turn changes; a turn no longer the newest is left as it was."""
    last = state.window[-1] if state.window else None
    if last is None or last.i != turn or last.talk or not SELF_TALK.search(thought[:MAX_THOUGHT_TEXT]):
        return state
    return state.model_copy(update={"window": [*state.window[:-1], last.model_copy(update={"talk": True})]})


def observe(
    state: MonitorState,
    turn: Turn,
    settings: MonitorSettings,
    fstate: Optional[dict[str, str]] = None,
    *,
    climb: bool = True,
) -> tuple[MonitorState, Action, list[Signal]]:
    """Fold one turn into ``state`` (a new object) and say what the ladder does. ``climb=False``: the ladder stays on
    its step (a turn recorded in the same batch as a step already taken: the agent has not been told yet)."""
    # Facts are never changed once made, so the window is shared; whispers are copied (adoption is updated).
    state = state.model_copy(
        update={
            "window": list(state.window),
            "whispers": [w.model_copy() for w in state.whispers],
            "muted_until": dict(state.muted_until),
        }
    )
    detector = SpiralDetector(settings.thresholds)
    index = state.turns
    f = facts(turn, index, state.window, fstate)
    state.turns += 1
    state.window = (state.window + [f])[-detector.window_size :]
    muted = frozenset(k for k, until in state.muted_until.items() if until > index)
    state.muted_until = {k: v for k, v in state.muted_until.items() if v > index}
    signals = detector.evaluate(state.window, muted) if settings.enabled else []
    if not signals:
        if state.last_fired is not None and index - state.last_fired >= settings.reset_after and not state.paused:
            if state.whispers and state.whispers[-1].adopted is None:
                state.whispers[-1].adopted = True
            state.level, state.firings_at_level = 0, 0
        return state, "none", []
    if state.whispers and state.whispers[-1].adopted is None and state.level > 0:
        state.whispers[-1].adopted = False
    state.last_fired = index
    state.last_signals = signals
    if state.paused:
        return state, "none", signals
    action: Action = "none"
    if state.level == 0:
        action = "whisper"
    elif climb and any(s.escalate for s in signals):  # a patient wait whispers once, climbs after a long stretch
        state.firings_at_level += 1
        needed = settings.second_whisper_after if state.level == 1 else settings.pause_after
        if state.firings_at_level >= needed:
            action = "whisper2" if state.level == 1 and signals[0].kind not in catalog.PERSON_FIRST else "pause"
    if action == "pause":
        return paused(state, index, signals), action, signals
    if action != "none":
        state.level += 1
        state.firings_at_level = 0
        text = whisper_text(state, signals, 2 if action == "whisper2" else 1)
        state.whispers = (state.whispers + [Whisper(turn=index, level=state.level, text=text, signal=signals[0].kind)])[
            -20:
        ]
    return state, action, signals


def paused(state: MonitorState, turn: int, signals: list[Signal]) -> MonitorState:
    """``state`` at the ladder's top step, paused at ``turn`` by ``signals`` (a new object): the monitor's own pause,
    and one that another supervisor decides (``strict-loop watch`` escalating a failure it cannot fix)."""
    return state.model_copy(
        update={
            "paused": True,
            "paused_at": turn,
            "level": 3,
            "firings_at_level": 0,
            "alerts": state.alerts + 1,
            "last_signals": signals,
            "last_fired": turn,
        }
    )


def lift_pause(state: MonitorState) -> None:
    """A person's resume (or its replay when monitor.json is rebuilt): back to the ladder's foot, in place."""
    state.paused, state.paused_at, state.level, state.firings_at_level = False, None, 0, 0


def supervisor_view(
    state: MonitorState,
    settings: MonitorSettings,
    resume: str = "strict-loop resume --task <task>",
    diagnosed: bool = False,
) -> MonitorView:
    """What rides on the agent's tool results: the pause order (with the command a person runs), or recent whispers,
    and a person's notice after a resume. ``diagnosed``: the result carries the diagnosis and the whisper already
    (detect_spiral), so the pause order does not repeat it and the whispers are left out."""
    messages = []
    if state.paused:
        said = "(see the diagnosis in this result)" if diagnosed else diagnosis(state)
        messages.append(
            SupervisorMessage(
                kind="pause",
                level=3,
                signal=state.last_signals[0].kind if state.last_signals else None,
                text=f"PAUSED by the progress monitor: {said} Stop now and wait: a person must run: {resume}",
            )
        )
    elif not diagnosed:
        current = state.turns - 1
        for w in state.whispers:
            if current - w.turn < settings.whisper_ttl and w.adopted is None:
                messages.append(SupervisorMessage(kind="whisper", level=w.level, text=w.text, signal=w.signal))
    if state.notice:
        messages.append(SupervisorMessage(kind="notice", text=state.notice))
    return MonitorView(paused=state.paused, messages=messages)


def resume_command(root: Path, task_id: str) -> str:
    """The exact command a person runs to answer a pause of ``task_id`` in workspace ``root``."""
    return (
        f"strict-loop resume --workspace {quote(str(root))} --task {quote(task_id)} --action "
        "continue|rollback|hand-back"
    )


def supervisor_lines(sup: MonitorView) -> tuple[list[str], list[str]]:
    """A supervisor as text: (lines to put first, lines to put last); both empty when the monitor is quiet.

    The pause goes first, where a person or an agent cannot miss it; whispers and notices follow the result.
    """
    head = [m.text for m in sup.messages if m.kind == "pause"]
    tail = [f"[monitor {m.kind}] {m.text}" for m in sup.messages if m.kind != "pause"]
    return head, tail


def _failure_class(state: MonitorState, signals: list[Signal]) -> Optional[catalog.FailureClass]:
    """The failure class behind the signals: the one a signal names (an error cycle), else the recent errors' class."""
    named = next((s.failure_class for s in signals if s.failure_class), None)
    if named:
        return next((catalog.FailureClass(n, r) for n, _, r, _ in catalog.FAILURES if n == named), None)
    texts = [f.etext for f in state.window[-6:] if f.failed and f.etext]
    return fp.classify(texts) if texts else None


def _remedy(state: MonitorState, signals: list[Signal]) -> str:
    """The remedy that fits the pattern that fired (``catalog``); a recognised failure class's own remedy for
    failures."""
    kinds = {s.kind for s in signals}
    said = {i for s in signals if s.kind == "person_reports" for i in s.turns}
    if any(f.defied for f in state.window if f.i in said):  # a ban broken is no failure to fix: the person decides
        return catalog.BREACH_REMEDY
    cls = _failure_class(state, signals) if kinds & catalog.FAILURE_CLASS_FIRST else None
    if cls:
        return f"This looks like a {cls.name} problem: {cls.remedy}."
    return catalog.remedy(kinds)


def _varied(state: MonitorState, main: Signal) -> str:
    """What the agent did in the turns of the main signal: every distinct action when there are few, else how many."""
    involved = [f for f in state.window if f.i in set(main.turns)]
    if not involved:
        return ""
    if (
        main.kind == "same_failure"
    ):  # what was attempted is the edits between the checks, and what did not change is the failure
        edits = [f for f in state.window if involved[0].i < f.i <= involved[-1].i and f.edited]
        paths = list(dict.fromkeys(p for f in edits for p in f.paths)) or ["files"]
        return (
            f"the agent made {len(edits)} edit(s) ({', '.join(paths[:4])}) and the failure stayed the same: "
            f"{involved[-1].ftext or involved[-1].etext}"
        )
    if main.kind in ("person_reports", "restart_loop", "no_effect"):
        return _tried(state, involved, main.kind)
    actions = list(dict.fromkeys(f.action for f in involved))
    if len({f.sig for f in involved}) <= 1:
        return f"the agent repeated the identical action ({involved[-1].action})"
    if len(actions) <= 4:
        return f"the agent varied its action {len(actions)} ways: " + "; ".join(fp.code(a) for a in actions)
    tools = Counter(f.tool for f in involved)
    return (
        f"the agent tried {len(actions)} different actions in {len(involved)} turns "
        f"(tools: {', '.join(f'{t} x{n}' for t, n in tools.most_common())})"
    )


def _tried(state: MonitorState, involved: list[TurnFacts], kind: str) -> str:
    """What the agent tried between the person's reports (from the report the first one answers), around the
    restarts or between the runs of a measurement: its edits and the other commands it ran (the restarts and the
    measuring command are named by the evidence already)."""
    start = involved[0].i
    if kind == "person_reports":  # the first counted report answers the attempts after the report before it
        start = next((f.i for f in reversed(state.window) if f.actor == "person" and f.i < start), start)
    span = [f for f in state.window if start <= f.i <= involved[-1].i and f.actor == "agent"]
    edits = [f for f in span if f.edited]
    paths = list(dict.fromkeys(p for f in edits for p in f.paths))
    shown = involved[-1].shape if kind == "no_effect" else None  # the measurement: named by the evidence already
    runs = [
        f.action for f in span if f.kind == "run" and not f.edited and not f.restart and (not shown or f.shape != shown)
    ]
    runs = list(dict.fromkeys(runs))
    tried = [f"made {len(edits)} edit(s)" + (f" ({', '.join(paths[:4])})" if paths else "")] if edits else []
    tried += (
        [f"ran {len(runs)} other command(s) ({fp.code(runs[0][:80])}{' ...' if len(runs) > 1 else ''})"] if runs else []
    )
    return f"the agent {' and '.join(tried)}" if tried else ""


def diagnosis(state: MonitorState, signals: Optional[list[Signal]] = None) -> str:
    """What the monitor saw, each sentence made from the facts that fired (the remedy is ``recommended_action``'s)."""
    signals = signals if signals is not None else state.last_signals
    if not signals:
        return "No non-progress pattern in the recent turns."
    main = signals[0]
    if main.kind in catalog.OUTSIDE:  # a job's run, a budget: said alone, nothing of the agent's turns belongs here
        return main.evidence
    parts = [f"Stuck: {main.evidence}."]
    varied = _varied(state, main)
    if varied:
        parts.append(f"Meanwhile {varied}.")
    errs = Counter(f.etext for f in state.window if f.i in set(main.turns) and f.etext).most_common(1)
    if errs and errs[0][1] >= 2 and errs[0][0] not in " ".join(parts):
        parts.append(f"Recurring error: {errs[0][0]}.")
    # Another signal over the same turns says the same thing again: only those about other turns are worth a sentence.
    others = list(dict.fromkeys(s.evidence for s in signals[1:3] if not set(s.turns) <= set(main.turns)))
    if others:
        parts.append("Also: " + "; ".join(others) + ".")
    missing = next((f.missing for f in state.window if f.i in set(main.turns) and f.missing), None)
    if missing:
        parts.append(f"Missing {missing}: the output says it was not found.")
    cls = _failure_class(state, signals) if {s.kind for s in signals} & catalog.FAILURE_CLASS_FIRST else None
    if cls:
        parts.append(f"This looks like a {cls.name} problem.")
    if state.whispers:
        told = state.whispers[-2:]
        status = "not adopted" if any(w.adopted is False for w in told) or state.paused else "pending"
        parts.append(f"Already suggested {len(told)} time(s), {status}.")  # turn numbers: no one ever saw them
    return " ".join(parts)


def short_diagnosis(state: MonitorState, cap: int = 240) -> str:
    """One clause for an error message: what the monitor saw, without the advice the full diagnosis adds."""
    text = (
        f"stuck: {state.last_signals[0].evidence}"
        if state.last_signals
        else "no non-progress pattern in the recent turns"
    )
    return text if len(text) <= cap else text[: cap - 3] + "..."


NOTE_RESETS = frozenset({"spiral.resumed", "round.started"})
"""A note left before the last answer was about the pause answered; one before the round began, about another round."""


def agent_note(events: Iterable[Mapping[str, Any]]) -> Optional[str]:
    """The agent's latest note to the person (an event of kind ``note``, the one write allowed while paused) left
    since the last answer to a pause and in the round under way, in ledger order ``events``; None when there is
    none."""
    note = None
    for ev in events:
        if ev.get("kind") in NOTE_RESETS:
            note = None
        elif ev.get("kind") == "note" and str(ev.get("message") or "").strip():
            note = one_line(str(ev["message"]), MAX_NOTE_CHARS)
    return note


def with_note(diagnosis: str, note: Optional[str]) -> str:
    """An alert's text: the diagnosis, then the agent's note to the person when it left one."""
    return f"{diagnosis} The agent's note to you: {note}" if note else diagnosis


def alert_heading(signals: list[Signal]) -> str:
    """The first word of a pause's alert: a failed job that ``strict-loop watch`` escalated, or a spent budget, is no
    spiral."""
    return catalog.OUTSIDE.get(signals[0].kind, "[SPIRALING]") if signals else "[SPIRALING]"


def whisper_text(state: MonitorState, signals: list[Signal], strength: int) -> str:
    remedy = _remedy(state, signals)
    if strength == 1:
        return f"Progress monitor: {signals[0].evidence}. {remedy}"
    return (
        f"Second warning from the progress monitor: {signals[0].evidence}. {remedy} Stop trying variations of the "
        "same thing; if the next attempt goes the same way, the task will be paused for a person."
    )


def verdict(state: MonitorState) -> SpiralVerdict:
    signals = state.last_signals if state.level > 0 or state.paused else []
    return SpiralVerdict(
        detected=bool(signals),
        level=state.level,
        paused=state.paused,
        signals=signals,
        diagnosis=diagnosis(state, signals),
        recent=[f.brief for f in state.window[-5:]],
        recommended_action=recommended_action(state, signals),
        whisper=state.whispers[-1].text if state.whispers and signals and not state.paused else None,
        turns_seen=state.turns,
        fired_at=(state.paused_at if state.paused_at is not None else state.last_fired)
        if state.paused
        else (state.last_fired if signals else None),
    )


def recommended_action(state: MonitorState, signals: list[Signal]) -> str:
    if state.paused:
        remedy = f"For the agent, once resumed: {_remedy(state, signals)} " if signals else ""
        return (
            f"{remedy}A person should decide: `resume --action continue` (mute these signals for a while), `--action "
            "rollback --to N` (restore the workspace to round N), or `--action hand-back` (end the loop as blocked)."
        )
    if not signals:
        return "Carry on."
    return _remedy(state, signals)


def replay(
    turns: list[Turn], settings: Optional[MonitorSettings] = None
) -> tuple[SpiralVerdict, list[tuple[int, Action, list[Signal]]]]:
    """Evaluate a list of turns from scratch (no state touched): the final verdict and every ladder step."""
    settings = settings or MonitorSettings()
    state = MonitorState()
    steps: list[tuple[int, Action, list[Signal]]] = []
    first = None
    for turn in turns:
        state, action, signals = observe(state, turn, settings)
        if signals and first is None:
            first = state.turns - 1
        if action != "none":
            steps.append((state.turns - 1, action, signals))
    v = verdict(state)
    v.fired_at = first
    return v, steps
