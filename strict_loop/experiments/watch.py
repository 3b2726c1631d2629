"""``strict-loop watch``: run a long experiment, read its progress, repair known failures within budgets, escalate the
rest.

Why: a training job that dies at 3 a.m. of a CUDA OOM should come back at half the batch size, and one
that dies of something nobody foresaw should wake a person, not a script that guesses. The decisions
are pure (``failures`` names the failure, ``remedies`` picks the fix); this module does the I/O: it runs
the job (``jobrun``), records each failure as a monitor turn (so the spiral detector sees a job failing
the same way after each fix), each remedy as a round, and an escalation as a pause with an alert,
exactly as the progress monitor pauses a task. Nothing read from the job's output is ever executed.
"""

from __future__ import annotations

import os
import shlex
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Optional

from strict_loop.base import masking, timefmt
from strict_loop.base.errors import LoopError
from strict_loop.base.interrupts import StopSignals
from strict_loop.experiments import joblog, remedyio
from strict_loop.experiments.failures import KINDS, Failure, Repeats, classify
from strict_loop.experiments.joblog import JobProgress
from strict_loop.experiments.jobrun import RunOutcome, run_job
from strict_loop.experiments.remedies import Decision, RemedyState, WatchSettings, decide, substitute
from strict_loop.loop.monitoring import TaskMonitor
from strict_loop.loop.workspace import Workspace
from strict_loop.model.monitoring import Signal
from strict_loop.model.validation import validate_input
from strict_loop.monitor import ladder
from strict_loop.supervisor.heartbeat import Heartbeat, clock
from strict_loop.supervisor.lock import SupervisorLock
from strict_loop.supervisor.orphans import ChildRecord
from strict_loop.telemetry import export

EXIT_OK = 0
EXIT_BAD_INPUT = 2
EXIT_LIMIT = 3
"""--max-runs or --timeout reached while the job still fails (or runs)."""
EXIT_ESCALATED = 5
"""The task was paused and a person alerted: an unknown failure, no remedy left, or the same failure again and again."""
SAME_FAILURE_RUNS = 3
"""Runs in a row that fail the same way with the same variables (a retry that changes nothing) before a person is
asked: the job's own spiral, judged from its runs (the agent's monitor never sees them)."""


@dataclass
class WatchResult:
    exit_code: int
    outcome: str
    """succeeded, escalated, limit, interrupted, or failed (a run could not start: the error is raised after
    ``watch.finished`` is recorded)"""
    runs: int
    reason: str
    failures: list[str] = field(default_factory=list)
    remedies: list[str] = field(default_factory=list)
    logs: list[str] = field(default_factory=list)


class _Beat(Heartbeat):
    """The supervisor's heartbeat, counting steps of the current run instead of rounds."""

    def __init__(self, watch: Watch, stream: IO[str]) -> None:
        self.watch = watch  # before the base starts the bar, which asks bar_spec
        super().__init__(watch.store, watch.view, watch.settings.heartbeat_s, stream)

    def bar_spec(self) -> tuple[str, Optional[int], int]:
        return f"{self.watch.store.task_id} steps", self.watch.settings.total_steps, 0

    def compose(self, state: Any, elapsed_s: float, invocation: int) -> tuple[str, Optional[int]]:
        w, p = self.watch, self.watch.progress
        total = w.settings.total_steps
        rate, eta = timefmt.rate_and_eta(p.step, w.first_step, time.monotonic() - w.run_started, total)
        where = joblog.describe(p, w.settings.metric, total)
        line = (
            f"[watch] {w.store.task_id} | run {invocation}/{w.settings.max_runs} | {where} | elapsed "
            f"{clock(elapsed_s)} | {rate:.2f} steps/s | ETA {clock(eta) if eta is not None else 'unknown'}"
        )
        return line, p.step


