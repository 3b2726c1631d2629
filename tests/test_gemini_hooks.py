"""Gemini CLI's row, through the real entry points on what Gemini CLI 0.61.0 really sent and printed: every hook payload
of one captured run replayed through the hook (tests/fixtures/hooks/gemini_hooks.json, by tests/capture_gemini.py),
its pause and its AfterAgent, its captured streams through the supervisor's adapter, ``strict-loop install gemini`` and
the per-run wiring of ``supervise --harness gemini``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import read_jsonl, run_cli, tree_files

from strict_loop import Workspace
from strict_loop.harness import configedit, gates, handler, payloads
from strict_loop.headless import wiring as headless
from strict_loop.headless.streambase import signed_out
from strict_loop.headless.streams import adapter_for

FIXTURES = Path(__file__).parent / "fixtures"
CAPTURED = json.loads((FIXTURES / "hooks" / "gemini_hooks.json").read_text())
TRANSCRIPT = (FIXTURES / "hooks" / "gemini_transcript.jsonl").read_text().splitlines()
PROBE = "ls /nonexistent-strict-loop-probe"


def start(ws: Path, **contract) -> Workspace:
    w = Workspace(ws)
    w.init_state(task_id="t1", goal="Fix the helper", global_stop_condition="the test passes", **contract)
    return w


def replay(ws: Path, row: dict, **changes) -> dict | None:
    """One captured hook call through the hook, its transcript as it stood then."""
    transcript = ws.parent / "session.jsonl"
    transcript.write_text("".join(line + "\n" for line in TRANSCRIPT[: row["lines"]]))
    text = json.dumps(row["payload"]).replace("WORKSPACE", str(ws)).replace("TRANSCRIPT", str(transcript))
    out = handler.handle("gemini", json.dumps({**json.loads(text), **changes}), env={}, cwd="/")
    return json.loads(out) if out else None


def turns(ws: Path) -> list[dict]:
    return [e["data"] for e in read_jsonl(ws / ".agent-loop/tasks/t1/events.jsonl") if e["kind"] == "tool_call"]


def test_every_captured_call_is_recorded_with_its_payload_outcome_and_words_and_the_prompt_once(ws_dir):
    """The whole run: the person's prompt; each call with its arguments, what the model read, the shell's exit code
    (``Exit Code: N`` in its text, none: 0; the process group's id left out) and the text written before it; the
    reason an AfterAgent hook gave to go on, which Gemini CLI sends back through BeforeAgent, is not the person's."""
    start(ws_dir)
    ours = payloads.continue_reason("t1", "fix add()", "1 of 1 stop checks fail")
    for row in CAPTURED:
        retry = row["payload"]["hook_event_name"] == "BeforeAgent" and row["payload"]["prompt"] != "Fix the helper."
        assert replay(ws_dir, row, **({"prompt": ours} if retry else {})) is None  # nothing to say: running, attended
    seen = [
        (t["tool"], t["args"].get("command") or t["args"].get("file_path"), t.get("exit_code"), t.get("error"))
        for t in turns(ws_dir)
    ]
    assert seen == [
        ("user_prompt", None, None, None),
        ("read_file", "calc.py", None, False),
        ("write_file", "NOTES.md", None, False),
        ("replace", "calc.py", None, False),
        ("run_shell_command", PROBE, 2, True),
        ("run_shell_command", "echo ok", 0, False),
        ("run_shell_command", "echo b; exit 3", 3, True),  # two at once: the first to end first
        ("run_shell_command", "echo a", 0, False),
        ("run_shell_command", "echo again", 0, False),
    ]  # the unknown tool reached no hook (the stream records it under supervise)
    prompt, read, write, edit, probe, ok, b, a, again = turns(ws_dir)
    assert prompt["actor"] == "person" and prompt["output"] == "Fix the helper."
    assert read["output"] == "def add(a, b):\n    return a - b" and write["args"]["content"] == "notes\n"
    assert edit["args"]["new_string"] == "a + b" and edit["output"].startswith("Successfully modified file")
    assert probe["output"] == "ls: cannot access '/nonexistent-strict-loop-probe': No such file or directory"
    assert (ok["output"], b["output"]) == ("ok", "b")  # no "Process Group PGID: ..." (it differs on every run)
    words = [t["thought"] for t in (read, write, edit, probe, ok, a, b, again)]
    assert words == ["First I will read the helper.", "", "", "Now the probe.", "", "Two at once.", "Two at once.", ""]
    assert {t["hook"]["event"] for t in turns(ws_dir)[1:]} == {"AfterTool"}


@pytest.mark.parametrize(
    ("text", "output", "code"),
    [
        # since gemini-cli's PR 17538 (January 2026): the output, the exit code only when it failed
        ("Output: ls: cannot access 'x': No such file or directory\nExit Code: 2", "ls: cannot access 'x': No such "
         "file or directory", 2),
        ("Output: ok", "ok", 0),
        # before: the command and its folder first, every field given, "(none)" where it had none
        ("Command: ls x\nDirectory: (root)\nOutput: ls: cannot access 'x': No such file or directory\nError: (none)\n"
         "Exit Code: 2\nSignal: (none)\nBackground PIDs: (none)\nProcess Group PGID: 4242", "ls: cannot access 'x': "
         "No such file or directory", 2),
        ("Command: echo ok\nDirectory: (root)\nOutput: ok\nError: (none)\nExit Code: 0\nSignal: (none)\n"
         "Background PIDs: (none)\nProcess Group PGID: 4243", "ok", 0),
        ("Command: sleep 99\nDirectory: (root)\nOutput: (empty)\nError: (none)\nExit Code: (none)\nSignal: 15\n"
         "Background PIDs: (none)\nProcess Group PGID: 4244", "Signal: 15", None),
    ],
)  # fmt: skip
def test_a_shells_text_is_read_in_the_form_of_each_gemini_cli_version(text, output, code):
    """What the model reads of a shell call: since PR 17538 ``Output: ...`` and ``Exit Code: N`` on failure; before, the
    command and folder first and every field, ``(none)`` where empty. Either way the turn is the output and the exit
    code, with no field of the harness's own ("Error: (none)" is no error) and no process group id."""
    payload = {"hook_event_name": "AfterTool", "cwd": "/w", "tool_name": "run_shell_command",
               "tool_input": {"command": "x"}, "tool_response": {"llmContent": text}}  # fmt: skip
    turn = payloads.gemini_turn(payloads.parse_event("gemini", payload))
    assert (turn["output"], turn["exit_code"], turn["error"]) == (output, code, code not in (None, 0))


def test_while_paused_a_tool_call_is_refused_a_read_allowed_and_an_unreadable_call_refused(ws_dir):
    ws = start(ws_dir)
    before = next(r for r in CAPTURED if r["payload"]["hook_event_name"] == "BeforeTool")
    assert replay(ws_dir, before) is None
    after = next(r for r in CAPTURED if r["payload"].get("tool_response") and PROBE in json.dumps(r["payload"]))
    said = [replay(ws_dir, after) for _ in range(8)]
    assert any(s and "[strict-loop monitor]" in s["hookSpecificOutput"]["additionalContext"] for s in said)
    assert ws.supervisor("t1").paused
    refused = replay(ws_dir, before)
    assert refused["decision"] == "block" and refused["reason"].startswith("PAUSED by the strict-loop progress monitor")
    assert "strict-loop resume" in refused["reason"] and replay(ws_dir, before)["reason"].startswith("Still PAUSED")
    read_state = {"tool_name": "run_shell_command", "tool_input": {"command": "strict-loop report_status --task-id t1"}}
    assert replay(ws_dir, before, **read_state) is None
    torn = f'{{"hook_event_name": "BeforeTool", "cwd": "{ws_dir}", "tool_name": "write_file", "tool_input": {{'
    out = json.loads(handler.handle("gemini", torn, env={}, cwd="/"))
    assert out["decision"] == "block" and "could not decide" in out["reason"]  # fails closed
    into_loop = {"tool_name": "write_file", "tool_input": {"file_path": ".agent-loop/tasks/t1/state.json"}}
    ws.resume(task_id="t1", action="continue")
    assert "inside the loop's folder" in replay(ws_dir, before, **into_loop)["reason"]  # at any time


def test_after_agent_keeps_an_unattended_task_going_up_to_the_cap_and_lets_it_end_when_the_checks_pass(ws_dir):
    """Gemini CLI 0.61.0 says ``stop_hook_active: false`` at every AfterAgent, a retry's too (captured): the blocks are
    counted per session and never reset by it, so the cap holds."""
    start(ws_dir, operating_mode="unattended", stop_checks={"commands": ["test -f done.txt"]}, next_task="write it")
    end = next(r for r in CAPTURED if r["payload"]["hook_event_name"] == "AfterAgent")
    assert end["payload"]["stop_hook_active"] is False
    answers = [replay(ws_dir, end) for _ in range(gates.STOP_BLOCK_CAP + 1)]
    assert [a is not None for a in answers] == [True] * gates.STOP_BLOCK_CAP + [False]
    assert answers[0]["decision"] == "block" and payloads.CONTINUING.match(answers[0]["reason"])
    assert "Next task: write it" in answers[0]["reason"]
    (ws_dir / "done.txt").write_text("ok")
    assert replay(ws_dir, end, session_id="another") is None  # the checks pass: the turn may end


def replay_stream(case: str):
    meta = json.loads((FIXTURES / "streams" / f"gemini-{case}.meta.json").read_text())
    adapter = adapter_for("gemini")
    calls = [
        c
        for line in (FIXTURES / "streams" / f"gemini-{case}.jsonl").read_text().splitlines()
        for c in adapter.feed(line)
    ]
    return calls, adapter.finish(meta["exit_code"], meta["timed_out"])


def test_the_stream_gives_the_session_tokens_text_and_only_the_calls_no_hook_saw():
    calls, outcome = replay_stream("ok")
    assert [(c.turn["tool"], c.turn["error"]) for c in calls] == [("nonexistent_tool", True)]
    assert calls[0].call_id.startswith("nonexistent_tool__") and "not found" in calls[0].turn["output"]
    assert outcome.ok and outcome.session_id and outcome.last_text == "Done now."
    assert (outcome.input_tokens, outcome.output_tokens, outcome.cost_usd) == (1100, 110, None)
    assert "Agent execution blocked: Go on" in outcome.reason  # its warnings (a loop it stopped, too) are kept


def test_a_refused_request_fails_and_a_run_not_signed_in_says_so():
    calls, outcome = replay_stream("http400")
    assert calls == [] and not outcome.ok and not outcome.rate_limited and "scripted API error" in outcome.reason
    calls, outcome = replay_stream("signedout")
    stderr = (FIXTURES / "streams" / "gemini-signedout.stderr.txt").read_text()
    assert not outcome.ok and outcome.reason == "exit 41 with no result" and signed_out(outcome, stderr)
    assert not signed_out(replay_stream("http400")[1], "")


def test_odd_stream_lines_give_no_call_and_never_raise():
    adapter = adapter_for("gemini")
    unhooked = {"type": "tool_result", "status": "error", "error": {"type": "tool_not_registered", "message": "no"}}
    lines = [
        {**unhooked, "tool_id": "never-used"},  # a result with no call before it
        {"type": "tool_use", "tool_id": 7, "tool_name": "x"},
        {"type": "message", "role": "assistant", "content": 5},
        {"type": "tool_use", "tool_id": "c1", "tool_name": "nonexistent", "parameters": "raw"},
        {"type": "result", "status": "success", "stats": {"input_tokens": -1, "output_tokens": True}},
    ]
    calls = [c for line in lines for c in adapter.feed(json.dumps(line))]
    calls += adapter.feed(json.dumps({**unhooked, "tool_id": "c1"}))
    assert [(c.call_id, c.turn["args"], c.turn["output"]) for c in calls] == [("c1", {"input": "raw"}, "no")]
    outcome = adapter.finish(0, False)
    assert outcome.ok and (outcome.input_tokens, outcome.output_tokens) == (0, 0)


@pytest.fixture
def place(tmp_path, monkeypatch):
    home, ws = tmp_path / "home", tmp_path / "ws"
    home.mkdir()
    ws.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("GEMINI_CLI_HOME", raising=False)
    return home, ws


@pytest.mark.parametrize("scope", ["project", "user"])
def test_install_writes_hooks_server_and_skill_once_and_uninstall_restores_every_byte(place, scope, tmp_path):
    home, ws = place
    base = ws / ".gemini" if scope == "project" else home / ".gemini"
    base.mkdir()
    theirs = {
        "theme": "Default",
        "hooks": {"BeforeTool": [{"matcher": "x", "hooks": [{"type": "command", "command": "a"}]}]},
    }
    (base / "settings.json").write_text(json.dumps(theirs, indent=2) + "\n")
    before = tree_files(tmp_path)
    dry = run_cli("install", "gemini", "--scope", scope, "--workspace", str(ws), "--dry-run", cwd=ws).stdout
    assert "+++ " in dry and tree_files(tmp_path) == before
    run_cli("install", "gemini", "--scope", scope, "--workspace", str(ws), cwd=ws)
    settings = json.loads((base / "settings.json").read_text())
    ours = {
        e: [h for g in gs for h in g["hooks"] if configedit.is_our_command(h["command"], "gemini")]
        for e, gs in settings["hooks"].items()
    }
    assert {e: len(h) for e, h in ours.items()} == dict.fromkeys(
        ("BeforeTool", "AfterTool", "BeforeAgent", "AfterAgent", "Notification"), 1
    )
    assert ours["AfterTool"][0]["timeout"] == 30_000 and ours["AfterAgent"][0]["timeout"] == 600_000  # milliseconds
    assert settings["hooks"]["BeforeTool"][0] == theirs["hooks"]["BeforeTool"][0] and settings["theme"] == "Default"
    assert settings["mcpServers"]["strict-loop"]["args"] == ["--workspace", str(ws)]
    assert (base / "skills" / "strict-agent-loop" / "SKILL.md").is_file()
    installed = tree_files(tmp_path)
    assert run_cli("install", "gemini", "--scope", scope, "--workspace", str(ws), cwd=ws).stdout.startswith("nothing")
    assert tree_files(tmp_path) == installed
    run_cli("install", "gemini", "--scope", scope, "--workspace", str(ws), "--uninstall", cwd=ws)
    assert tree_files(tmp_path) == before


def test_install_refuses_a_settings_file_it_cannot_read_and_follows_gemini_cli_home(place, tmp_path, monkeypatch):
    home, ws = place
    (ws / ".gemini").mkdir()
    (ws / ".gemini" / "settings.json").write_text('{"theme": "Default", // a comment\n}\n')
    failed = run_cli("install", "gemini", "--workspace", str(ws), cwd=ws, check=False)
    assert failed.returncode == 2 and "is not valid JSON" in failed.stderr and not (ws / ".gemini" / "skills").exists()
    monkeypatch.setenv("GEMINI_CLI_HOME", str(tmp_path / "elsewhere"))
    run_cli("install", "gemini", "--scope", "user", cwd=ws)
    assert (tmp_path / "elsewhere" / ".gemini" / "settings.json").is_file() and not (home / ".gemini").exists()


def test_a_supervised_run_gets_a_copy_of_the_persons_gemini_home_with_our_hooks_and_server(tmp_path):
    home, ws = tmp_path / "home", tmp_path / "ws"
    (home / ".gemini" / "tmp" / "chats").mkdir(parents=True)
    ws.mkdir()
    user_hook = configedit.hook_command("/old/bin/strict-loop", "gemini")  # a user-scope install of ours
    mine, theirs = {"type": "command", "command": "my-linter"}, {"type": "command", "command": "their-audit"}
    both = {"matcher": "x", "hooks": [theirs, {"type": "command", "command": user_hook}]}
    settings = {"theme": "Dark", "hooks": {"AfterTool": [{"hooks": [mine]}, both]}}
    (home / ".gemini" / "settings.json").write_text(json.dumps(settings))
    (home / ".gemini" / "oauth_creds.json").write_text("{}")
    (home / ".agents" / "skills" / "mine").mkdir(parents=True)
    env = {"HOME": str(home), "PATH": "/usr/bin"}
    wiring = headless.wire("gemini", "gemini", "do it", ws, "t1", tmp_path / "scratch", env=env)
    assert wiring.argv[:3] == ["gemini", "-p", "do it"] and "--skip-trust" in wiring.argv
    assert wiring.argv[wiring.argv.index("--approval-mode") + 1] == "yolo" and "--resume" not in wiring.argv
    copy = Path(wiring.env["GEMINI_CLI_HOME"]) / ".gemini"
    assert copy.is_relative_to(tmp_path / "scratch") and (copy / "oauth_creds.json").is_file()
    assert not (copy / "tmp").exists() and (copy.parent / ".agents" / "skills" / "mine").is_dir()  # no history
    run = json.loads((copy / "settings.json").read_text())
    after = run["hooks"]["AfterTool"]
    assert after[:2] == [{"hooks": [mine]}, {"matcher": "x", "hooks": [theirs]}]  # theirs kept, ours once, in W
    assert len(after) == 3 and "/old/bin" not in json.dumps(run)
    assert after[2]["hooks"][0]["env"] == {"STRICT_LOOP_TASK": "t1", "STRICT_LOOP_SUPERVISOR": "1"}
    assert set(run["hooks"]) == {"BeforeTool", "AfterTool", "BeforeAgent", "AfterAgent", "Notification"}
    assert run["mcpServers"]["strict-loop"]["args"][-2:] == ["--workspace", str(ws)] and run["theme"] == "Dark"
    assert json.loads((home / ".gemini" / "settings.json").read_text()) == settings  # the person's: untouched
    wiring.cleanup()
    assert not copy.exists()
