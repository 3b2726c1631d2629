"""Nothing is lost (issue 13, items 12-14): a full disk after the commit point, damaged ledger lines, symbolic links."""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from conftest import REPO, read_jsonl

from strict_loop import LoopError, StateDamaged, Workspace
from strict_loop.base.fsio import atomic_write
from strict_loop.model.records import MAX_ROUNDS

GOAL = (
    "Keep the notes file current. " * 100
)  # a contract of ~3 KB: state.json and events.jsonl outgrow a small file-size limit
ROUND = (
    "--task",
    "Write notes.md",
    "--result-summary",
    "notes.md written",
    "--verification-summary",
    "cat notes.md: ok",
)
ROUND_KW = {"task": "Write notes.md", "result_summary": "notes.md written", "verification_summary": "cat notes.md: ok"}


def _init(ws_dir: Path, task_id: str = "t") -> Workspace:
    ws = Workspace(ws_dir)
    ws.init_state(goal=GOAL, global_stop_condition="notes.md is current", task_id=task_id)
    return ws


def _update_with_file_limit(ws_dir: Path, limit: int, *args: str) -> subprocess.CompletedProcess:
    """Run update_state in a process whose files may not grow past ``limit`` bytes: a real full disk (EFBIG)."""

    def limited() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG instead of killing us
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return subprocess.run(
        [sys.executable, str(REPO / "scripts" / "update_state.py"), "--task-id", "t", *args, "--json"],
        cwd=ws_dir,
        capture_output=True,
        text=True,
        preexec_fn=limited,
        timeout=60,
    )


# ---------------------------------------------------------------- item 12


def test_a_full_disk_after_the_round_is_recorded_is_a_warning_and_the_retry_is_recognised(ws_dir):
    ws = _init(ws_dir)
    ws.append_event(task_id="t", kind="round.started", message="Round 1: write notes.md")
    paths = ws.task_paths("t")
    assert paths.state.stat().st_size > 2500 and paths.events.stat().st_size > 2500
    # 2,500 bytes: the round's ledger line and its note fit; state.json and the event ledger do not.
    proc = _update_with_file_limit(ws_dir, 2500, *ROUND)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["iteration"] == 1
    warnings = " | ".join(result["warnings"])
    assert "round 1 is recorded in iterations.jsonl, but saving state.json failed (File too large)" in warnings
    assert "recording the round.completed event failed" in warnings
    assert [r["iteration"] for r in read_jsonl(paths.iterations)] == [1]
    assert paths.round_file(1).is_file()
    assert paths.events.read_bytes().endswith(b"\n")  # the failed event append left no fragment
    # The agent retries the same call: it gets round 1 back, recorded once, and the task's files catch up.
    retry = Workspace(ws_dir).update_state(task_id="t", **ROUND_KW)
    assert retry.iteration == 1 and any("already recorded" in w and "not recorded again" in w for w in retry.warnings)
    assert [r["iteration"] for r in read_jsonl(paths.iterations)] == [1]
    assert ws.show_task(task_id="t").state.counters.iteration == 1
    # A new announcement makes the same text a new round.
    ws.append_event(task_id="t", kind="round.started", message="Round 2: the same again")
    assert ws.update_state(task_id="t", **ROUND_KW).iteration == 2


def test_a_full_disk_before_the_commit_point_records_nothing(ws_dir):
    ws = _init(ws_dir)
    paths = ws.task_paths("t")
    state_before, events_before = paths.state.read_bytes(), paths.events.read_bytes()
    proc = _update_with_file_limit(ws_dir, 100, *ROUND)  # the round's ledger line (~500 bytes) does not fit
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.startswith(f"error: update_state ({paths.iterations}): file system error: File too large")
    assert proc.stderr.count("\n") == 1
    assert not paths.iterations.exists() or paths.iterations.read_bytes() == b""  # the partial line was cut back
    assert paths.state.read_bytes() == state_before and paths.events.read_bytes() == events_before
    assert not paths.round_file(1).exists()
    assert Workspace(ws_dir).update_state(task_id="t", **ROUND_KW).iteration == 1


def test_a_retried_completed_round_is_not_refused_as_already_completed(ws_dir):
    ws = _init(ws_dir)
    ws.append_event(task_id="t", kind="round.started", message="Round 1")
    first = ws.update_state(task_id="t", status="completed", **ROUND_KW)
    again = Workspace(ws_dir).update_state(task_id="t", status="completed", **ROUND_KW)
    assert (first.iteration, again.iteration, again.status) == (1, 1, "completed")
    assert "already recorded" in again.warnings[0]
    with pytest.raises(LoopError, match="already completed"):
        ws.update_state(task_id="t", status="completed", **{**ROUND_KW, "task": "something else"})


def test_identical_unannounced_rounds_are_still_two_rounds(ws_dir):
    ws = _init(ws_dir)
    assert [ws.update_state(task_id="t", **ROUND_KW).iteration for _ in range(2)] == [1, 2]


# ---------------------------------------------------------------- item 13


