"""Per-turn facts for the spiral detector.

``facts()`` turns a raw :class:`Turn` into small comparable facts (digests, error fingerprint, touched paths, the
verdict of whatever judged the work) and asks ``progress`` whether the turn moved the work forward (``prog``).
"""

from __future__ import annotations

import re
from collections import Counter
from datetime import datetime
from typing import Any, Optional

from strict_loop.model.monitoring import Kind, TurnFacts, Verdict
from strict_loop.model.turns import Turn
from strict_loop.monitor import catalog, missing, outcomes, person, polls, printed, readback, verdicts
from strict_loop.monitor import fingerprint as fp
from strict_loop.monitor.calls import jobs, listing, shellwork, toolkinds, wrappings
from strict_loop.monitor.calls.jobs import JobAct
from strict_loop.monitor.calls.toolkinds import classify_tool, given_words, step_words, turn_paths
from strict_loop.monitor.progress import NOVEL_LINES, progress

_LINE_RANGE = re.compile(r"\b\d+:\d+\b")
_MARKER = re.compile(r"^(?:E|>)\s+")
SELF_TALK = re.compile(
    r"\b(?:i broke|broke (?:it|the \w+|something)|(?:messed|screwed) (?:it |this |things )?up|(?:let "
    r"me|let's|i(?:'ll| will| need to)) (?:restore|revert|undo)|same (?:mistake|error|issue|problem) (?:again|as "
    r"before)|(?:isn't|is not|still not|not) working|stuck in a loop|going in circles|running out of ideas|this is "
    r"(?:insane|hopeless)|still (?:fail\w*|broken|the same (?:error|output|result)))",
    re.I,
)


def _brief(turn: Turn, kind: Kind, failed: bool, line: Optional[str], paths: list[str], job: Optional[JobAct]) -> str:
    """One line for the turn: its action and, for a failure, its error line (else the last meaningful line of the
    output)."""
    args = turn.args.get("command") if isinstance(turn.args.get("command"), str) else fp.canonical_args(turn.args)
    if job in ("read", "stop") and not paths and not isinstance(args, str):  # by its id (a shell's by its command)
        args = jobs.job_id(turn.args)
    args = " ".join(str(args).split())
    if turn.tool == "str_replace_editor" and turn.args.get("path"):
        args = f"{turn.args.get('command')} {turn.args.get('path')}"
    elif not isinstance(turn.args.get("command"), str) and paths:
        # a file tool by its file (and a write by the start of what it wrote), never raw JSON cut mid-key
        pair = shellwork.edit_pair(turn.args) if kind == "write" else None
        added = pair[1] if pair else ""
        args = paths[0] + (f' "{added[:40]}{"..." if len(added) > 40 else ""}"' if added else "")
    last = outcomes.last_line(turn.output)
    outcome = fp.readable(line or last) if failed else last
    return f"{turn.tool} {args[:90]}".rstrip() + f" -> {'FAILED: ' if failed else ''}{(outcome or '(no output)')[:90]}"


_COUNTED = ("run", "other", "invalid", "person")  # a check's count, a person's paste of one; a file tool's "ok": none


def _step(turn: Turn, kind: Kind, paths: list[str], sig: str, job: Optional[JobAct]) -> str:
    """The step being retried: a command by its word, another tool by the file it targets (else by its exact call)."""
    command = turn.args.get("command")
    if job in ("read", "stop"):  # a job's status reads are one step, whichever tool reads it
        return fp.digest(f"\0job\0{job}\0{jobs.job_id(turn.args)}")
    if kind == "run" and isinstance(command, str):
        return fp.digest(f"{turn.tool}\0run\0{step_words(command)}")
    if paths:
        return fp.digest(f"{turn.tool}\0path\0{paths[0]}")
    return fp.digest(f"{turn.tool}\0mcp") if toolkinds.mcp_tool(turn.tool) else sig


def _epoch(ts: Optional[str]) -> Optional[float]:
    try:
        return datetime.fromisoformat(ts.replace("Z", "+00:00")).timestamp() if ts else None
    except ValueError:
        return None


