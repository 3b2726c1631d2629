"""Checking a diagnosis against the turns it describes: every claim the monitor makes is parsed and verified."""

from __future__ import annotations

import json
import re
from collections import Counter
from typing import Optional

from strict_loop.model.monitoring import SpiralVerdict, TurnFacts
from strict_loop.model.turns import Turn
from strict_loop.monitor import fingerprint as fp
from strict_loop.monitor import outcomes, person, polls, printed
from strict_loop.monitor.calls import jobs, toolkinds, wrappings
from strict_loop.monitor.ladder import replay
from strict_loop.monitor.spiral import SpiralDetector, facts

PLACEHOLDER = re.compile(r"<(?:q|n|hex|ts|time|addr|uuid|tmp|dur|size|pod|range)>")
DOUBLED = re.compile(r"\b(\w+(?:Error|Exception)): \1:")

NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
CLOCK = re.compile(r"\d+[-:]\d\d[-:]\d\d\S*")
"""A number as a measurement reads it; a date or a time of day is none."""


def play(turns: list[dict]):
    """``monitor.replay`` of turns given as dicts: the verdict and every ladder step."""
    return replay([Turn.model_validate(t) for t in turns])


def window_of(turns: list[dict]) -> list[TurnFacts]:
    window: list[TurnFacts] = []
    for i, t in enumerate(turns):
        window.append(facts(Turn.model_validate(t), i, window))
    return window


def texts_of(v: SpiralVerdict) -> list[str]:
    return [
        v.diagnosis,
        v.recommended_action,
        v.whisper or "",
        *(s.evidence for s in v.signals),
        *(m.text for m in v.supervisor.messages),
    ]


def said_in(error: str, output: str) -> bool:
    """Whether ``error`` is what ``output`` says, as a person reads its lines (``fingerprint.readable``: timestamps out,
    pytest's DID NOT RAISE said plainly, a doubled type prefix once)."""
    shown = error[:-3] if error.endswith("...") else error  # a long line is shown cut, with an ellipsis
    lines = [ln.strip() for ln in output.splitlines() if ln.strip()]
    # a bare marker ("ERROR:") and the line it heads are read as one
    joined = [f"{a} {b}" for a, b in zip(lines, lines[1:], strict=False)]
    return any(shown in fp.readable(line, 10_000) for line in lines + joined)


def failure_said(failure: str, turn: dict, loosely: bool = False) -> bool:
    """Whether a failure named by the monitor is what the turn says: an output line, an editor diagnostic ('file:
    message'), or a person's complaint in their own words. ``loosely``: the same failure with other numbers (a line that
    moved)."""
    output = turn.get("output", "")
    if failure in (person.SAYS_FAILS, person.REFUSED_CALL):
        return person.read(output).verdict == "fail"
    if listed := re.fullmatch(r"files written into (.+) are not in its listing", failure):
        return listed.group(1) in json.dumps(turn.get("args", {}))  # a listing of that folder (what it lacks: below)
    ci = re.fullmatch(r"CI step '(.*)' failed", failure)
    if ci:  # a CI run read back: the step is named in what it printed, and the run's output says it failed
        return ci.group(1) in output and ("##[error]" in output or bool(re.search(r"^\s*X ", output, re.M)))
    shown = [
        re.fullmatch(r"([\w.-]+): (?:keeps crashing|cannot pull its image|cannot be created)", p)
        for p in failure.split("; ")
    ]
    if all(shown):  # a status read's failing workloads: each has a row of its replicas in a failing state
        states = r"CrashLoopBackOff|Error|OOMKilled|ImagePullBackOff|ErrImagePull|InvalidImageName|Create\w*Error|"
        states += r"RunContainerError|Exited \([1-9]\d*\)|Restarting \("
        return all(re.search(rf"^{re.escape(m.group(1))}-\S*\s.*(?:{states})", output, re.M) for m in shown if m)
    if said_in(failure, output) or (loosely and fp.loose(failure) in fp.loose(output)):
        return True
    where, _, message = failure.partition(": ")
    return bool(message) and where in output and failure_said(message, turn, loosely)


