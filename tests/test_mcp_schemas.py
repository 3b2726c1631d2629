"""Issue 27: the tools' JSON Schemas come from ``mcp_server/tool_schemas.json`` (generated from the models, held to
them here), so a start of the server makes none; a tool the file lacks, or a file missing or damaged, gets its schemas
made live, and tools/list is the same to the byte either way."""

from __future__ import annotations

import json
import os

import pytest
from mcp_helpers import call, memory_client
from pydantic import BaseModel

from mcp_server import toolschemas

pytestmark = pytest.mark.anyio


def test_the_file_is_what_the_models_make():
    """Regenerate after a deliberate change: python -m mcp_server.toolschemas (or STRICT_LOOP_UPDATE_SNAPSHOT=1
    python -m pytest tests/test_mcp_schemas.py)."""
    text = toolschemas.generate()
    if os.environ.get("STRICT_LOOP_UPDATE_SNAPSHOT"):
        toolschemas.FILE.write_text(text, encoding="utf-8")
    assert toolschemas.FILE.read_text(encoding="utf-8") == text, "stale: python -m mcp_server.toolschemas"


async def _listed(ws_dir) -> str:
    async with memory_client(ws_dir) as client:
        return (await client.list_tools()).model_dump_json()


async def test_a_start_makes_no_schema_of_a_model_and_calls_are_validated_as_strictly(ws_dir, monkeypatch):
    made = BaseModel.model_json_schema.__func__  # type: ignore[attr-defined]

    def refuse(cls, *args, **kwargs):  # the SDK's own (its resource templates' arguments) are not ours to skip
        assert not cls.__module__.startswith(("strict_loop.", "mcp_server.")), f"{cls.__name__}'s schema was made"
        return made(cls, *args, **kwargs)

    monkeypatch.setattr(BaseModel, "model_json_schema", classmethod(refuse))
    async with memory_client(ws_dir) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert tools["init_state"].input_schema["additionalProperties"] is False
        bad = await call(client, "init_state", goal="g", global_stop_condition="c", task_id="t", colour="red")
        good = await call(client, "init_state", goal="g", global_stop_condition="c", task_id="t")
    assert bad[0] and "colour" in bad[2]
    assert not good[0] and good[1]["task_id"] == "t"


def _stale_entry(path) -> None:
    """The real file, but one tool's entry names another model (as after a model was renamed, not regenerated)."""
    data = json.loads(toolschemas.FILE.read_text(encoding="utf-8"))
    data["tools"]["update_state"]["input_model"] = "strict_loop.model.requests:Renamed"
    data["tools"]["update_state"]["input_schema"] = {"type": "object"}
    data["tools"].pop("show_task")
    path.write_text(json.dumps(data), encoding="utf-8")


@pytest.mark.parametrize(
    "damage",
    [
        lambda path: None,  # missing
        lambda path: path.write_bytes(b'{"tools": {"init_state": '),  # cut short
        lambda path: path.write_bytes(b"\xff\xfe not utf-8"),
        lambda path: path.write_text('{"tools": ["init_state"]}'),
        lambda path: path.write_text('{"tools": {"init_state": {"input_schema": 3}, "list_tasks": []}}'),
        _stale_entry,
    ],
    ids=["missing", "truncated", "binary", "not-a-table", "bad-entries", "stale-entry"],
)
async def test_a_missing_or_damaged_file_gives_the_same_list_made_live(ws_dir, tmp_path, monkeypatch, damage):
    from_file = await _listed(ws_dir)
    damaged = tmp_path / "tool_schemas.json"
    damage(damaged)
    monkeypatch.setattr(toolschemas, "FILE", damaged)
    assert await _listed(ws_dir) == from_file
