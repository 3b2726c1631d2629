"""``strict-loop hook``: real workspaces, real files; the handler runs in-process, plus one run of the console
script."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from conftest import read_jsonl

from strict_loop import Workspace
from strict_loop.harness import gates, handler

FIXTURES = Path(__file__).parent / "fixtures" / "hooks"


def payload(name: str, ws: Path, **changes) -> str:
    data = json.loads((FIXTURES / f"{name}.json").read_text().replace("WORKSPACE", str(ws)))
    data.update(changes)
    return json.dumps(data)


def hook(harness: str, name: str, ws: Path, env: dict | None = None, **changes) -> dict | None:
    out = handler.handle(harness, payload(name, ws, **changes), env=env or {}, cwd="/")
    return json.loads(out) if out else None


def start(ws: Path, task_id: str = "t1", **contract) -> Workspace:
    w = Workspace(ws)
    w.init_state(task_id=task_id, goal="Make the tests pass", global_stop_condition="pytest passes", **contract)
    return w


def events(ws: Path, task_id: str = "t1", kind: str | None = None) -> list[dict]:
    found = read_jsonl(ws / ".agent-loop" / "tasks" / task_id / "events.jsonl")
    return [e for e in found if kind is None or e["kind"] == kind]


def fail_until_paused(ws: Path) -> list[dict | None]:
    return [hook("claude", "claude_post_tool_use_failure", ws, tool_input={"command": "pytest -q"}) for _ in range(8)]


def test_each_harness_records_its_turns_with_the_right_fields(ws_dir):
    start(ws_dir)
    assert hook("claude", "claude_post_tool_use", ws_dir) is None
    assert hook("claude", "claude_post_tool_use_failure", ws_dir) is None
    assert hook("codex", "codex_post_tool_use", ws_dir) is None
    assert hook("hermes", "hermes_post_tool_call", ws_dir) is None
    turns = events(ws_dir, kind="tool_call")
    assert [
        (t["data"]["tool"], t["data"].get("output"), t["data"].get("error"), t["data"].get("exit_code")) for t in turns
    ] == [
        ("Bash", "hi", False, None),
        ("Bash", "Exit code 1", True, 1),
        ("Bash", "hi\n", None, None),
        ("terminal", "", True, 1),
    ]
    assert [t["data"]["turn"] for t in turns] == [0, 1, 2, 3]
    assert turns[0]["data"]["hook"] == {
        "harness": "claude",
        "event": "PostToolUse",
        "session_id": "3f1c0a52-7b7e-4c2e-9a51-0d7f2f1b9e10",
        "tool_use_id": "toolu_01ABCDEF",
        "duration_ms": 31,
    }
    assert turns[3]["data"]["args"] == {"command": "false"} and turns[3]["data"]["hook"]["tool_use_id"] == "call_h1"


def test_secrets_are_masked_like_append_event(ws_dir):
    start(ws_dir)
    hook(
        "claude",
        "claude_post_tool_use",
        ws_dir,
        env={"DEPLOY_TOKEN": "s3cr3t-value-123"},
        tool_input={"command": "echo s3cr3t-value-123"},
        tool_response={"stdout": "s3cr3t-value-123 https://u:pw@host/x", "stderr": ""},
    )
    line = (ws_dir / ".agent-loop/tasks/t1/events.jsonl").read_text()
    assert "s3cr3t-value-123" not in line and "u:pw@" not in line and "echo ***" in line


def test_the_secrets_masked_are_those_of_the_hooks_environment_not_this_process(ws_dir, monkeypatch):
    """A hook daemon records for hooks started in other environments: the hook's own env decides what is masked."""
    start(ws_dir)
    monkeypatch.setenv("DAEMON_ONLY_TOKEN", "daemon-side-value")
    hook(
        "claude",
        "claude_post_tool_use",
        ws_dir,
        env={"CLIENT_TOKEN": "client-side-value"},
        tool_response={"stdout": "client-side-value daemon-side-value", "stderr": ""},
    )
    assert events(ws_dir, kind="tool_call")[0]["data"]["output"] == "*** daemon-side-value"


