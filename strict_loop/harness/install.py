"""``strict-loop install {claude,codex,hermes}``: the skill, the MCP server and the hooks, in one command.

A run first builds a :class:`Plan` (every file's current and new text, every folder's current and new
files) without writing anything; ``--dry-run`` prints it as diffs, otherwise each change is written
atomically, keeping its mode and owner. Nothing is written when any settings file fails to parse, and a project
install writes only inside the workspace, through no symbolic link. ``--uninstall`` plans the removal of exactly
our entries (see :mod:`strict_loop.harness.configedit`) and folders; a file or folder left empty by that goes, and
so do the empty folders above it up to the workspace or home folder (but see ``KEPT_RECORDS``).
"""

from __future__ import annotations

import difflib
import os
import re
import secrets
import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from strict_loop.base import fsio, jsontext, skillfiles
from strict_loop.base.errors import LoopError
from strict_loop.harness import configedit, registry
from strict_loop.storage import snapstore

SKILL = "strict-agent-loop"
SKILL_PARTS = ("SKILL.md", "references", "scripts")
MAX_SETTINGS_BYTES = 64 << 20  # ~/.claude.json grows with each project Claude Code opened: no settings file is bigger

Editor = Callable[[Optional[str], configedit.Kept], Optional[str]]  # new text from text now and containers to keep
KEPT_RECORDS = "install-kept.json"
"""In the person's config folder: per JSON settings file, the containers that were there, empty, before the install
(the one thing it remembers), so that the uninstall leaves them, and the file's bytes, as they were."""


@dataclass(frozen=True)
class Edit:
    """One settings file: its text now and after the change (``None``: absent / to be removed)."""

    path: Path
    old: Optional[str]
    new: Optional[str]
    empties: configedit.Kept = frozenset()  # containers of ``old`` there and empty: remembered for the uninstall
    private: bool = False  # the HTTP hooks' record (port, token), in the person's config: never shown nor confined


Files = Optional[dict[str, bytes]]


@dataclass(frozen=True)
class Tree:
    """One folder we own (the skill copy, the Hermes plugin): its files now and after the change."""

    dest: Path
    old: Files
    new: Files
    executable: frozenset[str] = frozenset()  # files of ``new`` written executable (the skill's scripts run directly)
    private: bool = False  # its files hold this installation's paths (the Hermes plugin): 0600, as settings files are


@dataclass
class Plan:
    """Everything one install or uninstall would change, and what the person must do afterwards."""

    root: Path
    confine: Optional[Path] = None  # a project install's workspace: every change inside it, through no symbolic link
    uninstall: bool = False
    edits: list[Edit] = field(default_factory=list)
    trees: list[Tree] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def changes(self) -> list[Edit | Tree]:
        planned: list[Edit | Tree] = [*self.edits, *self.trees]
        return [c for c in planned if c.old != c.new]


def program(name: str) -> str:
    """Absolute path of one of our executables: the one beside this Python, else the one on PATH."""
    beside = Path(os.path.abspath(sys.executable)).parent / name
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside)
    found = shutil.which(name)
    if found:
        return os.path.abspath(found)
    fix = "install strict-agent-loop with pip (pip install strict-agent-loop) and run the install again"
    raise LoopError("install", f"cannot find the '{name}' program beside {sys.executable} or on PATH", fix)


def _read_text(path: Path) -> Optional[str]:
    try:
        return fsio.read_regular(path, MAX_SETTINGS_BYTES).decode("utf-8")
    except FileNotFoundError:
        return None
    except fsio.Unreadable as exc:
        problem, fix = f"is not a regular file we can read ({exc.kind})", "put a regular file there (or remove it)"
    except UnicodeDecodeError:
        problem, fix = "is not UTF-8 text", "fix the file"
    raise LoopError(str(path), f"{problem}; nothing was changed", f"{fix} and run the install again")


def _confined(workspace: Path, path: Path) -> Path:
    """A project install writes where a repository says, and a repository is not trusted: a `.claude` linking to
    ~/.claude, or a dangling `.mcp.json` link, would make it write anywhere the person may."""
    return fsio.confined(
        workspace,
        path,
        "a project install writes only inside the workspace, never through a link "
        "(--scope user writes in your home folder)",
    )


