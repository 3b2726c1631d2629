"""Loading a stored JSON document with the error that names its broken field: strict JSON, then the JSON Schema.

Apart from the catalogue of formats (``strict_loop.cli.schemas``) because storage needs only this: a document
that failed pydantic's strict pass is checked against its schema, so the error names the field and an older
file is upgraded. jsonschema is imported only then.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel, ValidationError

from strict_loop.base.errors import StateDamaged
from strict_loop.model.fields import parse_json
from strict_loop.model.records import RETIRED_FIELDS
from strict_loop.model.settings import STORED

if TYPE_CHECKING:  # jsonschema costs ~70 ms to import: only a file that needs the full check pays for it
    from jsonschema import Draft202012Validator

__all__ = ["load_document", "validate_document", "validator_for"]

M = TypeVar("M", bound=BaseModel)


@cache
def validator_for(model: type[BaseModel]) -> Draft202012Validator:
    from jsonschema import Draft202012Validator

    return Draft202012Validator(model.model_json_schema(mode="validation"))


def load_document(model: type[M], data: bytes | str, source: Path, fix: str) -> M:
    """Parse and validate one JSON document; StateDamaged names the broken field."""
    try:
        raw = parse_json(data)
    except ValueError as exc:
        raise StateDamaged(str(source), str(exc), fix) from None
    return validate_document(model, raw, source, fix)


def validate_document(model: type[M], raw: Any, source: Path | str, fix: str) -> M:
    retired = RETIRED_FIELDS.get(model.__name__)
    if retired and isinstance(raw, dict):
        raw = {k: v for k, v in raw.items() if k not in retired}
    from jsonschema.exceptions import best_match

    error = best_match(validator_for(model).iter_errors(raw))
    if error is not None:
        where = ".".join(str(p) for p in error.absolute_path) or "(top level)"
        raise StateDamaged(f"{source}: field '{where}'", _short(error.message), fix)
    try:
        return model.model_validate(raw, context=STORED)
    except ValidationError as exc:  # rules JSON Schema cannot express
        first = exc.errors(include_url=False)[0]
        where = ".".join(str(p) for p in first["loc"]) or "(top level)"
        raise StateDamaged(f"{source}: field '{where}'", first["msg"], fix) from None


def _short(text: str, cap: int = 300) -> str:
    return text if len(text) <= cap else text[:cap] + "..."
