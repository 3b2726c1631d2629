"""Checking a diagnosis against the turns it describes: every claim the monitor makes is parsed and verified."""

from __future__ import annotations

import re
from collections import Counter

from strict_loop.monitor import SpiralVerdict, replay
from strict_loop.spiral import TurnFacts, facts
from strict_loop.turns import Turn

PLACEHOLDER = re.compile(r"<(?:q|n|hex|ts|time|addr|uuid|tmp|dur|size|pod|range)>")
DOUBLED = re.compile(r"\b(\w+(?:Error|Exception)): \1:")


def play(turns: list[dict]):
    """``monitor.replay`` of turns given as dicts: the verdict and every ladder step."""
    return replay([Turn.model_validate(t) for t in turns])


def window_of(turns: list[dict]) -> list[TurnFacts]:
    window: list[TurnFacts] = []
    for i, t in enumerate(turns):
        window.append(facts(Turn.model_validate(t), i, window))
    return window


def texts_of(v: SpiralVerdict) -> list[str]:
    return [v.diagnosis, v.recommended_action, v.whisper or "", *(s.evidence for s in v.signals), *(m.text for m in v.supervisor.messages)]


def check_claims(v: SpiralVerdict, turns: list[dict]) -> list[str]:
    """Every claim of ``v`` checked against ``turns``; returns the claims it found (so a test can see they were checked)."""
    window = window_of(turns)
    by_i = {f.i: f for f in window}
    checked = []
    for text in texts_of(v):
        assert not PLACEHOLDER.search(text), f"a normalization placeholder shown: {text}"
        assert not DOUBLED.search(text), f"a doubled prefix: {text}"
    d = v.diagnosis
    main = v.signals[0] if v.signals else None
    involved = [by_i[i] for i in main.turns] if main else []
    if m := re.search(r"varied its action (\d+) ways: (.*?)\.(?: [A-Z]|$)", d):
        listed = re.findall(r"`([^`]*)`", m.group(2))
        actions = list(dict.fromkeys(f.action for f in involved))
        assert int(m.group(1)) == len(listed) == len(actions) and listed == actions, (m.group(0), actions)
        checked.append("varied")
    if m := re.search(r"tried (\d+) different actions in (\d+) turns \(tools: (.*?)\)", d):
        counts = {t: int(n) for t, n in re.findall(r"(\S+) x(\d+)", m.group(3))}
        assert int(m.group(1)) == len({f.action for f in involved}) and int(m.group(2)) == len(involved) == sum(counts.values())
        assert counts == dict(Counter(f.tool for f in involved))
        checked.append("tried")
    if m := re.search(r"the identical call was made (\d+) times", d):
        assert int(m.group(1)) == len(involved) and len({f.sig for f in involved}) == 1
        checked.append("identical")
    if m := re.search(r"failed the same way on each of its last (\d+) runs", d):
        assert int(m.group(1)) == len(involved) and all(f.failed for f in involved)
        checked.append("same way")
    if main is not None:
        span = [f for f in window if involved[0].i < f.i < involved[-1].i and f.kind == "write" and not f.failed]
        if "with no file changed between them" in d:
            assert not span
            checked.append("no change")
        if m := re.search(r"while (\d+) edit\(s\) between them changed files", d):
            assert int(m.group(1)) == len(span) > 0
            checked.append("changed")
        assert "kept changing" not in d
    if m := re.search(r"its errors came back in a cycle \((.*?)\): (.*?)\.(?: [A-Z]|$)", d):
        errors = m.group(2).split(" -> ")
        assert errors[0] == errors[-1] and len(set(errors)) >= 2
        failing = [turns[f.i]["output"] for f in involved if f.failed][-len(errors):]
        assert all(e in out for e, out in zip(errors, failing)), (errors, failing)
        checked.append("cycle")
    if m := re.search(r"Recurring error: (.*?)\.(?: [A-Z]|$)", d):
        assert sum(m.group(1) in t.get("output", "") for t in turns) >= 2
        checked.append("recurring")
    if m := re.search(r"Already suggested (\d+) time\(s\) \(turns ([\d, ]+)\)", d):
        assert len(m.group(2).split(", ")) == int(m.group(1))
        checked.append("suggested")
    return checked
