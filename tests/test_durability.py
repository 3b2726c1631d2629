"""Concurrent writers, SIGKILL at random instants, torn lines and damaged state: nothing lost, state always loads."""

from __future__ import annotations

import json
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from strict_loop import StateDamaged, Workspace
from strict_loop.models import EventRecord, IterationRecord

from conftest import read_jsonl, run_script

WORKER = Path(__file__).resolve().parent / "worker.py"


def _spawn(ws: Path, task: str, name: str, *args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, str(WORKER), str(ws), task, name, *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _ledger_lines(path: Path) -> list[str]:
    data = path.read_bytes().decode()
    return data.splitlines() if data.endswith("\n") else data.splitlines()[:-1]


def test_eight_processes_lose_nothing(ws_dir):
    ws = Workspace(ws_dir)
    ws.init_state(goal="g", global_stop_condition="c", task_id="busy", limits={"max_iterations": 1000})
    events_each, rounds_each = 30, 12
    procs = [_spawn(ws_dir, "busy", f"e{i}", "--events", str(events_each)) for i in range(4)]
    procs += [_spawn(ws_dir, "busy", f"r{i}", "--rounds", str(rounds_each)) for i in range(4)]
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
    paths = ws.task_paths("busy")
    events = [EventRecord.model_validate_json(line) for line in _ledger_lines(paths.events)]
    assert paths.events.read_bytes().endswith(b"\n")
    expected = 1 + 4 * events_each + 4 * rounds_each * 2  # init + notes + (round.started + round.completed) per round
    assert [e.seq for e in events] == list(range(1, expected + 1))
    notes = Counter(e.data["worker"] for e in events if e.kind == "note")
    assert notes == {f"e{i}": events_each for i in range(4)}
    records = [IterationRecord.model_validate_json(line) for line in _ledger_lines(paths.iterations)]
    assert [r.iteration for r in records] == list(range(1, 4 * rounds_each + 1))
    assert Counter(r.evidence[0].split(":")[0] for r in records) == {f"r{i}": rounds_each for i in range(4)}
    state = ws.show_task(task_id="busy").state
    assert state.counters.iteration == 4 * rounds_each == state.counters.progress_rounds
    assert len(list(paths.rounds.iterdir())) == 4 * rounds_each
    assert ws.rebuild_state(task_id="busy").repaired == []


def test_scripts_and_library_write_one_task_together(ws_dir):
    ws = Workspace(ws_dir)
    ws.init_state(goal="g", global_stop_condition="c", task_id="mixed")
    worker = _spawn(ws_dir, "mixed", "lib", "--events", "40", "--rounds", "5")
    for i in range(6):
        run_script("append_event", "--task-id", "mixed", "--kind", "note", "--message", f"script {i}", cwd=ws_dir)
    assert worker.wait(timeout=120) == 0
    events = read_jsonl(ws.task_paths("mixed").events)
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    assert sum(e["message"].startswith("script ") for e in events) == 6
    assert sum(e["kind"] == "note" for e in events) == 46


def test_sigkill_at_random_instants_leaves_loadable_state(ws_dir):
    ws = Workspace(ws_dir)
    ws.init_state(goal="g", global_stop_condition="c", task_id="crashy", limits={"max_iterations": 100000, "history_window": 5})
    paths = ws.task_paths("crashy")
    rng = random.Random(1234)
    kills = 30
    for n in range(kills):
        proc = _spawn(ws_dir, "crashy", f"k{n}", "--forever")
        assert proc.stdout.readline().strip() == "ready"
        time.sleep(rng.uniform(0.0, 0.08))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        # After every kill: state.json loads and validates, and every complete ledger line parses.
        state = Workspace(ws_dir).show_task(task_id="crashy").state
        assert state.counters.iteration <= len(_ledger_lines(paths.iterations))
        for line in _ledger_lines(paths.events):
            EventRecord.model_validate_json(line)
        for line in _ledger_lines(paths.iterations):
            IterationRecord.model_validate_json(line)
    # The next writer trims any torn tail and rolls state forward from the ledger.
    ws.append_event(task_id="crashy", kind="note", message="after the crashes")
    ws.update_state(task_id="crashy", task="final", result_summary="r", verification_summary="v")
    records = [IterationRecord.model_validate_json(line) for line in _ledger_lines(paths.iterations)]
    assert [r.iteration for r in records] == list(range(1, len(records) + 1))
    assert len(records) > kills  # the workers really were writing when killed
    ws.rebuild_state(task_id="crashy")
    state = ws.show_task(task_id="crashy").state
    assert state.counters.iteration == len(records) == state.counters.progress_rounds
    events = [EventRecord.model_validate_json(line) for line in _ledger_lines(paths.events)]
    assert [e.seq for e in events] == list(range(1, len(events) + 1))
    assert paths.events.read_bytes().endswith(b"\n") and paths.iterations.read_bytes().endswith(b"\n")


def test_torn_tail_is_trimmed_by_the_next_append(ws_dir):
    ws = Workspace(ws_dir)
    ws.init_state(goal="g", global_stop_condition="c", task_id="torn")
    paths = ws.task_paths("torn")
    with open(paths.events, "ab") as fh:
        fh.write(b'{"seq":2,"ts":"2026-01-01T00:00:00.000Z","kind":"no')  # a writer died here
    assert ws.show_task(task_id="torn").state.counters.iteration == 0
    assert ws.append_event(task_id="torn", kind="note", message="after").seq == 2
    assert [e["seq"] for e in read_jsonl(paths.events)] == [1, 2]
    with open(paths.iterations, "ab") as fh:
        fh.write(b'{"iteration":1,"recor')
    result = ws.rebuild_state(task_id="torn")
    assert any(note.startswith("iterations.jsonl: cut an unterminated") for note in result.repaired)
    assert paths.iterations.read_bytes() == b""  # the fragment is really gone


def test_ledger_ahead_of_state_rolls_forward(ws_dir):
    ws = Workspace(ws_dir)
    ws.init_state(goal="g", global_stop_condition="c", task_id="ahead")
    ws.update_state(task_id="ahead", task="t1", result_summary="r", verification_summary="v")
    paths = ws.task_paths("ahead")
    stale = paths.state.read_bytes()
    ws.update_state(task_id="ahead", task="t2", result_summary="r", verification_summary="v", progress="none", next_task="n2")
    paths.state.write_bytes(stale)  # as if killed after the ledger line, before state.json was replaced
    r = ws.update_state(task_id="ahead", task="t3", result_summary="r", verification_summary="v", progress="none")
    assert r.iteration == 3 and r.consecutive_no_progress == 2
    state = ws.show_task(task_id="ahead").state
    assert state.counters.iteration == 3 and state.next_task == "n2"


@pytest.mark.parametrize(
    "damage, field, problem",
    [
        (lambda d: d["counters"].__setitem__("iteration", -3), "field 'counters.iteration'", "-3 is less than the minimum of 0"),
        (lambda d: d.pop("contract"), "field '(top level)'", "'contract' is a required property"),
        (lambda d: d.__setitem__("status", "sleeping"), "field 'status'", "'sleeping' is not one of"),
        (lambda d: d["contract"]["limits"].__setitem__("max_iterations", "many"), "field 'contract.limits.max_iterations'", "is not of type 'integer'"),
        (lambda d: d.__setitem__("task_id", "../etc"), "field 'task_id'", "does not match"),
    ],
)
def test_damaged_state_names_the_field_and_is_never_overwritten(ws_dir, damage, field, problem):
    ws = Workspace(ws_dir)
    ws.init_state(goal="g", global_stop_condition="c", task_id="hurt", stop_checks={"paths_exist": ["x"]})
    ws.append_event(task_id="hurt", kind="round.started", message="r1")
    ws.update_state(task_id="hurt", task="t1", result_summary="r", verification_summary="v")
    paths = ws.task_paths("hurt")
    doc = json.loads(paths.state.read_text())
    damage(doc)
    paths.state.write_text(json.dumps(doc))
    damaged = paths.state.read_bytes()
    attempts = [
        lambda: ws.update_state(task_id="hurt", task="t", result_summary="r", verification_summary="v"),
        lambda: ws.append_event(task_id="hurt", kind="round.started", message="m"),
        lambda: ws.check_stop(task_id="hurt"),
        lambda: ws.report_status(task_id="hurt"),
        lambda: ws.compact_state(task_id="hurt"),
        lambda: ws.show_task(task_id="hurt"),
    ]
    for attempt in attempts:
        with pytest.raises(StateDamaged) as info:
            attempt()
        message = str(info.value)
        assert field in message and problem in message and "rebuild_state --task-id hurt" in message
    assert paths.state.read_bytes() == damaged
    assert field in ws.list_tasks()[0].problem
    proc = run_script("report_status", "--task-id", "hurt", cwd=ws_dir, check=False)
    assert proc.returncode == 2 and field in proc.stderr and "Traceback" not in proc.stderr
    result = ws.rebuild_state(task_id="hurt")
    assert any("state.json did not load" in note for note in result.repaired)
    state = ws.show_task(task_id="hurt").state
    assert state.counters.iteration == 1 and state.contract.stop_checks.paths_exist == ["x"]
    assert ws.update_state(task_id="hurt", task="t2", result_summary="r", verification_summary="v").iteration == 2


def test_rebuild_from_ledgers_when_state_is_gone(ws_dir):
    ws = Workspace(ws_dir)
    ws.init_state(goal="keep me", global_stop_condition="c", task_id="gone", limits={"history_window": 3})
    for i in range(7):
        ws.update_state(task_id="gone", task=f"t{i}", result_summary="r", verification_summary="v",
                        progress="none" if i >= 5 else "made", next_task=f"after {i}")
    before = ws.show_task(task_id="gone").state
    ws.task_paths("gone").state.unlink()
    listed = ws.list_tasks()
    assert listed[0].task_id == "gone" and "is missing" in listed[0].problem
    out = run_script("rebuild_state", "--task-id", "gone", cwd=ws_dir).stdout
    assert "rebuilt 'gone': 7 rounds" in out
    after = ws.show_task(task_id="gone").state
    assert after.contract == before.contract and after.counters == before.counters
    assert after.recent_rounds == before.recent_rounds and after.archive == before.archive
    assert after.next_task == "after 6" and after.counters.consecutive_no_progress == 2


def test_rebuild_corrects_wrong_counters(ws_dir):
    ws = Workspace(ws_dir)
    ws.init_state(goal="g", global_stop_condition="c", task_id="off")
    for i in range(3):
        ws.update_state(task_id="off", task=f"t{i}", result_summary="r", verification_summary="v")
    paths = ws.task_paths("off")
    doc = json.loads(paths.state.read_text())
    doc["counters"]["progress_rounds"] = 99
    paths.state.write_text(json.dumps(doc))
    result = ws.rebuild_state(task_id="off")
    assert any("counters were" in note for note in result.repaired)
    assert ws.show_task(task_id="off").state.counters.progress_rounds == 3


def test_a_held_lock_gives_a_clear_error_and_dies_with_its_holder(ws_dir):
    from strict_loop import LoopError

    Workspace(ws_dir).init_state(goal="g", global_stop_condition="c", task_id="held")
    lock = Workspace(ws_dir).task_paths("held").lock
    holder = subprocess.Popen(
        [sys.executable, "-c", "import fcntl, os, sys, time; fd = os.open(sys.argv[1], os.O_RDWR); "
         "fcntl.flock(fd, fcntl.LOCK_EX); print('held', flush=True); time.sleep(60)", str(lock)],
        stdout=subprocess.PIPE, text=True)
    assert holder.stdout.readline().strip() == "held"
    impatient = Workspace(ws_dir, lock_timeout=0.3)
    with pytest.raises(LoopError, match="task 'held' stayed locked for 0.3s"):
        impatient.append_event(task_id="held", kind="note", message="blocked")
    holder.send_signal(signal.SIGKILL)
    holder.wait()
    assert impatient.append_event(task_id="held", kind="note", message="after the holder died").seq == 2
