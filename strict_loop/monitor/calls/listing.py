"""What a listing of a folder shows of the files the agent has just written there: a file written and then not in
the listing of its own folder did not take (written elsewhere than meant, or by a write that failed without a word).

Why apart: it is the one check that reads the window's writes against a later turn's output (the listing is the
verdict, the writes are the attempts), and each tool that lists a folder prints it its own way, so the table of
listing forms grows by reason of its own. Pure: text and the detector's window.
"""

from __future__ import annotations

import re
import shlex
from typing import Optional

from strict_loop.model.monitoring import TurnFacts
from strict_loop.model.turns import Turn

LISTERS = {"list_files": "recursive", "list_dir": "", "list_directory": "", "LS": "", "ls": "", "list": ""}
"""Each folder-listing tool of a harness or an export, and the argument that makes its listing recursive."""
_PATH_KEYS = ("path", "dir_path", "relative_workspace_path", "directory", "absolute_path")
_CUT = re.compile(r"truncated|\.\.\.|\u2026|\band \d+ more\b|\bmore (?:files|entries|items)\b", re.I)
"""A listing cut short (Cline's 200-file limit, a tool's 'and 30 more'): what it lacks is not absent."""
_GONE = re.compile(r"\b(?:rm|rmdir|mv|unlink|del|Remove-Item|git\s+(?:clean|checkout|stash|reset|restore|mv|rm))\b")
"""A command after the write that may have moved or removed what it wrote."""
_NAME = re.compile(r"[^\s/\\]+")


def _norm(path: str) -> str:
    path = path.strip().replace("\\", "/")
    while path.startswith("./"):
        path = path[2:]
    return path.rstrip("/") if path not in ("/", "") else path


def _shell_listing(command: str) -> Optional[tuple[str, bool]]:
    """``ls [flags] DIR`` or ``find DIR [-type f]``: the folder listed and whether below it too (None: another
    command, several folders, a glob or a filter, which would leave out what it does not match)."""
    if not command.startswith(("ls ", "find ")) or any(c in command for c in "|;&<>*?[$`") or len(command) > 300:
        return None
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    if len(words) < 2:
        return None
    if words[0] == "ls":
        flags = [w for w in words[1:] if w.startswith("-")]
        dirs = [w for w in words[1:] if not w.startswith("-")]
        if len(dirs) != 1 or any("d" in f.lstrip("-") for f in flags if not f.startswith("--")):
            return None
        return dirs[0], any("R" in f for f in flags if not f.startswith("--"))
    if words[0] == "find" and not words[1].startswith("-") and words[2:] in ([], ["-type", "f"]):
        return words[1], True
    return None


def listed(turn: Turn) -> Optional[tuple[str, bool]]:
    """The folder a listing turn lists (normalised) and whether its listing goes below it (None: no listing)."""
    if turn.tool in LISTERS:
        folder = next((turn.args[k] for k in _PATH_KEYS if isinstance(turn.args.get(k), str)), None)
        if not folder:
            return None
        key = LISTERS[turn.tool]
        deep = bool(key) and str(turn.args.get(key, "")).lower() in ("true", "1", "yes")
        return _norm(folder), deep or turn.tool == "LS"  # Claude Code's LS prints the tree below the folder
    command = turn.args.get("command")
    if isinstance(command, str):
        shown = _shell_listing(command.strip())
        return (_norm(shown[0]), shown[1]) if shown else None
    return None


def _aligned(parent: str, folder: str) -> bool:
    """The same folder: named alike, or a relative name of two parts or more that ends the absolute one
    (``bff/src`` and ``/home/x/bff/src``); a one-word relative name (``src``) could be any folder of that name."""
    if parent == folder:
        return True
    if parent.startswith("/") == folder.startswith("/"):
        return False
    absolute, relative = (parent, folder) if parent.startswith("/") else (folder, parent)
    return "/" in relative and absolute.endswith("/" + relative)


def _within(path: str, folder: str, deep: bool) -> bool:
    """Whether ``path`` (a file written) lies in ``folder`` as listed: directly, or below it for a deep listing."""
    parent = path.rpartition("/")[0]
    if folder in ("", "."):
        return not path.startswith("/") and (deep or parent == "")
    if not parent:
        return False
    if not deep:
        return _aligned(parent, folder)
    parts = parent.split("/")
    return any(_aligned("/".join(parts[:n]) or "/", folder) for n in range(len(parts), 0, -1))


def unlisted(turn: Turn, step: str, window: list[TurnFacts]) -> Optional[str]:
    """A listing that lacks a file written into its folder since the folder was last listed: its failure text,
    one per folder (the same folder lacking what was written again is the same failure, whichever files). None: no
    listing, a listing cut short, or every file written there is in it. ``step``: the listing's step, whose last
    run before this one bounds the writes looked for."""
    where = listed(turn)
    if where is None or not turn.output.strip() or _CUT.search(turn.output[-400:]) or len(turn.output) > 100_000:
        return None
    folder, deep = where
    names = set(_NAME.findall(turn.output))
    written: dict[str, int] = {}
    for f in reversed(window):
        if f.step == step:
            break  # the previous listing: what was written before it was looked at then
        if f.actor == "agent" and f.kind == "write" and not f.failed:
            for p in f.paths:
                written.setdefault(_norm(p), f.i)
    for f in window:
        if f.actor == "agent" and (f.kind != "write" and _GONE.search(f.action) or "delete" in f.tool.lower()):
            written = {p: i for p, i in written.items() if i > f.i}  # moved or removed since: absence says nothing
    lacking = [p for p in written if _within(p, folder, deep) and " " not in p and p.rsplit("/", 1)[-1] not in names]
    return f"files written into {folder or '.'} are not in its listing" if lacking else None
