"""The small ones (issue 13, item 16): each hostile input is one clear line, and nothing is written."""

from __future__ import annotations

import json
import os
import subprocess
import time
import tracemalloc

import pytest
from conftest import run_cli, run_script, tree_digest

from strict_loop import LoopError, StateDamaged, Workspace
from strict_loop.base.jsonl import iter_lines, last_json, tail_lines
from strict_loop.model.requests import ResumeInput
from strict_loop.storage.trust import TrustStore


@pytest.fixture
def ws(ws_dir) -> Workspace:
    w = Workspace(ws_dir)
    w.init_state(goal="g", global_stop_condition="c", task_id="t")
    return w


def _refused(ws_dir, *args: str) -> str:
    """Run the CLI expecting a refusal; the one line it printed, after checking nothing under .agent-loop changed."""
    before = tree_digest(ws_dir / ".agent-loop") if (ws_dir / ".agent-loop").exists() else None
    proc = run_script(args[0], *args[1:], cwd=ws_dir, check=False)
    assert proc.returncode == 2 and proc.stdout == "", (proc.stdout, proc.stderr)
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr, proc.stderr
    if before is not None:
        assert tree_digest(ws_dir / ".agent-loop") == before
    return proc.stderr


def test_a_task_id_with_a_trailing_newline_is_refused(ws, ws_dir):
    with pytest.raises(LoopError, match=r"^append_event\.task_id: 't\\n' is not a task id") as err:
        ws.append_event(task_id="t\n", kind="note", message="m")
    assert "\n" not in str(err.value)
    assert "is not a task id" in _refused(
        ws_dir, "append_event", "--task-id", "t\n", "--kind", "note", "--message", "m"
    )


@pytest.mark.parametrize("flag,command", [("--data", "append_event"), ("--monitor", "init_state")])
def test_a_missing_at_file_is_one_line(ws, ws_dir, flag, command):
    args = (
        ["--kind", "note", "--message", "m"]
        if command == "append_event"
        else ["--goal", "g", "--global-stop-condition", "c"]
    )
    err = _refused(ws_dir, command, "--task-id", "t2" if command == "init_state" else "t", *args, flag, "@missing.json")
    assert f"argument {flag}: cannot read 'missing.json' (No such file or directory)" in err


@pytest.mark.parametrize("text", ['{"x": NaN}', '{"x": Infinity}', '{"x": -Infinity}', '{"x": 1e999}'])
def test_non_finite_numbers_in_cli_json_are_refused(ws, ws_dir, text):
    err = _refused(ws_dir, "append_event", "--task-id", "t", "--kind", "note", "--message", "m", "--data", text)
    assert "argument --data: the value holds" in err and "finite number" in err


def test_non_finite_numbers_are_refused_by_the_api(ws):
    with pytest.raises(LoopError, match=r"^append_event\.data: holds NaN or Infinity"):
        ws.append_event(task_id="t", kind="note", message="m", data={"x": [float("nan")]})
    with pytest.raises(
        LoopError, match=r"^init_state\.stop_checks\.command_timeout_s: Input should be a finite number"
    ):
        ws.init_state(goal="g", global_stop_condition="c", task_id="u", stop_checks={"command_timeout_s": float("inf")})
    with pytest.raises(LoopError, match=r"finite number"):
        ws.append_event(task_id="t", kind="tool_call", message="m", data={"tool": "bash", "score": float("inf")})


# Over MCP (raw JSON-RPC over stdio, where the SDK's parser takes NaN and 1e999): tests/test_hostile_stdio.py, on the
# server process its malformed-line tests share.


def test_a_byte_order_mark_is_accepted_in_at_files_state_json_and_monitor_defaults(ws, ws_dir):
    (ws_dir / "data.json").write_bytes(b'\xef\xbb\xbf{"from": "an editor"}')
    run_script("append_event", "--task-id", "t", "--kind", "note", "--message", "m", "--data", "@data.json", cwd=ws_dir)
    assert last_json(ws.task_paths("t").events)["data"] == {"from": "an editor"}
    state = ws.task_paths("t").state
    state.write_bytes(b"\xef\xbb\xbf" + state.read_bytes())
    assert Workspace(ws_dir).show_task(task_id="t").state.task_id == "t"
    assert (
        Workspace(ws_dir).update_state(task_id="t", task="t", result_summary="r", verification_summary="v").iteration
        == 1
    )
    (ws_dir / ".agent-loop" / "monitor-defaults.json").write_bytes(b'\xef\xbb\xbf{"cooldown_turns": 7}')
    TrustStore().record_defaults(ws_dir, (ws_dir / ".agent-loop" / "monitor-defaults.json").read_bytes())
    ws.init_state(goal="g", global_stop_condition="c", task_id="bom")
    assert ws.show_task(task_id="bom").state.contract.monitor.cooldown_turns == 7


