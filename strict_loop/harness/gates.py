"""The hook's decisions about one call beyond recording it, each keeping small records of its own per session:
which task the call belongs to (a session is bound to the task its own loop call names, and a call no task claims
is kept in unclaimed.jsonl: no tool call is ever dropped), the pause (what a paused task's agent may still do, said
in full once, refused when the hook cannot decide) and the Stop (block the end of an unattended agent's turn while
the stop checks say continue).

Why apart from ``handler``: these are the per-session records (``sessions.json``, who was told of the pause, how
often each session was blocked, capped below Claude Code's limit). Why a binding is needed: with two running tasks
in one workspace and no ``STRICT_LOOP_TASK``, a hook cannot guess where a call belongs; the agent's own loop calls
say it (an MCP tool or a ``strict-loop`` command naming a ``task_id``), and a call that neither the environment, a
binding nor a single running task explains goes to ``.agent-loop/unclaimed.jsonl``, the agent told once how to bind.
Only the standard library at import: the hook's fast path loads this.
"""

from __future__ import annotations

import json
import re
import shlex
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

from strict_loop.harness import payloads, registry
from strict_loop.harness.payloads import SHELL_TOOLS, HookEvent, own_tool

if TYPE_CHECKING:
    from strict_loop.storage.store import TaskStore

STOP_BLOCK_CAP = 6
"""Blocks at Stop per task and session: below Claude Code's own cap of 8 consecutive ones; Codex has none."""
STOP_BLOCKS_FILE = "hook-stop-blocks.json"
MAX_SESSIONS_KEPT = 50


def at_stop(event: HookEvent, root: Path, store: TaskStore, lock_timeout: float) -> Optional[dict[str, Any]]:
    """Block the end of the turn while check_stop says continue, at most STOP_BLOCK_CAP times per session.

    An untrusted contract's commands never run (``trust.py``): then the hook does not block at all.
    """
    from strict_loop.loop.workspace import Workspace
    from strict_loop.storage.trust import TrustStore

    state = store.load()  # loaded by the handler a moment ago: from this process's cache
    trust = TrustStore()
    if not trust.is_trusted(root, store.task_id, state.contract.stop_checks):
        return None
    key = event.session_key
    fresh = (
        registry.get(event.harness).stop_restarts_on_new_turn and not event.stop_hook_active
    )  # not a block-continued stop
    with store.locked():
        counts = _stop_blocks(store)
        if fresh:
            counts.pop(key, None)
        if counts.get(key, 0) >= STOP_BLOCK_CAP:
            return None
    report = Workspace(root, lock_timeout=lock_timeout, trust_store=trust).check_stop(task_id=store.task_id)
    if report.should_stop:
        return None
    with store.locked():
        counts = _stop_blocks(store)
        counts[key] = (0 if fresh else counts.get(key, 0)) + 1
        _save_stop_blocks(store, counts)
    reason = payloads.continue_reason(store.task_id, state.next_task, report.reason)
    notices = [
        m.text for m in report.supervisor.messages if m.kind == "notice"
    ]  # handed over by check_stop: say it here
    return payloads.block_stop_output(" ".join([reason, *notices]))


def _stop_blocks(store: TaskStore) -> dict[str, int]:
    # missing or damaged: counting starts again
    return {k: v for k, v in _per_session(store, STOP_BLOCKS_FILE).items() if type(v) is int}


def _save_stop_blocks(store: TaskStore, counts: dict[str, int]) -> None:
    _keep_per_session(store, STOP_BLOCKS_FILE, counts)


def _per_session(store: TaskStore, name: str) -> dict[str, Any]:
    """A small per-session record of the task's hooks (caller holds the task lock)."""
    from strict_loop.base.jsontext import read_object

    return read_object(store.paths.root / name) or {}


def _keep_per_session(store: TaskStore, name: str, values: dict[str, Any]) -> None:
    """Write it back, the last MAX_SESSIONS_KEPT sessions only (caller holds the task lock)."""
    from strict_loop.base.fsio import atomic_write, dumps_doc

    kept = dict(list(values.items())[-MAX_SESSIONS_KEPT:])
    atomic_write(store.paths.root / name, dumps_doc(kept), sync=False)