def test_the_loops_own_tools_are_not_recorded(ws_dir):
    start(ws_dir)
    for name in (
        "mcp__strict-loop__append_event",
        "mcp__strict_loop__update_state",
        "mcp__plugin_strict-loop_strict-loop__check_stop",
    ):
        assert hook("claude", "claude_post_tool_use", ws_dir, tool_name=name, tool_response={"content": "ok"}) is None
    assert events(ws_dir, kind="tool_call") == []


def test_a_new_whisper_is_said_once_then_the_pause(ws_dir):
    start(ws_dir)
    outputs = fail_until_paused(ws_dir)
    said = [i for i, out in enumerate(outputs) if out]
    ladder = [
        (e["data"]["turn"], e["kind"]) for e in events(ws_dir) if e["kind"] in ("spiral.whisper", "spiral.paused")
    ]
    assert said == [turn for turn, _ in ladder] and [k for _, k in ladder] == [
        "spiral.whisper",
        "spiral.whisper",
        "spiral.paused",
    ]
    texts = [outputs[i]["hookSpecificOutput"]["additionalContext"] for i in said]
    assert all(outputs[i]["hookSpecificOutput"]["hookEventName"] == "PostToolUseFailure" for i in said)
    assert texts[0].startswith("[strict-loop monitor]") and texts[0] != texts[1] and len(set(texts)) == 3
    assert "PAUSED" in texts[2] and f"strict-loop resume --workspace {ws_dir} --task t1 --action continue" in texts[2]
    assert outputs[said[-1] + 1 :] == [None] * (len(outputs) - said[-1] - 1)  # nothing repeated after the pause
    assert len(events(ws_dir, kind="tool_call")) == 8


def test_hermes_gets_the_whisper_as_its_own_field(ws_dir):
    start(ws_dir)
    outs = [hook("hermes", "hermes_post_tool_call", ws_dir) for _ in range(6)]
    whispers = [o for o in outs if o]
    assert whispers and set(whispers[0]) == {"whisper"} and "[strict-loop monitor]" in whispers[0]["whisper"]


def test_paused_task_denies_work_and_allows_reading_the_loop_state(ws_dir):
    start(ws_dir)
    assert hook("claude", "claude_pre_tool_use", ws_dir) is None  # not paused: nothing to say
    fail_until_paused(ws_dir)
    denied = hook("claude", "claude_pre_tool_use", ws_dir)["hookSpecificOutput"]
    assert denied["permissionDecision"] == "deny" and denied["hookEventName"] == "PreToolUse"
    assert denied["permissionDecisionReason"].startswith("PAUSED") and "Stuck" in denied["permissionDecisionReason"]
    assert (
        f"strict-loop resume --workspace {ws_dir} --task t1 --action continue|rollback|hand-back"
        in denied["permissionDecisionReason"]
    )
    assert (
        hook("codex", "claude_pre_tool_use", ws_dir, tool_input={"command": "strict-loop show_task --task-id t1"})
        is None
    )
    assert (
        hook("claude", "claude_pre_tool_use", ws_dir, tool_name="mcp__strict-loop__report_status", tool_input={})
        is None
    )
    assert (
        hook("claude", "claude_pre_tool_use", ws_dir, tool_input={"command": "strict-loop show_task; touch x"})
        is not None
    )
    assert hook("hermes", "hermes_pre_tool_call", ws_dir)["decision"] == "block"
    Workspace(ws_dir).resume(task_id="t1", action="continue")
    assert hook("claude", "claude_pre_tool_use", ws_dir) is None


def test_a_persons_resume_note_reaches_the_agent_once_with_the_next_tool_result(ws_dir):
    start(ws_dir)
    fail_until_paused(ws_dir)
    Workspace(ws_dir).resume(task_id="t1", action="continue", note="try the other parser")
    first = hook("codex", "codex_post_tool_use", ws_dir)["hookSpecificOutput"]["additionalContext"]
    assert "Resumed by a person" in first and "try the other parser" in first
    assert hook("codex", "codex_post_tool_use", ws_dir, tool_input={"command": "ls"}) is None