def _five_rounds(ws_dir: Path) -> tuple[Workspace, list[str]]:
    ws = _init(ws_dir)
    for i in range(1, 6):
        ws.update_state(task_id="t", task=f"round {i}", result_summary="r", verification_summary="v")
    return ws, ws.task_paths("t").iterations.read_text().splitlines()


@pytest.mark.parametrize("state_json", ["kept", "deleted"])
def test_a_damaged_middle_line_costs_that_round_only(ws_dir, state_json):
    ws, lines = _five_rounds(ws_dir)
    paths = ws.task_paths("t")
    lines[2] = '{"iteration": 3, "task": "half a rec'  # not JSON any more
    paths.iterations.write_text("\n".join(lines) + "\n")
    note3 = paths.round_file(3).read_bytes()
    if state_json == "deleted":
        paths.state.unlink()
    result = Workspace(ws_dir).rebuild_state(task_id="t")
    assert result.iteration == 5
    assert any("line 3: skipped" in r for r in result.repaired)
    assert any("round 4 follows round 2" in r for r in result.repaired)
    state = ws.show_task(task_id="t").state
    assert [r.iteration for r in state.recent_rounds] == [1, 2, 4, 5]
    assert state.counters.progress_rounds == 4
    assert ws.update_state(task_id="t", task="round 6", result_summary="r", verification_summary="v").iteration == 6
    assert paths.round_file(3).read_bytes() == note3


def test_a_damaged_last_line_never_gives_its_number_to_the_next_round(ws_dir):
    ws, lines = _five_rounds(ws_dir)
    paths = ws.task_paths("t")
    lines[4] = "garbage that names no round"
    paths.iterations.write_text("\n".join(lines) + "\n")
    paths.state.unlink()
    note5 = paths.round_file(5).read_bytes()
    result = Workspace(ws_dir).rebuild_state(task_id="t")
    assert result.iteration == 5 and any("the next round is 6" in r for r in result.repaired)
    assert ws.update_state(task_id="t", task="round 6", result_summary="r", verification_summary="v").iteration == 6
    assert paths.round_file(5).read_bytes() == note5


def test_a_round_number_at_the_cap_is_a_clear_refusal_not_a_crash(ws_dir):
    ws, lines = _five_rounds(ws_dir)
    paths = ws.task_paths("t")
    last = json.loads(lines[-1])
    paths.iterations.write_text("\n".join(lines + [json.dumps({**last, "iteration": MAX_ROUNDS})]) + "\n")
    assert Workspace(ws_dir).rebuild_state(task_id="t").iteration == MAX_ROUNDS
    with pytest.raises(LoopError, match="more than any real run -- start new work with init_state"):
        ws.update_state(task_id="t", **ROUND_KW)


@pytest.mark.parametrize("bad_seq", ['"abc"', "-5", "2.5", "true", str(10**30), "null"])
def test_a_bad_seq_in_the_event_ledger_does_not_block_writes(ws_dir, bad_seq):
    ws = _init(ws_dir)
    events = ws.task_paths("t").events
    good = len(read_jsonl(events))
    with open(events, "a") as fh:
        fh.write(
            f'{{"seq": {bad_seq}, "ts": "2026-01-01T00:00:00Z", '
            '"kind": "note", "message": "hand-edited", "data": {}}\n'
        )
    first = ws.append_event(task_id="t", kind="note", message="after the damage")
    second = ws.append_event(task_id="t", kind="note", message="and again")
    assert (first.seq, second.seq) == (good + 1, good + 2)
    assert ws.update_state(task_id="t", **ROUND_KW).iteration == 1


def test_a_tail_of_damaged_seqs_falls_back_to_counting_lines(ws_dir):
    ws = _init(ws_dir)
    events = ws.task_paths("t").events
    with open(events, "a") as fh:
        fh.writelines('{"seq": "x", "kind": "note"}\n' for _ in range(100))
    lines = len(events.read_text().splitlines())
    assert ws.append_event(task_id="t", kind="note", message="m").seq == lines + 1


# ---------------------------------------------------------------- item 14


def test_a_ledger_that_is_a_symbolic_link_is_refused_and_its_target_untouched(ws_dir, tmp_path):
    ws = _init(ws_dir)
    paths = ws.task_paths("t")
    target = tmp_path / "precious.txt"
    target.write_bytes(b"line one\nlast line without newline")
    paths.events.unlink()
    paths.events.symlink_to(target)
    with pytest.raises(StateDamaged, match=r"events\.jsonl: cannot be read or written: it is a symbolic link"):
        ws.append_event(task_id="t", kind="note", message="m")
    paths.iterations.symlink_to(target)
    state_before = paths.state.read_bytes()
    with pytest.raises(LoopError, match="symbolic link"):
        ws.update_state(task_id="t", **ROUND_KW)
    assert target.read_bytes() == b"line one\nlast line without newline"
    assert paths.state.read_bytes() == state_before


def test_a_ledger_that_is_a_fifo_is_refused_without_hanging(ws_dir):
    ws = _init(ws_dir)
    paths = ws.task_paths("t")
    paths.events.unlink()
    os.mkfifo(paths.events)
    with pytest.raises(LoopError, match="not a regular file"):
        ws.recent_events("t")
    with pytest.raises(LoopError, match="not a regular file"):
        ws.append_event(task_id="t", kind="note", message="m")


