"""Field building blocks shared by the stored models and the request models.

Caps are ``Annotated`` constraints, so they are enforced by pydantic and also
appear in every generated JSON Schema (``maxLength`` on list items included).
``Flag`` is CLI metadata: it rides in a field's annotation, is ignored by
pydantic and the schemas, and lets the CLI generate its flags from the models.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any, Optional

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StringConstraints

# Re-exported (``X as X``): the models' callers import them from here. layout holds the task id's pattern and check:
# the hook reads tasks without pydantic.
from strict_loop.base.jsontext import MAX_JSON_DEPTH as MAX_JSON_DEPTH
from strict_loop.base.jsontext import parse_json as parse_json
from strict_loop.base.jsontext import too_deep as too_deep
from strict_loop.base.layout import TASK_ID_PATTERN as TASK_ID_PATTERN
from strict_loop.base.layout import check_task_id as check_task_id

EVENT_KIND_PATTERN = r"^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)*$"


class Strict(BaseModel):
    """Unknown fields are refused: a typo in a field name is an error, not silently dropped; NaN and infinity are no
    numbers."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False, defer_build=True)


@dataclass(frozen=True)
class Flag:
    """How a request field appears on the command line (the name, help and default come from the field).

    ``names``: the flags (default: ``--field-name``); ``metavar``: the value's placeholder;
    ``flatten``: a nested model's fields become flags of their own (with ``group`` as the
    help heading); ``json``: the value is a JSON object or ``@file.json``; ``load``: turns the
    flag's text into the field's value (e.g. reads a file); ``note``: help that only
    the command line needs (how to spell the value there).
    """

    names: tuple[str, ...] = ()
    metavar: Optional[str] = None
    flatten: bool = False
    group: Optional[str] = None
    json: bool = False
    load: Optional[Callable[[str], Any]] = None
    note: str = ""


TaskId = Annotated[
    str,
    AfterValidator(check_task_id),
    Field(
        description="Task slug: 1-64 chars of a-z, 0-9, '-', '_'; starts with a letter or digit.",
        json_schema_extra={"pattern": TASK_ID_PATTERN},  # the pattern caps the length at 64
    ),
]


def not_blank(value: str) -> str:
    if not value.strip():
        raise ValueError("must not be blank")
    return value


def Text(max_chars: int, description: str, *, required: bool = False) -> Any:
    """A capped text field; ``required`` also forbids blank text. The cap is in the schema (``maxLength``)
    and in the CLI's help, not restated in the description that every tools/list repeats."""
    return Field(..., max_length=max_chars, min_length=1 if required else 0, description=description)


NonBlank = Annotated[str, AfterValidator(not_blank)]


def no_blank_items(items: list[str]) -> list[str]:
    for i, item in enumerate(items):
        if not item.strip():
            raise ValueError(f"item {i} is blank")
    return items


# Lists of non-blank strings of at most 500, 1000 or 2000 characters each (the cap shows in the schema). Spelled
# out, not built by a function, so that a type checker reads them as ``list[str]``.
Items500 = Annotated[list[Annotated[str, StringConstraints(max_length=500)]], AfterValidator(no_blank_items)]
Items1000 = Annotated[list[Annotated[str, StringConstraints(max_length=1000)]], AfterValidator(no_blank_items)]
Items2000 = Annotated[list[Annotated[str, StringConstraints(max_length=2000)]], AfterValidator(no_blank_items)]


def TextList(max_items: int, max_chars: int, description: str) -> Any:
    """A list of capped texts; both caps are in the schema (``maxItems``, the items' ``maxLength``)."""
    return Field(default_factory=list, max_length=max_items, description=description)