def _outcome(
    turn: Turn,
    kind: Kind,
    failed: bool,
    line: Optional[str],
    word: Optional[person.Word],
    job: Optional[JobAct],
    checked: bool,
    unlisted: Optional[str] = None,
) -> tuple[Optional[Verdict], Optional[str]]:
    """The verdict of whatever judged the work in this turn, and the failure it reported (None, None: nothing judged
    it). ``checked``: the turn reads how a check started in the background ended, which is that check's verdict;
    ``unlisted``: a listing lacks files just written into its folder (``listing.unlisted``), which did not take."""
    if word is not None and word.verdict == "fail":
        return "fail", word.failure or (person.REFUSED_CALL if word.refused else person.SAYS_FAILS)
    if word is not None and word.verdict == "pass" and turn.actor == "person":
        return "pass", None
    diag = outcomes.diagnostics(turn.output) or (None if failed else unlisted)
    if diag:
        return "fail", diag
    command = turn.args.get("command")
    if kind == "run" and isinstance(command, str):
        remote, failure = readback.remote_verdict(command, turn.output)
        if remote is not None:  # a CI run read back: its own verdict, whatever the reading command's exit code
            return remote, failure
        shown = readback.failing_status(command, turn.output) or readback.failed_job(command, turn.output)
        if shown is not None:  # pods, containers or a job a status read shows failing: the deploy's or job's verdict
            return "fail", shown
    if kind == "run" and (checked or (isinstance(command, str) and outcomes.is_verifier(command))):
        if not failed and job == "start":  # (a shell's `&` is no check at all: ``is_verifier``)
            return None, None  # started in the background: it has not passed yet, whatever its start returned
        said = line or outcomes.last_line(turn.output)[:300] or "failed with no output"
        if not failed and turn.exit_code is None and outcomes.unfinished(turn.output):
            return None, None  # no exit status, and it stops as a test starts: cut off (a timeout), no pass
        if not failed and isinstance(command, str) and printed.selected(command, turn.output, turn.exit_code):
            return None, None  # the lines a filter kept, with no summary that says it passed: no pass
        return ("fail", said) if failed else ("pass", None)
    return None, None


def _errs(turn: Turn, verdict: Optional[Verdict], said: Optional[str]) -> list[str]:
    """A failed check's error lines as digests; a failed job's, its failure alone (every read of a failed job shows its
    state field: no error of its own, so two jobs failing for other reasons share none)."""
    if verdict != "fail" or turn.actor != "agent":
        return []
    if said is not None and said.startswith(readback.JOB_FAILED):
        return [fp.digest(fp.loose(said))]
    return outcomes.error_digests(turn.output)


def _edit_keys(turn: Turn, kind: Kind, paths: list[str]) -> tuple[Optional[str], Optional[str], dict[str, str]]:
    """A write's edit digest, the digest of the edit that undoes it, and (a whole-file write) the file's new content
    digest."""
    if kind != "write":
        return None, None, {}
    where = paths[0] if paths else ""
    pair = shellwork.edit_pair(turn.args)
    whole = next((turn.args[k] for k in ("content", "file_text") if isinstance(turn.args.get(k), str)), None)
    state = {where: fp.digest(whole)} if whole is not None and pair is None and where else {}
    if pair is None or pair[0] == pair[1]:
        return None, None, state
    return fp.digest(f"{where}\0{pair[0]}\0{pair[1]}"), fp.digest(f"{where}\0{pair[1]}\0{pair[0]}"), state


def _digests(
    turn: Turn, kind: Kind, index: int, unknown: bool, job: Optional[JobAct]
) -> tuple[str, str, str, list[str]]:
    """The call's exact and loose digests, its output's digest and line digests. Unknown content gets digests of its own
    (never 'the same' as anything); a clipped output's middle is unknown, so its digest is its own too (its lines
    count)."""
    canonical = fp.canonical_args(turn.args)
    if kind == "write":  # a write's output echoes the file it changed: compare it loosely (line numbers move)
        loose_text, lines = fp.loose_with_lines(turn.output)
        out_digest = fp.digest(loose_text)
        # Two edits are equivalent only if they write the same text (wherever in the file).
        asig = fp.digest(turn.tool + "\0" + _LINE_RANGE.sub("<range>", " ".join(canonical.split())))
    else:  # a person's message is read to its MAX_PERSON_TEXT (their words come first; a paste keeps its head)
        shown = turn.output[: wrappings.MAX_PERSON_TEXT] if kind == "person" else turn.output
        strict_text, lines = fp.strict_with_lines(shown)
        out_digest = fp.digest(strict_text)
        asig = fp.digest(turn.tool + "\0" + fp.loose(canonical))
    if job in ("read", "stop"):  # another job's id is another job, not noise
        asig = fp.digest(f"{turn.tool}\0{jobs.job_id(turn.args)}")
    sig = fp.digest(turn.tool + "\0" + canonical)
    if unknown:
        own = fp.digest(f"unknown\0{index}\0{turn.tool}")
        return own, own, own, []
    if outcomes.clipped(turn.output):
        out_digest = fp.digest(f"clipped\0{index}\0{out_digest}")
    return sig, asig, out_digest, lines