PAUSE_TOLD_FILE = "hook-pause-told.json"


def said_before(store: TaskStore, event: HookEvent, paused_at: Optional[int]) -> bool:
    """Whether this session was already given this pause's full reason (then one line is enough); records it now."""
    key = event.session_key
    with store.locked():
        told = _per_session(store, PAUSE_TOLD_FILE)
        if told.get(key) == paused_at:
            return True
        told.pop(key, None)  # the latest last: the oldest sessions go first
        told[key] = paused_at
        _keep_per_session(store, PAUSE_TOLD_FILE, told)
    return False


def refuse_if_paused(event: HookEvent, root: Path, phase: str, why: str) -> str:
    """A pre-tool call (or one whose kind is unknown) the hook could not decide about is denied while any task of the
    workspace is paused; otherwise the session goes on (an agent must not get around a pause with an unreadable
    payload, a dead daemon or an error)."""
    if phase not in ("pre", "other"):
        return ""
    try:
        from strict_loop.base.jsontext import read_object
        from strict_loop.base.layout import Layout

        layout = Layout(root)
        paused = [t for t in layout.task_ids() if (read_object(layout.task(t).monitor) or {}).get("paused") is True]
        if not paused:
            return ""
        from strict_loop.monitor.ladder import resume_command  # only on a refusal: pydantic is affordable here

        resume = resume_command(root, paused[0])
        return json.dumps(payloads.deny_output(event, payloads.unreadable_reason(paused, why, resume)))
    except Exception:  # noqa: BLE001
        return json.dumps(payloads.deny_output(event, f"strict-loop: this call could not be checked ({why}); refused"))


TASK_ID = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")
_TASK_FLAGS = ("--task-id", "--task")
_OUR_PROGRAMS = ("strict-loop",)


def claimed_task(event: HookEvent) -> Optional[str]:
    """The task id the agent's own loop call names: one of the loop's MCP tools with ``task_id``, or a
    ``strict-loop ... --task-id X`` command (also ``python scripts/<op>.py --task-id X``); else None."""
    args = event.tool_input if isinstance(event.tool_input, dict) else {}
    if own_tool(event.tool) is not None:
        task_id = args.get("task_id")
        return task_id if isinstance(task_id, str) and TASK_ID.fullmatch(task_id) else None
    if event.tool not in SHELL_TOOLS:
        return None
    command = args.get("command", args.get("cmd"))
    if isinstance(command, list):
        command = " ".join(str(word) for word in command)
    return _task_in_command(command) if isinstance(command, str) and len(command) <= 10_000 else None


def _task_in_command(command: str, depth: int = 0) -> Optional[str]:
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    ours = False
    for i, word in enumerate(words):
        if word.startswith("#"):  # a task named in a comment claims nothing
            return None
        if word.rsplit("/", 1)[-1] in _OUR_PROGRAMS or (word.endswith(".py") and "/scripts/" in f"/{word}"):
            ours = True
        elif ours and word in _TASK_FLAGS and i + 1 < len(words):
            return words[i + 1] if TASK_ID.fullmatch(words[i + 1]) else None
        elif ours and word.startswith(tuple(f + "=" for f in _TASK_FLAGS)):
            value = word.split("=", 1)[1]
            return value if TASK_ID.fullmatch(value) else None
        elif word in ("&&", "||", ";", "|"):
            ours = False
        elif depth == 0 and " " in word:  # bash -lc '<command>' (Codex reports shell calls wrapped)
            found = _task_in_command(word, 1)
            if found:
                return found
    return None


def bound_task(manager: Path, event: HookEvent) -> Optional[str]:
    """The task this call's session was bound to, if any."""
    from strict_loop.storage import sessions

    return sessions.bound_task(manager, event.session_key)


def bind(manager: Path, event: HookEvent, task_id: str) -> None:
    """Bind the call's session to ``task_id``."""
    from strict_loop.storage import sessions

    sessions.bind(manager, event.session_key, task_id)