CODE = r"(?P<fence>`+) ?(?P<code>.+?) ?(?P=fence)(?!`)"
"""A Markdown code span as the monitor writes one (``fp.code``): in one backtick, or in two, spaced, around a text that
holds one."""


def spans(pattern: str, text: str) -> list[str]:
    """What the code spans in ``pattern`` (``{}`` where a span stands) hold, each match's."""
    return [m.group("code") for m in re.finditer(pattern.format(CODE), text)]


def lacks_a_write(turns: list[dict], at: int) -> bool:
    """Whether the listing at ``at`` lacks the name of a file a file tool wrote since the same listing before it."""
    names = set(re.findall(r"[^\s/]+", turns[at].get("output", "")))
    written = []
    for t in reversed(turns[:at]):
        if t.get("tool") == turns[at].get("tool") and t.get("args") == turns[at].get("args"):
            break
        path = next((t.get("args", {}).get(k) for k in ("path", "file_path", "filePath") if k in t.get("args", {})), "")
        if toolkinds.classify_tool(t.get("tool", ""), t.get("args", {})) == "write" and path:
            written.append(path.rsplit("/", 1)[-1])
    return any(name not in names for name in written)


def says_still_failing(turn: dict) -> bool:
    """A person saying, in their own words, that it still fails the same way ("nope, still the same error"), in a
    message or in the feedback a harness hands back in a tool's result (Cline's ``<feedback>``)."""
    said = turn.get("output", "") if turn.get("actor") == "person" else wrappings.feedback(turn.get("output", ""))
    return bool(said) and person.read(said).verdict == "fail"


def check_outcomes(evidence: str, involved: list[TurnFacts], window: list[TurnFacts], turns: list[dict]) -> list[str]:
    """The claims of the outcome signals (same failure after edits, stalled polls, repeated reverts, missing things)."""
    checked = []
    if m := re.search(
        r"(?:failed the same way|reported the same failure) (\d+) times \((.*)\) while (\d+) edit\(s\)(?: to "
        r"(.*?))? between",
        evidence,
    ):
        checks = all(f.verdict == "fail" for f in involved) and len({f.fsig for f in involved}) == 1
        runs = all(f.failed and f.kind == "run" for f in involved) and len({(f.step, f.err) for f in involved}) == 1
        assert int(m.group(1)) == len(involved) and (checks or runs)
        last = turns[involved[-1].i]  # a person's last report may only say "still": an earlier one named it
        reported = "reported the same failure" in evidence and any(
            failure_said(m.group(2), turns[f.i]) for f in involved
        )
        assert failure_said(m.group(2), last) or reported, (m.group(2), last["output"][:300])
        assert all(
            failure_said(m.group(2), turns[f.i], loosely=True) or says_still_failing(turns[f.i]) for f in involved
        )
        if re.fullmatch(r"files written into (.+) are not in its listing", m.group(2)):
            assert all(lacks_a_write(turns, f.i) for f in involved)
        edits = [f for f in window if involved[0].i < f.i <= involved[-1].i and f.edited and f.actor == "agent"]
        assert int(m.group(3)) == len(edits) > 0
        named = [p for p in (m.group(4) or "").replace(" and more", "").split(", ") if p]
        assert all(any(p in f.paths for f in edits) for p in named), (named, [f.paths for f in edits])
        checked.append("same failure")
    if m := re.search(r"a running job was polled (\d+) times in a row", evidence):
        assert (
            int(m.group(1)) >= len(involved) > 1
            and len({f.asig for f in involved}) == 1
            and len({f.out for f in involved}) == 1
        )
        assert all(
            outcomes.running(turns[f.i].get("output", "")) or polls.waits(turns[f.i].get("args", {}).get("command"))
            for f in involved
        )
        checked.append("polled")
    if m := re.search(r"the agent waited (\d+) min over (\d+) looks in a row and nothing new came back", evidence):
        assert int(m.group(2)) == len(involved) > 2 and all(f.polls for f in involved)
        assert all(polls.waits(turns[f.i].get("args", {}).get("command")) for f in involved[1:])
        span = turns[involved[0].i : involved[-1].i + 1]
        slept = sum(polls.slept(t.get("args", {}).get("command")) for t in span)
        assert abs(slept / 60 - int(m.group(1))) <= 1, (slept, m.group(1))
        checked.append("waited")
    if m := re.search(r"while the person asked (\d+) times how it stands", evidence):
        asked = [f for f in window if involved[0].i < f.i < involved[-1].i and f.actor == "person"]
        assert int(m.group(1)) == len([f for f in asked if not (f.asks or f.verdict)]) >= 2
        checked.append("asked")
    if m := re.search(r"was put back to an earlier version (\d+) times \(turns ([\d, ]+)\)", evidence):
        listed = [int(x) for x in m.group(2).split(", ")]
        assert int(m.group(1)) == len(listed) and all(window[i].edited for i in listed)
        for i in listed:  # it swaps back an earlier edit (a file tool's, or a command's `sed -i`), or restores content
            done = {e.edit for e in window[:i]} | {d for e in window[:i] for d, _ in e.swaps}
            assert {window[i].undo, *(u for _, u in window[i].swaps)} & done or window[i].fstate
        checked.append("reverted")
    return checked


