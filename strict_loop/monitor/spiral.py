"""The spiral detector: pure decisions over a bounded window of per-turn facts.

``facts()`` (in ``novelty``) turns a raw turn into small comparable facts (digests,
error fingerprint, touched paths, the progress it made); ``SpiralDetector.evaluate``
looks at the window ending with the newest turn and returns every signal that
fires, one method per pattern (the error cycle lives in ``recurrence``; every signal is listed, with
its remedy, in ``catalog``). No I/O here: file content hashes, if any, are passed in by
the caller, and the window is whatever the caller keeps (its size is bounded,
so the cost of a turn does not grow with the length of the run).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Optional

from strict_loop.model.monitoring import Signal, SignalKind, TurnFacts
from strict_loop.model.settings import SpiralThresholds
from strict_loop.monitor import fingerprint as fp
from strict_loop.monitor import polls, readback, recurrence, verdicts
from strict_loop.monitor.calls import jobs
from strict_loop.monitor.calls.toolkinds import classify_tool, turn_paths
from strict_loop.monitor.novelty import facts
from strict_loop.monitor.recurrence import since_progress

__all__ = ["Signal", "SignalKind", "SpiralDetector", "TurnFacts", "classify_tool", "facts", "turn_paths"]

SAME_ERRORS = frozenset({"repeated_error", "error_cycle"})
"""Two views of the same failures: muting one (a person's resume) mutes both."""
_WINDOWS = tuple(name for name in SpiralThresholds.model_fields if name.endswith("_window"))
"""The thresholds that are windows (read once, not on every turn): the detector keeps the longest."""


def _since_written(w: list[TurnFacts]) -> list[TurnFacts]:
    """For a read, the turns since a file it reads was last written: reading back what was just written is a new
    look."""
    cur = w[-1]
    if cur.kind != "read" or not cur.paths:
        return w
    for k in range(len(w) - 2, -1, -1):
        if w[k].kind == "write" and set(w[k].paths) & set(cur.paths):
            return w[k + 1 :]
    return w


def _reset(last: Optional[TurnFacts]) -> str:
    return f" since turn {last.i} brought {last.prog}" if last is not None else ""


class SpiralDetector:
    """Signals of non-progress over a window of turn facts, one method per pattern."""

    def __init__(self, thresholds: SpiralThresholds | None = None) -> None:
        self.t = thresholds or SpiralThresholds()

    @property
    def window_size(self) -> int:
        t = self.t
        windows: list[int] = [getattr(t, name) for name in _WINDOWS]
        return max(*windows, 2 * t.max_cycle, t.monologue_turns, t.score_drops + 1)

    def evaluate(self, window: list[TurnFacts], muted: frozenset[str] = frozenset()) -> list[Signal]:
        """Every signal that fires on the newest turn of ``window`` (oldest first), minus ``muted`` kinds."""
        if not window or self._progressing(window):
            return []
        if muted & SAME_ERRORS:  # a person who let one view of an error pattern go on let the other go on too
            muted = muted | SAME_ERRORS
        checks: tuple[Callable[[list[TurnFacts]], Optional[Signal]], ...] = (
            self.person_reports,
            self.restart_loop,
            self.same_failure,
            self.identical_calls,
            self.rereads,
            self.nothing_found,
            self.equivalent_outcomes,
            self.no_effect,
            self.error_cycle,
            self.repeated_error,
            self.file_oscillation,
            self.alternation,
            self.monologue,
            self.error_rate,
            self.self_diagnosis,
            self.score_drop,
        )
        if window[-1].polls:  # waiting on a running job is judged by how long, never as a repeated attempt
            checks = (self.restart_loop, self.stalled_poll)
        found: list[Signal] = []
        for check in checks:
            signal = check(window)
            if signal is not None and signal.kind not in muted and all(s.kind != signal.kind for s in found):
                found.append(signal)  # a kind once: two readings of one pattern (a call repeated, reads repeated)
        return found

    # -- progress that suppresses every signal ------------------------------------------

    def _progressing(self, w: list[TurnFacts]) -> bool:
        cur = w[-1]
        return cur.prog in recurrence.FELL

    # -- one method per pattern -----------------------------------------------------------

    def identical_calls(self, w: list[TurnFacts]) -> Optional[Signal]:
        """The identical call again and again, with nothing new coming back since the last time it did."""
        cur = w[-1]
        if cur.kind in ("message", "person") or cur.prog is not None or (cur.empty and not cur.failed):
            return None
        same, last = since_progress([f for f in _since_written(w[-self.t.identical_window :]) if f.sig == cur.sig])
        if len(same) < self.t.identical_repeats:
            return None
        if cur.kind != "write" and any(f.novel for f in same[1:]):
            return None
        return Signal(
            kind="identical_calls",
            turns=[f.i for f in same],
            evidence=f"the identical call was made {len(same)} times in the last {self.t.identical_window} "
            f"turns{_reset(last)}, "
            f"with nothing new coming back: {cur.brief}",
        )

    def rereads(self, w: list[TurnFacts]) -> Optional[Signal]:
        """The same reads and searches again, each with the same result, nothing run or changed (``recurrence``)."""
        loop = recurrence.rereads(w, self.t.reread_repeats, self.t.reread_window)
        return Signal(kind="identical_calls", turns=loop.turns, evidence=loop.evidence) if loop else None

    def nothing_found(self, w: list[TurnFacts]) -> Optional[Signal]:
        """Lookups that keep finding nothing: looking in the wrong place (``recurrence.found_nothing``)."""
        loop = recurrence.found_nothing(w, self.t.dry_repeats, self.t.dry_window)
        return Signal(kind="nothing_found", turns=loop.turns, evidence=loop.evidence) if loop else None

    def equivalent_outcomes(self, w: list[TurnFacts]) -> Optional[Signal]:
        cur = w[-1]
        if cur.kind in ("message", "person") or cur.novel or cur.prog is not None or (cur.empty and not cur.failed):
            return None
        recent = recurrence.after_last(w[-self.t.equivalent_window :], lambda f: f.checkout)
        if not recent:
            return None  # it checked out another revision: what it runs now is other code
        same, last = since_progress([f for f in _since_written(recent) if f.asig == cur.asig and f.out == cur.out])
        if len(same) < self.t.equivalent_repeats:
            return None
        return Signal(
            kind="equivalent_outcomes",
            turns=[f.i for f in same],
            evidence=f"{len(same)} equivalent actions with the same outcome (differing only in noise){_reset(last)}: "
            f"{cur.brief}",
        )

    def no_effect(self, w: list[TurnFacts]) -> Optional[Signal]:
        """Changes that do not move what the agent measures (``recurrence.unmoved``)."""
        loop = recurrence.unmoved(w, self.t.unmoved_repeats, self.t.unmoved_window, self.t.unmoved_tolerance)
        return Signal(kind="no_effect", turns=loop.turns, evidence=loop.evidence) if loop else None

    def error_cycle(self, w: list[TurnFacts]) -> Optional[Signal]:
        """One failing step retried with varied arguments, its errors coming back in a cycle (see ``recurrence``)."""
        cycle = recurrence.error_cycle(w, self.t.command_window)
        if cycle is None:
            return None
        return Signal(kind="error_cycle", turns=cycle.turns, evidence=cycle.evidence, failure_class=cycle.failure_class)

    def repeated_error(self, w: list[TurnFacts]) -> Optional[Signal]:
        """The same error again and again while the agent varies what it does.

        Two ways to see it: the same error (or specific failure class) several times within
        a short window, or one command failing the same way on each of its last runs.
        Only what came after the last turn that made progress counts.
        """
        cur = w[-1]
        if not cur.failed or (cur.err is None and cur.fclass is None):
            return None
        gone = self._missing_again(w)
        if gone is not None:
            return gone

        def same_error(f: TurnFacts) -> bool:
            if not f.failed:
                return False
            if (cur.err is not None and f.err == cur.err) or (cur.fclass is not None and f.fclass == cur.fclass):
                return True
            # The same command failing alike with other details (a module, a path), or one step but for the name tried.
            same_step = f.sig == cur.sig and cur.etpl is not None and f.etpl == cur.etpl
            return same_step or recurrence.guessed(f, cur) or recurrence.told_alike(f, cur)

        failing = self._failing_runs(w, same_error)
        if failing is not None:
            return failing
        recent = w[-self.t.error_window :]
        classed = cur.fclass is not None and sum(f.fclass == cur.fclass for f in recent) >= self.t.error_repeats
        known = cur.err in {f.err for f in w[:-1]} or any(
            recurrence.guessed(f, cur) or recurrence.told_alike(f, cur) for f in w[:-1]
        )
        if cur.novel and not known and not classed:
            return None  # news, unless only the details (or name tried) of a known error changed, or its class recurs
        # A success of the same kind of action (an accepted edit; the failing step, or a check, passing) means things
        # moved; another command succeeding (a cache cleared, a version printed) does not.
        ok = [
            k
            for k, f in enumerate(recent)
            if (f.kind == cur.kind and not f.failed and (f.kind != "run" or f.step == cur.step or f.verdict == "pass"))
            or f.prog in recurrence.FELL
        ]
        recent = recent[ok[-1] + 1 :] if ok else recent
        same = since_progress([f for f in recent if same_error(f)])[0]
        # When nothing at all succeeded since the error first came back, one repeat less may be enough.
        since = [f for f in recent if f.i >= same[0].i] if same else []
        relaxed = self.t.error_relax and since and all(f.failed for f in since)
        if len(same) < (self.t.error_repeats - 1 if relaxed else self.t.error_repeats):
            return None
        actions = len({f.sig for f in same})
        if cur.fclass and len({f.err for f in same}) > 1:
            what = f"the same failure class ({cur.fclass})"
        else:  # the same fingerprint; its line as said, or (its numbers, names or paths moved) as said last
            what = f"the same error{'' if len({f.etext for f in same}) == 1 else ' with other details'} ({cur.etext})"
        return Signal(
            kind="repeated_error",
            turns=[f.i for f in same],
            failure_class=cur.fclass,
            evidence=f"{what} {len(same)} times through {actions} different action(s)",
        )

    def _missing_again(self, w: list[TurnFacts]) -> Optional[Signal]:
        """The same thing missing again and again through varied actions (``recurrence.missing_again``)."""
        gone = recurrence.missing_again(w, self.t.error_repeats - 1, self.t.command_window)
        if gone is None:
            return None
        return Signal(kind="repeated_error", turns=gone[0], failure_class=w[-1].fclass, evidence=gone[1])

    def _failing_runs(self, w: list[TurnFacts], same_error: Callable[[TurnFacts], bool]) -> Optional[Signal]:
        """One command failing the same way on each of its last runs (``recurrence.failing_runs``)."""
        found = recurrence.failing_runs(w, same_error, self.t.command_repeats, self.t.command_window)
        if found is None:
            return None
        return Signal(kind="repeated_error", turns=found[0], failure_class=w[-1].fclass, evidence=found[1])

    def file_oscillation(self, w: list[TurnFacts]) -> Optional[Signal]:
        """An edit undone again and again (the first revert is a correction; the second is going back and forth), or
        edit/view churn on one file while the agent says it is going wrong."""
        cur = w[-1]
        if not cur.edited:
            return None
        back = recurrence.reverted(w, self.t.oscillation_reverts)
        if back is not None:
            path, writes, reverts = back
            return Signal(
                kind="file_oscillation",
                turns=[f.i for f in writes if f.i >= reverts[0].i - 1 or f in reverts],
                evidence=f"{path or 'the file'} was put back to an earlier version {len(reverts)} times "
                f"(turns {', '.join(str(f.i) for f in reverts)}), undoing its own edits",
            )
        recent = w[-self.t.churn_window :]
        for path in cur.paths:
            touching = [f for f in recent if path in f.paths]
            edits = [f for f in touching if f.kind == "write"]
            views = [f for f in touching if f.kind == "read"]
            runs = [f for f in recent if f.kind == "run" and f.i > touching[0].i]
            talk = sum(f.talk for f in touching)
            if len(edits) >= self.t.churn_edits and views and not runs and talk >= 2:
                return Signal(
                    kind="file_oscillation",
                    turns=[f.i for f in touching],
                    evidence=f"edit/view churn on {path}: {len(edits)} edits and {len(views)} views in {len(recent)} "
                    "turns, "
                    f"with the agent saying it is going wrong",
                )
        return None

    def same_failure(self, w: list[TurnFacts]) -> Optional[Signal]:
        """A check failing the same way after each of several different edits: the edits are attempts that achieve
        nothing. Counted back to the last passing check (or falling failure count, rising score); a different failure in
        between does not reset it, since the old one came back. A command that is no check (a deploy, ``terraform
        plan``, a script) counts by its step and error line until it succeeds, with one repeat more: a reproduction
        failing the same way while the agent works on it is ordinary debugging."""
        cur = w[-1]
        step_run = cur.verdict is None and cur.kind == "run" and cur.failed and cur.err is not None
        if cur.refused or ((cur.verdict != "fail" or cur.fsig is None) and not step_run):
            return None
        remote = readback.ci_failure(cur.ftext)  # a CI run's cycle (push, wait, read) is long
        same = recurrence.same_failures(w, step_run, self.t.remote_window if remote else self.t.failure_window)
        edits = [f for f in w if same[0].i < f.i <= cur.i and f.edited and f.actor == "agent"]
        tried = [a for a, b in zip(same, same[1:], strict=False) if any(a.i < e.i <= b.i for e in edits)]
        if len(tried) + 1 < self.t.failure_repeats + step_run:
            return None  # the same failure read twice with no edit between (a CI run's two views) is one check
        if len({f.asig for f in edits}) < self.t.failure_edits:
            return None
        paths = list(dict.fromkeys(p for f in edits for p in f.paths))
        where = f" to {', '.join(paths[:3])}{' and more' if len(paths) > 3 else ''}" if paths else ""
        named = (jobs.check_start(w, cur.job) or cur).action[:80]  # read back from the background: the command run
        who = (
            "the person reported the same failure"
            if all(f.actor == "person" or f.quote for f in same)  # or in the feedback a harness hands back
            else (f"{fp.code(named)} failed the same way" if cur.actor == "agent" else "the check failed the same way")
        )
        return Signal(
            kind="same_failure",
            turns=[f.i for f in same],
            failure_class=cur.fclass,
            evidence=f"{who} {len(same)} times ({cur.ftext or cur.etext}) while {len(edits)} edit(s){where} between "
            "them did not change it",
        )

    def person_reports(self, w: list[TurnFacts]) -> Optional[Signal]:
        """The person says it still fails after the agent's attempts (``verdicts.reports``)."""
        said = verdicts.reports(w, self.t.person_repeats, self.t.person_window)
        return Signal(kind="person_reports", turns=said[0], evidence=said[1]) if said else None

    def restart_loop(self, w: list[TurnFacts]) -> Optional[Signal]:
        """A restart or redeploy loop with an unchanged outcome, or a step that hangs on every rerun (``restarts``)."""
        t = self.t
        loop = (
            recurrence.restart_loop(w, t.restart_repeats, t.command_window)
            or recurrence.hang_loop(w, t.restart_repeats, t.command_window)
            or recurrence.watched_failure(w, t.restart_repeats + 1, t.command_window)
        )
        return Signal(kind="restart_loop", turns=loop.turns, evidence=loop.evidence) if loop else None

    def stalled_poll(self, w: list[TurnFacts]) -> Optional[Signal]:
        """Looking again and again at what runs or is awaited, with nothing new (``polls.stalled``): wait advice."""
        stall = polls.stalled(w, self.t)
        return (
            Signal(kind="stalled_poll", turns=stall.turns, escalate=stall.escalate, evidence=stall.evidence)
            if stall
            else None
        )

    def alternation(self, w: list[TurnFacts]) -> Optional[Signal]:
        """A-B-A-B or A-B-C-A-B-C: the same cycle of (loosely equal) actions twice, the second time with nothing new."""
        for period in range(2, self.t.max_cycle + 1):
            rounds = max(2, -(-6 // period))  # A-B-A-B-A-B: a short cycle only after it spans six steps
            if len(w) < rounds * period:
                break
            last, prev = w[-period:], w[-rounds * period : -period]
            if len({f.asig for f in last}) < 2:
                continue
            if all(a.asig == b.asig for a, b in zip(prev, last * (rounds - 1), strict=True)) and not any(
                (f.novel and f.kind != "write") or f.prog is not None for f in prev[period:] + last
            ):
                cycle = " -> ".join(f.tool for f in last)
                return Signal(
                    kind="alternation",
                    turns=[f.i for f in prev + last],
                    evidence=f"a {period}-step cycle ({cycle}) repeated without new information",
                )
        return None

    def monologue(self, w: list[TurnFacts]) -> Optional[Signal]:
        n = self.t.monologue_turns
        tail = w[-n:]
        if len(tail) == n and all(f.kind == "message" for f in tail):
            return Signal(
                kind="monologue", turns=[f.i for f in tail], evidence=f"{n} turns in a row without a tool call"
            )
        return None

    def error_rate(self, w: list[TurnFacts]) -> Optional[Signal]:
        recent = w[-self.t.error_rate_window :]
        if len(recent) < self.t.error_rate_window or not recent[-1].failed:
            return None
        failed = [f for f in recent if f.failed]
        progress = [f for f in recent if f.novel and f.kind != "write"]  # new information, even from a failing command
        if len(failed) >= self.t.error_rate * len(recent) and len(progress) <= 1:
            return Signal(
                kind="error_rate",
                turns=[f.i for f in failed],
                evidence=f"{len(failed)} of the last {len(recent)} turns failed and none moved forward",
            )
        return None

    def self_diagnosis(self, w: list[TurnFacts]) -> Optional[Signal]:
        """The agent admits trouble repeatedly, and nothing new came back meanwhile (an admission followed by a fix is
        healthy)."""
        recent = w[-self.t.self_talk_window :]
        talk = [f for f in recent if f.talk]
        if len(talk) < self.t.self_talk_hits or not recent[-1].talk:
            return None
        if any(f.novel and f.kind in ("run", "read", "search") for f in recent):
            return None
        if not any(talk[0].i < f.i < talk[-1].i and f.edited for f in recent):
            return None  # saying it twice while looking is one admission; saying it again after a fix is a spiral
        return Signal(
            kind="self_diagnosis",
            turns=[f.i for f in talk],
            evidence=f"the agent said it is going wrong in {len(talk)} of the last {len(recent)} turns, with nothing "
            "new coming back",
        )

    def score_drop(self, w: list[TurnFacts]) -> Optional[Signal]:
        scores = [(f.i, f.score) for f in w if f.score is not None][-(self.t.score_drops + 1) :]
        if len(scores) == self.t.score_drops + 1 and all(b[1] < a[1] for a, b in zip(scores, scores[1:], strict=False)):
            trail = " -> ".join(f"{s:g}" for _, s in scores)
            return Signal(
                kind="score_drop",
                turns=[i for i, _ in scores],
                evidence=f"verifier score fell {self.t.score_drops} times in a row ({trail})",
            )
        return None