def _error(turn: Turn, kind: Kind, step: str, window: list[TurnFacts]) -> tuple[Optional[str], Optional[str]]:
    """A failed turn's error line and error fingerprint (either may be None).

    The cause is read from lines that carry one: a line that successful turns printed too is environment noise (unless
    the step failed with it before and one run printed it: ``x; y`` goes on past x's failure and succeeds),
    and a line the step's previous failure printed too, while this failure prints error lines of its own, is the
    wrapper around both (``npm error command sh -c next build``, ``Failed to compile.``), whatever the toolchain.
    An edit tool's failure is its own message (a write's lines are digested loosely, so none would match anyway).
    """
    printed_ok = Counter(d for f in window if not f.failed and f.kind == "run" and f.actor == "agent" for d in f.lines)
    failed_with = {d for f in window if f.failed and f.step == step and f.actor == "agent" for d in f.lines}
    # a line the step failed with before is its error, though one run that went on past it printed it too
    ambient = frozenset(d for d, n in printed_ok.items() if n > 1 or d not in failed_with)
    line = fp.error_line(turn.output, ambient)
    err = fp.line_fingerprint(line, turn.output)
    before = next((e for e in reversed(window) if e.failed and e.step == step and e.actor == "agent"), None)
    if (
        before is not None
        and kind != "write"
        and line is not None
        and not fp.raised(line)
        and fp.digest(fp.strict(line)) in before.lines
    ):
        shared = ambient | frozenset(before.lines)
        own = fp.error_line(turn.output, shared) or _detail(turn.output, line, shared)
        if own is not None and not fp.summary(own):  # it says something its predecessor did not: its cause (a count
            # under the same error line, "Found 1 error (checked 72 files)", is no cause)
            line, err = own, fp.line_fingerprint(own, turn.output)
    if line is None and kind != "write" and (located := fp.located_line(turn.output, ambient)) is not None:
        line, err = located, fp.line_fingerprint(located, turn.output)  # a compiler's file:line:col: message
    if line is None and (
        0 < len([ln for ln in turn.output.splitlines() if ln.strip()]) <= 2 or printed.ends_failing(turn.output)
    ):  # a one-line failure says what it is, and so does a last line in words that say it failed
        line = outcomes.last_line(turn.output)[:300]
        err = err or f"error: {fp.loose(line)[:200]}"
    if kind == "invalid":  # the harness rejected the action: its message is the error
        line = next((ln for ln in reversed(turn.output.splitlines()) if ln.strip()), "")
        err = f"rejected by the harness: {fp.loose(line)[:160]}"
    return line, err


_COMPLAINT = re.compile(
    r"\b(?:unknown|invalid|unexpected|should|must|missing|required|not (?:allowed|supported|valid)|cannot|can't)\b",
    re.I,
)
"""What a line under an error header says when it names what is wrong (not a code frame, nor a value printed)."""


def _detail(output: str, header: str, shared: frozenset[str]) -> Optional[str]:
    """The line under a shared error header that names what is wrong and that the earlier failure did not print
    (webpack's "Invalid options object" over " - options has an unknown property 'https'"), within the next 4 lines:
    what this failure says of itself. A code frame or a value under it is none (a same failure's values move)."""
    lines = output.splitlines()
    at = next((k for k, ln in enumerate(lines) if ln.strip() == header.strip()), None)
    after = [ln for ln in lines[at + 1 : at + 5] if _COMPLAINT.search(ln)] if at is not None else []
    return next((ln.strip() for ln in after if fp.digest(fp.strict(ln)) not in shared), None)


_TAIL_CHARS = 8000
"""How much of a failing output's end stands for it: its failure class is read there, and an output with no error
line is known by it."""


def _tail(output: str) -> str:
    """The end of an output, where a failing command says why: its last lines (``error_line``'s reach), at most
    ``_TAIL_CHARS`` characters. A failure class is read there, not through a 16,000-character output 13 times."""
    return "\n".join(output.splitlines()[-fp.ERROR_LINES :])[-_TAIL_CHARS:]