def _edit(path: Path, editor: Editor, confine: Optional[Path]) -> Edit:
    # user scope: a settings file linked from a dotfiles folder is edited where it lives (the home folder is the
    # person's own); project scope: never through a link (see confined)
    real = _confined(confine, path) if confine else path.resolve()
    old = _read_text(real)
    kept = _kept(_kept_records(), real)
    return Edit(real, old, editor(old, kept), configedit.json_empties(old) if real.suffix == ".json" else frozenset())


def _kept_records() -> dict[str, Any]:
    return jsontext.read_object(snapstore.user_config_dir() / KEPT_RECORDS) or {}


def _kept(records: dict[str, Any], path: Path) -> configedit.Kept:
    paths = records.get(str(path))
    valid = [p for p in paths if isinstance(p, list)] if isinstance(paths, list) else []
    return frozenset(tuple(p) for p in valid if all(isinstance(k, str) for k in p))


def _remember(p: Plan) -> None:
    """Record (install) or forget (uninstall) the empty containers of the settings files ``p`` changed."""
    records = _kept_records()
    before = dict(records)
    for edit in p.changes():
        if isinstance(edit, Edit) and p.uninstall:
            records.pop(str(edit.path), None)
        elif isinstance(edit, Edit) and edit.empties:
            records[str(edit.path)] = sorted(_kept(records, edit.path) | edit.empties)
    if records != before:
        fsio.replace_keeping_mode(snapstore.user_config_dir() / KEPT_RECORDS, fsio.dumps_doc(records))


def _tree(
    dest: Path, new: Files, marker: str, name: str, executable: frozenset[str] = frozenset(), private: bool = False
) -> Tree:
    """Our folder at ``dest``; a folder of that name that is not ours is refused, never replaced."""
    old = skillfiles.read_tree(dest) if not dest.is_symlink() else None
    if old is not None and old:
        text = old.get(marker, b"").decode("utf-8", "replace")
        if not re.search(rf"^name:\s*['\"]?{re.escape(name)}['\"]?\s*$", text, re.MULTILINE):
            raise LoopError(
                str(dest),
                f"exists and is not strict-agent-loop's (no {marker} naming '{name}'); nothing was changed",
                "move that folder aside and run the install again",
            )
    return Tree(dest, old, new, executable, private)


def _skill(dest: Path, install: bool, confine: Optional[Path] = None) -> Tree:
    if confine:
        _confined(confine, dest)
    root = skillfiles.skill_root()
    files = skillfiles.source_tree(root, SKILL_PARTS) if install else None
    executable = frozenset(name for name in files or () if os.access(root / name, os.X_OK))
    return _tree(dest, files, "SKILL.md", SKILL, executable)


def _server(workspace: Optional[Path], install: bool) -> Optional[dict]:
    if not install:
        return None
    return {"command": program("strict-loop-mcp"), "args": ["--workspace", str(workspace)] if workspace else []}


def _hooks(harness: str, workspace: Optional[Path], install: bool) -> Optional[str]:
    return configedit.hook_command(program("strict-loop"), harness, workspace) if install else None


def _home(env_name: str, default: str) -> Path:
    value = os.environ.get(env_name)
    return Path(value).expanduser().absolute() if value else Path.home() / default


def plan(
    harness: str, scope: str | None = None, workspace: Path | str | None = None, *, uninstall: bool = False, hooks=""
) -> Plan:
    """What ``install`` (or ``--uninstall``) would change, reading files only. ``hooks``: "http" or "command"."""
    row = registry.get(harness)
    scope = scope or row.default_scope
    ws: Optional[Path] = Path(workspace).expanduser().absolute() if workspace else None
    if scope == "project":
        ws = ws or Path.cwd()
        if not ws.is_dir():
            raise LoopError("--workspace", f"{ws} is not a folder", "name the project folder to install into")
    if hooks == "http" and not row.http_hooks:
        raise LoopError("--hooks", f"{row.title} has command hooks only", "leave --hooks out")
    options = {"hooks": hooks} if hooks and row.http_hooks else {}
    planned: Plan = registry.resolve(row.plan_fn)(scope, ws, not uninstall, **options)
    planned.uninstall = uninstall
    return planned


