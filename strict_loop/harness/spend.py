"""A task's budgets, enforced by the hooks of every harness (issue 29), and a person's raise of them.

Why in the hooks: a budget held only by ``strict-loop supervise`` does nothing for a person at a terminal. After each
tool call the hook counts it and, where the harness reports them, the tokens since the last call; at
``WHISPER_AT`` of a budget the agent is told once (per limit), and when one is spent the task is paused as the
progress monitor pauses it (``monitor.json``, ``spiral.paused``, an alert), with signal ``budget_spent``. The
paused task's next call is refused by the same gate. A person's raise (``strict-loop budget``, the page) that leaves
no budget spent lifts that pause, recorded as their answer. A ``continue`` without a raise lets one call run: its
hook pauses the task again (a spent budget is never overspent by more than the call a person let through).

Tokens come from the transcript the payload names (``transcript_path``), read from where the last hook stopped (at
most ``MAX_READ_BYTES`` a call; the rest on the next): Claude Code writes ``message.usage`` on each assistant line
(one line per content block, all with the message's id: counted once), Codex a ``token_count`` event with the
session's running total. Hermes's plugin sends the tokens Hermes reported for the responses since the session's last
call (``extra.api_usage``, from its ``post_api_request`` hook). Gemini CLI's and OpenCode's hooks carry no usage
(references/protocol.md, "Budgets").
"""

from __future__ import annotations

import json
import os
import re
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

from strict_loop.base.errors import LoopError
from strict_loop.base.fsio import atomic_write
from strict_loop.base.timefmt import now_iso
from strict_loop.model.budgets import (
    BUDGET_FILE,
    MAX_TRANSCRIPTS,
    WHISPER_AT,
    BudgetInput,
    BudgetResult,
    BudgetSpent,
    BudgetUse,
    Cursor,
    TaskBudget,
    lines,
    uses,
)

if TYPE_CHECKING:
    from strict_loop.harness.payloads import HookEvent
    from strict_loop.loop.monitoring import TaskMonitor
    from strict_loop.model.monitoring import Alert
    from strict_loop.storage.store import TaskStore

MAX_READ_BYTES = 4 << 20
"""Of a transcript, per hook call: a long stretch (a first read of an old session) is read over the next calls."""
_BUDGETED = re.compile(rb'"max_(?:tool_calls|wall_time_s|tokens|cost_usd)":\s*[0-9]')
"""A budget set in state.json's bytes: a task without one costs a hook one regex search, nothing more."""


def charge(event: HookEvent, supervision: TaskMonitor, root: Path, env: Mapping[str, str], calls: int) -> list[str]:
    """Count ``calls`` tool calls (and the transcript's new tokens) against the task's budgets; the lines to put
    beside the tool's result (a whisper, the pause order). Never raises: a failure is logged, the session goes on."""
    store = supervision.store
    try:
        said, alert = _charge(event, supervision, root, calls)
    except Exception as exc:  # noqa: BLE001 (a budget must never break the user's session)
        from strict_loop.harness.handler import _log

        _log(store.paths.root, event.harness, event.name, f"budget: {type(exc).__name__}: {exc}", env)
        return []
    if alert is not None:
        supervision.raise_alert(alert, env)
    return said


def _charge(event: HookEvent, supervision: TaskMonitor, root: Path, calls: int) -> tuple[list[str], Optional[Alert]]:
    from strict_loop.base.jsontext import parse_json

    store = supervision.store
    data = store.read(store.paths.state, "")
    if not _BUDGETED.search(data):
        return [], None
    raw = parse_json(data)
    budget = TaskBudget.model_validate(raw["contract"]["budget"])
    with store.locked():
        spent = store.budget_spent() or BudgetSpent(since=str(raw.get("created_at") or now_iso()))
        spent.tool_calls += calls
        if budget.max_tokens is not None or budget.max_cost_usd is not None:
            read_usage(event.payload.get("transcript_path"), spent)
            if event.harness == "hermes":
                reported_usage(event.payload.get("extra"), spent)
        found = uses(budget, spent)
        near = [u for u in found if WHISPER_AT <= u.share < 1 and spent.whispered.get(u.name) != u.limit]
        for u in near:
            spent.whispered[u.name] = u.limit
        atomic_write(spent_path(store), spent.model_dump_json().encode(), sync=False)
        said = [whisper(store, near)] if near else []
        over = [u for u in found if u.share >= 1]
        alert = _pause(supervision, root, over) if over else None
    if alert is not None:
        said.append(supervision.view().messages[0].text)
    return said, alert


