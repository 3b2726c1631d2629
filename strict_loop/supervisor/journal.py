"""What a supervisor writes about itself and reads back: its invocation events' data, the alert of the pause it ends
in, and the invocation count a restarted supervisor continues from.

Why apart from ``runner``: the runner decides what happens next; these are the records that make a supervisor
killed at any point restartable with the same command, and the alert a person receives when it stops.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import IO, Any, Optional

from strict_loop.alerts import outbox
from strict_loop.base.errors import LoopError
from strict_loop.base.masking import mask_with
from strict_loop.base.timefmt import now_iso
from strict_loop.headless.streambase import Outcome
from strict_loop.loop.monitoring import TaskMonitor
from strict_loop.loop.workspace import Workspace
from strict_loop.storage.store import TaskStore
from strict_loop.supervisor.budgets import EXIT_BAD_INPUT, Decision, SupervisorSettings, Tally, cost_problem

RECENT_EVENTS = 300
"""Events read back to rebuild the seen tool-call ids (hooks record while the harness runs)."""
_INVOCATION = re.compile(r"invocation-(\d{4,})\.prompt\.txt$")


def invocation_data(n: int, outcome: Outcome, stop_reason: str, rounds: int, decision: Decision) -> dict[str, Any]:
    """The data of a ``supervisor.invocation`` event: the invocation's outcome, the stop checks, the decision."""
    return {
        "invocation": n,
        "ok": outcome.ok,
        "reason": outcome.reason[:1000],
        "session_id": outcome.session_id,
        "cost_usd": outcome.cost_usd,
        "input_tokens": outcome.input_tokens,
        "output_tokens": outcome.output_tokens,
        "rate_limited": outcome.rate_limited,
        "limit_reset_at": outcome.limit_reset_at,
        "stop": stop_reason[:500],
        "rounds": rounds,
        "decision": {"action": decision.action, "reason": decision.reason, "sleep_s": decision.sleep_s},
    }


def pause_alert(store: TaskStore, root: Path, env: Mapping[str, str]) -> dict[str, str]:
    """The person's one alert for the pause a run ended in: the monitor's own (its diagnosis, the recent turns), with
    the agent's latest note, the page link and the resume command; returns its delivery summary.

    The hook that paused the task ran in the harness's environment, which has no channel (the agent must never see
    their URLs), so that alert was recorded with none: it is sent now through this environment's channels, with the
    note the agent left since (the one write allowed while paused: else only the page would show it). One already on
    its way (raised by a stream call we recorded, or by a hook that read the person's alerts file, or sent by an
    earlier run of ours) is not sent again; if none was recorded (its process died first), it is raised here from the
    monitor's state."""
    from strict_loop.model.monitoring import Alert
    from strict_loop.monitor import ladder

    mon = TaskMonitor(store, root).load()
    if not mon.paused:
        return {}  # answered already: nothing is asked of the person
    resume = ladder.resume_command(root, store.task_id)
    alert = Alert(
        id=f"{store.task_id}-{mon.alerts}",  # the monitor's id for this pause (``record_pause``)
        ts=now_iso(),
        task_id=store.task_id,
        turn=mon.paused_at if mon.paused_at is not None else max(0, mon.turns - 1),
        level=3,
        signals=mon.last_signals,
        diagnosis=ladder.diagnosis(mon),
        recent=[f.brief for f in mon.window[-5:]],
        recommended_action=ladder.recommended_action(mon, mon.last_signals),
    )
    found = _recorded(store, alert.id, alert.turn)
    if found is not None and any(not name.startswith("config") for name in found["channels"]):
        return dict(found["delivery"])
    events = list(store.events(last=outbox.NOTE_EVENTS))
    if found is None:
        alert.diagnosis = ladder.with_note(alert.diagnosis, ladder.agent_note(events))
        heading = ladder.alert_heading(alert.signals)
        return outbox.enqueue(store, root, alert, env, prefix=heading, resume=resume, event="spiral.alert")
    alert, heading, _ = outbox.resent(found, alert)  # its words; the resume command and the page link ours
    alert.diagnosis, note = _latest_note(alert.diagnosis, events)
    return outbox.forward(store, root, alert, env, prefix=heading, resume=resume, note=note)


def limit_alert(store: TaskStore, root: Path, reason: str, env: Mapping[str, str]) -> dict[str, str]:
    """The person's alert for a run ended by a usage limit that resets too late (``limits``); its delivery summary."""
    from strict_loop.model.monitoring import Alert

    alert = Alert.notice(
        f"{store.task_id}-usage-limit-{re.sub(r'[^0-9]', '', now_iso())}",
        store.task_id,
        1,
        f"supervise ended: {reason}",
        "run the same supervise command after the reset, or with a larger --max-limit-wait",
    )
    resume = f"after the reset: strict-loop supervise --workspace {root} --task-id {store.task_id} (the same flags)"
    return outbox.enqueue(store, root, alert, env, prefix="[USAGE LIMIT]", resume=resume, event="supervisor.alert")


