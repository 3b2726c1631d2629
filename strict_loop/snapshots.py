"""Per-round snapshots of the workspace in a private git store, and rollback from them.

Snapshots live in ``.agent-loop/snapshots.git`` (a bare repository of our own)
under ``refs/strict-loop/<task>/round-<N>``, built with a temporary index: the
user's own repository, index, branch and stash are never touched. The loop's
bookkeeping (``.agent-loop/``, ``.codex-loop/``) is left out, so rolling back
files never rewinds the loop's history.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Optional

EXCLUDES = (":(exclude).agent-loop", ":(exclude).codex-loop")


class SnapshotError(Exception):
    pass


class Snapshots:
    def __init__(self, workspace: Path, task_id: str, index_dir: Path) -> None:
        self.root = workspace
        self.task_id = task_id
        self.git_dir = workspace / ".agent-loop" / "snapshots.git"
        self.index = index_dir / "snapshot.index"

    @staticmethod
    def available() -> bool:
        return shutil.which("git") is not None

    def _git(self, *args: str, index: Optional[Path] = None, input_: Optional[str] = None) -> str:
        env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
        env.update(GIT_DIR=str(self.git_dir), GIT_WORK_TREE=str(self.root), GIT_INDEX_FILE=str(index or self.index),
                   GIT_AUTHOR_NAME="strict-loop", GIT_AUTHOR_EMAIL="strict-loop@localhost",
                   GIT_COMMITTER_NAME="strict-loop", GIT_COMMITTER_EMAIL="strict-loop@localhost")
        proc = subprocess.run(["git", *args], cwd=self.root, env=env, capture_output=True, text=True, input=input_, timeout=300)
        if proc.returncode != 0:
            raise SnapshotError(f"git {args[0]} failed: {proc.stderr.strip()[-300:]}")
        return proc.stdout.strip()

    def _init(self) -> None:
        if (self.git_dir / "HEAD").exists():
            return
        self.git_dir.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(["git", "init", "--bare", "-q", str(self.git_dir)], check=True, capture_output=True,
                       env={k: v for k, v in os.environ.items() if not k.startswith("GIT_")})
        user_objects = self.root / ".git" / "objects"
        if user_objects.is_dir():  # borrow the user's objects read-only: saves space, changes nothing there
            (self.git_dir / "objects" / "info" / "alternates").write_text(str(user_objects) + "\n")

    def ref(self, name: str) -> str:
        return f"refs/strict-loop/{self.task_id}/{name}"

    def take(self, name: str, message: str) -> str:
        """Commit the current working tree under ``ref(name)``; returns the commit id."""
        self._init()
        self._git("add", "-A", "--", ".", *EXCLUDES)
        tree = self._git("write-tree")
        commit = self._git("commit-tree", tree, "-m", message)
        self._git("update-ref", self.ref(name), commit)
        return commit

    def resolve(self, name: str) -> Optional[str]:
        try:
            return self._git("rev-parse", "--verify", "-q", self.ref(name) + "^{commit}")
        except SnapshotError:
            return None

    def restore(self, name: str) -> tuple[str, str]:
        """Make the working tree equal ``ref(name)``: saves the current tree first; returns (saved, restored) commits."""
        target = self.resolve(name)
        if target is None:
            raise SnapshotError(f"no snapshot '{name}' for task '{self.task_id}'")
        saved = self.take("before-rollback", f"{self.task_id}: working tree before rollback to {name}")
        tmp_index = self.index.with_name("rollback.index")
        try:
            self._git("read-tree", saved, index=tmp_index)
            self._git("update-index", "-q", "--refresh", index=tmp_index)
            # Two-tree merge: moves the tree from `saved` to `target`, deleting files that target lacks.
            self._git("read-tree", "-m", "-u", saved, target, index=tmp_index)
        finally:
            tmp_index.unlink(missing_ok=True)
        self.index.unlink(missing_ok=True)  # its stat cache no longer matches the files
        return saved, target


def after_round(root: Path, task_id: str, index_dir: Path, mode: str, iteration: int) -> Optional[tuple[str, str, dict]]:
    """The snapshot policy: snapshot the workspace after a round when ``mode`` asks for it.

    'on' always, 'auto' only in a git repository, 'off' never; git must be installed.
    Returns the event to record (kind, message, data), or None when no snapshot was due.
    Never raises: a failed snapshot must not fail the round, so it becomes a
    ``snapshot.failed`` event.
    """
    if mode == "off" or (mode == "auto" and not (root / ".git").exists()) or not Snapshots.available():
        return None
    try:
        commit = Snapshots(root, task_id, index_dir).take(f"round-{iteration}", f"{task_id}: after round {iteration}")
    except (SnapshotError, OSError, subprocess.SubprocessError) as exc:
        return "snapshot.failed", f"snapshot of round {iteration} failed: {str(exc)[:300]}", {"iteration": iteration}
    return "snapshot.taken", f"round {iteration} snapshot {commit[:12]}", {"iteration": iteration, "commit": commit}