def unattended(ws: Path, command: str = "test -f done.txt") -> Workspace:
    return start(ws, operating_mode="unattended", stop_checks={"commands": [command]}, next_task="write done.txt")


def test_stop_is_blocked_while_the_unattended_loop_must_continue_up_to_the_cap(ws_dir):
    unattended(ws_dir)
    first = hook("claude", "claude_stop", ws_dir)
    assert first["decision"] == "block" and "Next task: write done.txt" in first["reason"]
    answers = [hook("claude", "claude_stop", ws_dir, stop_hook_active=True) for _ in range(gates.STOP_BLOCK_CAP + 2)]
    assert [a is not None for a in answers] == [True] * (gates.STOP_BLOCK_CAP - 1) + [False] * 3
    assert (
        hook("claude", "claude_stop", ws_dir, stop_hook_active=False) is not None
    )  # a new prompt: counting starts again
    other = hook("claude", "claude_stop", ws_dir, session_id="another-session", stop_hook_active=True)
    assert other is not None  # counted per session
    assert len(events(ws_dir, kind="stop.checked")) == gates.STOP_BLOCK_CAP + 2
    (ws_dir / "done.txt").write_text("ok")
    assert hook("claude", "claude_stop", ws_dir) is None  # check_stop says stop


def test_codex_stop_has_no_cap_of_its_own_so_ours_holds(ws_dir):
    unattended(ws_dir)
    answers = [hook("codex", "codex_stop", ws_dir) for _ in range(gates.STOP_BLOCK_CAP + 2)]
    assert [a is not None for a in answers] == [True] * gates.STOP_BLOCK_CAP + [False] * 2
    assert hook("hermes", "hermes_pre_verify", ws_dir)["decision"] == "block"


def test_stop_is_not_blocked_when_attended_paused_or_untrusted(ws_dir, tmp_path, monkeypatch):
    start(ws_dir, "watched", stop_checks={"commands": ["false"]})
    assert hook("claude", "claude_stop", ws_dir, env={"STRICT_LOOP_TASK": "watched"}) is None
    shutil.rmtree(ws_dir / ".agent-loop")
    unattended(ws_dir, "touch ran.txt; false")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "another-machine"))  # the contract came with the repository
    assert hook("claude", "claude_stop", ws_dir) is None and not (ws_dir / "ran.txt").exists()
    assert events(ws_dir, kind="stop.checked") == []


def test_under_the_supervisor_stop_is_left_to_it(ws_dir):
    """`strict-loop supervise` marks its child's environment: the hooks record and whisper, but the supervisor alone
    decides whether the agent goes on (it re-invokes from disk), so Stop is never blocked and no check runs."""
    unattended(ws_dir)
    supervised = {handler.SUPERVISED_ENV: "1"}
    assert hook("claude", "claude_stop", ws_dir, env=supervised) is None
    assert (
        hook("codex", "codex_stop", ws_dir, env=supervised) is None
        and hook("hermes", "hermes_pre_verify", ws_dir, env=supervised) is None
    )
    assert events(ws_dir, kind="stop.checked") == []
    assert hook("claude", "claude_stop", ws_dir)["decision"] == "block"  # the same task, not supervised


def test_paused_task_at_stop_is_not_blocked(ws_dir):
    unattended(ws_dir)
    fail_until_paused(ws_dir)
    assert hook("codex", "codex_stop", ws_dir) is None
    Workspace(ws_dir).resume(task_id="t1", action="continue", note="use the cached fixture instead")
    reason = hook("codex", "codex_stop", ws_dir)["reason"]  # the first thing the agent hears after the resume
    assert "Next task: write done.txt" in reason and "use the cached fixture instead" in reason
    assert "use the cached fixture" not in (hook("codex", "codex_stop", ws_dir) or {}).get("reason", "")  # once