def record_unclaimed(
    manager: Path, event: HookEvent, fields: dict[str, Any], running: list[str], env: Mapping[str, str]
) -> Optional[str]:
    """Append the call to unclaimed.jsonl (masked); the text to tell the agent, the first time for its session."""
    from strict_loop.base.masking import mask_tree
    from strict_loop.storage import sessions

    line = {
        "ts": round(time.time(), 3),
        "harness": event.harness,
        "session_id": event.session_id[:200],
        "event": event.name,
        "running_tasks": running[:20],
        "turn": fields,
    }
    if not sessions.append_unclaimed(manager, event.session_key, mask_tree(line, env)):
        return None
    ids = ", ".join(running[:10])
    return (
        f"[strict-loop] {len(running)} loop tasks are running here ({ids}) and this session is bound to none, "
        f"so this call was recorded in .agent-loop/{sessions.UNCLAIMED_FILE}, not in a task. Name your task in a "
        "loop call to bind this session (announce your round: append_event with task_id=<id>, or run "
        "`strict-loop show_task --task-id <id>`), or start the session with STRICT_LOOP_TASK=<id>."
    )


# ---------------------------------------------------------------- the loop's own files: never written by the agent

LOOP_FOLDERS = (".agent-loop", ".codex-loop")
_NAMES_LOOP = re.compile(r"(?:^|[/\\\s'\"=:(])\.(?:agent|codex)-loop(?=$|[/\\\s'\"*?;&|)<>])", re.I)
_DOT_GLOB = re.compile(r"(?:^|[\s/'\"=])\.[^\s/]*[*?\[]")
_REMOVAL = re.compile(r"\b(?:rm|rmdir|mv)\s")
_PERSON_ONLY = re.compile(
    r"\bstrict[-_]loop\b[^;&|\n]*?\s(?:resume|trust|person-key|budget)\b|\bperson\.key\b|\b(?:resume|trust|budget)\.py"
)
"""A person's own commands (answering a pause, trusting, raising a budget, the person key): never the agent's."""
_REDIRECT = re.compile(r"(?:&>>?|\d*>>?\|?)\s*(['\"]?)([^\s;&|<>'\"]+)\1")
_PATCH_HEADER = re.compile(r"^\*\*\* (?:Update File|Add File|Delete File|Move to): (.+)$", re.M)
_INLINE_WRITE = re.compile(
    r"\b(?:write\w*|unlink\w*|remove\w*|rmtree|rm(?:Sync|dir\w*)?|rename\w*|replace|truncate\w*|mkfifo|symlink\w*|"
    r"chmod\w*|copy\w*|move)\s*\(|open\([^)]{0,300}['\"][wax]\+?b?['\"]|\bos\.system\b|\bsubprocess\b",
)
_FILE_TOOLS = frozenset(
    {"write", "edit", "multiedit", "notebookedit", "create", "write_file", "edit_file", "create_file", "apply_patch"}
    | {"patch", "replace", "insert", "write_to_file", "replace_in_file", "search_replace", "apply_diff", "move_file"}
    | {"insert_content", "str_replace_editor", "str_replace_based_edit_tool", "delete_file"}
)
"""Tools that write, move or remove a file they name (compared lowercased, an MCP tool by its own name)."""
_PATH_KEYS = ("path", "file_path", "filePath", "filename", "file", "target_file", "notebook_path", "source", "destination")  # noqa: E501  # fmt: skip
_MUTATORS = frozenset(
    {"rm", "rmdir", "unlink", "shred", "truncate", "touch", "mkfifo", "mknod", "mkdir", "ln", "chmod", "chown"}
    | {"chgrp", "mv", "setfacl", "chattr", "xattr", "srm", "trash", "trash-put", "gio"}
)
"""Commands whose every argument is a file they change (``cp``, ``install``, ``rsync``: only the last; ``find``: its
folders, with ``-delete`` or ``-exec``)."""
_REMOVERS = frozenset({"rm", "rmdir", "mv", "srm", "trash", "trash-put", "gio", "shred"})
"""Of those, the ones that take a folder away whole: naming a folder that holds the loop's is refused too."""
_WRAPPERS = frozenset({"sudo", "doas", "env", "command", "builtin", "exec", "nohup", "time", "nice", "stdbuf"})
_SHELLS = frozenset({"bash", "sh", "zsh", "dash", "ksh", "fish", "eval"})
_INTERPRETERS = re.compile(r"^(?:python[\d.]*|node|nodejs|deno|bun|perl|ruby|php|osascript|lua)$")


