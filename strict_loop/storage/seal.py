"""The monitor settings each task was given, kept outside every workspace: ``$XDG_CONFIG_HOME/strict-loop/seals/``.

Why: ``state.json`` lives in the workspace, where the agent writes, and one write of ``"enabled": false`` there would
switch its own monitor off. The settings a task was created with here (or a person trusted) are sealed in one small
file per task beside the trust record, and the monitor compares ``state.json`` with them before it judges a turn
(``loop.safeguards``): a difference is recorded, told to the person, and the sealed settings are kept.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, Optional

from strict_loop.base.errors import LoopError
from strict_loop.base.fsio import atomic_write, dumps_doc, read_own
from strict_loop.base.jsontext import parse_json
from strict_loop.base.timefmt import now_iso
from strict_loop.storage.workspaces import config_dir, workspace_id

if TYPE_CHECKING:  # validated on use: reading a seal needs no model (cli.reads compares it as read)
    from strict_loop.model.settings import MonitorSettings

SEALS_DIR = "seals"


class Sealed(NamedTuple):
    """A task's sealed monitor settings, as stored (``monitor``: the settings' JSON form, compared without parsing)."""

    monitor: dict[str, Any]
    by: str
    sealed_at: str

    def settings(self) -> Optional[MonitorSettings]:
        """The sealed settings; None if they no longer validate (a seal is then no record: see ``read``)."""
        from strict_loop.model.settings import MonitorSettings

        try:
            return MonitorSettings.model_validate(self.monitor)
        except ValueError:
            return None


def seal_path(root: Path, task_id: str, directory: Optional[Path] = None) -> Path:
    """``<config>/seals/<workspace id>/<task id>.json``: no path of the workspace in a file name."""
    return (directory or config_dir()) / SEALS_DIR / workspace_id(root) / f"{task_id}.json"


def write(root: Path, task_id: str, settings: MonitorSettings, by: str, directory: Optional[Path] = None) -> None:
    """Seal ``settings`` as the task's (atomically, 0600); ``by`` says who: ``init_state``, a person's ``trust``, or
    ``built-in`` for a task that came without a seal. Raises OSError when the config folder cannot be written."""
    doc = {
        "version": 1,
        "workspace": os.path.realpath(root),
        "task_id": task_id,
        "by": by,
        "sealed_at": now_iso(),
        "monitor": settings.model_dump(mode="json"),
    }
    atomic_write(seal_path(root, task_id, directory), dumps_doc(doc), mode=0o600)


def read(root: Path, task_id: str, directory: Optional[Path] = None) -> Optional[Sealed]:
    """The task's seal; None when there is none or it is damaged (its settings are validated on use: the hook's
    common case compares them as read)."""
    try:
        doc = parse_json(read_own(seal_path(root, task_id, directory)))
    except (OSError, ValueError, LoopError):
        return None
    monitor = doc.get("monitor") if isinstance(doc, dict) else None
    if not isinstance(monitor, dict):
        return None
    return Sealed(monitor, str(doc.get("by", "")), str(doc.get("sealed_at", "")))


def forget(root: Path, task_id: str, directory: Optional[Path] = None) -> None:
    """Remove the task's seal, if any (the demo's scratch loop leaves none behind)."""
    try:
        seal_path(root, task_id, directory).unlink()
    except OSError:
        pass


def differences(base: MonitorSettings, other: MonitorSettings, was: str = "sealed", limit: int = 8) -> list[str]:
    """``field = value (was: value)`` for each setting where ``other`` differs from ``base`` (dotted names, at most
    ``limit``); ``was`` names the base (``sealed``, ``built-in``)."""
    out: list[str] = []

    def walk(a: Any, b: Any, prefix: str) -> None:
        if isinstance(a, dict) and isinstance(b, dict):
            for key in sorted(set(a) | set(b)):
                walk(a.get(key), b.get(key), f"{prefix}{key}.")
        elif a != b:
            out.append(f"{prefix[:-1]} = {json.dumps(b)}, {was} {json.dumps(a)}")

    walk(base.model_dump(mode="json"), other.model_dump(mode="json"), "")
    return out[:limit]
