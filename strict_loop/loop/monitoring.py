"""The progress monitor's I/O for one task: ladder.json, turn observation, alerts, and a person's resume.

The decisions are pure (``ladder.py`` over ``spiral.py``); this module keeps
their state in ``ladder.json`` (rebuilt from the event ledger if damaged),
writes the ladder's steps as events, delivers alerts, and carries out the
answers to a pause.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from contextlib import closing
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

from strict_loop.base.errors import LoopError, StateDamaged
from strict_loop.base.fsio import atomic_write, read_own
from strict_loop.base.jsonl import records_backwards
from strict_loop.base.timefmt import now_iso
from strict_loop.loop import reports
from strict_loop.model.fields import parse_json
from strict_loop.model.monitoring import Alert, MonitorState, MonitorView
from strict_loop.model.settings import MONITOR_PROFILES, MonitorSettings
from strict_loop.model.turns import Turn
from strict_loop.model.validation import validate_input
from strict_loop.monitor import ladder
from strict_loop.monitor.spiral import turn_paths
from strict_loop.storage.store import TaskStore

if TYPE_CHECKING:  # a person's resume needs these; the hook handler (every tool call) does not load them
    from strict_loop.model.requests import ResumeInput
    from strict_loop.model.results import ResumeResult

MAX_HASHED_FILE_BYTES = 2_000_000
REBUILD_EVENTS = 400
ROLL_FORWARD_EVENTS = 200  # how far back a paused monitor looks for an answer recorded but not yet applied


class StaleAnswer(LoopError):
    """An answer to a pause that is over (answered already): refused, nothing changed (the page says 409)."""


class TaskMonitor:
    """The monitor of one task in one workspace."""

    def __init__(self, store: TaskStore, root: Path, settings: Optional[MonitorSettings] = None) -> None:
        self.store = store
        self.root = root
        self._settings = settings  # the hook handler reads only these from state.json, not the whole state

    def settings(self) -> MonitorSettings:
        return self._settings if self._settings is not None else self.store.load().contract.monitor

    def load(self, *, locked: bool = False) -> MonitorState:
        """ladder.json, or a rebuilt one (from the recent tool_call events) if it is missing or damaged. A pause the
        ledger records as answered is lifted (an answer is recorded first: a kill before ladder.json is written leaves
        the record); ``locked``: the caller holds the task lock, so that is saved at once."""
        path = self.store.paths.monitor
        try:
            data = read_own(path)  # never through a link, never a FIFO (a cloned repo may carry either)
        except FileNotFoundError:
            return MonitorState()
        except (OSError, LoopError):
            return self._rebuilt()
        try:
            mon = self.store.cache.parse(MonitorState, path, data, "")
        except StateDamaged:
            return self._rebuilt()
        answer = self._recorded_answer(mon) if mon.paused else None
        if answer is not None:
            _apply_answer(mon, answer, mon.turns + self.settings().cooldown_turns)
            if locked:
                self.save(mon, sync=True)
        return mon

    def _recorded_answer(self, mon: MonitorState) -> Optional[dict[str, Any]]:
        """The data of the ledger's ``spiral.resumed`` that answered the pause ``mon`` is in, if any."""
        kinds = ("spiral.paused", "spiral.resumed")  # back to the last pause or answer
        try:
            with closing(records_backwards(self.store.paths.events)) as found:
                ev = next((e for e in islice(found, ROLL_FORWARD_EVENTS) if e.get("kind") in kinds), {})
        except (OSError, LoopError):  # a ledger that cannot be read answers nothing: the pause holds
            return None
        data = ev.get("data")
        mine = ev.get("kind") == "spiral.resumed" and isinstance(data, dict) and data.get("pause") == pause_id(mon)
        return data if mine else None

    def _rebuilt(self) -> MonitorState:
        """Replay the recent ledger (tool calls, pauses, resumes) into a fresh monitor state."""
        settings = self.settings()
        mon = MonitorState()
        for ev in self.store.events(last=REBUILD_EVENTS):
            raw = ev.get("data")
            data = raw if isinstance(raw, dict) else {}
            if ev.get("kind") == "tool_call":
                try:
                    mon, _, _ = ladder.observe(mon, Turn.model_validate(data), settings)
                except ValueError:
                    continue
            elif ev.get("kind") == "spiral.resumed":
                _apply_answer(mon, data, mon.turns + settings.cooldown_turns)
            elif ev.get("kind") == "spiral.notice_delivered":
                mon.notice = None
        return mon

    def save(self, mon: MonitorState, *, sync: bool) -> None:
        with self.store.paths.pause_flagged(mon.paused):  # set before, cleared after: the Claude hooks' gate reads it
            atomic_write(self.store.paths.monitor, data := mon.model_dump_json().encode(), sync=sync)
        self.store.cache.remember(self.store.paths.monitor, data)

    def paused(self) -> bool:
        return self.store.paths.monitor.exists() and self.load().paused

    def view(self, mon: Optional[MonitorState] = None, diagnosed: bool = False) -> MonitorView:
        """What rides on the agent's tool results (recent whispers, the pause order, a person's notice); read-only.
        ``diagnosed``: for a result that carries the diagnosis itself (``ladder.supervisor_view``)."""
        if mon is None:
            if not self.store.paths.monitor.exists():
                return MonitorView()
            mon = self.load()
        if not (mon.paused or mon.whispers or mon.notice):
            return MonitorView()
        return ladder.supervisor_view(
            mon, self.settings(), ladder.resume_command(self.root, self.store.task_id), diagnosed
        )

    def deliver(self) -> MonitorView:
        """The supervisor for the result of an operation (caller holds the lock): like ``view``, but a pending notice
        from a person's resume is handed over this once; ladder.json and the ledger record that it was."""
        if not self.store.paths.monitor.exists():
            return MonitorView()
        mon = self.load()
        sup = self.view(mon)
        if mon.notice:
            self.save(mon.model_copy(update={"notice": None}), sync=True)
            self.store.append_event("spiral.notice_delivered", f"the agent was given: {mon.notice[:300]}", {})
        return sup

    def refuse_round(self, operation: str) -> None:
        """While paused no round is announced or recorded (caller holds the lock, so no resume slips in between)."""
        if not self.paused():
            return
        diag = ladder.short_diagnosis(self.load())
        raise LoopError(
            operation,
            f"task '{self.store.task_id}' is paused by the progress monitor ({diag}); "
            "no round can be announced or recorded until a person answers the pause",
            f"stop and wait; a person must run: {ladder.resume_command(self.root, self.store.task_id)}",
        )

    def file_states(self, paths_in: list[str]) -> dict[str, str]:
        """Content digests of the files a turn touched, for those inside the workspace (small files only)."""
        out = {}
        for rel in paths_in[:5]:
            try:
                path = (self.root / rel).resolve()  # an absolute `rel` replaces the root
                path.relative_to(self.root)
                if path.is_file() and path.stat().st_size <= MAX_HASHED_FILE_BYTES:
                    out[rel] = hashlib.blake2b(path.read_bytes(), digest_size=8).hexdigest()
            except (ValueError, OSError):
                continue
        return out

    def observe(self, turn: Turn) -> tuple[dict[str, Any], Optional[Alert]]:
        """Evaluate one turn (caller holds the lock): update ladder.json, record ladder steps; returns the event data
        and the alert to raise (a pause). A whisper or the pause also refreshes latest-status.txt, so whoever watches
        it sees it at once."""
        _, data, alert = self.step(self.load(), turn, self.settings())
        return data, alert

    def step(
        self, mon: MonitorState, turn: Turn, settings: MonitorSettings, *, save_quiet: bool = True, climb: bool = True
    ) -> tuple[MonitorState, dict[str, Any], Optional[Alert]]:
        """``observe`` on a given monitor state, returning the new one; ``save_quiet=False`` leaves ladder.json
        unwritten when the turn changed no ladder step (a batch writes it once at its end), a whisper or pause is always
        saved first. ``climb``: as ``observe``'s."""
        mon, action, signals = ladder.observe(mon, turn, settings, self.file_states(turn_paths(turn)), climb=climb)
        index = mon.turns - 1
        if save_quiet or action != "none":
            self.save(mon, sync=action != "none")
        data = {**turn.model_dump(mode="json", exclude_none=True), "turn": index}
        found = [s.model_dump() for s in signals]
        alert = None
        if action in ("whisper", "whisper2"):
            w = mon.whispers[-1]
            self.store.append_event("spiral.whisper", w.text, {"turn": index, "level": w.level, "signals": found})
            reports.write_status(self.store, self.store.load_current(), None, record=False, sup=self.view(mon))
        elif action == "pause":
            diag = ladder.diagnosis(mon)
            alert = self.record_pause(
                mon,
                diag,
                [f.brief for f in mon.window[-5:]],
                ladder.recommended_action(mon, signals),
                f"paused at turn {index}: {diag[:500]}",
            )
        return mon, data, alert

    def record_pause(
        self,
        mon: MonitorState,
        diagnosis: str,
        recent: list[str],
        recommended_action: str,
        message: str,
        extra: Optional[dict[str, Any]] = None,
    ) -> Alert:
        """The ledger's side of a pause already in ``mon`` (caller holds the lock, ladder.json saved): the
        ``spiral.paused`` event, the status line, and the alert to raise after the lock."""
        turn = mon.paused_at if mon.paused_at is not None else max(0, mon.turns - 1)
        signals = [s.model_dump() for s in mon.last_signals]
        data = {"turn": turn, "pause": pause_id(mon), "signals": signals, **(extra or {})}
        self.store.append_event("spiral.paused", message, data)
        reports.write_status(self.store, self.store.load_current(), None, record=False, sup=self.view(mon))
        return Alert(
            id=f"{self.store.task_id}-{mon.alerts}",
            ts=now_iso(),
            task_id=self.store.task_id,
            turn=turn,
            level=3,
            signals=mon.last_signals,
            diagnosis=ladder.with_note(diagnosis, ladder.agent_note(self.store.events(last=REBUILD_EVENTS))),
            recent=recent,
            recommended_action=recommended_action,
        )

    def raise_alert(self, alert: Alert, env: Optional[Mapping[str, str]] = None) -> None:
        """Write the alert to the outbox (after the lock: this takes it) and start its delivery in the background.

        ``env`` (default ours) names the channels: a hook daemon passes the hook's environment. The agent's call
        returns at once; the worker records each channel's outcome in alerts.jsonl and the events."""
        from strict_loop.alerts import outbox

        outbox.enqueue(
            self.store,
            self.root,
            alert,
            os.environ if env is None else env,
            prefix=ladder.alert_heading(alert.signals),
            resume=ladder.resume_command(self.root, self.store.task_id),
            event="spiral.alert",
        )

    def resume(self, req: ResumeInput) -> tuple[ResumeResult, bool]:
        """A person's answer to a pause (caller holds the lock); returns the result and whether the task ended. An
        answer naming a pause that is over is refused (a second tab's hand-back must not end a running task); it is
        recorded before ladder.json is written (``load`` applies a record that ladder.json missed)."""
        from strict_loop.loop.reports import handback_markdown
        from strict_loop.model.results import ResumeResult

        state = self.store.load_current()
        mon = self.load(locked=True)
        current = pause_id(mon) if mon.paused else None
        if req.pause_id is not None and req.pause_id != current:
            raise StaleAnswer("resume.pause_id", *_stale(self.store.task_id, req.pause_id, current))
        if req.action == "continue" and not mon.paused:
            raise LoopError(
                "resume.action",
                f"task '{self.store.task_id}' is not paused",
                "use continue only after a pause; rollback and hand-back work any time",
            )
        kinds: list[str] = sorted({s.kind for s in mon.last_signals})
        result = ResumeResult(task_id=self.store.task_id, action=req.action, detail="")
        if req.action == "rollback":
            self._rollback(req, result)
        if req.action == "hand-back":  # the task ends before the pause is lifted: a kill between never frees the agent
            handback = self.store.paths.root / "handback.md"
            atomic_write(handback, handback_markdown(state, mon, req.note, self.store.paths).encode())
            state.status, state.needs_human_input = "blocked", True
            state.stop_reason = (
                "handed back to a person after the progress monitor paused the loop: " + ladder.diagnosis(mon)
            )[:2000]
            state.updated_at = now_iso()
            self.store.save(state)
            result.handback_file = str(handback)
            result.detail = f"loop ended as blocked; summary for the person in {handback}"
            self.store.append_event("task.handed_back", result.detail, {"note": req.note})
        if req.action in ("continue", "rollback"):
            cooldown = state.contract.monitor.cooldown_turns
            result.muted = kinds
            if req.action == "continue":
                result.detail = f"resumed; {', '.join(kinds) or 'no signal'} muted for {cooldown} turns"
        if mon.whispers and mon.whispers[-1].adopted is None:
            mon.whispers[-1].adopted = False
        notice = None if req.action == "hand-back" else _notice(req)
        data = {"action": req.action, "to": req.to, "muted": result.muted, "note": req.note, "notice": notice}
        self.store.append_event(  # the record first: then ladder.json, which ``load`` rolls forward if it is missed
            "spiral.resumed", f"resume --action {req.action}: {result.detail}", {**data, "pause": current}
        )
        _apply_answer(mon, data, mon.turns + state.contract.monitor.cooldown_turns)
        self.save(mon, sync=True)
        result.supervisor = self.view(mon)  # what the agent's next result will say; only its operations hand it over
        reports.write_status(self.store, self.store.load_current(), None, record=False, sup=result.supervisor)
        return result, req.action == "hand-back"

    def _rollback(self, req: ResumeInput, result: ResumeResult) -> None:
        """Restore round ``req.to`` whole, or refuse before changing any file (caller holds the task lock)."""
        from strict_loop.storage.snapshots import ForeignStore, SnapshotError, SnapshotRefused, Snapshots

        task_id = self.store.task_id
        state = self.store.load_current()
        last = state.counters.iteration
        if req.to is None or req.to > last:
            raise LoopError(
                "resume.to",
                f"there is no snapshot of round {req.to} for task '{task_id}': its last round is {last}",
                f"pass --to a round from 0 to {last} (0 = as it was at init_state)",
            )
        if not Snapshots.available():
            raise LoopError(
                "resume.action", "rollback needs git, which is not installed", "install git, or resume with continue"
            )
        snaps = Snapshots(self.root, task_id, self.store.paths.root, state.created_at)
        try:
            saved, restored, saved_ref = snaps.restore(req.to, state.contract.monitor)
        except ForeignStore as exc:
            raise LoopError("resume.action", f"rollback refused: {exc}", "nothing was changed") from None
        except SnapshotRefused as exc:
            raise LoopError(
                "resume.to",
                f"{exc}; nothing was changed",
                "pick another round; snapshots are taken after each round when monitor.snapshots is on "
                "(or 'auto' in a git repository)",
            ) from None
        except SnapshotError as exc:
            raise LoopError(
                "resume", f"rollback failed: {exc}", "see events.jsonl; nothing of the loop's history changed"
            ) from None
        result.saved_commit, result.restored_commit = saved, restored
        result.detail = (
            f"workspace restored to round {req.to}; the tree as it was is saved as {saved_ref} ({saved[:12]}); "
            f"to get it back into a folder: git --git-dir .agent-loop/snapshots.git archive {saved_ref} | tar -x -C DIR"
        )
        self.store.append_event(
            "workspace.rolled_back",
            result.detail,
            {"to": req.to, "saved": saved, "saved_ref": saved_ref, "restored": restored, "note": req.note},
        )


