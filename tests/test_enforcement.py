"""The progress monitor on every path: a pause (or a whisper) shows in MCP results, CLI text, CLI --json and the
status files; round operations are refused while paused; a person's resume note reaches the agent exactly once."""

from __future__ import annotations

import json
import re
import shlex
import threading
import time
from pathlib import Path

import pytest
from conftest import read_jsonl, run_cli
from mcp_helpers import call, memory_client
from person_rig import person_key

from strict_loop import LoopError, Workspace
from strict_loop.loop.monitoring import TaskMonitor
from strict_loop.model.turns import Turn

FAILING = {
    "tool": "bash",
    "args": {"command": "python -m pytest -q tests/test_io.py"},
    "exit_code": 1,
    "error": True,
    "output": "E   ModuleNotFoundError: No module named 'lxml'\n1 error in 0.12s",
}
RESUME = re.compile(r"strict-loop resume --workspace (\S+) --task (\S+) --action continue\|rollback\|hand-back")


def paused_task(ws_dir: Path, task: str = "t") -> Workspace:
    """A task paused by real turns: the same failing command 8 times, sent as append_event tool_call."""
    ws = Workspace(ws_dir)
    ws.init_state(task_id=task, goal="Parse the XML feed", global_stop_condition="pytest passes")
    for i in range(8):
        ws.append_event(task_id=task, kind="tool_call", message=f"run {i}", data=FAILING)
    assert ws.supervisor(task).paused
    return ws


def cli(ws_dir: Path, *args: str, check: bool = True):
    return run_cli(*args, "--workspace", str(ws_dir), cwd=ws_dir.parent, check=check)


def resume_argv(text: str, action: str = "continue") -> list[str]:
    """The resume command a refusal or pause message names, as argv, with the person's choice of action."""
    found = RESUME.search(text)
    assert found, text
    return shlex.split(found.group(0).replace("continue|rollback|hand-back", action))[1:]


def test_a_pause_shows_on_every_cli_path_and_in_the_status_files(ws_dir):
    ws = paused_task(ws_dir)
    status_file = ws.task_paths("t").latest_status
    # latest-status.txt says so at once, before anyone runs report_status.
    first = status_file.read_text().splitlines()[0]
    assert first.startswith("PAUSED by the progress monitor: Stuck:") and "ModuleNotFoundError" in first
    assert resume_argv(first) == ["resume", "--workspace", str(ws_dir.resolve()), "--task", "t", "--action", "continue"]
    for argv in (
        ["append_event", "--kind", "note", "--message", "still here"],
        ["check_stop"],
        ["report_status"],
        ["show_task"],
        ["detect_spiral"],
        ["compact_state"],
        ["rebuild_state"],
    ):
        text = cli(ws_dir, *argv, "--task-id", "t").stdout
        assert text.startswith("PAUSED by the progress monitor:") and RESUME.search(text.splitlines()[0]), argv
        out = json.loads(cli(ws_dir, *argv, "--task-id", "t", "--json").stdout)
        assert out["supervisor"]["paused"] is True and out["supervisor"]["messages"][0]["kind"] == "pause", argv
    record = read_jsonl(ws.task_paths("t").status_history)[-1]
    assert record["paused"] is True and record["monitor"].startswith("PAUSED by the progress monitor")
    assert "| PAUSED |" in status_file.read_text()
    # After the resume the status files say so too.
    cli(ws_dir, "resume", "--task", "t", "--action", "continue", "--person-key", person_key())
    assert not status_file.read_text().startswith("PAUSED") and "| running |" in status_file.read_text()


def test_quiet_results_carry_nothing_extra_and_a_whisper_is_one_line(ws_dir):
    ws = Workspace(ws_dir)
    ws.init_state(task_id="q", goal="g", global_stop_condition="c")
    text = cli(ws_dir, "append_event", "--kind", "note", "--message", "hello").stdout
    assert text.strip().splitlines() == [text.strip()] and text.startswith("event #")
    assert json.loads(cli(ws_dir, "show_task", "--json").stdout)["supervisor"] == {"paused": False, "messages": []}
    for _ in range(4):  # the fourth identical failure is the first whisper
        result = ws.append_event(task_id="q", kind="tool_call", message="run", data=FAILING)
    (whisper,) = result.supervisor.messages
    assert whisper.kind == "whisper" and not result.supervisor.paused
    lines = cli(ws_dir, "append_event", "--kind", "note", "--message", "noted").stdout.strip().splitlines()
    assert lines[0].startswith("event #") and lines[1:] == [f"[monitor whisper] {whisper.text}"]
    assert ws.task_paths("q").latest_status.read_text().rstrip().endswith(f"[monitor whisper] {whisper.text}")