def test_an_agent_loop_folder_outside_the_workspace_is_refused(ws_dir, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (ws_dir / ".agent-loop").symlink_to(elsewhere)
    with pytest.raises(LoopError, match="outside the workspace") as err:
        Workspace(ws_dir).init_state(goal="g", global_stop_condition="c", task_id="t")
    assert "remove the symbolic link" in str(err.value) and "\n" not in str(err.value)
    assert list(elsewhere.iterdir()) == []


def test_a_task_folder_outside_the_workspace_is_refused(ws_dir, tmp_path):
    other = tmp_path / "other-ws"
    other.mkdir()
    Workspace(other).init_state(goal="g", global_stop_condition="c", task_id="t")
    outside = other / ".agent-loop" / "tasks" / "t"
    before = {p: p.read_bytes() for p in outside.rglob("*") if p.is_file()}
    (ws_dir / ".agent-loop" / "tasks").mkdir(parents=True)
    (ws_dir / ".agent-loop" / "tasks" / "t").symlink_to(outside)
    ws = Workspace(ws_dir)
    with pytest.raises(LoopError, match="outside the workspace"):
        ws.update_state(task_id="t", **ROUND_KW)
    with pytest.raises(LoopError, match="outside the workspace"):
        ws.rebuild_state(task_id="t")
    assert "outside the workspace" in ws.list_tasks()[0].problem
    assert {p: p.read_bytes() for p in outside.rglob("*") if p.is_file()} == before


def test_a_rounds_folder_that_is_a_symbolic_link_gets_no_note(ws_dir, tmp_path):
    ws = _init(ws_dir)
    rounds = ws.task_paths("t").rounds
    outside = tmp_path / "outside"
    outside.mkdir()
    rounds.rmdir()
    rounds.symlink_to(outside)
    result = ws.update_state(task_id="t", **ROUND_KW)
    assert result.iteration == 1
    assert any("writing iteration-0001.md failed" in w and "symbolic link" in w for w in result.warnings)
    assert list(outside.iterdir()) == []


def test_a_state_json_symlink_loop_is_a_clear_error_that_rebuild_state_repairs(ws_dir):
    ws = _init(ws_dir)
    ws.update_state(task_id="t", **ROUND_KW)
    state = ws.task_paths("t").state
    state.unlink()
    state.symlink_to(state.name)  # state.json -> state.json
    with pytest.raises(StateDamaged, match="symbolic link.*rebuild_state") as err:
        Workspace(ws_dir).show_task(task_id="t")
    assert "\n" not in str(err.value)
    result = Workspace(ws_dir).rebuild_state(task_id="t")
    assert result.iteration == 1 and any("did not load" in r for r in result.repaired)
    assert not state.is_symlink() and state.is_file()
    assert Workspace(ws_dir).show_task(task_id="t").state.counters.iteration == 1


def test_atomic_write_replaces_a_symbolic_link_never_its_target(tmp_path):
    target = tmp_path / "outside.txt"
    target.write_text("keep me")
    link = tmp_path / "task" / "state.json"
    link.parent.mkdir()
    link.symlink_to(target)
    atomic_write(link, b"new")
    assert target.read_text() == "keep me"
    assert not link.is_symlink() and link.read_bytes() == b"new"
    assert [p.name for p in link.parent.iterdir()] == ["state.json"]  # no temp file left


def test_the_loops_other_files_as_fifos_are_never_read(ws_dir):
    """monitor.json, latest-stop-report.json, registry.json and a legacy state.json go through the same
    no-link, regular-file-only reader as the ledgers: a FIFO left by a cloned repo is replaced or reported, never waited
    on."""
    errors: list[BaseException] = []

    def run() -> None:
        try:
            _fifos_everywhere(ws_dir)
        except BaseException as exc:  # noqa: BLE001 (re-raised below, in the test's thread)
            errors.append(exc)

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(60)
    assert not worker.is_alive(), "a read waited on a FIFO"
    if errors:
        raise errors[0]


def _fifos_everywhere(ws_dir):
    ws = _init(ws_dir)
    paths = ws.task_paths("t")
    for path in (paths.monitor, paths.stop_report, ws_dir / ".agent-loop" / "registry.json"):
        path.unlink(missing_ok=True)
        os.mkfifo(path)
    assert ws.show_task(task_id="t").last_stop_report is None
    assert ws.append_event(task_id="t", kind="tool_call", message="m", data={"tool": "bash"}).seq > 1
    assert paths.monitor.is_file()  # the FIFO was replaced by a real monitor.json
    ws.init_state(goal="g", global_stop_condition="c", task_id="u")
    assert (ws_dir / ".agent-loop" / "registry.json").is_file()
    legacy = ws_dir / ".codex-loop" / "tasks" / "old"
    legacy.mkdir(parents=True)
    os.mkfifo(legacy / "state.json")
    (legacy / "events.jsonl").write_text("{}\n")
    problem = {t.task_id: t for t in Workspace(ws_dir).list_tasks()}["old"].problem
    assert "state.json" in problem and "not a regular file" in problem
