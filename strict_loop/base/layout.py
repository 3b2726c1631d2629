"""Where everything lives under ``<workspace>/.agent-loop/`` (and the legacy ``.codex-loop/``).

Free of pydantic: the hook handler finds the running task through it on every tool call.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import NamedTuple, Optional

from strict_loop.base.errors import LoopError

MANAGER_DIR = ".agent-loop"
LEGACY_MANAGER_DIR = ".codex-loop"
GITIGNORE = """\
# Written by strict-agent-loop (edit freely: it is never rewritten). Commit the rest of .agent-loop/ to share a loop
# (contracts, ledgers, round notes, status): never what follows, which is this machine's own or holds run output.
snapshots.git/
replaced/
telemetry/
tasks/*/supervisor/
tasks/*/watch/
tasks/*/hook-*.json
tasks/*/hook-errors.log
sessions.json
live-tasks.json
unclaimed.jsonl
.lock
*.lock
"""
"""``.agent-loop/.gitignore``: what must never be committed (the snapshot store, supervisor and watch logs, runtime
files). A contract that arrives with a repository runs nothing until trusted here (SECURITY.md)."""
TASK_ID_PATTERN = r"^[a-z0-9][a-z0-9_-]{0,63}$"
_TASK_ID_RE = re.compile(TASK_ID_PATTERN)
TASK_ID_HINT = "give one like fix-parser or train_2 (list_tasks names this workspace's tasks)"
"""What to send instead of a malformed task id (the error itself names the characters allowed)."""


def find_root(start: Path) -> Optional[Path]:
    """The nearest folder at or above ``start`` (an absolute path) holding ``.agent-loop/``, resolved; None if none.

    The one search every entry point makes when no workspace is named (the hook from its event's cwd, the CLI, the
    scripts and the MCP server from theirs), so that a subfolder of a workspace belongs to it for all of them alike.
    """
    for folder in (start, *start.parents):
        if (folder / MANAGER_DIR).is_dir():
            return folder.resolve()
    return None


def check_task_id(value: str) -> str:
    if not _TASK_ID_RE.fullmatch(value):
        raise ValueError(
            f"{value[:80]!r} is not a task id: use 1-64 lowercase letters, digits, '-' or '_', "
            "starting with a letter or digit (no '/', '.', '..' or spaces)"
        )
    return value


class TaskPaths(NamedTuple):
    """Every file of one task; nothing outside ``root`` is written for it but its pause flag (``pause_flagged``).

    NamedTuples, not dataclasses (here and ``Layout``): ``dataclasses`` imports ``inspect``, ~7 ms on every hook call.
    """

    root: Path

    @property
    def state(self) -> Path:
        return self.root / "state.json"

    @property
    def events(self) -> Path:
        return self.root / "events.jsonl"

    @property
    def iterations(self) -> Path:
        return self.root / "iterations.jsonl"

    @property
    def status_history(self) -> Path:
        return self.root / "status-history.jsonl"

    @property
    def latest_status(self) -> Path:
        return self.root / "latest-status.txt"

    @property
    def stop_report(self) -> Path:
        return self.root / "latest-stop-report.json"

    @property
    def run_summary(self) -> Path:
        return self.root / "run-summary.md"

    @property
    def rounds(self) -> Path:
        return self.root / "rounds"

    @property
    def supervisor(self) -> Path:
        return self.root / "supervisor"

    @property
    def monitor(self) -> Path:
        return self.root / "monitor.json"

    @property
    def alerts(self) -> Path:
        return self.root / "alerts.jsonl"

    @property
    def lock(self) -> Path:
        return self.root / ".lock"

    @property
    def pause_flag(self) -> Path:
        return self.root.parent.parent / "paused" / self.root.name

    @contextmanager
    def pause_flagged(self, paused: bool) -> Iterator[None]:
        """Around each write of monitor.json: ``.agent-loop/paused/<task>`` is there before it says paused and goes
        after it says not, so that the shell gate of Claude Code's HTTP hooks (``harness.daemon``) sees every pause
        without an interpreter. A flag that cannot be written costs nothing else (the hooks read monitor.json)."""
        flag = self.pause_flag
        try:
            if paused and not os.path.islink(flag.parent):  # never through a link a repository may carry
                flag.parent.mkdir(exist_ok=True)
                os.close(os.open(flag, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW, 0o644))
        except OSError:
            pass
        yield
        if not paused:
            with suppress(OSError):
                os.unlink(flag)

    def exists(self) -> bool:
        """The one rule for what is a task: a folder holding its state or its event ledger."""
        return self.state.is_file() or self.events.is_file()

    def round_file(self, iteration: int) -> Path:
        return self.rounds / f"iteration-{iteration:04d}.md"

    def as_dict(self) -> dict[str, str]:
        names = (
            "state",
            "events",
            "iterations",
            "status_history",
            "latest_status",
            "stop_report",
            "run_summary",
            "rounds",
            "supervisor",
            "monitor",
            "alerts",
        )
        return {name: str(getattr(self, name)) for name in names}


class Layout(NamedTuple):
    workspace: Path

    @property
    def manager(self) -> Path:
        return self.workspace / MANAGER_DIR

    @property
    def registry(self) -> Path:
        return self.manager / "registry.json"

    @property
    def monitor_defaults(self) -> Path:
        """Workspace-wide monitor settings: the defaults every new task's contract starts from."""
        return self.manager / "monitor-defaults.json"

    @property
    def registry_lock(self) -> Path:
        return self.manager / ".registry.lock"

    @property
    def tasks(self) -> Path:
        return self.manager / "tasks"

    @property
    def trash(self) -> Path:
        return self.manager / "replaced"

    @property
    def legacy_tasks(self) -> Path:
        return self.workspace / LEGACY_MANAGER_DIR / "tasks"

    def task(self, task_id: str) -> TaskPaths:
        check_task_id(task_id)
        return TaskPaths(self.inside(self.tasks / task_id))

    def legacy_task(self, task_id: str) -> TaskPaths:
        check_task_id(task_id)
        return TaskPaths(self.inside(self.legacy_tasks / task_id))

    def inside(self, path: Path) -> Path:
        """``path``, refused if it resolves outside the workspace.

        Why: ``.agent-loop/`` arrives with a clone; a symbolic link there (or at a task folder) would
        make every write of the loop land wherever the repository's author chose.
        """
        try:
            real, root = path.resolve(), self.workspace.resolve()
        except (OSError, RuntimeError) as exc:  # RuntimeError: a symbolic link loop (Python < 3.13)
            raise LoopError(str(path), f"cannot be resolved ({exc})", "remove the symbolic link loop") from None
        if real != root and root not in real.parents:
            raise LoopError(
                str(path),
                f"resolves to {real}, outside the workspace {root}",
                "remove the symbolic link: a task's files stay inside its workspace",
            )
        return path

    def task_ids(self) -> list[str]:
        return _slug_dirs(self.tasks)

    def legacy_task_ids(self) -> list[str]:
        return _slug_dirs(self.legacy_tasks)


def _slug_dirs(parent: Path) -> list[str]:
    try:
        entries = sorted(parent.iterdir())
    except (FileNotFoundError, NotADirectoryError):
        return []
    out = []
    for entry in entries:
        try:
            check_task_id(entry.name)
        except ValueError:
            continue
        if TaskPaths(entry).exists():
            out.append(entry.name)
    return out


def slug_from_goal(goal: str, max_len: int = 48) -> str:
    """'Fix the parser's crash on empty input!' -> 'fix-the-parser-s-crash-on-empty-input'."""
    slug = re.sub(r"[^a-z0-9]+", "-", goal.lower()).strip("-")
    if len(slug) > max_len:
        slug = slug[:max_len].rsplit("-", 1)[0] or slug[:max_len]
    return slug.strip("-") or "task"
