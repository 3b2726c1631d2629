"""Who may answer a pause from the command line, and which pause an answer is for.

Why: an agent that prepared for its pause while it still had a shell (a background loop running
``strict-loop resume --action continue``) must not answer its own pause with one line. So ``resume`` answers at a
terminal (stdin and stdout), after showing the pause and asking, as ``trust`` does; or, for a person's script, with
``--person-key FILE``: a file only its owner can read, outside the workspace, holding this machine's person key
(``$XDG_CONFIG_HOME/strict-loop/person.key``, made once by ``strict-loop person-key``), which no agent's
configuration holds. It is named explicitly, as ``trust --yes`` is: a same-user process can read it (SECURITY.md).
Every answer names the pause it answers (the one shown, else the one it finds, or ``--pause-id``): an answer to a
pause answered meanwhile is refused (exit 2), never applied to a later one.
"""

from __future__ import annotations

import argparse
import hmac
import os
import secrets
import stat
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

from strict_loop.base.errors import LoopError
from strict_loop.storage.workspaces import config_dir

if TYPE_CHECKING:  # the rest is imported by bind: --help, person-key and the reads load no model
    from strict_loop.loop.workspace import Workspace

KEY_FILE = "person.key"
MIN_KEY_CHARS, MAX_KEY_CHARS = 32, 512
MAKE_IT = "make it once: strict-loop person-key (prints its path)"


def add_parsers(sub: Any, common: argparse.ArgumentParser, parsers: dict[str, argparse.ArgumentParser]) -> None:
    parsers["resume"].add_argument(
        "--person-key",
        metavar="FILE",
        help="answer without a terminal (a person's script): FILE holds this machine's person key, mode 0600, "
        f"outside the workspace ({MAKE_IT})",
    )
    parsers["person-key"] = sub.add_parser(
        "person-key",
        parents=[common],
        help="make this machine's person key, with which a person's script answers a pause",
        description=f"Make {KEY_FILE} in $XDG_CONFIG_HOME/strict-loop/ (~/.config/strict-loop/), mode 0600, if "
        "there is none, and print its path.\nA script of yours then answers a pause with strict-loop resume "
        "--person-key FILE. Keep it out of every agent's configuration.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )


def key_path() -> Path:
    return config_dir() / KEY_FILE


def _at_terminal() -> bool:
    return sys.stdin.isatty() and sys.stdout.isatty()


def bind(ws: Workspace, params: dict[str, Any], key_file: Optional[str]) -> None:
    """Check that a person answers (a terminal, or ``--person-key``), then bind the answer to its pause in
    ``params``; LoopError, with nothing changed, otherwise (bad input first: a person is never asked in vain)."""
    from strict_loop.loop.monitoring import TaskMonitor, pause_id
    from strict_loop.model.requests import ResumeInput
    from strict_loop.model.validation import validate_input
    from strict_loop.monitor import ladder

    validate_input(ResumeInput, params, "resume")
    if key_file is not None:
        check_key(Path(key_file), ws.root)
    elif not _at_terminal():
        raise LoopError(
            "resume",
            "a person answers a pause, and no terminal is attached (stdin and stdout); nothing was changed",
            f"run it in a terminal, or give --person-key FILE ({MAKE_IT})",
        )
    store = ws.task_store(params.get("task_id"))
    mon = TaskMonitor(store, ws.root).load()
    current = pause_id(mon) if mon.paused else None
    if params.get("pause_id") is None:
        params["pause_id"] = current
    if key_file is None and params["pause_id"] == current and (current or params["action"] != "continue"):
        _confirm(store.task_id, params, ladder.short_diagnosis(mon) if current else None)


def _confirm(task_id: str, params: dict[str, Any], diagnosis: Optional[str]) -> None:
    """Show the pause and the answer, and ask (on stderr: stdout keeps the result)."""
    answer = params["action"] + (f" --to {params['to']}" if params.get("to") is not None else "")
    shown = "".join(c if c.isprintable() else " " for c in diagnosis or "")  # the agent's output: no escape sequence
    said = f"is paused (pause {params['pause_id']}): {shown}" if diagnosis else "is not paused"
    print(f"task '{task_id}' {said}", file=sys.stderr)
    print(f"Answer with {answer}? [y/N] ", end="", file=sys.stderr, flush=True)
    if sys.stdin.readline().strip().lower() not in ("y", "yes"):
        raise LoopError("resume", "not confirmed; nothing was changed", "run strict-loop resume again to answer yes")


def check_key(given: Path, root: Path) -> None:
    """``given`` must hold this machine's person key, and be a file only its owner reads, outside the workspace."""
    real = Path(os.path.realpath(given.expanduser()))
    if real == root.resolve() or root.resolve() in real.parents:
        raise LoopError(
            "--person-key",
            f"{given} is inside the workspace, where the agent writes; nothing was changed",
            f"name {key_path()}",
        )
    stored = read_key(key_path(), "the person key")
    if not hmac.compare_digest(read_key(given.expanduser(), "--person-key").encode(), stored.encode()):
        raise LoopError(
            "--person-key",
            f"{given} does not hold this machine's person key; nothing was changed",
            f"name {key_path()}",
        )


def read_key(path: Path, what: str) -> str:
    """The key in ``path``: a regular file (never through a link, never a FIFO) of ours that no one else may read."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        raise LoopError(what, f"{path} does not exist", MAKE_IT) from None
    except OSError as exc:
        raise LoopError(
            what, f"{path} cannot be read ({exc.strerror or exc}; a link is never followed)", MAKE_IT
        ) from None
    with os.fdopen(fd, "rb") as fh:
        info = os.fstat(fh.fileno())
        if not stat.S_ISREG(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o077:
            raise LoopError(what, f"{path} is not a file only you can read (yours, mode 0600)", f"chmod 600 {path}")
        key = fh.read(MAX_KEY_CHARS + 1).decode("ascii", "replace").strip()
    if not MIN_KEY_CHARS <= len(key) <= MAX_KEY_CHARS or not all("\x21" <= c <= "\x7e" for c in key):
        raise LoopError(what, f"{path} holds no key ({MIN_KEY_CHARS} to {MAX_KEY_CHARS} printable characters)", MAKE_IT)
    return key


def make_key() -> int:
    """``strict-loop person-key``: make the person key if there is none; print its path (``--person-key "$(...)"``)."""
    path = key_path()
    if os.path.lexists(path):
        read_key(path, "the person key")
    else:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        with os.fdopen(fd, "wb") as fh:
            fh.write((secrets.token_urlsafe(32) + "\n").encode())
            os.fsync(fh.fileno())
        print(f"made {path} (mode 0600): keep it out of every agent's configuration", file=sys.stderr)
    print(path)
    return 0
