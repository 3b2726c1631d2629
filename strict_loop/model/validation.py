"""Input validation with the one-line error every operation gives: the field, what is wrong, what to send instead.

Why not in ``base.errors``: this needs pydantic, and ``base`` is the standard library only (the hook's fast path).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ValidationError

from strict_loop.base.errors import LoopError
from strict_loop.base.layout import TASK_ID_HINT

__all__ = ["validate_input"]


def validate_input(model: type[BaseModel], params: Any, operation: str) -> Any:
    """Validate ``params`` against ``model``, turning pydantic errors into one LoopError.

    The message names the field (dotted path), what pydantic objected to, and
    the field's own description as the hint for what to send instead.
    """
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
        msg = msg[len("Value error, ") :]
    hint = _field_hint(model, first.get("loc", ()))
    extra = f" (and {exc.error_count() - 1} more problem(s))" if exc.error_count() > 1 else ""
    return LoopError(f"{operation}.{field}", msg + extra, hint)


def _field_hint(model: type[BaseModel], loc: tuple[int | str, ...]) -> str:
    """What to send instead: the field's description, or for a task id an example (its description says when it may
    be left out, which is no help for a malformed one)."""
    if loc and loc[-1] == "task_id":
        return TASK_ID_HINT
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