def test_no_loop_means_no_output_and_no_files(tmp_path):
    out = handler.handle("claude", payload("claude_post_tool_use", tmp_path), env={}, cwd=str(tmp_path))
    assert out == "" and list(tmp_path.iterdir()) == []
    ws = tmp_path / "ws"
    ws.mkdir()
    start(ws, "done-task")
    w = Workspace(ws)
    w.update_state(
        task_id="done-task",
        task="t",
        result_summary="r",
        verification_summary="v",
        progress="made",
        status="blocked",
        stop_reason="needs a person",
    )
    assert hook("claude", "claude_post_tool_use", ws) is None and events(ws, "done-task", "tool_call") == []


def test_task_is_found_from_a_subfolder_or_named_by_the_environment(ws_dir):
    start(ws_dir, "a")
    start(ws_dir, "b")
    sub = ws_dir / "src" / "pkg"
    sub.mkdir(parents=True)
    told = hook("claude", "claude_post_tool_use", sub)  # two running tasks: none guessed, the call kept apart
    assert "2 loop tasks are running here (a, b)" in told["hookSpecificOutput"]["additionalContext"]
    assert hook("claude", "claude_post_tool_use", sub) is None  # told once per session
    assert events(ws_dir, "a", "tool_call") == [] and events(ws_dir, "b", "tool_call") == []
    assert len((ws_dir / ".agent-loop/unclaimed.jsonl").read_text().splitlines()) == 2
    hook("claude", "claude_post_tool_use", sub, env={"STRICT_LOOP_TASK": "b"})
    assert len(events(ws_dir, "b", "tool_call")) == 1 and events(ws_dir, "a", "tool_call") == []
    out = handler.handle(
        "codex",
        payload("codex_post_tool_use", Path("/")),
        workspace=str(ws_dir),
        env={"STRICT_LOOP_TASK": "a"},
        cwd="/",
    )
    assert out == "" and len(events(ws_dir, "a", "tool_call")) == 1


def test_damaged_state_is_logged_and_the_session_goes_on(ws_dir):
    start(ws_dir)
    state = ws_dir / ".agent-loop/tasks/t1/state.json"
    state.write_text('{"schema_version": 1, "status": "running", "task_id": 5')
    assert hook("claude", "claude_post_tool_use", ws_dir) is None
    assert hook("claude", "claude_pre_tool_use", ws_dir) is None
    log = (ws_dir / ".agent-loop/tasks/t1/hook-errors.log").read_text().splitlines()
    assert len(log) == 2 and "hook claude PostToolUse: StateDamaged" in log[0] and "rebuild_state" in log[0]
    assert all(len(line) <= handler.ERROR_LINE_MAX_CHARS for line in log)


def test_damaged_monitor_settings_are_logged_and_a_big_write_is_still_recorded(ws_dir):
    start(ws_dir)
    big = "x" * 1_000_000
    hook(
        "claude",
        "claude_post_tool_use",
        ws_dir,
        tool_name="Write",
        tool_input={"file_path": "a.txt", "content": big},
        tool_response={"type": "create", "filePath": "a.txt", "content": big},
    )
    (turn,) = events(ws_dir, kind="tool_call")
    assert turn["data"]["args"]["file_path"] == "a.txt" and len(json.dumps(turn["data"])) < 64 * 1024
    state = ws_dir / ".agent-loop/tasks/t1/state.json"
    doc = json.loads(state.read_text())
    doc["contract"]["monitor"]["thresholds"] = {"identical_repeats": "many"}
    state.write_text(json.dumps(doc))
    assert hook("claude", "claude_post_tool_use", ws_dir) is None
    (line,) = (ws_dir / ".agent-loop/tasks/t1/hook-errors.log").read_text().splitlines()
    assert "contract.monitor.thresholds.identical_repeats" in line and len(events(ws_dir, kind="tool_call")) == 1


