"""The one JSON parser for every input and stored document: strict JSON, bounded nesting, one-line errors.

Kept free of pydantic so the hook handler can read a harness's payload before it
knows whether there is a loop at all (then it imports nothing more).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Optional

MAX_JSON_DEPTH = 64
"""Deepest nesting accepted in JSON input, data and stored documents (nothing the loop writes goes past a few
levels)."""


def parse_json(data: str | bytes) -> Any:
    """Parse JSON input or a stored document; ValueError whose text is the problem, in one line.

    A UTF-8 byte order mark (some editors write one) is accepted; ``NaN``/``Infinity`` (not JSON, though
    Python's parser takes them) and nesting deeper than MAX_JSON_DEPTH (Python's parser would hit its
    recursion limit) are refused.
    """
    if isinstance(data, str) and data.startswith("\ufeff"):
        data = data[1:]
    try:
        value = json.loads(data, parse_constant=_no_constant, parse_float=_finite)
    except _Refused:
        raise
    except RecursionError:
        raise _Refused(f"is nested more than {MAX_JSON_DEPTH} levels deep") from None
    except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError, an integer of thousands of digits
        raise ValueError(f"is not valid JSON ({str(exc)[:200]})") from None
    if too_deep(value):
        raise _Refused(f"is nested more than {MAX_JSON_DEPTH} levels deep")
    return value


class _Refused(ValueError):
    """Valid for Python's parser, refused by ours."""


def _no_constant(name: str) -> Any:
    raise _Refused(f"holds {name}, which JSON does not allow: send a finite number (or a string)")


def _finite(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise _Refused(f"holds {text[:40]}, a number too large to be finite: send a finite number (or a string)")
    return value


def too_deep(value: Any, cap: int = MAX_JSON_DEPTH) -> bool:
    """Whether ``value`` nests objects/arrays more than ``cap`` levels deep (checked without recursion)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, (list, tuple)) else None
        if children is None:
            continue
        if depth > cap:
            return True
        stack.extend((child, depth + 1) for child in children)
    return False


def read_object(path: Path) -> Optional[dict[str, Any]]:
    """One of the loop's small JSON documents as a dict, read as ``fsio.read_own`` reads (no link, no FIFO,
    capped); None when it is absent, unreadable, not JSON or not an object. For files whose loss only
    means starting afresh: a hook's counters, the supervisor's lock and session, a usage file."""
    from strict_loop.base.errors import LoopError
    from strict_loop.base.fsio import read_own

    try:
        value = parse_json(read_own(path))
    except (OSError, ValueError, LoopError):
        return None
    return value if isinstance(value, dict) else None
