"""``strict-loop hook NAME`` (a harness of ``registry``): the harness's hooks record turns and enforce the pause.

Reads the hook JSON on stdin, finds the workspace and its running task, records a tool call as a turn
(``recording.record_turn``, the path ``append_event`` takes), and prints the harness's answer only when there is
something to say: a whisper this turn produced, a refusal while the task is paused, a block at Stop while an unattended
loop is not done. It never breaks the user's session: it always exits 0, and an internal error goes to
``<task folder>/hook-errors.log``. It runs on every tool call, so it imports only what the event at hand needs.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

from strict_loop.alerts import waiting
from strict_loop.harness import gates, payloads, registry
from strict_loop.harness.payloads import HookEvent

if TYPE_CHECKING:
    from strict_loop.base.layout import Layout
    from strict_loop.loop.monitoring import TaskMonitor
    from strict_loop.storage.store import TaskStore

MAX_STDIN_BYTES = 8 << 20
MANAGER_DIR = ".agent-loop"
"""``base.layout.MANAGER_DIR`` (kept in step by a test), named here so that importing the handler loads no layout;
the search for the workspace (``layout.find_root``, shared with the CLI) loads it, pydantic-free, on every call."""
TASK_ENV = "STRICT_LOOP_TASK"
HOOK_LOCK_TIMEOUT_S = 20.0
"""A hook waits this long for the task lock (the server holds it for milliseconds; a snapshot is taken outside it)."""
ERROR_LOG, ERROR_LOG_MAX_BYTES, ERROR_LINE_MAX_CHARS = "hook-errors.log", 64 << 10, 600
SUPERVISED_ENV = "STRICT_LOOP_SUPERVISOR"
"""Set by the supervisor in its harness child's environment: the hooks record and whisper, but leave the decision to
go on (Stop) to the supervisor."""
DAEMON_ENV, OFF = "STRICT_LOOP_HOOKD", ("0", "false", "no", "off")
"""``STRICT_LOOP_HOOKD`` values that turn the hook daemon off: every call then works in-process."""


def main(argv: Optional[Sequence[str]] = None) -> int:
    """The console entry: parse ``HARNESS [--workspace DIR]``, read stdin (capped), print the answer; always 0."""
    args = list(sys.argv[2:] if argv is None else argv)
    harness, workspace = _arguments(args)
    if harness is None:
        print(f"usage: strict-loop hook {{{','.join(registry.names())}}} [--workspace DIR]", file=sys.stderr)
        return 0
    # pydantic looks up plugins in every installed distribution's entry points (~15 ms); none belongs in a hook
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
    try:
        data = sys.stdin.buffer.read(MAX_STDIN_BYTES + 1)
    except (OSError, ValueError):
        return 0
    out = handle(harness, data, workspace=workspace, daemon=os.environ.get(DAEMON_ENV, "").strip().lower() not in OFF)
    if out:
        try:
            sys.stdout.write(out + "\n")
            sys.stdout.flush()
        except (OSError, ValueError):
            pass
    return 0


def _arguments(args: list[str]) -> tuple[Optional[str], Optional[str]]:
    harness = workspace = None
    rest = iter(args)
    for arg in rest:
        if arg == "--workspace":
            workspace = next(rest, None)
        elif arg.startswith("--workspace="):
            workspace = arg.split("=", 1)[1]
        elif arg in registry.names() and harness is None:
            harness = arg
        else:
            return None, None
    return harness, workspace


def handle(
    harness: str,
    data: bytes | str,
    *,
    workspace: Optional[str] = None,
    env: Optional[Mapping[str, str]] = None,
    cwd: Optional[str] = None,
    daemon: bool = False,
    phases: Collection[str] = ("pre", "post", "stop", "prompt"),
) -> str:
    """What the hook prints for stdin ``data`` ('' for nothing). Never raises.

    ``env`` is the hook's environment (the task's name, the secrets to mask); ``daemon``: hand tool events to the
    workspace's hook daemon (``harness.daemon``), starting one when none answers; ``phases``: the events to act on.
    """
    env = os.environ if env is None else env
    cwd = cwd or os.getcwd()
    raw = data.encode("utf-8", "surrogateescape") if isinstance(data, str) else data
    payload = _payload(raw)
    event = payloads.parse_event(harness, payload or {})
    if payload is not None and event.phase not in phases and event.name not in waiting.EVENTS:
        return ""  # an event this handler does not act on
    try:
        root = find_workspace(workspace, event.cwd or (payloads.sniff_cwd(raw) if payload is None else None), cwd)
        task_dir, running = find_task(root, env, event if payload is not None else None) if root else (None, [])
    except Exception:  # noqa: BLE001 (no task known: nowhere to log, and the session must go on)
        return ""
    early = _gate(event, payload is not None, raw, root, task_dir, env)
    if early is not None:
        return early
    if task_dir is None or root is None:
        return _unclaimed(event, root, running, env) if root and payload and event.phase == "post" else ""
    if event.phase == "pre" and _running_unpaused(task_dir):
        return ""  # the common case, read without pydantic
    # a paused task's calls are decided here, never by whatever listens on the daemon's socket
    handed = daemon and event.phase in ("pre", "post") and not _paused(task_dir / "monitor.json")
    path = _daemon_socket(root, env) if handed else None
    if path is not None:
        served = _ask_daemon(path, event, root, cwd, env, raw)
        if served is not None:
            path = None  # answered (or failed after taking it: the next hook finds out); no restart from here
            return served
    try:
        answer = _decide(event, root, task_dir, env)
        return json.dumps(answer, ensure_ascii=False) if answer else ""
    except Exception as exc:  # noqa: BLE001 (never break the user's session: log it, and refuse only while paused)
        _log(task_dir, harness, event.name, f"{type(exc).__name__}: {exc}", env)
        return gates.refuse_if_paused(event, root, event.phase, f"{type(exc).__name__}")
    finally:
        if path is not None:
            from strict_loop.harness.client import spawn

            spawn(root, path, env)  # for the next calls: this one was answered in-process


def _gate(
    event: HookEvent, readable: bool, raw: bytes, root: Optional[Path], task_dir: Optional[Path], env: Mapping[str, str]
) -> Optional[str]:
    """What is answered before any task is read (None: go on): a change to the loop's own files, refused at any time;
    the loop's own bookkeeping; input that is not one JSON object, refused while paused (when in doubt, deny). A
    session that goes on no longer waits for the person."""
    if readable:
        waiting.went_on(task_dir, event)
        if refused := gates.refuse_loop_write(event, root, task_dir):
            return refused
        return "" if event.phase == "post" and payloads.own_tool(event.tool) is not None else None
    if root is None:
        return None
    if task_dir is not None:
        _log(task_dir, event.harness, "stdin", "stdin is not one JSON object of at most 8 MiB; ignored", env)
    return gates.refuse_if_paused(event, root, payloads.sniff_phase(raw), "its input is not one readable JSON object")


def _ask_daemon(
    path: Path, event: HookEvent, root: Path, cwd: str, env: Mapping[str, str], raw: bytes
) -> Optional[str]:
    """The daemon's answer; None when it did not take the request (then the hook does the work itself). A daemon that
    failed after taking it gives silence, or a refusal while a task is paused."""
    from strict_loop.harness import client

    # the daemon has the hook's environment from its start (the socket's name says so): a request carries no secret
    header = {
        "op": "hook",
        "harness": event.harness,
        "workspace": str(root),
        "cwd": cwd,
        "env": client.request_env(env),
    }
    try:
        return client.ask(path, header, raw)
    except client.NotServed:
        return None
    except client.Unanswered as exc:
        return gates.refuse_if_paused(event, root, event.phase, f"the hook daemon failed: {exc}")


def _daemon_socket(root: Path, env: Mapping[str, str]) -> Optional[Path]:
    from strict_loop.harness.client import socket_path

    try:
        return socket_path(root, env)
    except OSError:
        return None


def _running_unpaused(task_dir: Path) -> bool:
    """True when state.json says running and monitor.json says not paused, both read without validation. Why:
    PreToolUse runs before every tool call and has nothing to say unless the task is paused; anything unusual (a
    damaged file, a missing field) takes the full path, which logs it."""
    from strict_loop.base.jsontext import read_object

    state = read_object(task_dir / "state.json")
    if not (state is not None and state.get("status") == "running" and isinstance(state.get("contract"), dict)):
        return False
    return not _paused(task_dir / "monitor.json")


def _payload(raw: bytes) -> Optional[dict[str, Any]]:
    if len(raw) > MAX_STDIN_BYTES:
        return None
    try:
        from strict_loop.base.jsontext import (
            parse_json,  # depth-capped: a hostile payload is an error, not a RecursionError
        )

        value = parse_json(raw)
    except Exception:  # noqa: BLE001
        return None
    return value if isinstance(value, dict) else None


def find_workspace(given: Optional[str], event_cwd: Optional[str], process_cwd: str) -> Optional[Path]:
    """``--workspace`` if given, else the nearest folder at or above the event's cwd (else ours) holding
    ``.agent-loop/``."""
    if given:
        root = Path(given).expanduser()
        return root.resolve() if (root / MANAGER_DIR).is_dir() else None
    from strict_loop.base.layout import find_root  # the CLI's and the MCP server's search too

    start = Path(event_cwd or process_cwd).expanduser()
    return find_root(start if start.is_absolute() else Path(process_cwd) / start)


def find_task(
    root: Path, env: Mapping[str, str], event: Optional[HookEvent] = None
) -> tuple[Optional[Path], list[str]]:
    """The folder of the task this call belongs to, and (when none) the running tasks that could claim it.

    In order: env ``STRICT_LOOP_TASK``; the task the call itself names (a loop call with a ``task_id``, which
    binds the session to it), unless the session's own task is paused (naming another task must not get a call
    past the pause); the task the session was bound to, while it runs; the single running task (a task whose
    state does not even parse counts, so that its problem is logged rather than hidden). The running tasks come
    from an index (``sessions.live_tasks``): a call costs the same however many task folders the workspace holds.
    """
    from strict_loop.base.layout import Layout
    from strict_loop.storage.sessions import live_tasks

    layout = Layout(root)
    wanted = env.get(TASK_ENV, "").strip()
    if wanted:
        return _task_folder(layout, wanted), []
    claimed = gates.claimed_task(event) if event is not None else None
    running = live_tasks(layout)
    bound = gates.bound_task(root / MANAGER_DIR, event) if event is not None and len(running) > 1 else None
    current = bound if bound in running else (running[0] if len(running) == 1 else None)
    if claimed and claimed != current and _task_folder(layout, claimed):
        if current is not None and _paused(layout.task(current).monitor):
            return layout.task(current).root, []  # a paused session cannot leave its task by naming another one
        gates.bind(root / MANAGER_DIR, event, claimed)  # type: ignore[arg-type]
        return layout.task(claimed).root, []
    return (layout.task(current).root if current else None), ([] if current else running)


def _unclaimed(event: HookEvent, root: Path, running: list[str], env: Mapping[str, str]) -> str:
    """A tool call while several tasks run and none claims it: recorded in unclaimed.jsonl, the agent told once."""
    if len(running) < 2:
        return ""  # no loop runs here: nothing to claim the call
    try:
        text = gates.record_unclaimed(root / MANAGER_DIR, event, payloads.turn_fields(event), running, env)
    except Exception:  # noqa: BLE001 (a busy or unwritable folder must not break the session)
        return ""
    return json.dumps(payloads.context_output(event, text), ensure_ascii=False) if text else ""


def _paused(monitor: Path) -> bool:
    """True unless monitor.json is absent or says ``paused: false`` (an unreadable one counts as paused: deny)."""
    from strict_loop.base.jsontext import read_object

    if not os.path.lexists(monitor):
        return False
    mon = read_object(monitor)
    return mon is None or mon.get("paused") is not False


def _task_folder(layout: Layout, task_id: str) -> Optional[Path]:
    """The folder of task ``task_id`` if it is one (a valid id, inside the workspace, holding its state or ledger)."""
    try:
        paths = layout.task(task_id)
    except Exception:  # noqa: BLE001 (not a task id, or a link out of the workspace)
        return None
    return paths.root if paths.exists() else None


def _decide(event: HookEvent, root: Path, task_dir: Path, env: Mapping[str, str]) -> Optional[dict[str, Any]]:
    if event.name in waiting.EVENTS:  # the agent waits for the person: kept for the page and alerted, never answered
        tail = registry.resolve("strict_loop.harness.readers:transcript_lines")
        if problem := waiting.hook(root, task_dir, event, env, lambda: tail(event), registry.get(event.harness).title):
            _log(task_dir, event.harness, event.name, problem, env)
        return None
    from strict_loop.base.layout import TaskPaths
    from strict_loop.loop.monitoring import TaskMonitor
    from strict_loop.storage.store import TaskStore, ValidationCache

    store = TaskStore(TaskPaths(task_dir), task_dir.name, ValidationCache(), HOOK_LOCK_TIMEOUT_S)
    if event.phase == "stop":
        state = store.load()  # the stop checks need the whole contract
        status, mode, settings = state.status, state.contract.operating_mode, state.contract.monitor
    else:
        status, mode, settings = _monitor_view(store)
    if status == "completed" and event.phase == "post":  # e.g. the call whose round completed the task: kept, unsaid
        _after_tool(event, root, TaskMonitor(store, root, settings), env, payloads.turn_fields(event))
        return None
    if status != "running":
        return None
    supervision = TaskMonitor(store, root, settings)
    if event.phase == "post":
        return _after_tool(event, root, supervision, env, payloads.turn_fields(event))
    if event.phase == "prompt":  # the person's word is an outcome too; a supervisor's prompt is not a person's
        said = None if env.get(SUPERVISED_ENV) else payloads.person_fields(event)
        return None if said is None else _after_tool(event, root, supervision, env, said)
    if event.phase == "pre":
        if not supervision.paused() or payloads.reads_loop_state(event, _own_executable()):
            return None
        from strict_loop.monitor.ladder import diagnosis, resume_command

        mon, resume = supervision.load(), resume_command(root, store.task_id)
        if gates.said_before(store, event, mon.paused_at):
            return payloads.deny_output(event, payloads.pause_reminder(resume))
        return payloads.deny_output(event, payloads.pause_reason(diagnosis(mon), resume))
    if mode != "unattended" or supervision.paused() or env.get(SUPERVISED_ENV):
        return None  # under `strict-loop supervise`, the supervisor decides whether the agent goes on
    from strict_loop.harness.gates import at_stop

    return at_stop(event, root, store, HOOK_LOCK_TIMEOUT_S)


def _monitor_view(store: TaskStore) -> tuple[Any, Any, Any]:
    """The task's status, mode and monitor settings, read from state.json without validating the rest of it. Why: a
    tool call needs only these, and validating the whole state is most of a hook's work. The settings are validated;
    a state.json that does not parse is StateDamaged (and logged)."""
    from strict_loop.base.errors import StateDamaged
    from strict_loop.base.jsontext import parse_json
    from strict_loop.model.settings import MonitorSettings
    from strict_loop.model.validation import validate_input

    fix = f"run `strict-loop rebuild_state --task-id {store.task_id}` to rebuild it from the ledgers"
    try:
        raw = parse_json(store.read(store.paths.state, fix))
    except ValueError as exc:
        raise StateDamaged(str(store.paths.state), str(exc), fix) from None
    contract = raw.get("contract") if isinstance(raw, dict) else None
    if not isinstance(contract, dict):
        raise StateDamaged(f"{store.paths.state}: field 'contract'", "is missing or not an object", fix)
    settings = validate_input(MonitorSettings, contract.get("monitor", {}), f"{store.paths.state}: contract.monitor")
    return raw.get("status"), contract.get("operating_mode"), settings


def _after_tool(
    event: HookEvent, root: Path, supervision: TaskMonitor, env: Mapping[str, str], fields: dict[str, Any]
) -> Optional[dict[str, Any]]:
    """Record a turn (a tool call, what the person typed) after the calls that never ran before it (refused, blocked by
    a hook: no post-tool hook fires for them); say what the monitor has to say, one step of its ladder at most."""
    from strict_loop.loop.recording import record_turn, record_turns

    store, refused = supervision.store, payloads.refused_turns(event)
    try:  # each call once, whichever hook finds it first
        done = (
            record_turns(store, root, refused, supervision.settings(), env, once=True, one_step=True) if refused else []
        )
    except Exception as exc:  # noqa: BLE001 (the refusals must not cost this turn)
        _log(store.paths.root, event.harness, event.name, f"refused calls: {type(exc).__name__}: {exc}", env)
        done = []
    message, late = f"{fields['tool']} ({event.harness} {event.name})", registry.get(event.harness).late_words
    words = (lambda call: payloads.agent_words(event, call)) if late and event.phase == "post" else None
    climb = not any(r.whisper or r.pause for r in done)  # all of it is heard at once
    done += [record_turn(store, root, message, fields, event.meta, supervision.settings(), env, words, climb)]
    if any(r.pause for r in done):  # the paused session stays this task's, even once other tasks run beside it
        gates.bind(root / MANAGER_DIR, event, store.task_id)
    said = [r.pause for r in done if r.pause] + [
        f"[strict-loop monitor] {t}" for r in done for t in (r.whisper, r.notice) if t
    ]
    from strict_loop.harness.spend import charge  # the task's budgets: a whisper at 80%, a pause when one is spent

    said += charge(event, supervision, root, env, 1 if event.phase == "post" else 0)
    text = "\n".join(said)
    return payloads.context_output(event, text) if text else None


def _own_executable() -> Optional[str]:
    """The ``strict-loop`` next to this interpreter: a paused agent may run it by its absolute path."""
    exe = Path(sys.executable).parent / "strict-loop"
    return str(exe) if exe.is_file() else None


def _log(task_dir: Path, harness: str, where: str, message: str, env: Optional[Mapping[str, str]] = None) -> None:
    """One bounded line in the task's hook-errors.log (secrets masked); a log that cannot be written is dropped."""
    try:
        from strict_loop.base import masking
        from strict_loop.base.fsio import append_line, atomic_write

        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        line = masking.mask(f"{stamp} hook {harness} {where}: {message}", env).replace("\n", " ")[:ERROR_LINE_MAX_CHARS]
        path = task_dir / ERROR_LOG
        if path.is_file() and not path.is_symlink() and path.stat().st_size > ERROR_LOG_MAX_BYTES:
            tail = path.read_bytes()[-ERROR_LOG_MAX_BYTES // 2 :]
            atomic_write(path, tail[tail.find(b"\n") + 1 :], sync=False)
        append_line(path, (line + "\n").encode(), sync=False)
    except Exception:  # noqa: BLE001 (logging must never become the error)
        return