def test_detect_spiral_exit_status(ws_dir, tmp_path):
    ws = Workspace(ws_dir)
    ws.init_state(task_id="d", goal="g", global_stop_condition="c")
    codes = []
    for _ in range(6):
        codes.append(cli(ws_dir, "detect_spiral", "--exit-status", check=False).returncode)
        ws.append_event(task_id="d", kind="tool_call", message="run", data=FAILING)
    codes.append(cli(ws_dir, "detect_spiral", "--exit-status", check=False).returncode)
    assert codes == [0, 0, 0, 0, 4, 4, 5]  # quiet, quiet, quiet, quiet, whispered, whispered twice, paused
    # a script looping on check_stop launches nothing while paused, though the checks alone say continue
    assert cli(ws_dir, "check_stop", "--exit-status", check=False).returncode == 5
    assert cli(ws_dir, "detect_spiral", check=False).returncode == 0  # without the flag, as before
    assert (
        "0 when quiet, 4 when a spiral is detected, 5 when the task is paused"
        in cli(ws_dir, "detect_spiral", "--help").stdout
    )
    quiet = tmp_path / "quiet.jsonl"
    quiet.write_text(
        "".join(
            json.dumps({"tool": "bash", "args": {"command": f"ls d{i}"}, "output": f"f{i}"}) + "\n" for i in range(6)
        )
    )
    assert cli(ws_dir, "detect_spiral", "--turns", str(quiet), "--exit-status", check=False).returncode == 0
    cli(ws_dir, "resume", "d", "--action", "continue", "--person-key", person_key())
    assert cli(ws_dir, "detect_spiral", "--exit-status", check=False).returncode == 0
    assert cli(ws_dir, "check_stop", "--exit-status", check=False).returncode == 3


def test_round_operations_are_refused_while_paused_and_work_after_resume(ws_dir):
    ws = Workspace(ws_dir)
    ws.init_state(task_id="t", goal="Parse the XML feed", global_stop_condition="pytest passes")
    ws.append_event(task_id="t", kind="round.started", message="Round 1: make the tests import")
    for i in range(6):
        ws.append_event(task_id="t", kind="tool_call", message=f"run {i}", data=FAILING)
    state_before = ws.task_paths("t").state.read_bytes()
    proc = cli(
        ws_dir,
        "update_state",
        "--task-id",
        "t",
        "--task",
        "import lxml",
        "--result-summary",
        "still failing",
        "--verification-summary",
        "pytest: 1 error",
        "--progress",
        "none",
        check=False,
    )
    assert proc.returncode == 2 and proc.stderr.startswith(
        "error: update_state: task 't' is paused by the progress monitor (stuck: the identical call"
    )
    assert "a person must run: strict-loop resume --workspace" in proc.stderr
    with pytest.raises(
        LoopError, match=r"append_event.kind: task 't' is paused .*--task t --action continue\|rollback\|hand-back"
    ):
        ws.append_event(task_id="t", kind="round.started", message="Round 2: try again")
    with pytest.raises(
        LoopError, match="is paused by the progress monitor"
    ):  # 'completed' is refused before any check runs
        ws.update_state(task_id="t", task="x", result_summary="r", verification_summary="v", status="completed")
    assert ws.task_paths("t").state.read_bytes() == state_before  # nothing was recorded
    # Notes and turns are still recorded: the person needs the whole story.
    ws.append_event(task_id="t", kind="note", message="waiting for a person")
    ws.append_event(task_id="t", kind="tool_call", message="run again", data=FAILING)
    kinds = [e["kind"] for e in read_jsonl(ws.task_paths("t").events)]
    assert kinds[-2:] == ["note", "tool_call"] and "round.completed" not in kinds
    # The person runs exactly the command the refusal named; then the announced round is recorded, and the next one too.
    note = ("--note", "lxml is vendored in vendor/; use it", "--person-key", person_key())
    run_cli(*resume_argv(proc.stderr), *note, cwd=ws_dir.parent)
    done = ws.update_state(
        task_id="t", task="import lxml", result_summary="uses vendor/lxml", verification_summary="pytest: 3 passed"
    )
    assert done.iteration == 1 and not done.warnings  # it was announced before the pause
    ws.append_event(task_id="t", kind="round.started", message="Round 2: parse the feed")
    assert ws.update_state(task_id="t", task="parse", result_summary="r", verification_summary="v").iteration == 2


