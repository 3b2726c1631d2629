"""The per-user index of workspaces this machine has loops in: ``$XDG_CONFIG_HOME/strict-loop/workspaces.json``.

Why: a person's page (``strict-loop dashboard``) shows every loop on the machine, and nothing else knows where
they are. It is written when a task is created and when a workspace's hook daemon starts, read by the dashboard,
and pruned on read of every workspace (or its ``.agent-loop/``) that is gone. Standard library and ``base`` only:
the hook daemon records itself here without loading pydantic.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Optional

from strict_loop.base.fsio import atomic_write, dumps_doc, file_lock
from strict_loop.base.layout import MANAGER_DIR
from strict_loop.base.timefmt import now_iso

INDEX_FILE = "workspaces.json"
MAX_WORKSPACES = 500
"""Kept at most (the most recently seen): a page over more loops than this is not a glance."""


def config_dir(env: Mapping[str, str] = os.environ) -> Path:
    """``$XDG_CONFIG_HOME/strict-loop``, else ``~/.config/strict-loop``."""
    base = env.get("XDG_CONFIG_HOME", "").strip()
    return (Path(base) if base else Path.home() / ".config") / "strict-loop"


def workspace_id(root: Path | str) -> str:
    """A short, stable name of a workspace for URLs (a digest of its resolved path: no path in a link)."""
    real = os.path.realpath(root)
    return hashlib.blake2b(real.encode("utf-8", "surrogateescape"), digest_size=6).hexdigest()


def index_path(directory: Optional[Path] = None) -> Path:
    return (directory or config_dir()) / INDEX_FILE


def _read(path: Path) -> dict[str, dict[str, str]]:
    try:
        doc = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return {}  # missing or damaged: rebuilt by the next task or daemon
    found = doc.get("workspaces") if isinstance(doc, dict) else None
    if not isinstance(found, dict):
        return {}
    return {
        str(k): {"path": str(v["path"]), "seen": str(v.get("seen", ""))}
        for k, v in found.items()
        if isinstance(v, dict) and isinstance(v.get("path"), str)
    }


def _write(path: Path, entries: dict[str, dict[str, str]]) -> None:
    newest = sorted(entries.items(), key=lambda kv: kv[1]["seen"], reverse=True)[:MAX_WORKSPACES]
    atomic_write(path, dumps_doc({"version": 1, "workspaces": dict(sorted(newest))}), mode=0o600)


def _alive(entry: Mapping[str, str]) -> bool:
    return os.path.isdir(os.path.join(entry["path"], MANAGER_DIR))


def remember(root: Path | str, directory: Optional[Path] = None) -> str:
    """Record ``root`` (atomically, under a lock, 0600); returns its id. Never raises: the index is a convenience,
    and a task or a daemon must not fail for it."""
    real = os.path.realpath(root)
    key = workspace_id(real)
    path = index_path(directory)
    try:
        current = _read(path).get(key)
        if current is not None and current["path"] == real and current["seen"][:10] == now_iso()[:10]:
            return key  # seen today already: no write
        with file_lock(path.with_name(INDEX_FILE + ".lock"), "the workspaces index"):
            entries = _read(path)
            entries[key] = {"path": real, "seen": now_iso()}
            _write(path, entries)
    except Exception:  # noqa: BLE001 (a read-only home, a held lock: the loop goes on without the index)
        pass
    return key


def known(directory: Optional[Path] = None) -> dict[str, Path]:
    """id -> workspace root of every indexed workspace still there; the gone ones are pruned from the file."""
    path = index_path(directory)
    entries = _read(path)
    gone = [k for k, v in entries.items() if not _alive(v)]
    if gone:
        try:
            with file_lock(path.with_name(INDEX_FILE + ".lock"), "the workspaces index"):
                fresh = _read(path)
                _write(path, {k: v for k, v in fresh.items() if _alive(v)})
        except Exception:  # noqa: BLE001 (pruning is housekeeping; the answer below is right either way)
            pass
    return {k: Path(v["path"]) for k, v in sorted(entries.items(), key=lambda kv: kv[1]["path"]) if k not in gone}
