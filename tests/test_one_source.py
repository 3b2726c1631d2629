"""One source for every field: the CLI flags, the MCP input schemas and the stored models stay in step."""

from __future__ import annotations

import argparse
import json

import pytest
from mcp_helpers import memory_client
from pydantic import BaseModel

from strict_loop.cli import app
from strict_loop.cli.flags import request_from
from strict_loop.loop.operations import OPERATIONS
from strict_loop.model.fields import Flag
from strict_loop.model.records import ContractTerms, IterationRecord, LoopContract, RoundFields, RoundHeader
from strict_loop.model.requests import InitStateInput, InitStateRequest, UpdateStateInput

MODELS = {op.name: op.flags for op in OPERATIONS if op.flags is not None}


def leaf_paths(model: type[BaseModel], prefix: tuple[str, ...] = ()) -> set[tuple[str, ...]]:
    """Every field the command line must reach: nested settings marked ``flatten`` count by their own fields."""
    out = set()
    for name, info in model.model_fields.items():
        flag = next((m for m in info.metadata if isinstance(m, Flag)), Flag())
        if flag.flatten:
            out |= leaf_paths(info.annotation, prefix + (name,))
        else:
            out.add(prefix + (name,))
    return out


def flag_paths(parser: argparse.ArgumentParser) -> dict[tuple[str, ...], list[str]]:
    return {tuple(a.dest.split("__")[1:]): a.option_strings for a in parser._actions if a.dest.startswith("f__")}


@pytest.mark.parametrize("name", sorted(MODELS))
def test_every_request_field_has_exactly_one_cli_flag(name):
    _, parsers = app.build_parser()
    assert set(flag_paths(parsers[name])) == leaf_paths(MODELS[name])


def test_request_models_derive_from_the_stored_models():
    # the agent's init_state is the contract without the monitor's knobs; a person's (CLI) adds them back
    assert set(ContractTerms.model_fields) <= set(InitStateInput.model_fields)
    assert "monitor" not in InitStateInput.model_fields and set(LoopContract.model_fields) <= set(
        InitStateRequest.model_fields
    )
    for field in ContractTerms.model_fields:
        assert InitStateInput.model_fields[field] is LoopContract.model_fields[field] or (
            InitStateInput.model_fields[field].description == LoopContract.model_fields[field].description
        )
    assert set(UpdateStateInput.model_fields) == set(RoundFields.model_fields) | {"task_id", "skip_checks"}
    assert set(IterationRecord.model_fields) == set(RoundFields.model_fields) | set(RoundHeader.model_fields)


def test_item_caps_are_in_the_published_schemas():
    schema = LoopContract.model_json_schema()
    stop_checks = schema["$defs"]["StopChecks"]["properties"]
    assert stop_checks["commands"]["items"]["maxLength"] == 2000
    assert schema["properties"]["success_evidence"]["items"]["maxLength"] == 500
    assert IterationRecord.model_json_schema()["properties"]["evidence"]["items"]["maxLength"] == 1000


def test_cli_values_reach_the_request_model_unchanged(tmp_path):
    monitor = tmp_path / "monitor.json"
    monitor.write_text(json.dumps({"thresholds": {"identical_repeats": 3}}))
    _, parsers = app.build_parser()
    ns = parsers["init_state"].parse_args(
        [
            "--goal",
            "g",
            "--global-stop-condition",
            "c",
            "--task-id",
            "t1",
            "--success-evidence",
            "e1",
            "--success-evidence",
            "e2",
            "--operating-mode",
            "unattended",
            "--stop-command",
            "true",
            "--require-path",
            "a.txt",
            "--require-text",
            "a.txt::x",
            "--command-timeout",
            "5",
            "--output-tail-chars",
            "10",
            "--max-iterations",
            "7",
            "--max-no-progress-rounds",
            "2",
            "--history-window",
            "4",
            "--max-context-chars",
            "300",
            "--max-rounds-per-invocation",
            "9",
            "--max-consecutive-failures",
            "8",
            "--monitor",
            f"@{monitor}",
            "--next-task",
            "n",
            "--force",
        ]
    )
    req = InitStateRequest.model_validate(request_from(ns))
    assert req.success_evidence == ["e1", "e2"] and req.operating_mode == "unattended" and req.force
    assert req.stop_checks.model_dump() == {
        "commands": ["true"],
        "paths_exist": ["a.txt"],
        "text_patterns": ["a.txt::x"],
        "command_timeout_s": 5.0,
        "output_tail_chars": 10,
    }
    assert (
        req.limits.max_iterations,
        req.limits.max_no_progress_rounds,
        req.limits.history_window,
        req.limits.max_context_chars,
    ) == (7, 2, 4, 300)
    assert (req.unattended.max_rounds_per_invocation, req.unattended.max_consecutive_failures) == (9, 8)
    assert req.monitor.thresholds.identical_repeats == 3 and req.next_task == "n" and req.task_id == "t1"


def test_flags_not_given_leave_the_model_defaults():
    _, parsers = app.build_parser()
    ns = parsers["update_state"].parse_args(["--task", "t", "--result-summary", "r", "--verification-summary", "v"])
    assert request_from(ns) == {"task": "t", "result_summary": "r", "verification_summary": "v"}
    req = UpdateStateInput.model_validate(request_from(ns))
    assert req.next_task is None and req.progress == "made" and req.evidence == []


@pytest.mark.anyio
async def test_mcp_input_schemas_are_the_request_models(ws_dir):
    person_only = {"resume", "trust"}  # a person's decisions: never tools an agent could call
    tools = {name: model for name, model in MODELS.items() if name not in person_only}
    tools["init_state"] = InitStateInput  # the monitor's knobs (InitStateRequest.monitor) are a person's, on the CLI
    async with memory_client(ws_dir) as client:
        listed = {t.name: t for t in (await client.list_tools()).tools}
    assert not person_only & set(listed)
    assert "install" not in listed  # writes a person's harness settings: the CLI only, like trust and resume
    assert "supervise" not in listed  # a person starts an unattended run (it launches agents): the CLI only
    for name, model in tools.items():
        schema = listed[name].input_schema
        assert set(schema["properties"]) == set(model.model_fields), name
        assert set(schema.get("required", [])) == {n for n, f in model.model_fields.items() if f.is_required()}, name