def _deep(depth: int) -> str:
    return '{"a": ' * depth + "1" + "}" * depth


@pytest.mark.parametrize("depth", [65, 5000, 200_000])
def test_json_nested_thousands_deep_is_one_line(ws, ws_dir, depth):
    (ws_dir / "deep.json").write_text(_deep(depth))
    for value, what in ((_deep(depth), "the value"), ("@deep.json", "'deep.json'")):
        if len(value) < 100_000:  # a longer argument is over the OS limit for one argument
            err = _refused(
                ws_dir, "append_event", "--task-id", "t", "--kind", "note", "--message", "m", "--data", value
            )
            assert f"argument --data: {what} is nested more than 64 levels deep" in err


def test_deep_turn_files_and_legacy_state_are_clear_errors(ws, ws_dir):
    """Every reader of JSON input shares one parser: a trajectory file and a cloned .codex-loop/ state too."""
    (ws_dir / "turns.jsonl").write_text(_deep(100_000) + "\n")
    err = _refused(ws_dir, "detect_spiral", "--turns", "turns.jsonl")
    assert "argument --turns: turns.jsonl line 1: is nested more than 64 levels deep" in err
    legacy = ws_dir / ".codex-loop" / "tasks" / "deep"
    legacy.mkdir(parents=True)
    (legacy / "state.json").write_text(_deep(100_000))
    tasks = {t.task_id: t for t in Workspace(ws_dir).list_tasks()}
    assert tasks["t"].problem is None
    assert "is nested more than 64 levels deep" in tasks["deep"].problem


def test_deep_data_and_deep_stored_files_are_clear_errors(ws, ws_dir):
    with pytest.raises(LoopError, match=r"^append_event\.data: is nested more than 64 levels deep"):
        ws.append_event(task_id="t", kind="note", message="m", data=json.loads(_deep(100)))
    ws.append_event(task_id="t", kind="note", message="m", data=json.loads(_deep(60)))  # deep, but within the cap
    paths = ws.task_paths("t")
    with open(paths.events, "a") as fh:
        fh.write("[" * 100_000 + "]" * 100_000 + "\n")  # a damaged ledger line: skipped, not a RecursionError
    assert ws.append_event(task_id="t", kind="note", message="after").seq == 3
    paths.state.write_text(_deep(100_000))
    with pytest.raises(
        StateDamaged, match=r"state\.json: is nested more than 64 levels deep -- run `strict-loop rebuild_state"
    ):
        Workspace(ws_dir).show_task(task_id="t")
    assert Workspace(ws_dir).rebuild_state(task_id="t").iteration == 0


@pytest.mark.parametrize(
    "field,value", [("iteration", 10**30), ("progress_rounds", 10**8), ("total_round_seconds", 1e300)]
)
def test_counters_beyond_any_real_run_are_refused_naming_the_field(ws, ws_dir, field, value):
    path = ws.task_paths("t").state
    doc = json.loads(path.read_text())
    doc["counters"][field] = value
    path.write_text(json.dumps(doc))
    with pytest.raises(StateDamaged, match=rf"field 'counters\.{field}': .* is greater than the maximum of") as err:
        Workspace(ws_dir).update_state(task_id="t", task="t", result_summary="r", verification_summary="v")
    assert "rebuild_state" in str(err.value) and "\n" not in str(err.value)
    assert not ws.task_paths("t").iterations.exists()


