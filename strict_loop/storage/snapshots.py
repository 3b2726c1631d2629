"""Per-round snapshots of the workspace in a private git store, and rollback from them.

Snapshots live in ``.agent-loop/snapshots.git`` (see ``snapstore``: made and
trusted only by us, run hardened) under ``refs/strict-loop/<task>/round-<N>``,
built with a temporary index: the user's own repository, index, branch and
stash are never touched. The loop's bookkeeping (``.agent-loop/``,
``.codex-loop/``) is left out, so rolling back files never rewinds the loop's
history. Files over a size cap are left out too (and so never touched by a
rollback); each snapshot event names them. Per task the newest rounds are
kept, plus round 0 and every ``before-rollback-<K>`` save; dropped rounds'
objects are pruned now and then.

A snapshot is slow on a big tree, so callers take it outside the task's lock
and record its event afterwards.
"""

from __future__ import annotations

import os
import re
import stat
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

from strict_loop.base.errors import LoopError
from strict_loop.model.settings import MonitorSettings
from strict_loop.storage.snapstore import ForeignStore, SnapshotError, SnapshotStore

if TYPE_CHECKING:
    from strict_loop.model.records import TaskState
    from strict_loop.storage.store import TaskStore

__all__ = ["ForeignStore", "SnapshotError", "SnapshotRefused", "Snapshots", "after_round", "forget_task"]

EXCLUDES = (":(exclude).agent-loop", ":(exclude).codex-loop")
PRUNE_EVERY = 10
"""Rounds between prunes of the store's unreferenced objects (a prune walks what the refs reach: cheap, but not
free)."""
MAX_LISTED = 20
TRAILER = "Strict-Loop-Task: "
_ROUND = re.compile(r"round-(\d+)")
_SAVE = re.compile(r"before-rollback-(\d+)")


class SnapshotRefused(SnapshotError):
    """The rollback target cannot be restored whole (missing, another task's, or incomplete); nothing was changed."""


