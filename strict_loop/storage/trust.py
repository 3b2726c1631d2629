"""Which loop contracts this machine trusts to run their stop commands.

A contract's stop commands are shell commands. A contract that ``init_state``
wrote on this machine is trusted automatically; one that arrived any other way
(a cloned repository carrying ``.agent-loop/``, a copied folder, a takeover of
``.codex-loop/``, a hand edit of ``state.json``) is not, until a person runs
``strict-loop trust --task-id T``, which shows the commands and records them.
The record lives outside every repository, under ``$XDG_CONFIG_HOME/strict-loop/``
(default ``~/.config/strict-loop/``), so repository content cannot forge it; it
holds a digest of the commands per workspace and task, as direnv's allow list does.

A workspace's ``.agent-loop/monitor-defaults.json`` is repository content too: it changes a new task's monitor
settings only once a person trusted its exact bytes in the same step (``record_defaults``), else the built-in
settings apply (``loop.safeguards``).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Optional

from strict_loop.base.errors import LoopError
from strict_loop.base.fsio import atomic_write, dumps_doc, file_lock
from strict_loop.base.timefmt import now_iso
from strict_loop.model.fields import parse_json
from strict_loop.model.settings import StopChecks
from strict_loop.storage.workspaces import config_dir

__all__ = ["TrustStore", "config_dir", "digest"]

TRUST_FILE = "trusted-contracts.json"
SECTIONS = ("contracts", "monitor_defaults")


def digest(checks: StopChecks) -> str:
    """What is trusted: the exact commands and how long they may run."""
    canonical = json.dumps({"commands": checks.commands, "timeout": checks.command_timeout_s}, sort_keys=True)
    return hashlib.sha256(canonical.encode()).hexdigest()


def _key(root: Path, task_id: str) -> str:
    return f"{root.resolve()}::{task_id}"


class TrustStore:
    """The machine's record of trusted contracts (one small JSON document, replaced atomically under a lock)."""

    def __init__(self, directory: Optional[Path] = None) -> None:
        self.directory = directory or config_dir()
        self.path = self.directory / TRUST_FILE

    def _sections(self) -> dict[str, dict[str, dict]]:
        """The record's sections: ``contracts`` (stop commands) and ``monitor_defaults`` (defaults files)."""
        try:
            doc = parse_json(self.path.read_bytes())
        except (OSError, ValueError):
            doc = {}  # missing or damaged: nothing is trusted until re-recorded (fails safe)
        doc = doc if isinstance(doc, dict) else {}
        return {name: doc[name] if isinstance(doc.get(name), dict) else {} for name in SECTIONS}

    def _read(self) -> dict[str, dict]:
        return self._sections()["contracts"]

    def _write(self, section: str, entries: dict[str, dict]) -> None:
        """Replace one section, keeping the others (caller holds the lock)."""
        doc: dict[str, object] = {"version": 1, **self._sections()}
        doc[section] = entries
        atomic_write(self.path, dumps_doc(doc))

    def is_trusted(self, root: Path, task_id: str, checks: StopChecks) -> bool:
        """True when the contract runs no command, or its commands are the ones recorded for this task."""
        if not checks.commands:
            return True
        entry = self._read().get(_key(root, task_id))
        return isinstance(entry, dict) and entry.get("digest") == digest(checks)

    def record(self, root: Path, task_id: str, checks: StopChecks) -> bool:
        """Record the task's commands as trusted; False if they already were (a contract without a command needs
        no record: nothing of it runs)."""
        if not checks.commands:
            return False
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            with file_lock(self.directory / ".trust.lock", "the trust record", 30):
                contracts = self._read()
                key = _key(root, task_id)
                if contracts.get(key, {}).get("digest") == digest(checks):
                    return False
                contracts[key] = {
                    "workspace": str(root.resolve()),
                    "task_id": task_id,
                    "digest": digest(checks),
                    "commands": list(checks.commands),
                    "trusted_at": now_iso(),
                }
                self._write("contracts", contracts)
        except OSError as exc:
            raise _unwritable(self.path, exc) from None
        return True

    def forget(self, root: Path, task_id: str) -> bool:
        """Remove the task's record (the demo's scratch loop leaves none behind); False if there was none."""
        if not self.path.exists():
            return False
        try:
            with file_lock(self.directory / ".trust.lock", "the trust record", 30):
                contracts = self._read()
                if contracts.pop(_key(root, task_id), None) is None:
                    return False
                self._write("contracts", contracts)
        except OSError as exc:
            raise _unwritable(self.path, exc) from None
        return True

    def defaults_trusted(self, root: Path, content: bytes) -> bool:
        """True when a person trusted exactly these bytes as the workspace's monitor-defaults.json."""
        entry = self._sections()["monitor_defaults"].get(str(root.resolve()))
        return isinstance(entry, dict) and entry.get("digest") == hashlib.sha256(content).hexdigest()

    def record_defaults(self, root: Path, content: bytes) -> bool:
        """Record these bytes of the workspace's monitor-defaults.json as trusted (a person's step); False if they
        already were."""
        key, sha = str(root.resolve()), hashlib.sha256(content).hexdigest()
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            with file_lock(self.directory / ".trust.lock", "the trust record", 30):
                entries = self._sections()["monitor_defaults"]
                if isinstance(entries.get(key), dict) and entries[key].get("digest") == sha:
                    return False
                entries[key] = {"workspace": key, "digest": sha, "trusted_at": now_iso()}
                self._write("monitor_defaults", entries)
        except OSError as exc:
            raise _unwritable(self.path, exc) from None
        return True


def _unwritable(path: Path, exc: OSError) -> LoopError:
    return LoopError(
        "trust",
        f"cannot write {path} ({exc.strerror or exc})",
        "make the folder writable or set XDG_CONFIG_HOME to a writable folder",
    )


def refusal(task_id: str, checks: StopChecks, operation: str) -> LoopError:
    """The one-line refusal for a contract whose commands this machine has not trusted."""
    n = len(checks.commands)
    return LoopError(
        operation,
        f"task '{task_id}' has {n} stop command(s) this machine has not trusted (the contract came with the "
        "repository, a copy, a takeover or a hand edit); nothing was run",
        f"a person reviews and trusts them with: strict-loop trust --task-id {task_id}",
    )