def _signed(
    said: Optional[str], window: list[TurnFacts], turn: Turn, line: Optional[str], tail: str, word: person.Word | None
) -> tuple[Optional[str], Optional[str]]:
    """``_failure``'s signature and text; a check that names its failing tests fails the same way only when it fails
    the same tests (a third test breaking under the same count line is another failure). A check whose output has no
    error line to read is known by what it printed, loosely, not by its last line alone: that line is often a count
    (``* staticcheck: 3``) under findings that change from run to run."""
    fresh = word is not None and word.weight == 0 and not word.failure and not word.refused  # said, not said again
    fsig, ftext = _failure(said, window, fresh, word.text if fresh and word is not None and word.new else None)
    if fsig is None or turn.actor != "agent":
        return fsig, ftext
    named = outcomes.failing_tests(turn.output)
    if line is None and not named and said == outcomes.last_line(turn.output)[:300]:
        named = [fp.digest(fp.loose(tail))]
    return (fp.digest("\0".join([fsig, *named])), ftext) if named else (fsig, ftext)


def _failure(
    said: Optional[str], window: list[TurnFacts], fresh: bool = False, new: Optional[str] = None
) -> tuple[Optional[str], Optional[str]]:
    """The failure signature and its readable text; a person's "still the same error" is the failure reported last.
    ``fresh``: the person says it fails, not that it still does ("nope now this. EADDRINUSE"); ``new``: their words,
    where they say the failure is another ("different thing in the network tab now"): unless the agent's own runs
    show which, it is known by those words, never taken for the failure reported before."""
    if not said:
        return None, None
    said = _MARKER.sub("", said.strip())  # pytest's 'E   ' is not part of the failure
    if said == person.SAYS_FAILS:  # the failure reported last since the person's last request, else the task's own
        task = next((k for k in range(len(window) - 1, -1, -1) if window[k].asks and window[k].actor == "person"), -1)
        since = window[task + 1 :]
        told = next((k for k in range(len(since) - 1, -1, -1) if since[k].actor == "person" and since[k].fsig), None)
        if fresh and told is not None and (now := verdicts.failing_since(since[:told], since[told + 1 :])) is not None:
            return now
        if new:
            return fp.digest(fp.loose(new)), fp.readable(new[:300])
        last = (
            since[told]
            if told is not None
            else next((e for e in reversed(since) if e.verdict == "fail" and e.fsig), None)
        )
        if last is not None:
            return last.fsig, last.ftext
        return fp.digest(f"{said}\0{window[task].asks if task >= 0 else ''}"), said
    return fp.digest(fp.error_fingerprint(said) or fp.loose(said)), fp.readable(said)


def facts(turn: Turn, index: int, window: list[TurnFacts], fstate: Optional[dict[str, str]] = None) -> TurnFacts:
    """Comparable facts of ``turn``; ``window`` (earlier turns) decides whether its output is new."""
    shown = jobs.as_shown(turn, window)
    turn, job = shown.turn, shown.act
    kind = "person" if turn.actor == "person" else classify_tool(turn.tool, turn.args)
    command = given if isinstance(given := turn.args.get("command"), str) else ""
    if command and kind == "run" and (bare := outcomes.without_echo(command, turn.output)) is not turn.output:
        turn = turn.model_copy(update={"output": bare})
    failed = printed.failed(turn, kind, command or shown.piped or "")
    seen: set[str] = set().union(*(f.lines for f in window))  # every output line of the window
    unknown = outcomes.unknown_content(kind, turn.args, turn.output)
    sig, asig, out_digest, lines = _digests(turn, kind, index, unknown, job)
    new = [d for d in lines if d not in seen]
    paths = turn_paths(turn)
    step = shown.hung or _step(turn, kind, paths, sig, job)
    line, err = _error(turn, kind, step, window) if failed else (None, None)
    word, said_digest = verdicts.heard(turn.actor, turn.output, window)
    verdict, said = _outcome(turn, kind, failed, line, word, job, shown.checked, listing.unlisted(turn, step, window))
    tail = _tail(turn.output) if failed or verdict == "fail" else ""  # read once, for both of its readers
    fclass = fp.classify([tail]) if failed else None
    fsig, ftext = _signed(said if verdict == "fail" else None, window, turn, line, tail, word)
    edit, undo, whole = _edit_keys(turn, kind, paths)
    f = TurnFacts(
        i=index,
        tool=turn.tool,
        kind=kind,
        sig=sig,
        asig=asig,
        step=step,
        out=out_digest,
        lines=lines[-80:],
        novel=bool(new) and len(new) >= min(NOVEL_LINES, len(lines)),
        empty=not turn.output.strip() or bool(outcomes.NO_OUTPUT.match(turn.output[:80])),
        found_nothing=turn.actor == "agent" and outcomes.found_nothing(turn.output, kind, failed),
        failed=failed,
        err=err,
        etpl=fp.error_template(err, given_words(command, turn.args)) if err else None,
        etext=(fp.readable(line) or None) if line else (_unnamed(turn.output) if failed else None),
        fclass=fclass.name if fclass and fclass.name in catalog.SPECIFIC_CLASSES else None,
        paths=paths,
        fstate=fstate or whole,
        talk=bool(SELF_TALK.search(turn.thought)),
        score=turn.score if turn.score is not None else outcomes.score(turn.output, failed),
        fails=outcomes.failing_count(turn.output) if kind in _COUNTED else None,
        brief=_brief(turn, kind, failed, line, paths, job),
        actor=turn.actor,
        verdict=verdict,
        unknown=unknown,
        ts=_epoch(turn.ts),
        fsig=fsig,
        ftext=ftext,
        errs=_errs(turn, verdict, said),
        missing=_missing(line, turn.output) if failed or verdict == "fail" else None,
        edit=edit,
        undo=undo,
        **verdicts.voice(word, said_digest, lines, verdict, fsig, (asig, step), kind, window),
        **_effects(turn, kind, command, window, index, shown),
    )
    _follow(f, turn, command, window, len(new))
    return f


