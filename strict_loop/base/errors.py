"""The one error type every operation raises for input or state it refuses.

Adapters (CLI, scripts, MCP server) print ``str(err)``: one line that names the
field, what is wrong with it, and what to send instead.
"""

from __future__ import annotations

import functools
import sys
from typing import TYPE_CHECKING, Any, Callable, TypeVar

if TYPE_CHECKING:  # pydantic is imported on first use: the hook's fast path reads files through fsio without it
    from pydantic import BaseModel, ValidationError

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
                where = f"{operation} ({exc.filename})" if exc.filename else operation
                raise StorageError(where, f"file system error: {exc.strerror or exc}",
                                   "free disk space or fix the permissions, then retry; ledgers stay consistent") from exc
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
        return LoopError(operation, f"a subprocess failed: {str(exc)[:300]}", "retry; see events.jsonl for what was recorded")
    if pydantic is not None and isinstance(exc, pydantic.ValidationError):
        return LoopError(operation, f"a stored value does not fit its model ({_first(exc)})",
                         "run `strict-loop rebuild_state` for this task, or report a bug")
    return None


def _first(exc: ValidationError) -> str:
    first = exc.errors(include_url=False)[0]
    return f"{'.'.join(str(p) for p in first.get('loc', ())) or 'input'}: {first.get('msg', 'invalid')}"


def validate_input(model: type[BaseModel], params: Any, operation: str) -> Any:
    """Validate ``params`` against ``model``, turning pydantic errors into one LoopError.

    The message names the field (dotted path), what pydantic objected to, and
    the field's own description as the hint for what to send instead.
    """
    from pydantic import ValidationError

    if isinstance(params, model):
        return params
    try:
        return model.model_validate(params)
    except ValidationError as exc:
        raise _from_validation(exc, model, operation) from None


def _from_validation(exc: ValidationError, model: type[BaseModel], operation: str) -> LoopError:
    first = exc.errors(include_url=False)[0]
    loc = [str(p) for p in first.get("loc", ())]
    field = ".".join(loc) or "input"
    msg = first.get("msg", "invalid value")
    if msg.startswith("Value error, "):
        msg = msg[len("Value error, "):]
    hint = _field_hint(model, first.get("loc", ()))
    extra = f" (and {exc.error_count() - 1} more problem(s))" if exc.error_count() > 1 else ""
    return LoopError(f"{operation}.{field}", msg + extra, hint)


def _field_hint(model: type[BaseModel], loc: tuple) -> str:
    from pydantic import BaseModel

    current: Any = model
    info = None
    for part in loc:
        fields = getattr(current, "model_fields", None)
        if not fields or not isinstance(part, str) or part not in fields:
            break
        info = fields[part]
        ann = info.annotation
        current = ann if isinstance(ann, type) and issubclass(ann, BaseModel) else None
        if current is None:
            break
    if info is not None and info.description:
        return f"expected: {info.description}"
    return ""