def refuse_loop_write(event: HookEvent, root: Optional[Path], task_dir: Optional[Path] = None) -> str:
    """Refuse a tool call of the agent's that would write, move or remove anything under the loop's folder (its
    contract, ledgers, monitor state, the folder itself), at any time; '' for every other call (the common case
    costs a set lookup, or two substring searches of a shell command). The loop's own tools and commands write there
    in their own process, never through the agent's file tools or redirections."""
    if event.phase != "pre" or root is None:
        return ""
    try:
        base = str(Path(event.cwd).expanduser()) if event.cwd and Path(event.cwd).is_absolute() else str(root)
        hit = next(
            (t for t in _call_targets(event, base) if t[1] == "!person" or _in_loop(t, base, root, removal=True)), None
        )
    except Exception:  # noqa: BLE001 (a call this cannot read goes on to the pause gate, which decides)
        return ""
    if hit is None:
        return ""
    reason = (
        "strict-loop: answering a pause, trusting commands or settings and the person key are the person's alone; "
        "the agent's tools never run them, at any time. Refused: if something needs a person, say so and stop."
        if hit[1] == "!person"
        else f"strict-loop: the call would change {hit[0][:200]!r}, inside the loop's folder (.agent-loop/: the task's "
        "contract, ledgers and the progress monitor's state). The agent's tools never write, move or remove "
        "anything there, at any time: the loop's own tools and `strict-loop` commands keep those files. Refused; "
        "if a person wants them changed, the person does it outside this session."
    )
    _note_refusal(task_dir, event, hit[0])
    return json.dumps(payloads.deny_output(event, reason))


def _call_targets(event: HookEvent, base: str) -> list[tuple[str, str]]:
    """(path, cwd it is relative to, or '!' for a removal) for each file the call would change, as far as told."""
    args = event.tool_input if isinstance(event.tool_input, dict) else {}
    if event.tool in SHELL_TOOLS:
        command = args.get("command", args.get("cmd"))
        if isinstance(command, list):
            command = " ".join(str(word) for word in command)
        if not isinstance(command, str):
            return []
        if _PERSON_ONLY.search(command):
            return [("a person's own strict-loop command", "!person")]
        inside = _NAMES_LOOP.search(base)  # the shell's folder is the loop's (a harness reports it resolved)
        if not (inside or _NAMES_LOOP.search(command) or _DOT_GLOB.search(command) or _REMOVAL.search(command)):
            return []  # the common case: the command neither names the folder, runs inside it nor removes
        return _shell_targets(command, base, 0)
    if event.tool.rsplit("__", 1)[-1].lower() not in _FILE_TOOLS:
        return []
    found = [(v, base) for k in _PATH_KEYS for v in [args.get(k)] if isinstance(v, str)]
    for text in _strings(event.tool_input, 3):
        found += [(m.strip(), base) for m in _PATCH_HEADER.findall(text)]
    return found


def _strings(value: Any, depth: int) -> list[str]:
    if isinstance(value, str):
        return [value] if "*** " in value else []
    children = value.values() if isinstance(value, dict) else value if isinstance(value, list) else []
    return [s for child in list(children)[:50] for s in _strings(child, depth - 1)] if depth > 0 else []


