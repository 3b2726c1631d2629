"""Property tests (Hypothesis): arbitrary bytes and JSON fed to the ledger readers, the state loader and rebuild_state.

Each must end in a result or a clear LoopError, never another exception. The readers are also checked
against a naive reader, and a rebuilt state must save and load again.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from strict_loop import LoopError, Workspace
from strict_loop.base.jsonl import iter_lines, json_records, last_json, tail_lines
from strict_loop.model.records import MAX_ROUNDS
from strict_loop.storage.store import TaskStore

EXAMPLES = int(os.environ.get("STRICT_LOOP_EXAMPLES", 30))  # raise it for a deeper search, e.g. 1500
FAST = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
SLOWER = settings(FAST, max_examples=max(1, EXAMPLES * 2 // 3))  # each example records a round

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)


def _deep(depth: int) -> bytes:
    return b"[" * depth + b"]" * depth


ROUND = {
    "iteration": 1,
    "recorded_at": "2026-01-01T00:00:00.000Z",
    "started_at": None,
    "duration_s": 1.0,
    "task": "t",
    "result_summary": "r",
    "verification_summary": "v",
    "progress": "made",
    "status": "running",
}

round_lines = st.builds(
    lambda it, dur, progress, status, extra: json.dumps(
        {**ROUND, "iteration": it, "duration_s": dur, "progress": progress, "status": status, **extra}
    ).encode(),
    st.integers(min_value=1, max_value=12)
    | st.integers(min_value=MAX_ROUNDS - 2, max_value=MAX_ROUNDS + 2)
    | st.integers(min_value=-2, max_value=MAX_ROUNDS + 2),
    st.none() | st.floats(min_value=0, max_value=2e12),
    st.sampled_from(["made", "none", "maybe"]),
    st.sampled_from(["running", "completed", "blocked", "failed"]),
    st.dictionaries(
        st.sampled_from(["stop_reason", "next_task", "context_snapshot", "evidence", "bogus"]), json_values, max_size=2
    ),
)

event_lines = st.builds(
    lambda seq, kind, data: json.dumps(
        {"seq": seq, "ts": "2026-01-01T00:00:00Z", "kind": kind, "message": "m", "data": data}
    ).encode(),
    json_values,
    st.sampled_from(["note", "round.started", "task.initialized", "round.completed"]),
    st.dictionaries(st.sampled_from(["iteration", "contract", "created_at", "imported_from"]), json_values, max_size=3)
    | st.builds(lambda n: {"iteration": n}, st.integers(min_value=0, max_value=15)),
)

garbage_lines = st.binary(max_size=60).map(lambda b: b.replace(b"\n", b"")) | st.sampled_from(
    [
        b"",
        b"   ",
        b"\x1c",
        b"{",
        b"null",
        b"[1, 2]",
        b'"text"',
        b"NaN",
        b"1e999",
        b"\xef\xbb\xbf{}",
        b"9" * 5000,
        _deep(5000),
    ]
)


def ledger(lines: st.SearchStrategy[bytes]) -> st.SearchStrategy[bytes]:
    """Lines joined by newlines, sometimes ending in an unterminated fragment (a torn write)."""
    return st.builds(
        lambda body, torn: b"".join(line + b"\n" for line in body) + torn,
        st.lists(lines | garbage_lines, max_size=12),
        st.sampled_from([b"", b'{"seq": 9', b"x"]),
    )


def _naive(data: bytes) -> list[str]:
    complete = data.split(b"\n")[:-1]
    return [raw.decode("utf-8", errors="replace") for raw in complete if raw.decode("utf-8", errors="replace").strip()]


@FAST
@given(data=st.binary(max_size=300) | ledger(round_lines | event_lines), count=st.integers(min_value=0, max_value=8))
def test_ledger_readers_take_any_bytes(tmp_path_factory, data, count):
    path = tmp_path_factory.mktemp("ledger") / "events.jsonl"
    path.write_bytes(data)
    expected = _naive(data)
    assert [text for _, text in iter_lines(path)] == [line.strip() for line in expected]
    assert tail_lines(path, count) == (expected[-count:] if count else [])
    records = [rec for _, rec in json_records(path)]
    assert all(isinstance(rec, dict) for rec in records)
    tail_records = [rec for _, rec in json_records(path, last=3)]
    assert last_json(path) == (tail_records[-1] if tail_records else None)
    assert tail_records == records[len(records) - len(tail_records) :]


@pytest.fixture(scope="module")
def task_template(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("template")
    ws = Workspace(root)
    ws.init_state(goal="g", global_stop_condition="c", task_id="t")
    for i in range(3):
        ws.append_event(task_id="t", kind="round.started", message=f"round {i + 1}")
        ws.update_state(task_id="t", task=f"task {i}", result_summary="r", verification_summary="v")
    return root


def _fresh(template: Path, tmp_path_factory) -> tuple[Workspace, TaskStore]:
    root = tmp_path_factory.mktemp("ws")
    shutil.copytree(template / ".agent-loop", root / ".agent-loop")
    ws = Workspace(root)
    return ws, ws.index.store("t")


def _mutated(doc: dict, path: list[str], value: object) -> dict:
    """``doc`` with the value at ``path`` (as far as it exists) replaced by ``value``."""
    node = doc
    for key in path[:-1]:
        if not isinstance(node.get(key), dict):
            break
        node = node[key]
    node[path[-1]] = value
    return doc


state_paths = st.sampled_from(
    [
        ["task_id"],
        ["counters", "iteration"],
        ["counters", "total_round_seconds"],
        ["contract"],
        ["contract", "limits", "max_iterations"],
        ["recent_rounds"],
        ["current_round"],
        ["status"],
        ["schema_version"],
        ["workspace_root"],
        ["unknown"],
        ["contract", "monitor", "thresholds"],
    ]
)


@FAST
@given(data=st.data())
def test_the_state_loader_takes_any_bytes_or_json(task_template, tmp_path_factory, data):
    ws, store = _fresh(task_template, tmp_path_factory)
    doc = json.loads(store.paths.state.read_bytes())
    raw = data.draw(
        st.binary(max_size=200)
        | st.builds(lambda p, v: json.dumps(_mutated(doc, p, v)).encode(), state_paths, json_values)
        | st.sampled_from([b"\xef\xbb\xbf" + json.dumps(doc).encode(), _deep(100_000), b"{" * 3]),
        label="state.json",
    )
    store.paths.state.write_bytes(raw)
    try:
        state = store.load()
    except LoopError as exc:
        assert str(exc).count("\n") == 0 and "state.json" in str(exc)
        return
    assert state.task_id == "t"


@SLOWER
@given(
    iterations=ledger(round_lines),
    events=ledger(event_lines),
    state=st.sampled_from(["kept", "missing", "garbage", "far ahead"]),
)
def test_rebuild_state_takes_any_ledgers(task_template, tmp_path_factory, iterations, events, state):
    ws, store = _fresh(task_template, tmp_path_factory)
    store.paths.iterations.write_bytes(iterations)
    if events:
        store.paths.events.write_bytes(store.paths.events.read_bytes() + events)
    if state == "missing":
        store.paths.state.unlink()
    elif state == "garbage":
        store.paths.state.write_bytes(b"{not json")
    elif state == "far ahead":
        store.paths.state.write_text(store.paths.state.read_text().replace('"iteration": 3', '"iteration": 400'))
    try:
        result = ws.rebuild_state(task_id="t")
    except LoopError as exc:
        assert "report a bug" not in str(exc) and "\n" not in str(exc), exc
        return
    reloaded = store.load()  # what rebuild_state saved loads again
    assert reloaded.counters.iteration == result.iteration
    numbers = [
        rec["iteration"]
        for _, rec in json_records(store.paths.iterations)
        if type(rec.get("iteration")) is int and 0 < rec["iteration"] <= MAX_ROUNDS
    ]
    assert result.iteration >= max(numbers, default=0)  # no recorded round number can be given out again
    try:
        recorded = ws.update_state(task_id="t", task="next", result_summary="r", verification_summary="v")
    except LoopError as exc:  # a finished task, or one whose round numbers ran past any real run
        assert reloaded.status == "completed" or result.iteration >= MAX_ROUNDS, exc
        assert "already completed" in str(exc) or "more than any real run" in str(exc)
        return
    assert recorded.iteration == result.iteration + 1


def test_a_state_json_naming_another_task_is_damaged_and_rebuild_state_mends_it(tmp_path):
    ws = Workspace(tmp_path)
    ws.init_state(task_id="t", goal="g", global_stop_condition="c")
    ws.init_state(task_id="other", goal="g2", global_stop_condition="c2")
    store = ws.task_store("t")
    store.paths.state.write_bytes(ws.task_store("other").paths.state.read_bytes())  # copied over from another task
    with pytest.raises(LoopError, match="names task 'other', not 't'"):
        store.load()
    ws.rebuild_state(task_id="t")
    assert store.load().task_id == "t" and store.load().contract.goal == "g"