class Snapshots:
    """One task's snapshots; ``stamp`` (the task's ``created_at``) tells its snapshots from a replaced task's."""

    def __init__(self, workspace: Path, task_id: str, index_dir: Path, stamp: str = "") -> None:
        self.store = SnapshotStore(workspace)
        self.task_id = task_id
        self.index = index_dir / "snapshot.index"
        self.stamp = stamp

    available = staticmethod(SnapshotStore.available)

    def ref(self, name: str) -> str:
        return f"refs/strict-loop/{self.task_id}/{name}"

    def _git(self, *args: str, index: Optional[Path] = None, stdin: Optional[bytes] = None) -> str:
        return self.store.git(*args, index=index or self.index, stdin=stdin).decode("utf-8", "replace").strip()

    def refs(self) -> dict[str, str]:
        """This task's refs: leaf name (``round-3``, ``before-rollback-1``) -> commit."""
        prefix = self.ref("")
        out = self._git("for-each-ref", "--format=%(objectname) %(refname)", prefix)
        return {ref[len(prefix) :]: sha for sha, ref in (line.split(" ", 1) for line in out.splitlines() if line)}

    # ------------------------------------------------------------------ taking

    def take(self, iteration: int, settings: MonitorSettings) -> dict[str, Any]:
        """Snapshot the tree as ``round-<iteration>``, drop rounds beyond ``snapshot_keep``; returns the event data."""
        cap = _cap_bytes(settings)
        with self.store.locked():
            self.store.open(create=True)
            commit, skipped = self._commit(f"round-{iteration}", f"after round {iteration}", cap)
            rounds = sorted(
                int(m.group(1)) for name in self.refs() if (m := _ROUND.fullmatch(name)) and m.group(1) != "0"
            )
            dropped = rounds[: -settings.snapshot_keep]
            if dropped:
                self._git(
                    "update-ref",
                    "--stdin",
                    stdin="".join(f"delete {self.ref(f'round-{n}')}\n" for n in dropped).encode(),
                )
            pruned = iteration > 0 and iteration % PRUNE_EVERY == 0  # also reclaims what init_state --force dropped
            if pruned:
                self._git("prune")
        return {
            "iteration": iteration,
            "commit": commit,
            "skipped": skipped[:MAX_LISTED],
            "skipped_count": len(skipped),
            "dropped": dropped[:MAX_LISTED],
            "pruned": pruned,
        }

    def _commit(self, name: str, what: str, cap: int) -> tuple[str, list[dict[str, Any]]]:
        """Commit the tree under ``ref(name)``; a stale index (objects pruned under it) is rebuilt once."""
        try:
            return self._write(name, what, cap)
        except SnapshotError:
            self.index.unlink(missing_ok=True)
            return self._write(name, what, cap)

    def _write(self, name: str, what: str, cap: int) -> tuple[str, list[dict[str, Any]]]:
        out = self._left_out(cap)
        if out:  # out of the index too, so an older copy does not linger in the snapshot
            self._git("update-index", "--force-remove", "-z", "--stdin", stdin=b"".join(p + b"\0" for p, _ in out))
        spec = [b".", *(e.encode() for e in EXCLUDES), *(b":(exclude,literal)" + p for p, _ in out)]
        self._git("add", "-A", "--pathspec-from-file=-", "--pathspec-file-nul", stdin=b"".join(s + b"\0" for s in spec))
        tree = self._git("write-tree")
        message = f"{self.task_id}: {what}\n\n{TRAILER}{self.task_id} {self.stamp}\n"
        commit = self._git("commit-tree", tree, "-m", message)
        self._git("update-ref", self.ref(name), commit)
        return commit, [{"path": os.fsdecode(p), "bytes": size} for p, size in out]

    def _left_out(self, cap: int) -> list[tuple[bytes, Optional[int]]]:
        """What a snapshot leaves out: regular files over ``cap`` bytes (with their size) and nested repositories
        (None).

        A nested repository would only be recorded as a commit id, and reading it means opening a
        repository we did not make; a rollback leaves both kinds alone.
        """
        listing = self.store.git(
            "ls-files", "-z", "-c", "-o", "--exclude-standard", "--", ".", *EXCLUDES, index=self.index
        )
        root = os.fsencode(self.store.root)
        out: list[tuple[bytes, Optional[int]]] = []
        for rel in dict.fromkeys(listing.split(b"\0")):
            try:
                st = os.lstat(os.path.join(root, rel)) if rel else None
            except OSError:
                continue
            if st is not None and stat.S_ISDIR(st.st_mode):
                out.append((rel.rstrip(b"/"), None))
            elif st is not None and stat.S_ISREG(st.st_mode) and st.st_size > cap:
                out.append((rel, st.st_size))
        return out

    # ------------------------------------------------------------------ rollback

    def restore(self, to: int, settings: MonitorSettings) -> tuple[str, str, str]:
        """Make the tree equal round ``to``, or refuse before changing any file; returns (saved, restored, saved ref).

        The current tree is first saved as the next ``before-rollback-<K>``; every such save is kept.
        """
        with self.store.locked():
            if not self.store.open(create=False) or (target := self.refs().get(f"round-{to}")) is None:
                raise SnapshotRefused(f"there is no snapshot of round {to} for task '{self.task_id}'")
            self._check_owner(target, to)
            paths = self._check_complete(target, to)
            cap = _cap_bytes(settings)
            self._check_left_out(paths, cap, to)
            saves = [int(m.group(1)) for name in self.refs() if (m := _SAVE.fullmatch(name))]
            name = f"before-rollback-{max(saves, default=0) + 1}"
            saved, _ = self._commit(name, f"working tree before rollback to round {to}", cap)
            tmp_index = self.index.with_name("rollback.index")
            try:
                self._git("read-tree", saved, index=tmp_index)
                self._git("update-index", "-q", "--refresh", index=tmp_index)
                # Two-tree merge: moves the tree from `saved` to `target`, deleting files that target lacks;
                # git checks every path before it writes any.
                self._git("read-tree", "-m", "-u", saved, target, index=tmp_index)
            except SnapshotError as exc:
                raise SnapshotError(f"{exc} (the working tree was saved first as {self.ref(name)})") from None
            finally:
                tmp_index.unlink(missing_ok=True)
            self.index.unlink(missing_ok=True)  # its stat cache no longer matches the files
        return saved, target, self.ref(name)

    # ------------------------------------------------------------------ looking (the person's page)

    def rounds(self) -> list[int]:
        """The rounds this task has a snapshot of (a rollback target each), oldest first; none without a store."""
        with self.store.locked():
            if not self.store.open(create=False):
                return []
            return sorted(int(m.group(1)) for name in self.refs() if (m := _ROUND.fullmatch(name)))

    def preview(self, to: int) -> list[dict[str, Any]]:
        """What a rollback to round ``to`` would change, file by file, with the lines it would add and remove.

        Read-only for the workspace, the user's .git and the store's refs: it reads the round into a temporary index
        of its own and compares the working tree with it (``restore`` would make the tree equal that round).
        """
        with self.store.locked():
            if not self.store.open(create=False) or (target := self.refs().get(f"round-{to}")) is None:
                raise SnapshotRefused(f"there is no snapshot of round {to} for task '{self.task_id}'")
            tmp = self.index.with_name(f"preview-{os.getpid()}-{os.urandom(4).hex()}.index")
            try:
                self._git("read-tree", target, index=tmp)
                numstat = self.store.git("diff", "--numstat", "-z", "--no-renames", "--", ".", *EXCLUDES, index=tmp)
                extra = self.store.git("ls-files", "-z", "-o", "--exclude-standard", "--", ".", *EXCLUDES, index=tmp)
            finally:
                tmp.unlink(missing_ok=True)
        return _changes(self.store.root, numstat, extra)

    def _check_owner(self, commit: str, to: int) -> None:
        """Refuse a snapshot an earlier task of the same id took (one without the trailer predates it: accepted)."""
        body = self._git("cat-file", "commit", commit)
        marks = [line[len(TRAILER) :] for line in body.splitlines() if line.startswith(TRAILER)]
        if marks and self.stamp and marks[-1] != f"{self.task_id} {self.stamp}":
            raise SnapshotRefused(
                f"the snapshot of round {to} belongs to an earlier task '{self.task_id}' "
                "(replaced by init_state --force), not to this one"
            )

    def _check_left_out(self, paths: set[bytes], cap: int, to: int) -> None:
        """Refuse to overwrite what no snapshot holds: a file now left out (over the cap, a nested repository) that
        round ``to`` has."""
        clash = [rel for rel, _ in self._left_out(cap) if rel in paths or any(p.startswith(rel + b"/") for p in paths)]
        if clash:
            raise SnapshotRefused(
                f"round {to} has {os.fsdecode(clash[0])}, which is now left out of snapshots (over "
                "monitor.snapshot_max_file_mb, or a nested repository): restoring it would overwrite a version no "
                "snapshot holds; move it away first"
            )

    def _check_complete(self, commit: str, to: int) -> set[bytes]:
        """Every object of the target must be readable: objects shared with the user's .git may have been pruned by its
        gc."""
        try:
            listing = self.store.git("ls-tree", "-r", "-z", "--full-tree", commit, index=self.index)
        except SnapshotError as exc:
            raise SnapshotRefused(f"the snapshot of round {to} is incomplete ({exc})") from None
        entries = [line.split(b"\t", 1) for line in listing.split(b"\0") if line]
        blobs = {meta.split()[2]: path for meta, path in entries if meta.split()[1] == b"blob"}
        answer = self.store.git(
            "cat-file", "--batch-check=%(objectname)", index=self.index, stdin=b"".join(oid + b"\n" for oid in blobs)
        )
        missing = [line.split()[0] for line in answer.splitlines() if line.endswith(b" missing")]
        if missing:
            raise SnapshotRefused(
                f"the snapshot of round {to} is incomplete: {len(missing)} of its files can no longer be read "
                f"(e.g. {os.fsdecode(blobs[missing[0]])}); they were probably pruned by a git gc of your repository"
            )
        return {path for _, path in entries}