def check_loops(evidence: str, involved: list[TurnFacts], window: list[TurnFacts], turns: list[dict]) -> list[str]:
    """The claims of the person's reports, restart and hang loops, and a thing missing again and again."""
    checked = []
    if m := re.search(
        r"(?:the person said (?:it still fails|no) (\d+) time\(s\) after attempts|after the agent's attempts, the "
        r"person said|the agent went against the person's word (\d+) times): (.*)$",
        evidence,
    ):
        reports = [f for f in involved if f.reports]
        assert reports == involved and 1 <= int(m.group(1) or 1) <= len(reports)
        assert (
            m.group(1)
            or any(f.reports == 2 for f in involved)
            or len([f for f in involved if f.defied]) == int(m.group(2) or 0) >= 3
        )
        quoted = re.findall(r"“(.*?)”", m.group(3))
        said = [wrappings.spoken(f.actor, turns[f.i].get("output", "")) for f in involved]
        texts = [person.read(text).text for text in said if text is not None]
        assert all(any(q.removesuffix("...").rstrip(".") in t for t in texts) for q in quoted), (quoted, texts)
        for ran in spans(r"ran {} after being told not to", m.group(3)):  # a run the person had forbidden
            defied = [f for f in involved if f.defied and f.action.startswith(ran)]
            assert defied and all(
                any(e.actor == "person" and f.defied in person.forbidden(turns[e.i]["output"]) for e in window[: f.i])
                for f in defied
            ), ran
        for added in spans(r"added a dependency \({}\) after being told not to", m.group(3)):
            adding = [f for f in involved if f.defied == person.DEPS and f.action.startswith(added)]
            assert adding and all(
                any(e.actor == "person" and person.DEPS in person.forbidden(turns[e.i]["output"]) for e in window)
                for f in adding
            ), added
        for path, place in re.findall(r"edited `(.*?)` after being told not to touch ([^\s;]+)", m.group(3)):
            edited = [f for f in involved if f.defied == f"place:{place}" and path in [*f.paths, *f.writes]]
            assert (
                edited
                and f"/{place}/" in f"/{path.strip('/')}/"
                and all(
                    any(
                        e.actor == "person" and f.defied in person.forbidden(turns[e.i]["output"])
                        for e in window[: f.i]
                    )
                    for f in edited
                )
            ), (path, place)
        checked.append("person reports")
    if m := re.search(r"(\d+) restarts \((.*)\) and after (\d+) of them the same outcome came back", evidence):
        restarted = [f for f in involved if f.restart]
        assert int(m.group(1)) == len(restarted) >= int(m.group(3)) >= 2
        assert all(any(a in f.action for f in restarted) for a in spans("{}", m.group(3)))
        checked.append("restarts")
    if m := re.search(r"showed the same failure (\d+) times \((.*)\) with nothing edited or restarted", evidence):
        assert int(m.group(1)) == len(involved) and all(f.verdict == "fail" and f.ftext == m.group(2) for f in involved)
        assert not any(f.edited or f.restart for f in window if involved[0].i < f.i <= involved[-1].i)
        assert all(m.group(2).split(": ")[0] in turns[f.i]["output"] for f in involved)  # the workload, as it was shown
        checked.append("watched")
    if m := re.search(r"hung and was cut off (\d+) times", evidence):
        assert int(m.group(1)) == len(involved) and all(f.hang for f in involved)
        said = [turns[f.i] for f in involved]  # the output says so, or `timeout`'s exit status does
        assert all(
            stopped_while_silent(turns, f.i)
            if "command" not in t["args"]
            else outcomes.hung(t.get("output", ""), t["args"]["command"], t.get("exit_code"))
            for f, t in zip(involved, said, strict=True)
        )
        checked.append("hangs")
    if m := re.search(r"(\S+ \S+) was missing (\d+) times through (\d+) different action", evidence):
        name = m.group(1).split(" ", 1)[-1].rsplit("/", 1)[-1]
        assert not any(c in name for c in "*?["), evidence  # a glob that matched nothing is named by its folder
        assert int(m.group(2)) == len(involved) and int(m.group(3)) == len({f.asig for f in involved})
        assert all(name in turns[f.i].get("output", "") for f in involved)
        checked.append("missing again")
    return checked


