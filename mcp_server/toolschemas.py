"""The tools' JSON Schemas as data: ``tool_schemas.json``, generated from the core's request and result models.

Why: ``tools/list`` advertises each model's own JSON Schema, and making them (``model_json_schema``, which also runs
the models' deferred builds) cost every start of the server a few hundred milliseconds of CPU, though they change
only with the code. The models stay the one source: the file is what ``live`` makes of them, written down, and a test
checks that it still is (regenerate: ``python -m mcp_server.toolschemas``). A tool the file does not hold for the
same models (an operation added since), or a file missing or unreadable, gets its schemas made live: the server
always starts, with the same list.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

if TYPE_CHECKING:
    from .server import ToolSpec

FILE = Path(__file__).with_name("tool_schemas.json")
Schemas = tuple[dict[str, Any], dict[str, Any]]


def inline(schema: dict[str, Any]) -> dict[str, Any]:
    """The schema with every local ``$ref`` replaced by its definition and ``$defs`` dropped.

    Several harnesses handle ``$ref`` poorly, and clients that re-validate
    structured results (the SDK's does, with jsonschema) pay for each lookup.
    The models are not recursive, so inlining terminates.
    """
    defs = schema.get("$defs", {})

    def walk(node: Any) -> Any:
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/$defs/"):
                merged = {**defs[ref[len("#/$defs/") :]], **{k: v for k, v in node.items() if k != "$ref"}}
                return walk(merged)
            return {k: walk(v) for k, v in node.items() if k != "$defs"}
        if isinstance(node, list):
            return [walk(v) for v in node]
        return node

    return walk(schema)


def lean(node: Any) -> Any:
    """An input schema without what costs the agent characters and tells it nothing.

    Titles restate the property names; an optional field's ``anyOf [X, null]`` with a null default is just X not
    listed in ``required`` (the core's validator still takes an explicit null); an empty default or
    ``additionalProperties: true`` says no more than the field's absence from ``required`` or the schema default.
    """
    if isinstance(node, list):
        return [lean(v) for v in node]
    if not isinstance(node, dict):
        return node
    variants = node.get("anyOf")
    if (
        isinstance(variants, list)
        and len(variants) == 2
        and {"type": "null"} in variants
        and node.get("default", 0) is None
    ):
        other = next(v for v in variants if v != {"type": "null"})
        node = {**other, **{k: v for k, v in node.items() if k not in ("anyOf", "default")}}
    out = {}
    for key, value in node.items():
        if key == "properties":  # its keys are field names, not keywords
            out[key] = {name: lean(sub) for name, sub in value.items()}
        elif not _says_nothing(key, value):
            out[key] = lean(value)
    return out


def _says_nothing(key: str, value: Any) -> bool:
    if key == "default":  # a default sentence (blocker_definition's) is the core's to apply, not the agent's to read
        return value is None or value is False or value in ("", [], {}) or isinstance(value, str) and len(value) > 40
    return key == "title" or (key, value) == ("additionalProperties", True)


def live(input_model: type[BaseModel], output_model: type[BaseModel]) -> Schemas:
    """A tool's input and output schemas, made from its models."""
    schema = lean(inline(input_model.model_json_schema()))
    # the model's docstring is for developers; the tool's description speaks to the agent
    schema.pop("description", None)
    return schema, inline(output_model.model_json_schema())


def _name(model: type[BaseModel]) -> str:
    return f"{model.__module__}:{model.__qualname__}"


def load() -> dict[str, Any]:
    """The file's tools by name; empty when the file is missing or unreadable (every tool is then made live)."""
    try:
        tools = json.loads(FILE.read_text(encoding="utf-8"))["tools"]
    except (OSError, UnicodeError, ValueError, TypeError, KeyError, RecursionError):
        return {}
    return tools if isinstance(tools, dict) else {}


def schemas(spec: ToolSpec, known: dict[str, Any]) -> Schemas:
    """A tool's schemas: the file's (``known``, from ``load``) when it holds them for these very models, else live."""
    entry = known.get(spec.name)
    if (
        isinstance(entry, dict)
        and entry.get("input_model") == _name(spec.input_model)
        and entry.get("output_model") == _name(spec.output_model)
        and isinstance(entry.get("input_schema"), dict)
        and isinstance(entry.get("output_schema"), dict)
    ):
        return entry["input_schema"], entry["output_schema"]
    return live(spec.input_model, spec.output_model)


def generate() -> str:
    """``tool_schemas.json``'s text, from the models of every tool the server serves."""
    from .server import tool_specs

    tools = {}
    for spec in tool_specs():
        input_schema, output_schema = live(spec.input_model, spec.output_model)
        tools[spec.name] = {
            "input_model": _name(spec.input_model),
            "output_model": _name(spec.output_model),
            "input_schema": input_schema,
            "output_schema": output_schema,
        }
    return json.dumps({"tools": tools}, indent=1, ensure_ascii=False) + "\n"


def main() -> None:
    """``python -m mcp_server.toolschemas``: write ``tool_schemas.json`` from the models."""
    text = generate()
    partial = FILE.with_name(FILE.name + ".tmp")
    partial.write_text(text, encoding="utf-8")
    os.replace(partial, FILE)  # a reader never sees half a file
    print(FILE)


if __name__ == "__main__":
    main()