def _cap_bytes(settings: MonitorSettings) -> int:
    return int(settings.snapshot_max_file_mb * 1024 * 1024)


def forget_task(root: Path, task_id: str, replaced_as: str) -> Optional[tuple[str, str, dict[str, Any]]]:
    """After ``init_state --force``: drop the replaced task's round snapshots, keep its rollback saves aside.

    The saves move to ``refs/strict-loop-replaced/<replaced_as>/``, out of the new task's reach. Returns
    the event to record, or None when there was nothing to do; never raises.
    """
    store = SnapshotStore(root)
    if not store.exists() or not store.available():
        return None
    snaps = Snapshots(root, task_id, store.path)  # reads and moves refs only: the index is never written
    try:
        with store.locked():
            store.open(create=False)
            refs = snaps.refs()
            if not refs:
                return None
            lines = [f"delete {snaps.ref(name)} {sha}\n" for name, sha in refs.items()]
            lines += [
                f"create refs/strict-loop-replaced/{replaced_as}/{name} {sha}\n"
                for name, sha in refs.items()
                if name.startswith("before-rollback")
            ]
            snaps._git("update-ref", "--stdin", stdin="".join(lines).encode())
    except (SnapshotError, LoopError, OSError, subprocess.SubprocessError) as exc:
        return (
            "snapshot.failed",
            f"the replaced task's snapshots could not be dropped: {str(exc)[:400]}",
            {"iteration": 0},
        )
    kept = len(lines) - len(refs)
    return (
        "snapshot.dropped",
        f"the replaced task's {len(refs) - kept} snapshot ref(s) dropped, {kept} rollback save(s) "
        f"kept under refs/strict-loop-replaced/{replaced_as}/",
        {"dropped": len(refs) - kept, "kept": kept},
    )


