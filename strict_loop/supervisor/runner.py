"""The unattended supervisor: re-invoke Codex, Claude Code or Hermes from disk until the stop rules say stop.

Each invocation: a prompt built from disk, the harness run headless (``headless.wiring``), its stream
parsed as it arrives and each tool call recorded as a turn (unless a hook recorded it already), so
the progress monitor sees every call. Then the stop checks, the budgets (``budgets.decide``) and the
monitor decide whether to go on. Everything it knows is on disk: a supervisor killed at any point
is restarted with the same command and continues (the invocation counter, the session to resume).
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Optional, cast

from strict_loop.alerts import outbox
from strict_loop.base.errors import LoopError
from strict_loop.base.fsio import atomic_write
from strict_loop.base.interrupts import StopSignals
from strict_loop.base.masking import mask_tree, mask_with, secret_values
from strict_loop.base.timefmt import now_iso
from strict_loop.harness import registry
from strict_loop.headless.streambase import Outcome, StreamAdapter, ToolCall, signed_out
from strict_loop.headless.streams import adapter_for
from strict_loop.headless.wiring import Wiring, find_binary, read_usage, wire
from strict_loop.loop.monitoring import TaskMonitor
from strict_loop.loop.workspace import Workspace
from strict_loop.storage.store import TaskStore
from strict_loop.supervisor import limits
from strict_loop.supervisor.budgets import (
    EXIT_BAD_INPUT,
    EXIT_PAUSED,
    Decision,
    SupervisorSettings,
    Tally,
    decide,
    rounds_left,
)
from strict_loop.supervisor.callqueue import CallQueue
from strict_loop.supervisor.heartbeat import Heartbeat
from strict_loop.supervisor.invocation import KILL_GRACE_S, ChildResult, run_child
from strict_loop.supervisor.journal import (
    RECENT_EVENTS,
    MaskedWriter,
    invocation_data,
    limit_alert,
    next_invocation,
    not_signed_in,
    pause_alert,
    refuse_to_start,
    settings_for,
    stderr_tail,
)
from strict_loop.supervisor.lock import SessionFile, SupervisorLock
from strict_loop.supervisor.orphans import ChildRecord
from strict_loop.supervisor.prompt import build_prompt
from strict_loop.supervisor.scratch import new_scratch, sweep
from strict_loop.telemetry import export

PAUSE_POLL_S = 0.3
"""How often a running child's task is checked for a pause its hooks recorded (monitor.json, a small read)."""


@dataclass(frozen=True)
class SupervisorResult:
    """How a supervisor run ended: the exit code the CLI returns and why."""

    exit_code: int
    action: str  # stop, pause, fail, limit, interrupted, refused
    reason: str
    invocations: int  # launched by this run
    rounds: int  # the task's rounds recorded when it ended
    cost_usd: float = 0.0


