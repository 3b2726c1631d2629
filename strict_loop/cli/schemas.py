"""The catalogue of file formats and ``strict-loop schemas``: JSON Schemas generated from the models.

The shipped files in ``references/schemas/`` must equal ``generate()``; a test
enforces it, so the schemas are never edited by hand.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from strict_loop.base.skillfiles import schema_dir
from strict_loop.experiments.remedies import WatchSettings
from strict_loop.model.budgets import BudgetSpent
from strict_loop.model.monitoring import Alert, MonitorState
from strict_loop.model.records import EventRecord, IterationRecord, Registry, StatusRecord, StopReport, TaskState
from strict_loop.model.turns import Turn

__all__ = ["DOCUMENTS", "SCHEMA_DIR", "generate", "render", "write_all"]

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
    "budget": BudgetSpent,
}
"""Every file format (and the turn format callers send, and the settings of ``watch`` recorded in its watch.started
event), by the name its schema file carries."""

SCHEMA_DIR = schema_dir()


def generate() -> dict[str, dict[str, Any]]:
    """File name -> schema document, for every on-disk format."""
    out = {}
    for name, model in DOCUMENTS.items():
        schema = model.model_json_schema(mode="validation")
        schema = {
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "$id": f"strict-agent-loop/{name}.schema.json",
            **schema,
        }
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