def test_the_hook_finds_workspaces_by_the_layouts_folder_name():
    from strict_loop.base.layout import MANAGER_DIR

    assert handler.MANAGER_DIR == MANAGER_DIR


def test_bad_stdin_is_ignored_and_logged_when_the_task_is_known(ws_dir):
    start(ws_dir)
    for data in ("not json", "[1, 2]", "[" * 100_000, b"\xff\xfe", "x" * (handler.MAX_STDIN_BYTES + 1)):
        assert handler.handle("claude", data, env={}, cwd=str(ws_dir)) == ""
    log = (ws_dir / ".agent-loop/tasks/t1/hook-errors.log").read_text().splitlines()
    assert len(log) == 5 and all("stdin is not one JSON object" in line for line in log)
    assert events(ws_dir, kind="tool_call") == []


def test_the_error_log_stays_bounded(ws_dir):
    start(ws_dir)
    log = ws_dir / ".agent-loop/tasks/t1/hook-errors.log"
    log.write_bytes(b"old line\n" * (handler.ERROR_LOG_MAX_BYTES // 9 + 10))
    handler.handle("claude", "junk", env={}, cwd=str(ws_dir))
    assert log.stat().st_size <= handler.ERROR_LOG_MAX_BYTES and log.read_text().splitlines()[-1].endswith("ignored")


def test_the_installed_console_script_answers_a_hook_end_to_end(ws_dir):
    exe = shutil.which("strict-loop", path=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    assert exe, "the strict-loop console script is not installed: pip install -e ."
    start(ws_dir)
    fail_until_paused(ws_dir)
    env = {k: v for k, v in os.environ.items() if k != "STRICT_LOOP_TASK"}
    proc = subprocess.run(
        [exe, "hook", "claude"],
        input=payload("claude_pre_tool_use", ws_dir),
        capture_output=True,
        text=True,
        cwd="/",
        env=env,
        timeout=60,
    )
    assert proc.returncode == 0 and proc.stderr == ""
    assert json.loads(proc.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"
    proc = subprocess.run(
        [exe, "hook", "claude"], input="{not json", capture_output=True, text=True, cwd=str(ws_dir), env=env, timeout=60
    )
    assert proc.returncode == 0 and proc.stderr == ""  # paused: what it cannot read it refuses (issue 19, item 2)
    assert json.loads(proc.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"


def _hostile(ws: Path) -> dict[str, bytes]:
    """Pre-tool payloads an agent controls that a JSON parser refuses (issue 19, item 2)."""
    good = json.loads(payload("claude_pre_tool_use", ws))
    text = json.dumps(good)
    cut = text.rindex("}")
    return {
        "nested 70 deep": (text[:cut] + ', "x": ' + "[" * 70 + "]" * 70 + "}").encode(),
        "NaN": (text[:cut] + ', "x": NaN}').encode(),
        "Infinity": (text[:cut] + ', "x": 1e999}').encode(),
        "huge integer": (text[:cut] + ', "x": ' + "9" * 5000 + "}").encode(),
        "invalid UTF-8": (text[:cut] + ', "x": "\xff\xfe"}').encode("latin-1"),
        "over 8 MiB": (text[:cut] + ', "x": "' + "a" * (9 << 20) + '"}').encode(),
    }


def test_a_pre_tool_call_the_hook_cannot_read_is_denied_while_paused_and_let_through_otherwise(ws_dir):
    start(ws_dir)
    for name, raw in _hostile(ws_dir).items():
        assert handler.handle("claude", raw, env={}, cwd="/") == "", name  # not paused: the session goes on
    fail_until_paused(ws_dir)
    for name, raw in _hostile(ws_dir).items():
        out = json.loads(handler.handle("claude", raw, env={}, cwd="/") or "null")
        assert out and out["hookSpecificOutput"]["permissionDecision"] == "deny", name
        assert "could not decide" in out["hookSpecificOutput"]["permissionDecisionReason"], name
    hermes = json.loads(payload("hermes_pre_tool_call", ws_dir))
    raw = json.dumps(hermes)[:-1] + ', "x": NaN}'
    assert json.loads(handler.handle("hermes", raw, env={}, cwd="/"))["decision"] == "block"


def test_while_paused_the_reason_is_said_in_full_once_then_in_one_line_and_a_note_is_allowed(ws_dir):
    start(ws_dir)
    fail_until_paused(ws_dir)
    reasons = [
        hook("claude", "claude_pre_tool_use", ws_dir)["hookSpecificOutput"]["permissionDecisionReason"]
        for _ in range(3)
    ]
    assert reasons[0].startswith("PAUSED by the strict-loop progress monitor") and len(reasons[0]) > 300
    assert reasons[1] == reasons[2] and reasons[1].startswith("Still PAUSED") and "\n" not in reasons[1]
    assert len(reasons[1]) < len(reasons[0]) / 2
    note = {"command": "strict-loop append_event --task-id t1 --kind note --message 'I need the API key for staging'"}
    assert hook("claude", "claude_pre_tool_use", ws_dir, tool_input=note) is None
    double = {"command": 'strict-loop append_event --kind note --message "I am stuck on javac, please look"'}
    assert hook("claude", "claude_pre_tool_use", ws_dir, tool_input=double) is None  # as the refusal tells it to
    for sneaky in (
        "strict-loop append_event --kind note --message 'x' --data '{}'",
        "strict-loop append_event --kind round.started --message 'go'",
        "strict-loop append_event --kind note --message 'x'; touch marker",
        'strict-loop append_event --kind note --message "$(touch marker)"',
        'strict-loop append_event --kind note --message "`touch marker`"',
        'strict-loop append_event --kind note --message "x\\" ; touch marker; echo "y"',
        'strict-loop append_event --kind note --message "x" --data "{}"',
        "strict-loop append_event --kind note --message \"it's\" '; touch marker'",
    ):
        assert hook("claude", "claude_pre_tool_use", ws_dir, tool_input={"command": sneaky}), sneaky
    mcp_note = {"task_id": "t1", "kind": "note", "message": "waiting for you"}
    assert (
        hook("claude", "claude_pre_tool_use", ws_dir, tool_name="mcp__strict-loop__append_event", tool_input=mcp_note)
        is None
    )


def test_a_failed_command_s_output_after_exit_code_is_the_turn_s_output(ws_dir):
    """Claude Code 2.1.331's PostToolUseFailure: "Exit code 1\\n<output>" (a real payload)."""
    start(ws_dir)
    hook("claude", "claude_post_tool_use_failure_output", ws_dir)
    [turn] = events(ws_dir, kind="tool_call")
    assert (turn["data"]["output"], turn["data"]["exit_code"], turn["data"]["error"]) == (
        "3 failed, 2 passed in 0.1s",
        1,
        True,
    )


def test_what_the_person_types_is_recorded_as_their_turn_on_every_harness(ws_dir):
    start(ws_dir)
    secret = {"DEPLOY_TOKEN": "tok-9f8e7d6c5b4a3210"}
    assert (
        hook("claude", "claude_user_prompt_submit", ws_dir, env=secret, prompt="still truncated, tok-9f8e7d6c5b4a3210")
        is None
    )
    hook("codex", "codex_user_prompt_submit", ws_dir)
    hook("hermes", "hermes_pre_llm_call", ws_dir)
    turns = [t["data"] for t in events(ws_dir, kind="tool_call")]
    assert [(t["tool"], t["actor"]) for t in turns] == [("user_prompt", "person")] * 3
    assert [t["output"] for t in turns] == [
        "still truncated, ***",
        "it still fails the same way",
        "it still fails with the same error",
    ]
    assert hook("claude", "claude_user_prompt_submit", ws_dir, env={"STRICT_LOOP_SUPERVISOR": "1"}) is None
    assert len(events(ws_dir, kind="tool_call")) == 3  # a supervisor's prompt is not a person's word