class Supervisor:
    """One supervisor for one task of one workspace; ``run()`` drives it to an end and returns a SupervisorResult."""

    def __init__(
        self,
        workspace: str | Path,
        task_id: str,
        harness: str,
        *,
        settings: Optional[SupervisorSettings] = None,
        model: Optional[str] = None,
        harness_bin: Optional[str] = None,
        extra_args: Sequence[str] = (),
        env: Optional[Mapping[str, str]] = None,
        stderr: Optional[IO[str]] = None,
        kill_grace_s: float = KILL_GRACE_S,
        overrides: Optional[Mapping[str, Any]] = None,
        mcp: bool = True,
        http_hooks: bool = True,
    ) -> None:
        """``settings``: every budget; else the contract's ``unattended`` budgets, then ``overrides`` (e.g. CLI flags),
        then defaults."""
        if harness not in registry.names():
            raise LoopError(
                "supervise.harness", f"unknown harness {harness!r}", f"use one of {', '.join(registry.names())}"
            )
        self.ws = Workspace(workspace)
        self.root = self.ws.root
        self.store: TaskStore = self.ws.task_store(task_id)
        if not self.store.exists():
            raise LoopError(
                "supervise.task_id",
                f"no task '{task_id}' in {self.root}",
                "create it with strict-loop init_state first",
            )
        self.task_id, self.harness, self.model = self.store.task_id, harness, model
        self.settings = settings or settings_for(self.store, overrides or {})
        self.env = dict(os.environ if env is None else env)
        self.secrets = secret_values(self.env)  # masked in every file written (the child's output echoes them)
        self.binary = find_binary(harness, harness_bin, self.env)
        self.extra_args = list(extra_args)
        self.stderr = stderr if stderr is not None else sys.stderr
        self.kill_grace_s = kill_grace_s
        self.mcp, self.http_hooks = mcp, http_hooks  # http_hooks off: Claude's hooks are commands (``wire``)
        self.folder = self.store.paths.supervisor
        self.lock = SupervisorLock(self.folder, self.task_id)
        self.sessions = SessionFile(self.folder, harness, self.task_id)
        self.children = ChildRecord(self.folder, kill_grace_s)
        self.tally = Tally()
        self.launched = 0
        self.signals = StopSignals()
        self._heart: Optional[Heartbeat] = None
        self._invocation = 0
        self._rounds_checked = self._paused_checked = 0.0
        self.calls = CallQueue(self.store, self.root, harness, self.env, self.stderr)

    # ------------------------------------------------------------------ the loop

    def run(self) -> SupervisorResult:
        """Invoke the harness until a stop, a pause, a limit, too many failures or a signal; the lock is held
        throughout."""
        refuse_to_start(self.ws, self.store, self.settings, self.harness)
        stale = self.lock.acquire(self.harness, self._session())
        sweep(self.env)  # scratch folders (Hermes home copies) a killed supervisor left behind
        orphan = self.children.reap()  # a harness a supervisor killed with -9 left running: never two at once
        outbox.kick(self.root, self.env)  # an alert left pending by a process that died is delivered now
        self.signals.install()
        export.start(self.root)  # the loop's telemetry, when OTEL_* configures it: drained here in the background
        try:
            self._started(stale, orphan)
            self._heart = Heartbeat(self.store, self._view, self.settings.heartbeat_s, self.stderr)
            self.tally = self.tally.model_copy(update={"rounds_at_start": self._heart.rounds_at_start})
            return self._loop()
        finally:
            if self._heart is not None:
                self._heart.close()
            self.signals.restore()
            self.lock.release()

    def _started(self, stale: Optional[dict], orphan: Optional[dict]) -> None:
        killed = orphan and f"killed the harness a killed supervisor left running (process group {orphan['pgid']})"
        for note in filter(None, (self.sessions.refused, killed)):
            self._say(str(note))
        data = {"harness": self.harness, "pid": os.getpid(), "session_id": self._session(), "took_over": stale}
        data.update(session_refused=self.sessions.refused, killed_orphan=orphan)
        data["settings"] = self.settings.model_dump(mode="json")
        self._event("supervisor.started", f"supervisor started ({self.harness})", data)

    def _loop(self) -> SupervisorResult:
        reset_at = limits.pending(self.store.events(last=RECENT_EVENTS))  # a wait a stopped supervisor left: kept
        resumed, waited = reset_at is not None, 0.0
        while True:
            if reset_at is not None and self.signals.signum is None:  # the plan's usage limit: wait for its reset
                wait = limits.decision(self.settings, self.tally, reset_at, self.env, waited)
                if wait.action != "continue":
                    return self._end(wait)
                waited += limits.wait_out(
                    reset_at, resumed, self.env, self.signals, self._heart, self._event, self._heart_beat
                )
                reset_at, resumed = None, False
            if self.signals.signum is not None:
                return self._interrupted()
            if self._paused():  # a paused task launches nothing: only a person's resume answers a pause
                why = "the progress monitor paused the task; a person resumes it"
                return self._end(Decision("pause", why, 0.0, EXIT_PAUSED))
            self._invocation, started = self._next_invocation(), now_iso()
            outcome = self._invoke(self._invocation)
            if self.signals.signum is not None:
                return self._interrupted()
            should_stop, stop_reason = self._check_stop()
            if should_stop is None:
                return self._end(Decision("stop", stop_reason, 0.0, EXIT_BAD_INPUT), refused=True)
            rounds = self.store.load().counters.iteration
            if outcome.limit_reset_at is not None:  # neither a failure nor an invocation: a wait, unless a rule ends
                paused = self._paused()
                decision = limits.after(
                    self.settings, self.tally, outcome, rounds, should_stop, paused, self.env, waited
                )
                reset_at = outcome.limit_reset_at if decision.action == "continue" else None
            else:
                waited = 0.0  # the waits in a row are over
                decision = decide(self.settings, self.tally, outcome, rounds, should_stop, self._paused())
                if outcome.signed_out and decision.action != "stop":  # no retry signs the harness in
                    decision = not_signed_in(self.harness, outcome, decision.tally)
            self.tally = decision.tally or self.tally
            self._event(
                "supervisor.invocation",
                f"invocation {self._invocation}: {outcome.reason[:300]} -> {decision.action}",
                {**invocation_data(self._invocation, outcome, stop_reason, rounds, decision), "started_at": started},
            )
            self._heart_beat(force=True)
            if decision.action != "continue":
                return self._end(decision)
            if decision.sleep_s > 0 and reset_at is None:
                self._sleep(decision.sleep_s)

    def _invoke(self, n: int) -> Outcome:
        """One harness run: prompt, child, stream, recorded turns; returns the adapter's verdict."""
        self.folder.mkdir(parents=True, exist_ok=True)
        stem = self.folder / f"invocation-{n:04d}"
        prompt = build_prompt(self.root, self.task_id, self.settings.max_rounds_per_invocation)
        atomic_write(stem.with_suffix(".prompt.txt"), self._mask(prompt).encode(), sync=False)  # a record only
        session = self._session()
        scratch = new_scratch(self.env, n)  # outside the workspace: the Hermes home copy carries API keys
        wiring = wire(
            self.harness,
            self.binary,
            prompt,
            self.root,
            self.task_id,
            scratch,
            model=self.model,
            session_id=session,
            extra_args=self.extra_args,
            env=self.env,
            mcp=self.mcp,
            http_hooks=self.http_hooks,
        )
        self.env.update(wiring.secret_env)  # the hook token only the child is given: masked in what we write too
        self.secrets = secret_values(self.env)
        adapter = adapter_for(self.harness)
        self.calls.absorb(self.store.events(last=RECENT_EVENTS))
        self.launched += 1
        self.lock.update(session_id=session, invocation=n)
        try:
            child, usage = self._run_child(wiring, stem, adapter, n)
        finally:
            wiring.cleanup()
            shutil.rmtree(scratch, ignore_errors=True)
        outcome = adapter.finish(child.exit_code, child.timed_out, usage, timeout_s=self.settings.invocation_timeout_s)
        limit = limits.found(adapter, outcome, usage, self.env)  # from the harness's own fields only
        outcome.limit_reset_at = limit.reset_at if limit is not None else None
        if child.stopped == "rounds":
            outcome.reason = (
                f"ended after max_rounds_per_invocation ({self.settings.max_rounds_per_invocation}) rounds; "
                f"{outcome.reason}"
            )
        atomic_write(stem.with_suffix(".last.txt"), self._mask(outcome.last_text).encode(), sync=False)
        outcome.signed_out = signed_out(outcome, stderr_tail(stem.with_suffix(".stderr.txt")))
        self.sessions.keep(session, outcome.ok or limit is not None, outcome.session_id)  # a limit: resumed after
        return outcome

    def _run_child(
        self, wiring: Wiring, stem: Path, adapter: StreamAdapter, n: int
    ) -> tuple[ChildResult, Optional[dict]]:
        """Run the wired child, logging its stdout and stderr and queueing its stream's tool calls; (child, usage)."""

        def on_line(line: str) -> Optional[str]:
            for call in adapter.feed(line):
                self.calls.add(call, n)
            return "paused" if self.calls.full() and self.calls.flush() else None

        with (
            stem.with_suffix(".jsonl").open("w", encoding="utf-8") as raw,
            stem.with_suffix(".stderr.txt").open("w", encoding="utf-8") as err,
        ):
            try:
                child = run_child(
                    wiring,
                    self.root,
                    cast(IO[str], MaskedWriter(raw, self.secrets)),
                    cast(IO[str], MaskedWriter(err, self.secrets)),
                    on_line,
                    self.settings.invocation_timeout_s,
                    self._tick,
                    self.kill_grace_s,
                    self.children.started,
                )
            finally:
                self.children.ended()  # the child's group is ended: its watchdog stands down
        self.calls.flush()  # what the child printed last
        usage = read_usage(wiring.usage_file)
        if usage is not None:
            body = json.dumps(mask_tree(usage, self.env), indent=2)
            atomic_write(stem.with_suffix(".usage.json"), body.encode(), sync=False)
        return child, usage

    def _record(self, call: ToolCall, n: int) -> bool:
        """Record one stream tool call now (see ``CallQueue.add``); True when it paused the task."""
        self.calls.add(call, n)
        return self.calls.flush()

    # ------------------------------------------------------------------ after an invocation

    def _check_stop(self) -> tuple[Optional[bool], str]:
        """(should stop, why); (None, why) when the checks may not run (an untrusted contract) or fail to."""
        try:
            report = self.ws.check_stop(task_id=self.task_id)
        except LoopError as exc:
            return None, f"the stop checks could not run: {exc}"
        return report.should_stop, f"{report.verdict}: {report.reason}"

    def _end(self, decision: Decision, refused: bool = False) -> SupervisorResult:
        action = "refused" if refused else decision.action
        data: dict[str, Any] = {
            "action": action,
            "reason": decision.reason,
            "exit_code": decision.exit_code,
            "invocations": self.launched,
            "cost_usd": self.tally.cost_usd,
        }
        if decision.action == "pause":
            data["delivery"] = pause_alert(self.store, self.root, self.env)
        elif decision.exit_code == limits.EXIT_USAGE_LIMIT:
            data["delivery"] = limit_alert(self.store, self.root, decision.reason, self.env)
        kind = {"pause": "supervisor.paused", "fail": "supervisor.failed", "limit": "supervisor.limit"}.get(
            decision.action, "supervisor.stopped"
        )
        self._event(kind, f"supervisor ended ({action}): {decision.reason[:400]}", data)
        self._heart_beat(force=True)
        self._say(f"{action}: {decision.reason} (exit {decision.exit_code})")
        return self._result(decision.exit_code, action, decision.reason)

    def _interrupted(self) -> SupervisorResult:
        code, name = self.signals.exit_code(), self.signals.name()
        self._event(
            "supervisor.interrupted",
            f"supervisor interrupted by {name} during invocation {self._invocation}",
            {"signal": name, "invocation": self._invocation, "exit_code": code},
        )
        self._say(f"interrupted by {name}; run the same command to continue")
        return self._result(code, "interrupted", f"interrupted by {name}")

    def _result(self, code: int, action: str, reason: str) -> SupervisorResult:
        rounds = self.store.load().counters.iteration
        return SupervisorResult(code, action, reason, self.launched, rounds, self.tally.cost_usd)

    def _say(self, text: str) -> None:
        print(f"[supervisor] {self.task_id}: {text}", file=self.stderr, flush=True)

    # ------------------------------------------------------------------ state kept on disk

    def _next_invocation(self) -> int:
        """One past the highest invocation on disk (files, then events): a restarted supervisor continues the count."""
        return next_invocation(self.folder, self.store)

    def _session(self) -> Optional[str]:
        return self.sessions.get()

    def _event(self, kind: str, message: str, data: dict[str, Any]) -> None:
        with self.store.locked():
            self.store.append_event(kind, self._mask(message), mask_tree(data, self.env))

    def _mask(self, text: str) -> str:
        return mask_with(text, self.secrets)

    def _paused(self) -> bool:
        return TaskMonitor(self.store, self.root).paused()

    def _view(self) -> Any:
        return TaskMonitor(self.store, self.root).view()

    # ------------------------------------------------------------------ time, signals

    def _tick(self) -> Optional[str]:
        """Called while a child runs: a heartbeat when due; a reason to stop the child when a signal arrived."""
        if self.signals.signum is not None:
            return "interrupted"
        if self.calls.due() and self.calls.flush():
            return "paused"
        self._heart_beat()
        now = time.monotonic()
        if now - self._paused_checked >= PAUSE_POLL_S:  # a hook of the child's may have paused the task
            self._paused_checked = now
            if self._paused():
                return "paused"
        if now - self._rounds_checked >= 1.0:  # state.json read at most once a second
            self._rounds_checked = now
            if rounds_left(self.settings, self.tally, self.store.load().counters.iteration) == 0:
                return "rounds"
        return None

    def _heart_beat(self, force: bool = False) -> None:
        if self._heart is not None:
            self._heart.beat(self._invocation, force=force)

    def _sleep(self, seconds: float) -> None:
        """Back off, beating and waking at once on a signal."""
        self.signals.sleep(seconds, self._heart_beat)