@pytest.mark.parametrize("params", [{"action": "rollback"}, {"to": None, "action": "rollback"}])
def test_resume_rollback_without_to_names_the_field(ws, params):
    with pytest.raises(LoopError, match=r"^resume\.to: is required for rollback"):
        ws.resume(task_id="t", **params)
    with pytest.raises(ValueError, match="required for rollback"):
        ResumeInput.model_validate(dict(reversed(list({"task_id": "t", **params}.items()))))
    assert ResumeInput(action="continue").to is None


def test_reading_the_tail_of_a_ledger_whose_last_line_is_200_mb_is_bounded(tmp_path):
    path = tmp_path / "events.jsonl"
    with open(path, "wb") as fh:
        fh.write(b'{"seq": 1}\n{"seq": 2}\n')
        fh.truncate(fh.tell() + 200 * 1024 * 1024)  # a 200 MB line of zero bytes, sparse: fast to make
        fh.seek(0, 2)
        fh.write(b"\n")
    tracemalloc.start()
    started = time.monotonic()
    try:
        assert last_json(path) == {"seq": 2}
        assert tail_lines(path, 5) == ['{"seq": 1}', '{"seq": 2}']
        assert [n for n, _ in iter_lines(path)] == [1, 2]
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 24 * 1024 * 1024, peak  # a few MiB: the huge line is scanned, never held
    assert time.monotonic() - started < 20


def test_detect_spiral_turns_refuses_a_fifo_or_a_device_without_blocking(ws_dir, capsys):
    """Issue 19, item 11: --turns opened a FIFO (and hung) or a device."""
    import os

    from strict_loop.cli.app import main as cli

    fifo = ws_dir / "turns.jsonl"
    os.mkfifo(fifo)
    for given in (fifo, "/dev/zero"):
        with pytest.raises(SystemExit) as ended:  # a usage error: argparse exits 2 with one line
            cli(["detect_spiral", "--workspace", str(ws_dir), "--turns", str(given)])
        assert ended.value.code == 2 and "not a regular file" in capsys.readouterr().err


def test_a_file_where_the_loops_folder_belongs_is_named_with_the_fix(ws_dir):
    (ws_dir / ".agent-loop").write_text("not a folder")
    out = run_cli(
        "init_state", "--task-id", "a", "--goal", "g", "--global-stop-condition", "c", cwd=ws_dir, check=False
    )
    assert out.returncode == 2 and "is .agent-loop a file?" in out.stderr and "disk space" not in out.stderr


def test_a_read_only_loop_folder_is_said_plainly_with_exit_2(ws_dir, tmp_path):
    """Reviewer: supervise and watch on a read-only .agent-loop ended with 'unexpected OSError' and exit 1."""
    import shutil

    Workspace(ws_dir).init_state(task_id="t", goal="g", global_stop_condition="c", stop_checks={"paths_exist": ["x"]})
    folder, saved = ws_dir / ".agent-loop", tmp_path / "saved"
    shutil.copytree(folder, saved)
    if os.geteuid() != 0 or subprocess.run(["mount", "-t", "tmpfs", "tmpfs", str(folder)]).returncode:
        pytest.skip("mounting a tmpfs needs root")
    try:
        shutil.copytree(saved, folder, dirs_exist_ok=True)
        subprocess.run(["mount", "-o", "remount,ro", str(folder)], check=True)
        for argv in (
            ["supervise", "--task-id", "t", "--harness", "claude", "--harness-bin", "/bin/true"],
            ["watch", "--task-id", "t", "--", "true"],
        ):
            out = run_cli(*argv, cwd=ws_dir, check=False)
            assert out.returncode == 2 and "read-only" in out.stderr and "unexpected" not in out.stderr, out.stderr
    finally:
        subprocess.run(["umount", "-l", str(folder)])


def test_event_data_nested_deeper_than_the_interpreter_recurses_is_a_clear_error(tmp_path):
    from strict_loop import Workspace
    from strict_loop.base.errors import LoopError

    ws = Workspace(tmp_path)
    ws.init_state(task_id="t", goal="g", global_stop_condition="c")
    deep: list = []
    for _ in range(5000):  # deeper than Python's recursion limit: compact() and str() both recurse
        deep = [deep]
    with pytest.raises(LoopError, match="nested more than 64 levels"):
        ws.append_event(task_id="t", kind="tool_call", message="m", data={"tool": "Bash", "args": {"a": deep}})
