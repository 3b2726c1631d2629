"""The per-user index of workspaces this machine has loops in: ``$XDG_CONFIG_HOME/strict-loop/workspaces.json``.

Why: a person's page (``strict-loop dashboard``) shows every loop on the machine, and nothing else knows where
they are. It is written when a task is created and when a workspace's hook daemon starts, read by the dashboard,
and pruned on read of every workspace folder that is gone. It also keeps the task ids it last saw in each
workspace: an agent's ``rm -rf .agent-loop`` (or of one task's folder) takes the task's own record with it, and
``vanished`` is how the loss is still noticed and told (``list_tasks``, ``show_task``, the next ``init_state``,
the page). Standard library and ``base`` only: the hook daemon records itself here without loading pydantic.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NamedTuple, Optional

from strict_loop.base.fsio import atomic_write, dumps_doc, file_lock
from strict_loop.base.layout import MANAGER_DIR, Layout, TaskPaths
from strict_loop.base.timefmt import now_iso

INDEX_FILE = "workspaces.json"
MAX_WORKSPACES = 500
"""Kept at most (the most recently seen): a page over more loops than this is not a glance."""
MAX_TASKS = 200
"""Task ids kept per workspace (by name): enough to say what a removed loop folder held."""


def config_dir(env: Mapping[str, str] = os.environ) -> Path:
    """``$XDG_CONFIG_HOME/strict-loop``, else ``$HOME/.config/strict-loop``. An environment that names neither (one
    built for a single call) stands for this process's own, whose folders are the person's."""
    own = env if env.get("XDG_CONFIG_HOME", "").strip() or env.get("HOME", "").strip() else os.environ
    base = own.get("XDG_CONFIG_HOME", "").strip()
    home = own.get("HOME", "").strip()
    return (Path(base) if base else (Path(home) if home else Path.home()) / ".config") / "strict-loop"


def workspace_id(root: Path | str) -> str:
    """A short, stable name of a workspace for URLs (a digest of its resolved path: no path in a link)."""
    real = os.path.realpath(root)
    return hashlib.blake2b(real.encode("utf-8", "surrogateescape"), digest_size=6).hexdigest()


def index_path(directory: Optional[Path] = None) -> Path:
    return (directory or config_dir()) / INDEX_FILE


def _read(path: Path) -> dict[str, dict[str, Any]]:
    try:
        doc = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return {}  # missing or damaged: rebuilt by the next task or daemon
    found = doc.get("workspaces") if isinstance(doc, dict) else None
    if not isinstance(found, dict):
        return {}
    return {
        str(k): {
            "path": str(v["path"]),
            "seen": str(v.get("seen", "")),
            "tasks": [str(t) for t in v["tasks"][:MAX_TASKS]] if isinstance(v.get("tasks"), list) else [],
        }
        for k, v in found.items()
        if isinstance(v, dict) and isinstance(v.get("path"), str)
    }


def _write(path: Path, entries: dict[str, dict[str, Any]]) -> None:
    newest = sorted(entries.items(), key=lambda kv: kv[1]["seen"], reverse=True)[:MAX_WORKSPACES]
    atomic_write(path, dumps_doc({"version": 1, "workspaces": dict(sorted(newest))}), mode=0o600)


def _alive(entry: Mapping[str, Any]) -> bool:
    return os.path.isdir(os.path.join(entry["path"], MANAGER_DIR))


def _kept(entry: Mapping[str, Any]) -> bool:
    """Still worth an entry: its loop folder is there, or the folder is gone from a workspace that is still there
    and held tasks (a trace to report)."""
    return _alive(entry) or (bool(entry["tasks"]) and os.path.isdir(entry["path"]))


def remember(root: Path | str, directory: Optional[Path] = None) -> str:
    """Record ``root`` and its tasks (atomically, under a lock, 0600); returns its id. Task ids recorded before whose
    folders are gone stay recorded (``vanished`` reports them until ``acknowledge``). Never raises: the index is a
    convenience, and a task or a daemon must not fail for it."""
    return _record(root, directory, keep_gone=True)


def acknowledge(root: Path | str, directory: Optional[Path] = None) -> str:
    """``remember``, forgetting the task ids whose folders are gone: the loss was recorded elsewhere (the next
    task's ledger) or a person saw it. Never raises."""
    return _record(root, directory, keep_gone=False)


def _record(root: Path | str, directory: Optional[Path], *, keep_gone: bool) -> str:
    real = os.path.realpath(root)
    key = workspace_id(real)
    path = index_path(directory)
    try:
        present = Layout(Path(real)).task_ids()
        current = _read(path).get(key)
        before = current["tasks"] if current is not None and current["path"] == real and keep_gone else []
        tasks = (present + [t for t in before if t not in present])[:MAX_TASKS]
        if current is not None and (current["path"], current["seen"][:10], current["tasks"]) == (
            real,
            now_iso()[:10],
            tasks,
        ):
            return key  # seen today already, with these tasks: no write
        with file_lock(path.with_name(INDEX_FILE + ".lock"), "the workspaces index"):
            entries = _read(path)
            entries[key] = {"path": real, "seen": now_iso(), "tasks": tasks}
            _write(path, entries)
    except Exception:  # noqa: BLE001 (a read-only home, a held lock: the loop goes on without the index)
        pass
    return key


def forget(root: Path | str, directory: Optional[Path] = None) -> None:
    """Take ``root`` out of the index (``strict-loop demo``'s scratch folder: not a loop of the person's to show on
    every later page). Never raises, as ``remember``."""
    path = index_path(directory)
    key = workspace_id(root)
    try:
        if key in _read(path):
            with file_lock(path.with_name(INDEX_FILE + ".lock"), "the workspaces index"):
                entries = _read(path)
                entries.pop(key, None)
                _write(path, entries)
    except Exception:  # noqa: BLE001 (a read-only home, a held lock: the entry goes when its folder does)
        pass


def known(directory: Optional[Path] = None) -> dict[str, Path]:
    """id -> workspace root of every indexed workspace whose loop folder is there. Entries of workspace folders that
    are gone are pruned from the file; a loop folder removed from a workspace still there is kept (``vanished``)."""
    path = index_path(directory)
    entries = _read(path)
    if any(not _kept(v) for v in entries.values()):
        try:
            with file_lock(path.with_name(INDEX_FILE + ".lock"), "the workspaces index"):
                fresh = _read(path)
                _write(path, {k: v for k, v in fresh.items() if _kept(v)})
        except Exception:  # noqa: BLE001 (pruning is housekeeping; the answer below is right either way)
            pass
    alive = sorted((v["path"], k) for k, v in entries.items() if _alive(v))
    return {k: Path(p) for p, k in alive}


class Vanished(NamedTuple):
    """What this machine last saw in a workspace and is no longer there."""

    path: Path
    tasks: tuple[str, ...]  # the task ids recorded then whose folders are gone
    whole: bool  # the whole loop folder (.agent-loop/) is gone, not just some task folders
    seen: str  # when they were recorded (ISO time)

    def describe(self) -> str:
        """One sentence for a person."""
        names = ", ".join(self.tasks[:10]) + (f" and {len(self.tasks) - 10} more" if len(self.tasks) > 10 else "")
        if self.whole:
            return (
                f"the loop folder {self.path / MANAGER_DIR} was removed: it held task(s) {names} when this machine "
                f"last recorded it ({self.seen}); their ledgers went with it"
            )
        return (
            f"the folder(s) of task(s) {names} under {self.path / MANAGER_DIR / 'tasks'} were removed since this "
            f"machine last recorded them ({self.seen}); their ledgers went with them"
        )


def _vanished(entry: Mapping[str, Any]) -> Optional[Vanished]:
    if not entry["tasks"] or not os.path.isdir(entry["path"]):
        return None  # nothing recorded, or the whole workspace is gone (a person's move, not a loop's loss)
    root = Path(entry["path"])
    whole = not _alive(entry)
    gone = tuple(entry["tasks"]) if whole else tuple(t for t in entry["tasks"] if not _task_there(root, t))
    return Vanished(root, gone, whole, entry["seen"]) if gone else None


def _task_there(root: Path, task_id: str) -> bool:
    try:
        return TaskPaths(root / MANAGER_DIR / "tasks" / task_id).exists()
    except OSError:
        return True  # cannot tell: say nothing


def vanished(directory: Optional[Path] = None) -> dict[str, Vanished]:
    """id -> what is gone, for every indexed workspace still there whose loop folder, or some task folder this
    machine recorded in it, was removed. For the person's page; ``remember`` (a new task there) clears it."""
    found = {k: _vanished(v) for k, v in _read(index_path(directory)).items()}
    return {k: v for k, v in sorted(found.items()) if v is not None}


def vanished_here(root: Path | str, directory: Optional[Path] = None) -> Optional[Vanished]:
    """``vanished`` for one workspace (None when nothing recorded there is gone)."""
    entry = _read(index_path(directory)).get(workspace_id(root))
    return _vanished(entry) if entry is not None and entry["path"] == os.path.realpath(root) else None