def pause_id(mon: MonitorState) -> str:
    """The id of the pause ``mon`` is in: its number and the turn that paused the task (``3@41``). An answer names it,
    so it never lands on a later pause, nor on a task an earlier answer already let go on."""
    return f"{mon.alerts}@{mon.paused_at}"


def _stale(task_id: str, answered: str, current: Optional[str]) -> tuple[str, str]:
    now = f"is in pause {current} now" if current else "is not paused now"
    problem = f"pause {answered} of task '{task_id}' is over (answered already: the task {now}); nothing was changed"
    return problem, "look at the task again (the page, or strict-loop show_task) and answer the pause it is in, if any"


def _apply_answer(mon: MonitorState, data: Mapping[str, Any], muted_until: int) -> None:
    """A recorded answer (``spiral.resumed``'s data) applied to ``mon``, in place: the pause lifted, the signals it
    names muted until turn ``muted_until``, and the note the agent is told once."""
    ladder.lift_pause(mon)
    muted = data.get("muted")
    for kind in muted if isinstance(muted, list) else []:
        mon.muted_until[str(kind)] = muted_until
    mon.notice = str(data["notice"]) if data.get("notice") else None


def _notice(req: ResumeInput) -> str:
    """What the agent is told once after a person resumed the loop."""
    what = f"rollback: the workspace was restored to round {req.to}" if req.action == "rollback" else req.action
    said = (
        f" Their note: {req.note}"
        if req.note.strip()
        else " Go on, with a different approach than the one that led to the pause."
    )
    return f"Resumed by a person ({what}).{said}"


def monitor_settings(
    defaults: Path, profile: str = "default", overrides: Optional[MonitorSettings] = None
) -> MonitorSettings:
    """A new task's monitor settings: the named profile, then the workspace defaults file (if any), then the
    settings a person gave for this task. What a person wrote wins over the preset an agent picked."""
    merged: dict[str, Any] = MONITOR_PROFILES[profile]
    if defaults.is_file():
        try:
            base = parse_json(defaults.read_bytes())
        except OSError as exc:
            raise LoopError(str(defaults), f"cannot be read ({exc.strerror or exc})", "fix it or remove it") from None
        except ValueError as exc:
            raise LoopError(str(defaults), str(exc), "fix it or remove it") from None
        merged = _deep_merge(merged, base if isinstance(base, dict) else {})
    if overrides is not None:
        merged = _deep_merge(merged, overrides.model_dump(exclude_unset=True))
    return validate_input(MonitorSettings, merged, defaults.name if defaults.is_file() else "monitor")


def _deep_merge(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in override.items():
        out[key] = _deep_merge(out[key], value) if isinstance(value, dict) and isinstance(out.get(key), dict) else value
    return out