def check_evidence(evidence: str, involved: list[TurnFacts], window: list[TurnFacts], turns: list[dict]) -> list[str]:
    """The claims of one signal's evidence, checked against the turns that signal names."""
    checked = check_outcomes(evidence, involved, window, turns)
    if m := re.search(r"the identical call was made (\d+) times", evidence):
        assert int(m.group(1)) == len(involved) and len({f.sig for f in involved}) == 1
        checked.append("identical")
    if m := re.search(r"(\d+) of the agent's last (\d+) calls read or searched again what an earlier", evidence):
        assert int(m.group(1)) == len(involved) <= int(m.group(2))
        assert all(f.kind in ("read", "search") for f in involved)
        assert all(any(e.sig == f.sig and e.out == f.out for e in window[: f.i]) for f in involved)
        calls = [f for f in window if f.actor == "agent" and f.i <= involved[-1].i][-int(m.group(2)) :]
        assert not any(f.edited for f in calls)
        ran = re.search(r"nothing was changed \((\d+) command\(s\) ran between\)", evidence)
        assert int(ran.group(1) if ran else 0) == sum(f.kind == "run" for f in calls)
        checked.append("reread")
    if m := re.search(r"(\d+) of the agent's last (\d+) calls looked for something and found nothing", evidence):
        assert int(m.group(1)) == len(involved) <= int(m.group(2))
        assert all(outcomes.found_nothing(turns[f.i].get("output", "")) for f in involved)
        span = [f for f in window if involved[0].i <= f.i <= involved[-1].i and f.actor == "agent"]
        assert not any(f.edited or (f.kind == "run" and not f.failed) for f in span)
        checked.append("nothing found")
    if m := re.search(
        r"printed the same report after each of (\d+) changes before it, its numbers within (\d+)%", evidence
    ):
        assert int(m.group(1)) == len(involved) - 1 and not any(f.failed for f in involved)
        tails = [CLOCK.sub("", "\n".join(turns[f.i]["output"].splitlines()[-printed.REPORT_LINES :])) for f in involved]
        shapes = [NUMBER.sub("#", tail) for tail in tails]
        assert len({" ".join(s.split()) for s in shapes}) == 1  # the same report
        for a, b in zip(involved, involved[1:], strict=False):
            between = [f for f in window if a.i < f.i < b.i]
            assert a.asig != b.asig or any(f.edited or (f.kind == "run" and f.shape != a.shape) for f in between)
        runs = [[float(n) for n in NUMBER.findall(tail)] for tail in tails]
        tolerance = int(m.group(2)) / 100
        spans = [(max(v) - min(v)) / (max(map(abs, v)) or 1) for v in zip(*runs, strict=True)]
        assert sum(s <= tolerance for s in spans) >= 0.8 * len(spans) and any(s > 0 for s in spans)
        checked.append("unmoved")
    if m := re.search(r"failed the same way on each of its last (\d+) runs", evidence):
        assert (
            int(m.group(1)) == len(involved) and all(f.failed for f in involved) and len({f.sig for f in involved}) == 1
        )
        checked.append("same way")
    span = [f for f in window if involved[0].i < f.i < involved[-1].i and f.edited and not f.failed]
    if "with no file changed between them" in evidence:
        assert not span
        checked.append("no change")
    if m := re.search(rf"though (\d+) other command\(s\) succeeded between them \({CODE}\)", evidence):
        ran = [f for f in window if involved[0].i < f.i < involved[-1].i and f.kind == "run" and not f.failed]
        assert int(m.group(1)) == len({f.action for f in ran}) > 0 and any(f.action.startswith(m.group(3)) for f in ran)
        checked.append("others succeeded")
    if m := re.search(r"while (\d+) edit\(s\) between them changed files", evidence):
        assert int(m.group(1)) == len(span) > 0
        checked.append("changed")
    if m := re.search(
        r"the same error( with other details)? \((.*)\) (\d+) times through (\d+) different action", evidence
    ):
        assert int(m.group(3)) == len(involved) and int(m.group(4)) == len({f.sig for f in involved})
        said = [f for f in involved if said_in(m.group(2), turns[f.i]["output"])]
        assert said == involved or (m.group(1) and involved[-1] in said and len({f.err for f in involved}) == 1)
        checked.append("same error")
    checked += check_loops(evidence, involved, window, turns)
    if m := re.search(r"its errors came back in a cycle \((.*?)\): (.*)$", evidence):
        errors = m.group(2).split(" -> ")
        assert errors[0] == errors[-1] and len(set(errors)) >= 2
        failing = [turns[f.i]["output"] for f in involved if f.failed][-len(errors) :]
        assert all(said_in(e, out) for e, out in zip(errors, failing, strict=False)), (errors, failing)
        checked.append("cycle")
    return checked