def _latest_note(diagnosis: str, events: list[dict[str, Any]]) -> tuple[str, Optional[str]]:
    """The recorded ``diagnosis`` (cleaned: ``outbox.resent``) ending with the agent's latest note instead of the one
    it had left when the pause was recorded (``ladder.with_note`` after the ``spiral.paused`` event), and that note."""
    from strict_loop.alerts.channels import clean
    from strict_loop.monitor import ladder

    def note(evs: list[dict[str, Any]]) -> Optional[str]:
        found = ladder.agent_note(evs)
        return clean(found, ladder.MAX_NOTE_CHARS) if found else None  # as the diagnosis was cleaned

    now = note(events)
    if now is None or diagnosis.endswith(ladder.with_note("", now)):
        return diagnosis, now
    paused = [i for i, ev in enumerate(events) if ev.get("kind") == "spiral.paused"]
    then = note(events[: paused[-1]]) if paused else None
    told = ladder.with_note("", then) if then else ""
    if told and diagnosis.endswith(told):
        diagnosis = diagnosis[: len(diagnosis) - len(told)]
    return ladder.with_note(diagnosis, now), now


def _recorded(store: TaskStore, alert_id: str, turn: int) -> Optional[dict[str, Any]]:
    """The latest alert of ``alert_id`` for the pause at ``turn`` in alerts.jsonl, folded; None if there is none."""
    if not store.paths.alerts.exists():
        return None
    for found in reversed(outbox.fold(store.paths.alerts)):
        if found.get("id") == alert_id:
            return found if found.get("turn") == turn else None
    return None


def next_invocation(folder: Path, store: TaskStore) -> int:
    """One past the highest invocation on disk (files, then events): a restarted supervisor continues the count."""
    found = [int(m.group(1)) for p in folder.glob("invocation-*.prompt.txt") if (m := _INVOCATION.search(p.name))]
    for event in store.events(last=RECENT_EVENTS):
        if str(event.get("kind", "")).startswith("supervisor.") and isinstance(
            (event.get("data") or {}).get("invocation"), int
        ):
            found.append(event["data"]["invocation"])
    return max(found, default=0) + 1


class MaskedWriter:
    """A text file whose every write has the secret values (``masking.secret_values``) and URL credentials masked.

    Why: the harness's stdout and stderr echo what the agent saw and ran (an API key it printed, a URL); like stop
    command output, nothing of it reaches a file unmasked."""

    def __init__(self, out: IO[str], values: list[str]) -> None:
        self.out, self.values = out, values

    def write(self, text: str) -> int:
        return self.out.write(mask_with(text, self.values))

    def flush(self) -> None:
        self.out.flush()


def settings_for(store: TaskStore, overrides: Mapping[str, Any]) -> SupervisorSettings:
    """The run's budgets: the loop contract's unattended budgets, overridden by the caller's, over the defaults."""
    from strict_loop.model.validation import validate_input

    unattended = store.load().contract.unattended
    base = {
        "max_rounds_per_invocation": unattended.max_rounds_per_invocation,
        "max_consecutive_failures": unattended.max_consecutive_failures,
    }
    return validate_input(SupervisorSettings, {**base, **overrides}, "supervise")


def refuse_to_start(ws: Workspace, store: TaskStore, settings: SupervisorSettings, harness: str) -> None:
    """Launch nothing for a contract with no machine stop check (only the agent's word could end the run) or whose
    commands this machine has not trusted (no run could ever be checked), nor with a cost cap that cannot be
    counted."""
    problem = cost_problem(settings, harness)
    if problem:
        raise LoopError(
            "supervise.max_cost_usd", problem, "pass --usd-per-mtok-in and --usd-per-mtok-out, or drop --max-cost-usd"
        )
    checks = store.load().contract.stop_checks
    if not checks.count():
        raise LoopError(
            "supervise.task_id",
            f"task {store.task_id!r} has no machine stop check: an unattended run would end on the agent's word",
            "start a task with at least one (init_state --stop-command CMD, --require-path PATH or --require-text "
            "PATH::TEXT); a contract is fixed for its task's life",
        )
    if checks.commands and not ws.trust_store.is_trusted(ws.root, store.task_id, checks):
        from strict_loop.storage.trust import refusal

        raise refusal(store.task_id, checks, "supervise")


def not_signed_in(harness: str, outcome: Outcome, tally: Optional[Tally]) -> Decision:
    """The end of a run whose harness is not signed in: bad input (exit 2), naming the harness and the fix."""
    from strict_loop.harness import registry

    row = registry.get(harness)
    why = f"{row.title} is not signed in ({outcome.reason[:200]}): {row.login_hint}, then run the same command again"
    return Decision("fail", why, 0.0, EXIT_BAD_INPUT, tally)


def stderr_tail(path: Path, cap: int = 8192) -> str:
    """The last ``cap`` bytes of an invocation's (masked) stderr file, as text; "" when unreadable."""
    try:
        with path.open("rb") as fh:
            fh.seek(max(0, path.stat().st_size - cap))
            return fh.read().decode("utf-8", errors="replace")
    except OSError:
        return ""
