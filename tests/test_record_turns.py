"""record_turns (a supervisor's batch of stream tool calls) leaves exactly what record_turn, one call at a time,
leaves."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import read_jsonl

from strict_loop import Workspace
from strict_loop.base.errors import LoopError
from strict_loop.loop.recording import record_turn, record_turns

TASK = "t"
PROBE = {
    "tool": "Bash",
    "args": {"command": "ls /nonexistent-strict-loop-probe"},
    "output": "No such file or directory",
    "error": True,
    "exit_code": 2,
}
TURNS = [
    (
        "ok",
        {"tool": "Bash", "args": {"command": f"echo {n}"}, "output": str(n), "exit_code": 0},
        {"tool_use_id": f"a{n}"},
    )
    for n in range(3)
] + [("probe", PROBE, {"tool_use_id": f"p{n}"}) for n in range(8)]


def _workspace(root: Path) -> Workspace:
    root.mkdir()
    ws = Workspace(root)
    ws.init_state(task_id=TASK, goal="g", global_stop_condition="never")
    return ws


def _stripped(path: Path, root: Path) -> list:
    """The ledger without its times and with the workspace folder named ROOT: what must match between two runs."""

    def norm(value):
        if isinstance(value, dict):
            return {k: norm(v) for k, v in value.items() if k not in ("ts", "created_at")}
        if isinstance(value, list):
            return [norm(v) for v in value]
        return value.replace(str(root), "ROOT") if isinstance(value, str) else value

    return norm(read_jsonl(path))


def test_a_batch_records_what_single_calls_record(tmp_path: Path):
    one, many = _workspace(tmp_path / "one"), _workspace(tmp_path / "many")
    singles = [record_turn(one.index.store(TASK), one.root, m, d, meta) for m, d, meta in TURNS]
    batch = record_turns(many.index.store(TASK), many.root, TURNS)
    for name in ("events", "alerts"):
        ours, theirs = (
            _stripped(getattr(many.task_paths(TASK), name), many.root),
            _stripped(getattr(one.task_paths(TASK), name), one.root),
        )
        if name == "events":  # a batch delivers its alerts after its lock, so their ledger lines come after its turns
            alerts = [[e for e in run if e["kind"] == "spiral.alert"] for run in (ours, theirs)]
            assert [{k: v for k, v in a.items() if k != "seq"} for a in alerts[0]] == [
                {k: v for k, v in a.items() if k != "seq"} for a in alerts[1]
            ]
            assert len(alerts[0]) == 1 and ours[-1]["kind"] == "spiral.alert"
            ours, theirs = (
                [{k: v for k, v in e.items() if k != "seq"} for e in run if e["kind"] != "spiral.alert"]
                for run in (ours, theirs)
            )
        assert ours == theirs and ours, name
    mon_one = json.loads(one.task_paths(TASK).monitor.read_text())
    mon_many = json.loads(many.task_paths(TASK).monitor.read_text())
    assert mon_many == mon_one and mon_many["paused"] is True  # the 8 probes whisper, then pause
    assert [r.event.seq for r in batch] == [
        e["seq"] for e in read_jsonl(many.task_paths(TASK).events) if e["kind"] == "tool_call"
    ]
    assert [bool(r.whisper) for r in batch] == [bool(r.whisper) for r in singles] and any(r.whisper for r in batch)
    assert [bool(r.pause) for r in batch] == [bool(r.pause) for r in singles] and sum(bool(r.pause) for r in batch) == 1
    assert many.supervisor(TASK).paused
    assert "PAUSED" in many.task_paths(TASK).latest_status.read_text()


def test_one_bad_turn_records_none(tmp_path: Path):
    ws = _workspace(tmp_path / "w")
    before = ws.task_paths(TASK).events.read_text()
    with pytest.raises(LoopError, match="append_event.data"):
        record_turns(ws.index.store(TASK), ws.root, [TURNS[0], ("bad", {"tool": "Bash", "exit_code": "two"}, None)])
    assert ws.task_paths(TASK).events.read_text() == before
    assert record_turns(ws.index.store(TASK), ws.root, []) == []


def test_secrets_are_masked_in_a_batch(tmp_path: Path):
    ws = _workspace(tmp_path / "w")
    secret = "sk-supervisor-secret-0123456789abcdef"
    turn = {"tool": "Bash", "args": {"command": f"curl -H 'x: {secret}'"}, "output": secret}
    record_turns(ws.index.store(TASK), ws.root, [("call", turn, {"tool_use_id": "x"})], env={"MY_API_KEY": secret})
    assert secret not in ws.task_paths(TASK).events.read_text()