TRIED = (
    r"Meanwhile the agent (?:made (\d+) edit\(s\)(?: \((.*?)\))?)?(?: and )?(?:ran (\d+) other command\(s\) "
    rf"\({CODE})?"
)


def check_tried(d: str, kind: str, involved: list[TurnFacts], window: list[TurnFacts]) -> list[str]:
    """What the agent tried between the person's reports or around the restarts: the edits and other commands."""
    m = re.search(TRIED, d)
    if not (m and kind in ("person_reports", "restart_loop", "no_effect") and (m.group(1) or m.group(3))):
        return []
    window = window[-SpiralDetector().window_size :]  # what the monitor still holds when it says this
    start = involved[0].i
    if kind == "person_reports":  # from the report the first counted one answers
        start = next((f.i for f in reversed(window) if f.actor == "person" and f.i < start), start)
    span = [f for f in window if start <= f.i <= involved[-1].i and f.actor == "agent"]
    edits = [f for f in span if f.edited]
    assert int(m.group(1) or 0) == len(edits)
    assert all(any(p in f.paths for f in edits) for p in (m.group(2) or "").split(", ") if p)
    shown = involved[-1].shape if kind == "no_effect" else None  # the measurement: the evidence's
    runs = {
        f.action for f in span if f.kind == "run" and not f.edited and not f.restart and (not shown or f.shape != shown)
    }
    assert int(m.group(3) or 0) == len(runs) and (not m.group(5) or any(a.startswith(m.group(5)) for a in runs))
    return ["tried between"]


def stopped_while_silent(turns: list[dict], at: int) -> bool:
    """Whether the turn at ``at`` stops a background check whose last read brought no line its earlier reads had not,
    or, read once, no line an earlier run of the same command, stopped while silent, had not shown."""
    begun, reads = _job_run(turns, at)
    if begun is None or not outcomes.is_verifier(turns[begun]["args"]["command"]):
        return False
    lines = [_job_lines(t) for t in reads]
    if len(reads) == 1:
        command = turns[begun]["args"]["command"]
        before = [
            set().union(*map(_job_lines, _job_run(turns, k)[1]))
            for k in range(begun)
            if jobs.job_act(turns[k].get("tool", ""), turns[k].get("args", {})) == "stop"
            and stopped_while_silent(turns, k)
            and turns[_job_run(turns, k)[0] or 0]["args"].get("command") == command
        ]
        return bool(lines[0]) and any(lines[0] <= seen for seen in before)
    return len(reads) >= 2 and lines[-1] <= set().union(*lines[:-1])