def test_the_refusal_is_decided_under_the_lock(ws_dir):
    """A pause that lands while update_state waits for the task's lock still stops the round."""
    ws = Workspace(ws_dir)
    ws.init_state(task_id="t", goal="g", global_stop_condition="c")
    store = ws.index.store("t")
    outcome: list[object] = []

    def record_round() -> None:
        try:
            outcome.append(ws.update_state(task_id="t", task="x", result_summary="r", verification_summary="v"))
        except LoopError as exc:
            outcome.append(exc)

    with store.locked():  # what a concurrent append_event holds while its turn pauses the task
        worker = threading.Thread(target=record_round)
        worker.start()
        time.sleep(0.3)  # the worker passes the early check (not paused yet) and waits for the lock
        for _ in range(6):
            TaskMonitor(store, ws.root).observe(Turn.model_validate(FAILING))
    worker.join(10)
    (result,) = outcome
    assert isinstance(result, LoopError) and "is paused by the progress monitor" in str(result)
    assert ws.show_task(task_id="t").state.counters.iteration == 0


def test_the_resume_note_reaches_the_agent_once(ws_dir):
    ws = paused_task(ws_dir)
    result = ws.resume(task_id="t", action="continue", note="lxml is vendored; stop reinstalling it")
    notice = "Resumed by a person (continue). Their note: lxml is vendored; stop reinstalling it"
    assert [(m.kind, m.text) for m in result.supervisor.messages] == [
        ("notice", notice)
    ]  # the person sees what the agent will
    # Reads show it without using it up (a person checking on the task must not swallow it) ...
    assert [m.text for m in ws.show_task(task_id="t").supervisor.messages] == [notice]
    assert "[monitor notice] " + notice in cli(ws_dir, "show_task", "--task-id", "t").stdout
    # ... and it survives a damaged monitor.json: the ledger says it is still owed.
    ws.task_paths("t").monitor.write_text('{"turns": "many"')
    first = ws.append_event(task_id="t", kind="note", message="back to work")
    assert [(m.kind, m.text) for m in first.supervisor.messages] == [("notice", notice)] and not first.supervisor.paused
    assert ws.append_event(task_id="t", kind="note", message="again").supervisor.messages == []
    assert json.loads(cli(ws_dir, "show_task", "--json").stdout)["supervisor"]["messages"] == []
    assert json.loads(ws.task_paths("t").monitor.read_text())["notice"] is None
    ws.task_paths("t").monitor.write_text(
        '{"turns": "many"'
    )  # rebuilt from the ledger once more: delivered stays delivered
    assert Workspace(ws_dir).supervisor("t").messages == []
    kinds = [e["kind"] for e in read_jsonl(ws.task_paths("t").events)]
    assert kinds.count("spiral.notice_delivered") == 1


def test_a_resume_without_a_note_says_so_and_a_hand_back_says_nothing(ws_dir):
    ws = paused_task(ws_dir, "a")
    ws.resume(task_id="a", action="continue")
    (msg,) = ws.report_status(task_id="a").supervisor.messages
    assert msg.kind == "notice" and msg.text.startswith("Resumed by a person (continue). Go on")
    assert "[monitor notice] Resumed by a person" in ws.task_paths("a").latest_status.read_text()
    assert ws.check_stop(task_id="a").supervisor.messages == []
    ws = paused_task(ws_dir, "b")
    ws.resume(task_id="b", action="hand-back", note="I take it from here")
    assert ws.show_task(task_id="b").supervisor.messages == []


@pytest.mark.anyio
async def test_mcp_results_carry_the_pause_the_refusal_and_the_note(ws_dir):
    async with memory_client(ws_dir) as client:  # the real server and the official client, in this process
        await call(client, "init_state", task_id="m", goal="Parse the XML feed", global_stop_condition="pytest passes")
        for i in range(8):
            err, out, text = await call(
                client, "append_event", task_id="m", kind="tool_call", message=f"run {i}", data=FAILING
            )
            assert not err, text
        assert out["supervisor"]["paused"] and out["supervisor"]["messages"][0]["kind"] == "pause"
        assert text.startswith("PAUSED by the progress monitor:") and RESUME.search(text)
        err, _, text = await call(client, "append_event", task_id="m", kind="round.started", message="Round 1")
        assert err and "is paused by the progress monitor" in text and RESUME.search(text)
        run_cli(*resume_argv(text), "--note", "use the vendored lxml", "--person-key", person_key(), cwd=ws_dir.parent)
        err, out, text = await call(client, "append_event", task_id="m", kind="round.started", message="Round 1")
        assert not err and [m["kind"] for m in out["supervisor"]["messages"]] == ["notice"]
        assert "[monitor notice] Resumed by a person (continue). Their note: use the vendored lxml" in text
        err, out, text = await call(
            client, "update_state", task_id="m", task="import lxml", result_summary="r", verification_summary="v"
        )
        assert (
            not err
            and out["iteration"] == 1
            and out["supervisor"] == {"paused": False, "messages": []}
            and "[monitor" not in text
        )