def _follow(f: TurnFacts, turn: Turn, command: str, window: list[TurnFacts], fresh: int) -> None:
    """The facts that follow from the rest: polls in a row, a command the person said not to run, progress."""
    f.polls, f.since, f.waited, f.prior = polls.count(turn, f, window, fresh)
    touched = [*f.paths, *f.writes] if f.edited else []
    f.defied = (
        person.defied(command, touched, window, turn.args) if (command or touched) and turn.actor == "agent" else None
    )
    f.reports = max(f.reports, 1) if f.defied else f.reports  # the person's no, said before it ran
    outputs: dict[str, set[str]] = {}
    for e in window:
        outputs.setdefault(e.sig, set()).add(e.out)
    f.prog = progress(f, window, outputs, fresh)


def _unnamed(output: str) -> str:
    """A failure no line names: its last line as a person reads it, else that it printed nothing."""
    last = outcomes.last_line(output)
    return fp.readable(last) if last else "failed with no output"


def _missing(line: Optional[str], output: str) -> Optional[str]:
    """What a failure says is missing: named by its cause line first (a shell's start-up noise may name another)."""
    return missing.missing(line or "") or missing.missing(output)


def _effects(
    turn: Turn, kind: Kind, command: str, window: list[TurnFacts], index: int, shown: jobs.Shown
) -> dict[str, Any]:
    """What a shell command did besides printing (files written, ``sed -i`` edits, a restart, a hang: a background check
    stopped while it hung too), its error lines (none cut by a filter), soon after a restart the error a run printed
    though it succeeded (a log tail showing the same 409 after each redeploy); the background job it concerns."""
    if kind not in ("run", "write") or not (command or shown.act):
        return {}
    restart = shellwork.restarts(command) or shown.act in ("start", "stop")
    # a job started or stopped prints the harness's own notice ("Successfully killed shell: ..."), never a log
    after = kind == "run" and shown.act not in ("start", "stop") and (restart or any(e.restart for e in window[-8:]))
    return {
        "writes": shellwork.writes(command),
        # (edit, undo) digests of its own ``sed -i 's/a/b/' f`` edits: undone by ``s/b/a/``, as a file tool's
        "swaps": [
            (fp.digest(f"{f}\0{a}\0{b}"), fp.digest(f"{f}\0{b}\0{a}")) for f, a, b in shellwork.substitutions(command)
        ]
        if "sed" in command
        else [],
        "restart": restart,
        "checkout": shellwork.checks_out(command),
        **(printed.measure(turn.output)._asdict() if kind == "run" else {}),
        "diags": printed.error_lines(turn.output) if kind == "run" and shellwork.whole_errors(command) else None,
        "piped": command if shown.act == "start" and shellwork.piped(command) else None,
        "hang": shown.hung is not None
        or (kind == "run" and outcomes.hung(turn.output, command, turn.exit_code) and not polls.waits(command)),
        "logerr": (logerr := readback.logged_error(turn.output) if after else None),
        "tail": readback.log_tail(turn.output, logerr, index) if logerr else [],
        "job": shown.ref,
        "check": shown.check,
    }