def _diff(change: Edit | Tree) -> str:
    if isinstance(change, Edit) and change.private:  # its token is never printed
        return f"would {'remove' if change.new is None else 'write'} {change.path} (the HTTP hooks' port and token)\n"
    if isinstance(change, Tree):
        if change.new is None:
            return f"would remove {change.dest}/ ({len(change.old or {})} files)\n"
        verb = "copy" if change.old is None else "update"
        tops = sorted({name.split("/")[0] + ("/" if "/" in name else "") for name in change.new})
        return f"would {verb} {len(change.new)} files into {change.dest}/: {', '.join(tops)}\n"
    lines = difflib.unified_diff(
        (change.old or "").splitlines(keepends=True),
        (change.new or "").splitlines(keepends=True),
        fromfile=str(change.path) if change.old is not None else "/dev/null",
        tofile=str(change.path) if change.new is not None else "/dev/null",
    )
    return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines)


def render(p: Plan, *, dry_run: bool) -> str:
    """The report a run prints: diffs for a dry run, one line per change otherwise, then the notes."""
    changes = p.changes()
    out = [_diff(c).rstrip("\n") for c in changes] + ["(dry run: nothing was written)"] if dry_run else []
    for c in [] if dry_run else changes:
        if isinstance(c, Tree):
            out.append(f"removed {c.dest}/" if c.new is None else f"copied {len(c.new)} files into {c.dest}/")
        else:
            out.append(f"removed {c.path}" if c.new is None else f"wrote {c.path}")
    return "\n".join((out if changes else ["nothing to change"]) + p.notes)


def _write_tree(tree: Tree) -> None:
    """Build the folder beside ``dest``, then swap it in: a reader sees the old folder or the new one."""
    dest = tree.dest
    stage, old = (dest.with_name(f".{dest.name}.{os.getpid()}.{secrets.token_hex(4)}.{end}") for end in ("tmp", "old"))
    try:
        for name, data in (tree.new or {}).items():
            mode = 0o755 if name in tree.executable else 0o600 if tree.private else None
            fsio.atomic_write(stage / name, data, sync=False, mode=mode)
        if dest.exists():
            dest.rename(old)
        stage.rename(dest)
    finally:
        shutil.rmtree(stage, ignore_errors=True)
    shutil.rmtree(old, ignore_errors=True)


def _prune(path: Path, root: Path) -> None:
    """Remove the folders above ``path`` that the removal left empty, up to (not including) ``root``."""
    parent = path.parent
    while parent != root and root in parent.parents:
        try:
            parent.rmdir()
        except OSError:
            return
        parent = parent.parent


def apply(p: Plan) -> None:
    """Write every change of ``p`` (each file atomically); a project install checks each path again first."""
    for change in p.changes():
        private = isinstance(change, Edit) and change.private  # in the person's own config folder
        if p.confine and not private:
            _confined(p.confine, change.dest if isinstance(change, Tree) else change.path)
        if isinstance(change, Tree):
            if change.new is None:
                shutil.rmtree(change.dest)
                _prune(change.dest, p.root)
            else:
                _write_tree(change)
        elif change.new is None:
            change.path.unlink()
            _prune(change.path, change.path.parents[2] if private else p.root)  # up to the config folder
        else:
            fsio.replace_keeping_mode(change.path, change.new.encode("utf-8"))  # and owner; a new one is 0600
    _remember(p)


def run(
    harness: str, scope: Optional[str], workspace: Optional[str], *, dry_run: bool, uninstall: bool, hooks: str = ""
) -> str:
    """The ``install`` subcommand: plan, then show or write; returns what to print."""
    p = plan(harness, scope, workspace, uninstall=uninstall, hooks=hooks or "")  # argparse gives None
    if not dry_run:
        apply(p)
    return render(p, dry_run=dry_run)
