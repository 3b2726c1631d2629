"""JSON Schemas generated from the models, and validation of files against them.

The shipped files in ``references/schemas/`` must equal ``generate()``; a test
enforces it, so the schemas are never edited by hand.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel, ValidationError

from .errors import StateDamaged
from .fields import parse_json
from .models import RETIRED_FIELDS, EventRecord, IterationRecord, Registry, StatusRecord, StopReport, TaskState
from .monitor import Alert, MonitorState
from .remedies import WatchSettings
from .resources import schema_dir
from .settings import STORED
from .turns import Turn

if TYPE_CHECKING:  # jsonschema costs ~70 ms to import: only a file that needs the full check pays for it
    from jsonschema import Draft202012Validator

M = TypeVar("M", bound=BaseModel)

DOCUMENTS: dict[str, type[BaseModel]] = {
    "state": TaskState,
    "iteration": IterationRecord,
    "event": EventRecord,
    "stop_report": StopReport,
    "status_record": StatusRecord,
    "registry": Registry,
    "turn": Turn,
    "monitor": MonitorState,
    "alert": Alert,
    "watch_settings": WatchSettings,
}
"""Every file format (and the turn format callers send, and the settings of ``watch`` recorded in its watch.started
event), by the name its schema file carries."""

SCHEMA_DIR = schema_dir()


def generate() -> dict[str, dict[str, Any]]:
    """File name -> schema document, for every on-disk format."""
    out = {}
    for name, model in DOCUMENTS.items():
        schema = model.model_json_schema(mode="validation")
        schema = {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": f"strict-agent-loop/{name}.schema.json", **schema}
        out[f"{name}.schema.json"] = schema
    return out


def render(schema: dict[str, Any]) -> str:
    return json.dumps(schema, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def write_all(directory: Path = SCHEMA_DIR) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for filename, schema in generate().items():
        path = directory / filename
        path.write_text(render(schema), encoding="utf-8")
        written.append(path)
    return written


@lru_cache(maxsize=None)
def _validator(model: type[BaseModel]) -> Draft202012Validator:
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

    error = best_match(_validator(model).iter_errors(raw))
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