def _shell_targets(command: str, cwd: str, depth: int) -> list[tuple[str, str]]:
    """What a shell command changes: redirections, file-changing commands, ``cd`` followed, ``sh -c`` and inline
    scripts that name the folder; ``shellwork.writes`` for the rest (``sed -i``, ``tee``, patches, ``git``)."""
    import os

    from strict_loop.monitor.calls import shellwork

    if len(command) > shellwork.MAX_COMMAND and _NAMES_LOOP.search(command):
        return [(".agent-loop", "(a command too long to read that names the loop's folder)")]
    found = [(p, cwd) for p in shellwork.writes(command) if not p.startswith("(")]
    if _INLINE_WRITE.search(command) and _NAMES_LOOP.search(command):
        first = command.split(None, 1)[0].rsplit("/", 1)[-1] if command.strip() else ""
        if _INTERPRETERS.match(first) or "(script)" in shellwork.writes(command):
            found.append((".agent-loop", "(a script that names the loop's folder and writes)"))
    for part in shellwork.segments(command.split("\n", 1)[0] if "<<" in command else command):  # a heredoc: its line
        found += [(m.group(2), cwd) for m in _REDIRECT.finditer(part)]
        words = _words(part)
        while words and (words[0] in _WRAPPERS or re.fullmatch(r"\w+=\S*", words[0]) or words[0].startswith("-")):
            words = words[1:]
        if not words:
            continue
        name, rest = words[0].rsplit("/", 1)[-1], [w for w in words[1:] if not w.startswith("-")]
        if name in ("cd", "pushd") and rest:
            cwd = os.path.normpath(os.path.join(cwd, os.path.expanduser(rest[0])))
        elif name in _SHELLS and depth < 2:
            found += [t for w in words[1:] if " " in w or name == "eval" for t in _shell_targets(w, cwd, depth + 1)]
        elif name in _MUTATORS or (name == "find" and {"-delete", "-exec", "-execdir"} & set(words)):
            moved = rest[:-1] if name == "mv" else rest  # `mv a ..` takes `a` away, and only writes into `..`
            found += [(w, "!" + cwd if name in _REMOVERS and w in moved else cwd) for w in rest]
        elif name in ("cp", "install", "rsync") and rest:
            found.append((rest[-1], cwd))
        elif name == "dd":
            found += [(w[3:], cwd) for w in words if w.startswith("of=")]
    return found


def _words(part: str) -> list[str]:
    try:
        return shlex.split(part)
    except ValueError:
        return part.split()


def _in_loop(target: tuple[str, str], base: str, root: Path, *, removal: bool) -> bool:
    """Whether ``target`` (path, cwd; a cwd starting with '!' marks a removal) is the loop's folder or inside it, or
    (for a removal) a folder holding it; globs are expanded as the shell would."""
    import glob
    import os

    path, cwd = target
    if cwd.startswith("("):
        return True  # a command judged as a whole (see _shell_targets)
    removes = removal and cwd.startswith("!")
    cwd = cwd.lstrip("!") or base
    if _NAMES_LOOP.search(path):
        return True
    full = os.path.join(cwd, os.path.expanduser(path))
    candidates = glob.glob(full)[:50] if re.search(r"[*?\[]", path) else [full]
    folders = [os.path.normcase(os.path.realpath(root / name)) for name in LOOP_FOLDERS]
    for candidate in candidates:
        real = os.path.normcase(os.path.realpath(candidate))
        for folder in folders:
            if real == folder or real.startswith(folder + os.sep):
                return True
            if removes and folder.startswith(real.rstrip(os.sep) + os.sep):
                return True  # removing or moving a folder that holds the loop's
    return False


def _note_refusal(task_dir: Optional[Path], event: HookEvent, target: str) -> None:
    """Record the attempt in the task's ledger, for the person (never fails the refusal)."""
    if task_dir is None:
        return
    try:
        from strict_loop.base.layout import TaskPaths
        from strict_loop.storage.store import TaskStore, ValidationCache

        store = TaskStore(TaskPaths(task_dir), task_dir.name, ValidationCache(), 5.0)
        with store.locked():
            store.append_event(
                "loop.write_refused",
                f"the agent's {event.tool} call would have changed {target[:200]!r} in the loop's folder: refused",
                {"tool": event.tool[:200], "target": target[:500], "session_id": event.session_id},
            )
    except Exception:  # noqa: BLE001
        return
