"""Concurrent writers, SIGKILL at random instants, torn lines and damaged state: nothing lost, state always loads."""

from __future__ import annotations

import json
import os
import queue
import random
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import pytest
from conftest import read_jsonl, run_script

from strict_loop import StateDamaged, Workspace
from strict_loop.model.records import EventRecord, IterationRecord

WORKER = Path(__file__).resolve().parent / "worker.py"


class Writers:
    """worker.py's fork server: writer processes on demand, and what they report, line by line."""

    def __init__(self, errors: Path):
        self.errors = errors
        with open(errors, "w") as err:
            self.proc = subprocess.Popen(
                [sys.executable, str(WORKER)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=err,
                text=True,
                bufsize=1,
            )
        self.log: list[list[str]] = []
        self._lines: queue.Queue = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            self._lines.put(line.split())
        self._lines.put(None)

    def until(self, *prefix: str, count: int = 1, timeout: float = 120) -> list[str]:
        """Wait for the count-th line starting with prefix (lines seen earlier count too); return it."""
        deadline = time.monotonic() + timeout
        while True:
            seen = [words for words in self.log if words[: len(prefix)] == list(prefix)]
            if len(seen) >= count:
                return seen[count - 1]
            try:
                words = self._lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise AssertionError(f"waited {timeout}s for {prefix}; stderr:\n{self.errors.read_text()}") from None
            assert words is not None, f"the fork server ended; stderr:\n{self.errors.read_text()}"
            self.log.append(words)

    def _send(self, **command) -> None:
        self.proc.stdin.write(json.dumps(command) + "\n")

    def start(
        self, ws: Path, task: str, name: str, events: int = 0, rounds: int | str = 0, stop: Path | None = None
    ) -> int:
        """Fork a writer (names are unique per session); return its pid."""
        self._send(start=name, workspace=str(ws), task=task, events=events, rounds=rounds, stop=stop and str(stop))
        return int(self.until("started", name)[2])

    def wait(self, pid: int) -> int:
        self._send(wait=pid)
        return int(self.until("exited", str(pid))[2])

    def rounds(self, name: str) -> list[tuple[int, int]]:
        """(round number, iteration) of each round the writer reported as recorded."""
        return [(int(w[2]), int(w[3])) for w in self.log if w[:2] == ["round", name]]

    def close(self) -> None:
        self.proc.stdin.close()
        assert self.proc.wait(timeout=60) == 0, self.errors.read_text()


@pytest.fixture(scope="session")
def writers(tmp_path_factory):
    w = Writers(tmp_path_factory.mktemp("writers") / "stderr.txt")
    yield w
    w.close()


def _ledger_lines(path: Path) -> list[str]:
    data = path.read_bytes().decode()
    return data.splitlines() if data.endswith("\n") else data.splitlines()[:-1]


def test_eight_processes_lose_nothing(ws_dir, writers):
    ws = Workspace(ws_dir)
    ws.init_state(goal="g", global_stop_condition="c", task_id="busy", limits={"max_iterations": 1000})
    events_each, rounds_each = 30, 12
    pids = [writers.start(ws_dir, "busy", f"e{i}", events=events_each) for i in range(4)]
    pids += [writers.start(ws_dir, "busy", f"r{i}", rounds=rounds_each) for i in range(4)]
    for pid in pids:  # all eight run at once
        assert writers.wait(pid) == 0, writers.errors.read_text()
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


def test_scripts_and_library_write_one_task_together(ws_dir, writers):
    ws = Workspace(ws_dir)
    ws.init_state(goal="g", global_stop_condition="c", task_id="mixed")
    stop = ws_dir.parent / "stop-lib"
    lib = writers.start(ws_dir, "mixed", "lib", events=10**6, rounds=5, stop=stop)
    for i in range(
        6
    ):  # they take turns: the other process writes notes (and rounds) before, between and after the scripts
        writers.until("event", "lib", count=3 * (i + 1))
        run_script("append_event", "--task-id", "mixed", "--kind", "note", "--message", f"script {i}", cwd=ws_dir)
    writers.until("event", "lib", count=3 * 7)
    stop.touch()
    assert writers.wait(lib) == 0, writers.errors.read_text()
    lib_notes = sum(w[:2] == ["event", "lib"] for w in writers.log)
    events = read_jsonl(ws.task_paths("mixed").events)
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    assert sum(e["message"].startswith("script ") for e in events) == 6
    assert sum(e["kind"] == "note" for e in events) == 6 + lib_notes
    assert sum(e["kind"] == "round.completed" for e in events) == 5


def _check_after_crash(ws_dir: Path, paths, reported: dict[str, int]) -> list[IterationRecord]:
    """What must hold after any crash: state loads, every complete ledger line parses and is numbered in
    sequence, every round a writer reported done is on disk, and state.json is never behind a reported
    round nor ahead of the ledger."""
    state = Workspace(ws_dir).show_task(task_id="crashy").state
    records = [IterationRecord.model_validate_json(line) for line in _ledger_lines(paths.iterations)]
    assert [r.iteration for r in records] == list(range(1, len(records) + 1))
    events = [EventRecord.model_validate_json(line) for line in _ledger_lines(paths.events)]
    assert [e.seq for e in events] == list(range(1, len(events) + 1))
    on_disk = Counter((r.evidence[0], r.iteration) for r in records if r.evidence)
    assert all(n == 1 for n in on_disk.values()), "a round was recorded twice"
    lost = {round_: iteration for round_, iteration in reported.items() if on_disk[(round_, iteration)] != 1}
    assert not lost, f"reported rounds missing from iterations.jsonl: {lost}"
    assert max(reported.values(), default=0) <= state.counters.iteration <= len(records)
    return records


KILLS = 20


@pytest.mark.slow  # about a second or more of waiting on processes: the fast tier stays under 30 s
def test_sigkill_at_random_instants_leaves_loadable_state(ws_dir, writers):
    ws = Workspace(ws_dir)
    ws.init_state(
        goal="g", global_stop_condition="c", task_id="crashy", limits={"max_iterations": 100000, "history_window": 5}
    )
    paths = ws.task_paths("crashy")
    rng = random.Random(1234)
    reported: dict[str, int] = {}  # "k3:0" (the round's evidence) -> its iteration
    for n in range(KILLS):
        name = f"k{n}"
        pid = writers.start(ws_dir, "crashy", name, rounds="forever")
        # Let it finish 0-2 rounds, then kill it a random instant later: mid-event, mid-ledger line, mid-state.json, ...
        writers.until("ready", name)
        done = rng.choice([0, 1, 2])
        if done:
            writers.until("round", name, count=done)
        time.sleep(rng.uniform(0.0, 0.05))
        os.kill(pid, signal.SIGKILL)
        assert writers.wait(pid) == -signal.SIGKILL
        reported.update({f"{name}:{i}": iteration for i, iteration in writers.rounds(name)})
        _check_after_crash(ws_dir, paths, reported)
    # The next writer trims any torn tail and rolls state forward from the ledger.
    ws.append_event(task_id="crashy", kind="note", message="after the crashes")
    ws.update_state(task_id="crashy", task="final", result_summary="r", verification_summary="v")
    records = _check_after_crash(ws_dir, paths, reported)
    assert records[-1].task == "final"
    ws.rebuild_state(task_id="crashy")
    state = ws.show_task(task_id="crashy").state
    assert state.counters.iteration == len(records) == state.counters.progress_rounds
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
    ws.update_state(
        task_id="ahead", task="t2", result_summary="r", verification_summary="v", progress="none", next_task="n2"
    )
    paths.state.write_bytes(stale)  # as if killed after the ledger line, before state.json was replaced
    r = ws.update_state(task_id="ahead", task="t3", result_summary="r", verification_summary="v", progress="none")
    assert r.iteration == 3 and r.consecutive_no_progress == 2
    state = ws.show_task(task_id="ahead").state
    assert state.counters.iteration == 3 and state.next_task == "n2"


@pytest.mark.parametrize(
    "damage, field, problem",
    [
        (
            lambda d: d["counters"].__setitem__("iteration", -3),
            "field 'counters.iteration'",
            "-3 is less than the minimum of 0",
        ),
        (lambda d: d.pop("contract"), "field '(top level)'", "'contract' is a required property"),
        (lambda d: d.__setitem__("status", "sleeping"), "field 'status'", "'sleeping' is not one of"),
        (
            lambda d: d["contract"]["limits"].__setitem__("max_iterations", "many"),
            "field 'contract.limits.max_iterations'",
            "is not of type 'integer'",
        ),
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
        ws.update_state(
            task_id="gone",
            task=f"t{i}",
            result_summary="r",
            verification_summary="v",
            progress="none" if i >= 5 else "made",
            next_task=f"after {i}",
        )
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
        [
            sys.executable,
            "-c",
            "import fcntl, os, sys, time; fd = os.open(sys.argv[1], os.O_RDWR); "
            "fcntl.flock(fd, fcntl.LOCK_EX); print('held', flush=True); time.sleep(60)",
            str(lock),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout.readline().strip() == "held"
    impatient = Workspace(ws_dir, lock_timeout=0.3)
    with pytest.raises(LoopError, match="task 'held' stayed locked for 0.3s"):
        impatient.append_event(task_id="held", kind="note", message="blocked")
    holder.send_signal(signal.SIGKILL)
    holder.wait()
    assert impatient.append_event(task_id="held", kind="note", message="after the holder died").seq == 2


@pytest.mark.slow  # about a second or more of waiting on processes: the fast tier stays under 30 s
def test_the_suite_and_its_servers_record_nothing_in_the_users_config(ws_dir, user_config_dir):
    """Issue 19, item 15: a stdio server started by the tests recorded trusted contracts in ~/.config."""
    import anyio
    from conftest import USER_CONFIG
    from mcp_helpers import call, stdio_client

    real = USER_CONFIG / "strict-loop" / "trusted-contracts.json"
    before = real.stat().st_mtime_ns if real.exists() else None

    async def start() -> None:
        async with stdio_client(ws_dir) as client:
            await call(
                client,
                "init_state",
                task_id="t",
                goal="g",
                global_stop_condition="c",
                stop_checks={"commands": ["true"]},
            )

    anyio.run(start)
    assert "t" in (user_config_dir / "trusted-contracts.json").read_text()  # recorded, in the test's folder
    assert (real.stat().st_mtime_ns if real.exists() else None) == before