class Watch:
    """One ``strict-loop watch`` of ``argv`` for task ``task_id``; ``run()`` returns a :class:`WatchResult`."""

    def __init__(
        self,
        workspace: str | Path,
        task_id: str,
        argv: list[str],
        settings: Optional[Mapping[str, Any] | WatchSettings] = None,
        *,
        env: Optional[Mapping[str, str]] = None,
        stream: Optional[IO[str]] = None,
    ) -> None:
        if not argv or not all(isinstance(a, str) and a for a in argv):
            raise LoopError(
                "watch.command",
                "no command given",
                "put the job's command after --, e.g. strict-loop watch --task-id T -- python train.py",
            )
        self.ws = Workspace(workspace)
        self.store = self.ws.task_store(task_id)
        self.root = self.ws.root
        self.settings = (
            settings
            if isinstance(settings, WatchSettings)
            else validate_input(WatchSettings, dict(settings or {}), "watch")
        )
        self.argv, self.command = list(argv), shlex.join(argv)
        self.env = dict(os.environ if env is None else env)
        self.stream = stream if stream is not None else sys.stderr
        self.progress, self.run_started = JobProgress(), time.monotonic()
        self.first_step: Optional[int] = None  # the first step this run reported (for the rate)
        self.signals = StopSignals()
        self._heart: Optional[_Beat] = None
        self._run = 0
        self._pending: Optional[tuple[int, Failure, Decision, RunOutcome]] = None
        self._result = WatchResult(EXIT_LIMIT, "limit", 0, "")
        self.children = ChildRecord(self.store.paths.root / "watch")

    def view(self) -> Any:
        return TaskMonitor(self.store, self.root).view()

    def run(self) -> WatchResult:
        """Run the job until it succeeds, escalates, reaches a limit or we get SIGINT/SIGTERM (its group is killed)."""
        sup = TaskMonitor(self.store, self.root)
        export.start(self.root)  # the loop's telemetry, when configured (drained in the background)
        if sup.paused():
            raise LoopError(
                "watch",
                f"task '{self.store.task_id}' is paused by the progress monitor",
                f"a person answers the pause first: {ladder.resume_command(self.root, self.store.task_id)}",
            )
        if self.store.load().status == "completed":  # its remedies could not be recorded as rounds
            raise LoopError(
                "watch.task_id",
                f"task '{self.store.task_id}' is completed",
                "watch the job for a running task (init_state a new one)",
            )
        lock = SupervisorLock(self.store.paths.supervisor, self.store.task_id, "watch.task_id")
        lock.acquire("watch", None)  # one supervise or watch per task: never two copies of a job side by side
        try:
            return self._locked_run()
        finally:
            lock.release()

    def _locked_run(self) -> WatchResult:
        orphan = self.children.reap()  # the job a watch killed with -9 left running: never two at once
        if orphan:
            print(f"[watch] killed the job a killed watch left running (group {orphan['pgid']})", file=self.stream)
        self.signals.install()
        self._heart = _Beat(self, self.stream)
        failed: Optional[LoopError] = None
        try:
            self._event(
                "watch.started",
                f"watching: {self.command[:300]}",
                {"command": self.command, "settings": self.settings.model_dump(), "killed_orphan": orphan},
            )
            try:
                result = self._loop()
            except LoopError as exc:  # e.g. a program that does not exist: the watch that started also finishes
                failed = exc
                result = self._end(self._result, EXIT_BAD_INPUT, "failed", str(exc))
        finally:
            self._heart.close()
            self.signals.restore()
        self._finished(result)
        if failed is not None:
            raise failed
        return result

    def _finished(self, result: WatchResult) -> None:
        self._event(
            "watch.finished",
            f"watch {result.outcome} after {result.runs} run(s): {result.reason[:300]}",
            {
                "outcome": result.outcome,
                "exit_code": result.exit_code,
                "runs": result.runs,
                "failures": result.failures,
                "remedies": result.remedies,
            },
        )

    def _loop(self) -> WatchResult:
        s, state = self.settings, RemedyState.first(self.settings)
        deadline = time.monotonic() + s.timeout_s if s.timeout_s else None
        result, self._pending, repeats = WatchResult(EXIT_LIMIT, "limit", 0, ""), None, Repeats()
        self._result = result  # what is known so far, should a run fail to start
        while result.runs < s.max_runs:
            self._run = result.runs = result.runs + 1
            variables = state.variables(s)
            env = {**masking.command_env(self.env), **variables}
            outcome = self._run_once(substitute(self.argv, variables), env, deadline)
            result.logs.append(str(outcome.log))
            if outcome.stopped == "signal":
                return self._interrupted(result)
            if outcome.stopped == "timeout":
                return self._end(result, EXIT_LIMIT, "limit", f"--timeout {s.timeout_s:g}s reached; the job was killed")
            if outcome.returncode == 0 and not (outcome.progress.nonfinite or outcome.progress.diverged):
                self._record_run(outcome, None)
                self._settle(outcome, None, succeeded=True)
                return self._end(result, EXIT_OK, "succeeded", f"the job succeeded (run {result.runs})")
            failure = classify(
                outcome.returncode,
                outcome.tail,
                nonfinite=outcome.progress.nonfinite,
                diverged=outcome.progress.diverged,
            )
            result.failures.append(failure.kind)
            print(f"[watch] run {result.runs} failed: {failure.summary()}", file=self.stream, flush=True)
            self._record_run(outcome, failure)
            self._settle(outcome, failure)
            if repeats.again(failure, variables) >= SAME_FAILURE_RUNS:
                why = f"the same failure {SAME_FAILURE_RUNS} runs in a row with nothing changed between them"
                return self._escalate(result, failure, why)
            decision = decide(failure, s, state, remedyio.newest_checkpoint(self.root, self.settings.checkpoint_dir))
            if decision.remedy is None:
                return self._escalate(result, failure, decision.reason)
            if result.runs >= s.max_runs:
                return self._end(
                    result, EXIT_LIMIT, "limit", f"--max-runs {s.max_runs} reached; last failure: {failure.summary()}"
                )
            problem = remedyio.apply(decision, self.settings, self.root, self.signals, self.stream, deadline)
            if self.signals.signum is not None:
                return self._interrupted(result)
            if deadline is not None and time.monotonic() >= deadline:
                why = f"--timeout {s.timeout_s:g}s reached during the {decision.remedy} wait; the job was not run again"
                return self._end(result, EXIT_LIMIT, "limit", why)
            if problem:
                return self._escalate(result, failure, problem)
            self._announce(result.runs, failure, decision, outcome)
            result.remedies.append(decision.remedy)
            state = decision.state
        return result

    def _run_once(self, argv: list[str], env: dict[str, str], deadline: Optional[float]) -> RunOutcome:
        folder = self.store.paths.root / "watch"
        folder.mkdir(exist_ok=True)
        numbers = [int(p.stem[4:]) for p in folder.glob("run-*.log") if p.stem[4:].isdigit()]
        log = folder / f"run-{max(numbers, default=0) + 1:04d}.log"
        self.progress, self.first_step, self.run_started = JobProgress(), None, time.monotonic()
        try:
            outcome = run_job(argv, self.root, env, log, self.settings, deadline, self._tick, self.children.started)
        finally:
            self.children.ended()
        self.progress = outcome.progress
        assert self._heart is not None
        self._heart.beat(self._run, force=True)  # where the run got to, whatever its end
        return outcome

    def _tick(self, progress: JobProgress) -> Optional[str]:
        """While the job runs: keep its progress for the heartbeat, beat when due; 'signal' once we got one."""
        if self.signals.signum is not None:
            return "signal"
        if self.first_step is None and progress.step is not None:
            self.first_step = progress.step
        self.progress = progress
        assert self._heart is not None
        self._heart.beat(self._run)
        return None

    # ------------------------------------------------------------------ recording

    def _event(self, kind: str, message: str, data: dict[str, Any]) -> None:
        both: list[Any] = [message, data]
        message, data = masking.mask_tree(both, self.env)
        with self.store.locked():
            self.store.append_event(kind, message, data)

    def _record_run(self, outcome: RunOutcome, failure: Optional[Failure]) -> None:
        """The run as the job's own event (``watch.run``), never an agent turn: re-running a job is not an agent
        repeating itself, and its failure is classified from this run alone."""
        p = outcome.progress
        self._event(
            "watch.run",
            f"watch run {self._run}: " + (failure.summary()[:300] if failure else "succeeded"),
            {
                "run": self._run,
                "command": self.command,
                "exit_code": outcome.returncode,
                "failure": failure.kind if failure else None,
                "summary": failure.summary() if failure else joblog.describe(p, self.settings.metric),
                "duration_s": outcome.duration_s,
                "bad_metrics_lines": p.bad_lines,
                "log": os.path.relpath(outcome.log, self.root),
            },
        )

    def _announce(self, run: int, failure: Failure, decision: Decision, outcome: RunOutcome) -> None:
        """A remedy is a round of the task: announced now, recorded once the next run shows whether it worked."""
        self.ws.append_event(
            task_id=self.store.task_id,
            kind="round.started",
            message=f"watch: run {run} failed ({failure.kind}); applying {decision.remedy}",
            data={"remedy": decision.remedy, "failure": failure.kind},
        )
        self._pending = (run, failure, decision, outcome)

    def _settle(self, outcome: RunOutcome, failure: Optional[Failure], *, succeeded: bool = False) -> None:
        """Record the round of the remedy before this run (progress when the job then finished, or failed otherwise);
        a success without one is a round of its own. A success runs the stop checks: goal_met completes the task."""
        command = masking.mask(self.command, self.env)  # update_state stores what it is given
        log = f"log: {os.path.relpath(outcome.log, self.root)}"
        seen = f"run {self._run} of `{command[:500]}` " + (
            "succeeded" if succeeded else f"exited {outcome.returncode}: {failure.summary() if failure else ''}"
        )
        if self._pending is None:
            if succeeded:
                self._record_round(
                    f"watch: the job succeeded (run {self._run})",
                    "the job ran to the end",
                    seen,
                    "made",
                    [log],
                    checks=True,
                    announce=True,
                )
            return
        before = self._pending[1]
        worked = succeeded or (failure is not None and failure.kind != before.kind)
        self._record_remedy(f"after it, {seen}", "made" if worked else "none", log, checks=succeeded)

    def _record_remedy(self, verification: str, progress: str, log: str, *, checks: bool) -> None:
        """The round of the remedy announced before (``_pending``), now that what it did is known (or is not)."""
        assert self._pending is not None
        run, before, decision, _ = self._pending
        self._pending = None
        self._record_round(
            f"watch: {decision.remedy} after {before.title} (run {run})",
            f"{decision.remedy}: {decision.reason}",
            verification,
            progress,
            [log],
            checks=checks,
            announce=False,
        )

    def _record_round(
        self,
        task: str,
        result: str,
        verification: str,
        progress: str,
        evidence: list[str],
        *,
        checks: bool,
        announce: bool,
    ) -> None:
        if announce:
            self.ws.append_event(task_id=self.store.task_id, kind="round.started", message=task[:500])
        self.ws.update_state(
            task_id=self.store.task_id,
            task=task,
            result_summary=result,
            verification_summary=verification,
            progress=progress,
            skip_checks=not checks,
            evidence=evidence,
        )

    def _escalate(self, result: WatchResult, failure: Failure, reason: str) -> WatchResult:
        """Pause the task as the progress monitor does (ladder.json, spiral.paused, the status line) and alert a
        person."""
        sup = TaskMonitor(self.store, self.root)
        kind = KINDS[failure.kind]
        diag = f"strict-loop watch: {failure.summary()}. {reason}."
        with self.store.locked():
            mon = sup.load()
            turn = max(0, mon.turns - 1)
            mon = ladder.paused(mon, turn, [Signal(kind="job_failure", turns=[], evidence=diag[:600])])
            sup.save(mon, sync=True)
            alert = sup.record_pause(
                mon,
                diag,
                [f"run {i + 1}: {k}" for i, k in enumerate(result.failures)][-5:],
                f"{kind.advice}; then {ladder.resume_command(self.root, self.store.task_id)}",
                f"paused by watch: {diag[:500]}",
                {"source": "watch", "failure": failure.kind, "details": failure.details},
            )
        sup.raise_alert(alert, self.env)
        return self._end(result, EXIT_ESCALATED, "escalated", f"{failure.summary()}; {reason}")

    def _end(self, result: WatchResult, code: int, outcome: str, reason: str) -> WatchResult:
        if self._pending is not None:  # a remedy announced, then the watch ended before the job showed its effect
            log = f"log: {os.path.relpath(self._pending[3].log, self.root)}"
            self._record_remedy(f"not known: {reason[:300]}", "none", log, checks=False)
        result.exit_code, result.outcome, result.reason = code, outcome, reason
        return result

    def _interrupted(self, result: WatchResult) -> WatchResult:
        reason = f"{self.signals.name()}: the job's process group was killed"
        return self._end(result, self.signals.exit_code(), "interrupted", reason)