def whisper(store: TaskStore, near: list[BudgetUse]) -> str:
    spent = "; ".join(u.text() for u in near)
    text = (
        f"[strict-loop budget] Most of this task's budget is spent ({spent}). Finish the step you are on and "
        "record the round (update_state): when a budget is spent, the task is paused until a person raises it."
    )
    store.append_event("budget.whisper", text, {"budgets": {u.name: [u.spent, u.limit] for u in near}})
    return text


def _pause(supervision: TaskMonitor, root: Path, over: list[BudgetUse]) -> Optional[Alert]:
    """Pause the task for its spent budgets as the monitor pauses it (caller holds the lock); None when it is paused
    already (by the monitor, or by this budget at the call before)."""
    from strict_loop.model.monitoring import Signal
    from strict_loop.monitor import ladder

    mon = supervision.load(locked=True)
    if mon.paused:
        return None
    store = supervision.store
    raise_it = raise_command(root, store.task_id, over)
    diag = f"Budget spent: {'; '.join(u.text() for u in over)}. A person raises it to let the task go on: {raise_it}"
    turn = max(0, mon.turns - 1)
    mon = ladder.paused(mon, turn, [Signal(kind="budget_spent", turns=[turn], evidence=diag[:600])])
    supervision.save(mon, sync=True)
    return supervision.record_pause(
        mon,
        diag,
        [f.brief for f in mon.window[-5:]],
        f"Raise the budget ({raise_it}, or on the page), or hand the task back: "
        f"{ladder.resume_command(root, store.task_id)}",
        f"paused by the task's budget: {diag[:500]}",
        {"source": "budget", "budgets": {u.name: [u.spent, u.limit] for u in over}},
    )


FLAGS = {
    "tool_calls": "--max-tool-calls",
    "wall_time_s": "--max-wall-time",
    "tokens": "--max-tokens",
    "cost_usd": "--max-cost-usd",
}


def raise_command(root: Path, task_id: str, over: list[BudgetUse]) -> str:
    """The command a person runs to raise the spent budgets (to twice their limit, as an example)."""
    from shlex import quote

    given = " ".join(f"{FLAGS[u.name]} {_double(u.limit)}" for u in over)
    return f"strict-loop budget --workspace {quote(str(root))} --task-id {quote(task_id)} {given}"


def _double(limit: float) -> str:
    value = limit * 2
    return f"{value:g}" if value != int(value) else str(int(value))


def spent_path(store: TaskStore) -> Path:
    return store.paths.root / BUDGET_FILE


def raise_budget(store: TaskStore, root: Path, req: BudgetInput, by: str) -> BudgetResult:
    """A person's new budgets for the task (0 removes one); a task paused by a spent budget goes on when none is spent
    any more, with their change as the answer to that pause (recorded as ``resume --action continue`` records it)."""
    from strict_loop.model.validation import validate_input

    changes = req.changes()
    if not changes:
        raise LoopError(
            "budget",
            "no budget given; nothing was changed",
            "give --max-tool-calls N, --max-wall-time SECONDS, --max-tokens N or --max-cost-usd USD (0 removes one)",
        )
    with store.locked():
        state = store.load_current()
        before = state.contract.budget
        after = validate_input(TaskBudget, {**before.model_dump(), **changes}, "budget")
        state.contract.budget, state.updated_at = after, now_iso()
        store.save(state)
        spent = store.budget_spent()
        if spent is None and after.limits():  # counting starts now (a budget of init_state's counts from then)
            spent = BudgetSpent(since=state.created_at if before.limits() else now_iso())
            atomic_write(spent_path(store), spent.model_dump_json().encode(), sync=False)
        shown = lines(after, spent, state.created_at)
        said = "; ".join(line.text for line in shown) or "no budget"
        store.append_event(
            "budget.changed",
            f"{by} set the task's budget: {said}",
            {"by": by, "before": before.model_dump(exclude_none=True), "after": after.model_dump(exclude_none=True)},
        )
        resumed = _lift(store, root, shown, said)
    detail = f"budget now: {said}" + ("; the task paused by its budget goes on" if resumed else "")
    return BudgetResult(task_id=store.task_id, budget=after, spent=shown, resumed=resumed, detail=detail)


