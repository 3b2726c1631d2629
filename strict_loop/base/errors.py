"""The one error type every operation raises for input or state it refuses.

Adapters (CLI, scripts, MCP server) print ``str(err)``: one line that names the
field, what is wrong with it, and what to send instead.
"""

from __future__ import annotations

import errno
import functools
import sys
from collections.abc import Callable
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])


class LoopError(Exception):
    """A refused operation: ``field`` is what was wrong, ``fix`` what to do."""

    def __init__(self, field: str, problem: str, fix: str = "") -> None:
        self.field = field
        self.problem = problem
        self.fix = fix
        text = f"{field}: {problem}" if field else problem
        if fix:
            text += f" -- {fix}"
        super().__init__(text)


class TaskNotFound(LoopError):
    """The named task has no state on disk."""


class StateDamaged(LoopError):
    """A file on disk does not match its schema; nothing was overwritten."""


class StorageError(LoopError):
    """The file system refused an operation (disk full, permission denied, read-only, ...)."""


_OS_FIXES = {
    errno.ENOTDIR: "a part of that path is a file where a folder is needed (is .agent-loop a file?): move it away",
    errno.EISDIR: "a folder stands where a file is needed: move it away",
    errno.ENOSPC: "free disk space, then retry",
    errno.EDQUOT: "free disk space (your quota is full), then retry",
    errno.EROFS: "the file system is read-only: use a writable workspace",
    errno.EACCES: "fix the permissions, then retry",
    errno.EPERM: "fix the permissions, then retry",
}
"""What to do about an OS error, by its errno (the default: disk space or permissions)."""


def storage_error(operation: str, exc: OSError) -> StorageError:
    """An OS error as our own: what was refused, where, and what to do about it (by its errno)."""
    where = f"{operation} ({exc.filename})" if exc.filename else operation
    return StorageError(
        where,
        f"file system error: {exc.strerror or exc}",
        _OS_FIXES.get(exc.errno or 0, "free disk space or fix the permissions, then retry")
        + "; ledgers stay consistent",
    )


def boundary(operation: str) -> Callable[[F], F]:
    """Map foreign exceptions escaping a core operation to our own types, in one place (as httpx maps transport errors).

    Adapters (CLI, MCP, hooks) then catch :class:`LoopError` alone and print its one line.
    """

    def wrap(fn: F) -> F:
        @functools.wraps(fn)
        def run(*args: Any, **kwargs: Any) -> Any:
            try:
                return fn(*args, **kwargs)
            except LoopError:
                raise
            except OSError as exc:
                raise storage_error(operation, exc) from exc
            except Exception as exc:
                mapped = _mapped(operation, exc)
                if mapped is None:
                    raise
                raise mapped from exc

        return run  # type: ignore[return-value]

    return wrap


def _mapped(operation: str, exc: Exception) -> LoopError | None:
    """A failed subprocess or a stored value that does not fit its model, as a LoopError; None for anything else.

    Why through sys.modules: neither module is imported here (the hook's fast path reads files through
    fsio without them); an exception of theirs can only exist once they are imported.
    """
    subprocess, pydantic = sys.modules.get("subprocess"), sys.modules.get("pydantic")
    if subprocess is not None and isinstance(exc, subprocess.SubprocessError):
        return LoopError(
            operation, f"a subprocess failed: {str(exc)[:300]}", "retry; see events.jsonl for what was recorded"
        )
    if pydantic is not None and isinstance(exc, pydantic.ValidationError):
        return LoopError(
            operation,
            f"a stored value does not fit its model ({_first(exc)})",
            "run `strict-loop rebuild_state` for this task, or report a bug",
        )
    return None


def _first(exc: Any) -> str:
    """The first problem of a pydantic ValidationError (typed Any: this module never imports pydantic)."""
    first = exc.errors(include_url=False)[0]
    return f"{'.'.join(str(p) for p in first.get('loc', ())) or 'input'}: {first.get('msg', 'invalid')}"