def after_round(
    root: Path, task_id: str, index_dir: Path, settings: MonitorSettings, stamp: str, iteration: int
) -> Optional[tuple[str, str, dict[str, Any]]]:
    """The snapshot policy: snapshot the workspace after a round when ``settings.snapshots`` asks for it.

    'on' always, 'auto' only in a git repository, 'off' never; git must be installed.
    Returns the event to record (kind, message, data), or None when no snapshot was due.
    Never raises: a failed snapshot must not fail the round, so it becomes a
    ``snapshot.failed`` event (a refused foreign store too, with ``refused``).
    """
    mode = settings.snapshots
    if mode == "off" or (mode == "auto" and not (root / ".git").exists()) or not Snapshots.available():
        return None
    try:
        data = Snapshots(root, task_id, index_dir, stamp).take(iteration, settings)
    except ForeignStore as exc:
        return (
            "snapshot.failed",
            f"snapshot of round {iteration} refused: {exc}",
            {"iteration": iteration, "refused": "foreign-store"},
        )
    except (SnapshotError, LoopError, OSError, subprocess.SubprocessError) as exc:  # the round is recorded: only report
        return "snapshot.failed", f"snapshot of round {iteration} failed: {str(exc)[:300]}", {"iteration": iteration}
    message = f"round {iteration} snapshot {data['commit'][:12]}"
    big = [s["path"] for s in data["skipped"] if s["bytes"] is not None]
    nested = [s["path"] for s in data["skipped"] if s["bytes"] is None]
    if big:
        message += (
            f"; left out, over the {settings.snapshot_max_file_mb:g} MB cap (monitor.snapshot_max_file_mb): "
            f"{', '.join(big[:3])}"
        )
    if nested:
        message += f"; left out, nested repositories: {', '.join(nested[:3])}"
    if data["skipped_count"] > len(big[:3]) + len(nested[:3]):
        message += f" (of {data['skipped_count']} left out; see data.skipped)"
    return "snapshot.taken", message, data


def record_after_round(root: Path, store: TaskStore, state: TaskState, iteration: int) -> list[str]:
    """Snapshot after a round, outside the task's lock (a big tree takes seconds), then record it under the lock.

    The round is already recorded, so nothing here fails the call: a problem comes back as a warning.
    """
    event = after_round(root, store.task_id, store.paths.root, state.contract.monitor, state.created_at, iteration)
    if event is None:
        return []
    try:
        with store.locked():
            store.append_event(*event)
    except (LoopError, OSError) as exc:
        return [f"the snapshot of round {iteration} was taken but its event was not recorded: {str(exc)[:200]}"]
    return [event[1]] if event[0] == "snapshot.failed" else []


def _changes(root: Path, numstat: bytes, extra: bytes) -> list[dict[str, Any]]:
    """``git diff --numstat`` (round -> now) and the files made since, as what the rollback does (now -> round)."""
    out: list[dict[str, Any]] = []
    for record in numstat.split(b"\0"):
        parts = record.split(b"\t", 2)
        if len(parts) != 3:
            continue
        added, removed, rel = parts
        path = os.fsdecode(rel)
        binary = added == b"-"
        out.append(
            {
                "path": path,
                "change": "modified" if os.path.lexists(os.path.join(root, path)) else "restored",
                "lines_added": None if binary else int(removed),
                "lines_removed": None if binary else int(added),
            }
        )
    for rel in filter(None, extra.split(b"\0")):
        path = os.fsdecode(rel)
        out.append({"path": path, "change": "deleted", "lines_added": 0, "lines_removed": _lines(root / path)})
    return sorted(out, key=lambda c: c["path"])


def _lines(path: Path) -> Optional[int]:
    """Lines of a file the rollback would delete (None: binary, unreadable or over 2 MB)."""
    try:
        if path.stat().st_size > 2_000_000:
            return None
        data = path.read_bytes()
    except OSError:
        return None
    return None if b"\0" in data[:8000] else data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)
