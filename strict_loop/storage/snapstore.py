"""The private git store behind snapshots: made only by us, trusted only with proof kept outside the repository.

Why: the content of a repository is not trusted, and a clone can carry an
``.agent-loop/snapshots.git`` whose config runs commands (``core.fsmonitor``
runs on the first ``git add``). So:

- we create the store ourselves, under a lock, in a temporary folder renamed
  into place, and record a random id and the digest of its config in a marker
  under the user's config dir (``$XDG_CONFIG_HOME/strict-loop/snapshot-stores/``),
  keyed by the store's real path; a store without a matching marker is refused
  before any git command touches it;
- every git call runs hardened: no system or global config, no hooks, no
  fsmonitor, no network protocols, no replace refs, and the worktree's
  ``.gitattributes`` neutralized (no filters, no line-ending conversion).
  The user's own ``.git`` is only ever read as an object store (alternates),
  never as a repository, so its config and hooks are never consulted.
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Optional

from strict_loop.base.fsio import atomic_write, file_lock

STORE_NAME = "snapshots.git"
ID_FILE = "strict-loop-store-id"
GIT_TIMEOUT_S = 300.0
HARDENING = (
    "-c",
    "core.fsmonitor=false",
    "-c",
    "core.hooksPath=/dev/null",
    "-c",
    "core.untrackedCache=false",
    "-c",
    "core.splitIndex=false",
    "-c",
    "core.autocrlf=false",
    "-c",
    "core.safecrlf=false",
    "-c",
    "protocol.allow=never",
    "-c",
    "commit.gpgSign=false",
    "-c",
    "gc.auto=0",
    "-c",
    "maintenance.auto=false",
    "-c",
    "core.attributesFile=/dev/null",
    "-c",
    "core.excludesFile=/dev/null",
)
"""Overrides on every call (command-line config wins over the store's own)."""
NEUTRAL_ATTRIBUTES = b"* -text -filter -ident -working-tree-encoding\n"
"""``$GIT_DIR/info/attributes`` outranks every ``.gitattributes``: snapshots store files byte for byte."""
NEVER_WRITTEN = ("commondir", "gitdir", "config.worktree")
"""Files that would make git read config from elsewhere; our store never has them."""


class SnapshotError(Exception):
    """A snapshot or rollback could not be done; the message says why."""


class ForeignStore(SnapshotError):
    """``.agent-loop/snapshots.git`` exists but this machine has no proof that strict-loop made it."""


def user_config_dir() -> Path:
    """``$XDG_CONFIG_HOME/strict-loop`` (default ``~/.config/strict-loop``): the person's machine, which is trusted."""
    base = os.environ.get("XDG_CONFIG_HOME", "")
    return (Path(base) if os.path.isabs(base) else Path.home() / ".config") / "strict-loop"


def hardened_env(**extra: str) -> dict[str, str]:
    """The caller's environment without git's own variables, with system and global config and their files switched
    off."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_") and k != "XDG_CONFIG_HOME"}
    env.update(
        GIT_CONFIG_NOSYSTEM="1",
        GIT_CONFIG_SYSTEM=os.devnull,
        GIT_CONFIG_GLOBAL=os.devnull,
        HOME=os.devnull,
        GIT_ATTR_NOSYSTEM="1",
        GIT_NO_REPLACE_OBJECTS="1",
        GIT_TERMINAL_PROMPT="0",
        GIT_NO_LAZY_FETCH="1",
        GIT_AUTHOR_NAME="strict-loop",
        GIT_AUTHOR_EMAIL="strict-loop@localhost",
        GIT_COMMITTER_NAME="strict-loop",
        GIT_COMMITTER_EMAIL="strict-loop@localhost",
        **extra,
    )
    return env


def run_git(args: tuple[str, ...], env: dict[str, str], cwd: Path, stdin: Optional[bytes] = None) -> bytes:
    proc = subprocess.run(
        ["git", *HARDENING, *args], cwd=cwd, env=env, capture_output=True, input=stdin, timeout=GIT_TIMEOUT_S
    )
    if proc.returncode != 0:
        err = proc.stderr.decode("utf-8", "replace").strip().replace("\n", " ")
        raise SnapshotError(f"git {args[0]} failed: {err[-300:]}")
    return proc.stdout


class SnapshotStore:
    """``<workspace>/.agent-loop/snapshots.git``: created, verified and run by this class only."""

    def __init__(self, workspace: Path) -> None:
        self.root = workspace
        self.path = workspace / ".agent-loop" / STORE_NAME

    @staticmethod
    def available() -> bool:
        return shutil.which("git") is not None

    def exists(self) -> bool:
        return os.path.lexists(self.path)

    @contextmanager
    def locked(self) -> Iterator[None]:
        """One writer of the store at a time: creation never races, and pruning never meets a half-made snapshot."""
        with file_lock(self.path.with_name(".snapshots.lock"), "the snapshot store"):
            yield

    def open(self, *, create: bool) -> bool:
        """Make the store usable (caller holds the lock): False if there is none and ``create`` is off.

        Raises :class:`ForeignStore`, before any git command runs, for a store this machine did not make.
        """
        if not self.exists():
            if create:
                self._create()
            return create
        problem = self._distrust()
        if problem:
            raise ForeignStore(
                f"{self.path} {problem}; it is never used -- move it away (e.g. `mv {self.path} {self.path}.foreign`) "
                "and strict-loop makes a store of its own; your snapshots in it stay readable with git --git-dir"
            )
        return True

    def git(self, *args: str, index: Path, stdin: Optional[bytes] = None) -> bytes:
        """Run git on the store with the workspace as its work tree (caller has opened the store)."""
        env = hardened_env(GIT_DIR=str(self.path), GIT_WORK_TREE=str(self.root), GIT_INDEX_FILE=str(index))
        return run_git(args, env, self.root, stdin)

    # ------------------------------------------------------------------ trust

    def _marker(self, real: str) -> Path:
        return user_config_dir() / "snapshot-stores" / f"{hashlib.sha256(real.encode()).hexdigest()[:32]}.json"

    def _distrust(self) -> Optional[str]:
        """Why the store must not be used, or None when its marker outside the repository vouches for it."""
        if self.path.is_symlink() or not self.path.is_dir():
            return "is not a folder strict-loop made"
        real = os.path.realpath(self.path)
        try:
            marker: Any = json.loads(self._marker(real).read_bytes())
        except (OSError, ValueError):
            marker = None
        if not isinstance(marker, dict) or marker.get("store") != real:
            return "was not created by strict-loop on this machine (it may have come with a clone or a copy)"
        try:
            store_id = (self.path / ID_FILE).read_text(encoding="utf-8").strip()
            config = (self.path / "config").read_bytes()
        except (OSError, UnicodeDecodeError):
            return "lacks the id or config strict-loop wrote in it"
        if not secrets.compare_digest(store_id, str(marker.get("id", ""))):
            return "is not the store strict-loop created at this path (its id differs)"
        if hashlib.sha256(config).hexdigest() != marker.get("config_sha256"):
            return "has a config that changed since strict-loop wrote it"
        for name in NEVER_WRITTEN:
            if os.path.lexists(self.path / name):
                return f"holds '{name}', which strict-loop never writes"
        return None

    def _create(self) -> None:
        """``git init`` into a temporary folder, write the proof inside and outside, then rename into place."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_name(f".{STORE_NAME}.tmp-{secrets.token_hex(6)}")
        try:
            run_git(("init", "--bare", "-q", "--template=", str(tmp)), hardened_env(GIT_DIR=str(tmp)), self.path.parent)
            (tmp / "info").mkdir(exist_ok=True)
            (tmp / "info" / "attributes").write_bytes(NEUTRAL_ATTRIBUTES)
            user_objects = self.root / ".git" / "objects"
            if (
                user_objects.is_dir()
            ):  # borrow the user's objects read-only: the first snapshot costs no copy of the repo
                (tmp / "objects" / "info").mkdir(parents=True, exist_ok=True)
                (tmp / "objects" / "info" / "alternates").write_text(os.path.realpath(user_objects) + "\n")
            store_id = secrets.token_hex(16)
            (tmp / ID_FILE).write_text(store_id + "\n", encoding="utf-8")
            real = os.path.join(os.path.realpath(self.path.parent), STORE_NAME)
            marker = {
                "store": real,
                "id": store_id,
                "config_sha256": hashlib.sha256((tmp / "config").read_bytes()).hexdigest(),
            }
            atomic_write(self._marker(real), json.dumps(marker, indent=2).encode() + b"\n")
            os.rename(tmp, self.path)
        finally:
            if tmp.exists():
                shutil.rmtree(tmp, ignore_errors=True)