def _job_run(turns: list[dict], at: int) -> tuple[Optional[int], list[dict]]:
    """Where the job the turn at ``at`` stops was started (None: not in ``turns``), and its reads since."""
    job = str(next(iter(turns[at]["args"].values()), ""))
    begun = [k for k in range(at) if f"ID: {job}" in turns[k].get("output", "")]
    if not begun:
        return None, []
    return begun[-1], [t for t in turns[begun[-1] + 1 : at] if job in json.dumps(t["args"])]


def _job_lines(read: dict) -> set[str]:
    """The lines a read of a background job showed of the job's output."""
    return {x for x in jobs.job_output(read.get("output", "")).splitlines() if x.strip()}


def check_claims(v: SpiralVerdict, turns: list[dict]) -> list[str]:
    """Every claim of ``v`` checked against ``turns``; returns the claims it found (so a test can see they were
    checked)."""
    window = window_of(turns)
    by_i = {f.i: f for f in window}
    checked = []
    for text in texts_of(v):
        assert not PLACEHOLDER.search(text), f"a normalization placeholder shown: {text}"
        assert not DOUBLED.search(text), f"a doubled prefix: {text}"
        assert "kept changing" not in text
    if not v.signals:
        return checked
    d = v.diagnosis
    main = v.signals[0]
    assert d.startswith(f"Stuck: {main.evidence}.")
    for s in v.signals:
        checked += check_evidence(s.evidence, [by_i[i] for i in s.turns], window, turns)
    involved = [by_i[i] for i in main.turns]
    if m := re.search(r"varied its action (\d+) ways: (.*?)\.(?: [A-Z]|$)", d):
        listed = spans("{}", m.group(2))
        actions = list(dict.fromkeys(f.action for f in involved))
        assert int(m.group(1)) == len(listed) == len(actions) and listed == actions, (m.group(0), actions)
        checked.append("varied")
    if m := re.search(r"tried (\d+) different actions in (\d+) turns \(tools: (.*?)\)", d):
        counts = {t: int(n) for t, n in re.findall(r"(\S+) x(\d+)", m.group(3))}
        assert int(m.group(1)) == len({f.action for f in involved}) and int(m.group(2)) == len(involved) == sum(
            counts.values()
        )
        assert counts == dict(Counter(f.tool for f in involved))
        checked.append("tried")
    if m := re.search(r"the agent repeated the identical action \((.*)\)\.(?: [A-Z]|$)", d):  # an action may hold ")."
        assert len({f.sig for f in involved}) == 1 and involved[-1].action == m.group(1)
        checked.append("repeated")
    if m := re.search(r"Recurring error: (.*?)\.(?: [A-Z]|$)", d):
        assert sum(said_in(m.group(1), t.get("output", "")) for t in turns) >= 2
        checked.append("recurring")
    if m := re.search(
        r"the agent made (\d+) edit\(s\) \((.*?)\) and the failure stayed the same: (.*?)\.(?: [A-Z]|$)", d
    ):
        edits = [f for f in window if involved[0].i < f.i <= involved[-1].i and f.edited]
        assert int(m.group(1)) == len(edits) and all(
            any(p in f.paths for f in edits) for p in m.group(2).split(", ") if p != "files"
        )
        assert failure_said(m.group(3), turns[involved[-1].i])
        checked.append("edited")
    checked += check_tried(d, main.kind, involved, window)
    if m := re.search(r"Missing (module|program|file) (\S+): the output says it was not found", d):
        assert any(m.group(2) in turns[f.i].get("output", "") for f in involved), m.group(0)
        checked.append("missing")
    if m := re.search(r"Already suggested (\d+) time\(s\), (not adopted|pending)\.", d):
        assert 1 <= int(m.group(1)) <= 2  # the last two whispers at most (no turn number: no one ever saw them)
        checked.append("suggested")
    return checked