def _lift(store: TaskStore, root: Path, shown: list[Any], said: str) -> bool:
    """Answer a pause of a spent budget with ``continue`` when no budget is spent now (caller holds the lock)."""
    from strict_loop.loop.monitoring import TaskMonitor, pause_id
    from strict_loop.model.requests import ResumeInput

    supervision = TaskMonitor(store, root)
    mon = supervision.load(locked=True)
    by_budget = mon.paused and bool(mon.last_signals) and mon.last_signals[0].kind == "budget_spent"
    if not by_budget or any(line.spent >= line.limit for line in shown):
        return False
    note = f"A person raised the task's budget ({said})."
    supervision.resume(ResumeInput(task_id=store.task_id, action="continue", note=note, pause_id=pause_id(mon)))
    return True


# ---------------------------------------------------------------- tokens, from the transcript's new lines


def read_usage(path: Any, spent: BudgetSpent) -> None:
    """Add the tokens the transcript at ``path`` reported since the last read to ``spent`` (and move its cursor).

    Nothing unless ``path`` is absolute and ends in ``.jsonl`` and a regular file is there (never a link, a FIFO);
    a line not yet ended is left for the next read. Lines written before ``spent.since`` are not counted (a budget set
    in a session already under way counts from then)."""
    if not (isinstance(path, str) and os.path.isabs(path) and path.endswith(".jsonl")):
        return
    cursor = spent.transcripts.pop(path, None) or Cursor()
    chunk = _read_from(path, cursor)
    if chunk is None:
        return
    end = chunk.rfind(b"\n") + 1
    for line in chunk[:end].split(b"\n"):
        if b'"usage"' in line or b'"token_count"' in line:
            _count(line, cursor, spent)
    cursor.offset += end
    spent.transcripts[path] = cursor  # the newest last: the oldest goes first
    while len(spent.transcripts) > MAX_TRANSCRIPTS:
        spent.transcripts.pop(next(iter(spent.transcripts)))


def reported_usage(extra: Any, spent: BudgetSpent) -> None:
    """Add the tokens Hermes's plugin sent with a call (``api_usage``: what Hermes reported since the session's last
    call) to ``spent``."""
    usage = extra.get("api_usage") if isinstance(extra, dict) else None
    if isinstance(usage, dict):
        spent.input_tokens += _n(usage.get("input_tokens"))
        spent.output_tokens += _n(usage.get("output_tokens"))


def _read_from(path: str, cursor: Cursor) -> Optional[bytes]:
    try:
        if not stat.S_ISREG(os.lstat(path).st_mode):
            return None
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return None
        if info.st_size < cursor.offset:  # a new file under the old name: from its start
            cursor.offset, cursor.last_id, cursor.total_in = 0, "", -1
        return os.pread(fd, MAX_READ_BYTES, cursor.offset)
    except OSError:
        return None
    finally:
        os.close(fd)


def _count(raw: bytes, cursor: Cursor, spent: BudgetSpent) -> None:
    try:
        entry = json.loads(raw)
    except (ValueError, RecursionError):
        return
    if not isinstance(entry, dict):
        return
    before = str(entry.get("timestamp") or "") < spent.since
    message = entry.get("message")
    if entry.get("type") == "assistant" and isinstance(message, dict) and isinstance(message.get("usage"), dict):
        usage = message["usage"]
        got_in = sum(
            _n(usage.get(k)) for k in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
        )
        got_out = _n(usage.get("output_tokens"))
        same = message.get("id") == cursor.last_id and cursor.last_id != ""
        add_in, add_out = (got_in - cursor.last_in, got_out - cursor.last_out) if same else (got_in, got_out)
        cursor.last_id, cursor.last_in, cursor.last_out = str(message.get("id") or "")[:200], got_in, got_out
        if not before:
            spent.input_tokens += max(0, add_in)
            spent.output_tokens += max(0, add_out)
        return
    payload = entry.get("payload")
    info = payload.get("info") if isinstance(payload, dict) and payload.get("type") == "token_count" else None
    total = info.get("total_token_usage") if isinstance(info, dict) else None
    if entry.get("type") != "event_msg" or not isinstance(total, dict):
        return
    got_in, got_out = _n(total.get("input_tokens")), _n(total.get("output_tokens"))
    if not before:
        spent.input_tokens += max(0, got_in - max(cursor.total_in, 0))
        spent.output_tokens += max(0, got_out - cursor.total_out)
    cursor.total_in, cursor.total_out = got_in, got_out


def _n(value: Any) -> int:
    return value if type(value) is int and value > 0 else 0
