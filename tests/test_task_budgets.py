"""A task's budgets (issue 29): set by a person, counted by the hooks of every harness (tool calls, wall time, and the
tokens a transcript reports), a whisper at 80%, a pause with an alert when one is spent, shown by show_task and the
page, and raised by a person only (a terminal or the person key; the page with its answer key), which lets a task
its budget paused go on. Through the real entry points: the hook handler with the harnesses' real payloads, the CLI,
the page over HTTP."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from conftest import read_jsonl, run_cli
from person_rig import person_key
from test_dashboard import BASE, client, page_token

from strict_loop.harness.handler import handle
from strict_loop.storage import workspaces

HOOKS = Path(__file__).parent / "fixtures" / "hooks"
POST = json.loads((HOOKS / "claude_post_tool_use.json").read_text())
COMMANDS = ["ls", "cat a.txt", "pwd", "git status", "date", "ls -la", "echo done"]


def _init(ws: Path, *budget: str) -> Path:
    run_cli("init_state", "--task-id", "t1", "--goal", "Fix it", "--global-stop-condition", "done", *budget, cwd=ws)
    return ws / ".agent-loop" / "tasks" / "t1"


def _call(ws: Path, n: int, harness: str = "claude", **extra: object) -> tuple[str, str]:
    """One tool call as Claude Code makes it: PreToolUse, then (unless refused) PostToolUse; what each hook said."""
    post = {**POST, "cwd": str(ws), "tool_input": {"command": COMMANDS[n % len(COMMANDS)]}, "tool_use_id": f"c{n}"}
    post.update(tool_response={"stdout": f"output {n}"}, **extra)
    pre = {k: v for k, v in post.items() if k != "tool_response"} | {"hook_event_name": "PreToolUse"}
    before = handle(harness, json.dumps(pre), env={}, cwd=str(ws))
    if before:
        return before, ""
    return "", handle(harness, json.dumps(post), env={}, cwd=str(ws))


def _said(out: str) -> str:
    spec = json.loads(out)["hookSpecificOutput"] if out else {}
    return spec.get("additionalContext") or spec.get("permissionDecisionReason") or ""


def test_a_tool_call_budget_whispers_at_80_percent_pauses_at_100_and_a_persons_raise_lets_the_task_go_on(ws_dir):
    task = _init(ws_dir, "--max-tool-calls", "5")
    said = [_call(ws_dir, n) for n in range(5)]
    assert [bool(post) for _, post in said] == [False, False, False, True, True]
    assert "Most of this task's budget is spent (tool calls: 4 of 5 (80%))" in _said(said[3][1])
    assert "PAUSED" in _said(said[4][1]) and "Budget spent: tool calls: 5 of 5 (100%)" in _said(said[4][1])
    assert "strict-loop budget --workspace" in _said(said[4][1]) and "--max-tool-calls 10" in _said(said[4][1])
    refused, _ = _call(ws_dir, 5)  # the sixth call does not run
    assert json.loads(refused)["hookSpecificOutput"]["permissionDecision"] == "deny"
    alert = read_jsonl(task / "alerts.jsonl")[-1]
    assert alert["signals"][0]["kind"] == "budget_spent" and "tool calls: 5 of 5" in alert["diagnosis"]
    kinds = [e["kind"] for e in read_jsonl(task / "events.jsonl")]
    assert kinds.count("budget.whisper") == 1 and kinds.count("spiral.paused") == 1
    shown = json.loads(run_cli("show_task", "--task-id", "t1", "--json", cwd=ws_dir).stdout)["budget"]
    assert [(b["name"], b["spent"], b["limit"]) for b in shown] == [("tool_calls", 5.0, 5.0)]
    assert "budget: tool calls: 5 of 5 (100%)" in run_cli("show_task", "--task-id", "t1", cwd=ws_dir).stdout

    # the agent cannot raise it: not without a terminal, not from its shell (the hook refuses that call first)
    bad = run_cli("budget", "--task-id", "t1", "--max-tool-calls", "50", cwd=ws_dir, check=False)
    assert bad.returncode == 2 and "no terminal is attached" in bad.stderr
    agent = {**POST, "cwd": str(ws_dir), "hook_event_name": "PreToolUse"}
    agent["tool_input"] = {"command": "strict-loop budget --task-id t1 --max-tool-calls 50 --person-key ~/k"}
    assert "deny" in handle("claude", json.dumps(agent), env={}, cwd=str(ws_dir))
    assert json.loads((task / "state.json").read_text())["contract"]["budget"]["max_tool_calls"] == 5

    raised = run_cli("budget", "--task-id", "t1", "--max-tool-calls", "10", "--person-key", person_key(), cwd=ws_dir)
    assert "tool calls: 5 of 10 (50%); the task paused by its budget goes on" in raised.stdout
    before, after = _call(ws_dir, 6)
    assert before == "" and "Resumed by a person (continue)" in _said(after)
    assert "A person raised the task's budget" in _said(after)
    assert [e["kind"] for e in read_jsonl(task / "events.jsonl")][-4:-1] == [
        "budget.changed",
        "spiral.resumed",
        "tool_call",
    ]


def test_a_continue_without_a_raise_lets_one_call_through_and_pauses_again(ws_dir):
    _init(ws_dir, "--max-tool-calls", "2")
    _call(ws_dir, 0), _call(ws_dir, 1)
    run_cli("resume", "--task", "t1", "--action", "continue", "--person-key", person_key(), cwd=ws_dir)
    before, after = _call(ws_dir, 2)
    assert before == "" and "Budget spent: tool calls: 3 of 2" in _said(after)
    assert "deny" in _call(ws_dir, 3)[0]


def test_a_task_without_a_budget_counts_nothing_and_a_budget_set_later_counts_from_then(ws_dir):
    task = _init(ws_dir)
    for n in range(3):
        assert _call(ws_dir, n) == ("", "")
    assert not (task / "budget.json").exists()
    run_cli("budget", "--task-id", "t1", "--max-tool-calls", "2", "--person-key", person_key(), cwd=ws_dir)
    assert _call(ws_dir, 3)[1] == ""  # 1 of 2: 50%
    assert "Budget spent: tool calls: 2 of 2" in _said(_call(ws_dir, 4)[1])


def test_bad_budgets_are_refused_and_change_nothing(ws_dir):
    _init(ws_dir, "--max-tool-calls", "5")
    key = ("--person-key", person_key())
    for argv, said in (
        (("--max-cost-usd", "3"), "max_cost_usd needs usd_per_mtok_in and usd_per_mtok_out"),
        (("--max-tool-calls", "-1"), "max_tool_calls"),
        ((), "no budget given"),
    ):
        bad = run_cli("budget", "--task-id", "t1", *argv, *key, cwd=ws_dir, check=False)
        assert bad.returncode == 2 and said in bad.stderr, bad.stderr
    state = json.loads((ws_dir / ".agent-loop" / "tasks" / "t1" / "state.json").read_text())
    assert state["contract"]["budget"]["max_tool_calls"] == 5


def test_a_task_with_a_budget_is_not_replaced_by_init_state_force(ws_dir):
    """``init_state --force`` (an MCP tool the agent has) would drop the person's budget with the task: refused."""
    _init(ws_dir, "--max-tool-calls", "5")
    again = ("init_state", "--task-id", "t1", "--goal", "Fix it", "--global-stop-condition", "done", "--force")
    refused = run_cli(*again, cwd=ws_dir, check=False)
    assert refused.returncode == 2 and "has a budget a person set" in refused.stderr, refused.stderr
    state = json.loads((ws_dir / ".agent-loop" / "tasks" / "t1" / "state.json").read_text())
    assert state["contract"]["budget"]["max_tool_calls"] == 5


def test_tokens_are_read_from_claude_codes_transcript_once_per_message(ws_dir, tmp_path):
    """Claude Code writes one transcript line per content block, each with its message's usage: counted once. Only
    the new lines are read at each call, and a line not yet ended waits for the next one."""
    task = _init(ws_dir, "--max-tokens", "100000")
    (task / "budget.json").write_text(json.dumps({"since": "2026-01-01T00:00:00.000Z"}))  # before the captured lines
    lines = (HOOKS / "claude_transcript.jsonl").read_bytes().splitlines(keepends=True)
    transcript = tmp_path / "session.jsonl"
    transcript.write_bytes(b"".join(lines[: len(lines) // 2]) + lines[len(lines) // 2][:40])  # a torn last line
    _call(ws_dir, 0, transcript_path=str(transcript))
    first = json.loads((task / "budget.json").read_text())
    transcript.write_bytes(b"".join(lines))
    _call(ws_dir, 1, transcript_path=str(transcript))
    _call(ws_dir, 2, transcript_path=str(transcript))  # nothing new: nothing more
    spent = json.loads((task / "budget.json").read_text())
    messages = {
        json.loads(raw)["message"]["id"]
        for raw in lines
        if b'"usage"' in raw and json.loads(raw).get("type") == "assistant"
    }
    assert (spent["input_tokens"], spent["output_tokens"]) == (100 * len(messages), 10 * len(messages))
    assert 0 < first["input_tokens"] < spent["input_tokens"]
    assert spent["transcripts"][str(transcript)]["offset"] == transcript.stat().st_size


def test_tokens_are_read_from_codexs_rollout_as_its_running_total_and_priced(ws_dir, tmp_path):
    rates = ("--usd-per-mtok-in", "1000", "--usd-per-mtok-out", "1000")
    task = _init(ws_dir, "--max-tokens", "500", "--max-cost-usd", "1", *rates)
    _call(ws_dir, 0, transcript_path=str(HOOKS / "codex_transcript.jsonl"))  # lines from before the budget: not counted
    assert json.loads((task / "budget.json").read_text())["input_tokens"] == 0
    (task / "budget.json").write_text(json.dumps({"since": "2026-01-01T00:00:00.000Z"}))  # before the captured lines
    rollout = tmp_path / "rollout.jsonl"
    shutil.copy(HOOKS / "codex_transcript.jsonl", rollout)
    out = [_call(ws_dir, n, transcript_path=str(rollout)) for n in range(2)]
    spent = json.loads((task / "budget.json").read_text())
    assert (spent["input_tokens"], spent["output_tokens"]) == (600, 60)  # the last running total, counted once
    assert "Budget spent: tokens: 660 of 500 (132%)" in _said(out[0][1])
    shown = run_cli("show_task", "--task-id", "t1", cwd=ws_dir).stdout
    assert "budget: cost: $0.66 of $1.00 (66%)" in shown


def test_a_wall_time_budget_pauses_the_task_after_its_time(ws_dir):
    task = _init(ws_dir, "--max-wall-time", "60")
    state = json.loads((task / "state.json").read_text())
    (task / "budget.json").write_text(json.dumps({"since": "2020-01-01T00:00:00.000Z"}))
    assert state["contract"]["budget"]["max_wall_time_s"] == 60
    assert "Budget spent: wall time:" in _said(_call(ws_dir, 0)[1])


def test_the_page_shows_the_budget_and_a_person_with_the_answer_key_raises_it(ws_dir):
    _init(ws_dir, "--max-tool-calls", "2")
    _call(ws_dir, 0), _call(ws_dir, 1)
    ws = workspaces.workspace_id(ws_dir)
    c = client()
    shown = c.get(f"/api/task/{ws}/t1").json()
    assert shown["ladder"]["paused"] and shown["budget"][0]["text"] == "tool calls: 2 of 2 (100%)"
    headers = {"origin": BASE, "x-strict-loop-page": page_token(c)}
    c.cookies.delete("strict_loop_answer")  # a browser that never opened the person's answer link
    refused = c.post(f"/api/task/{ws}/t1/budget", json={"max_tool_calls": 9}, headers=headers)
    assert refused.status_code == 403
    c = client()
    headers = {"origin": BASE, "x-strict-loop-page": page_token(c)}
    bad = c.post(f"/api/task/{ws}/t1/budget", json={"max_tool_calls": "lots"}, headers=headers)
    assert bad.status_code == 400 and "max_tool_calls" in bad.json()["error"]
    done = c.post(f"/api/task/{ws}/t1/budget", json={"max_tool_calls": 4}, headers=headers)
    assert done.status_code == 200 and done.json()["resumed"] is True
    assert not c.get(f"/api/task/{ws}/t1").json()["ladder"]["paused"]
    assert _call(ws_dir, 2)[0] == ""


def test_hermes_tokens_reported_to_its_plugin_count_against_the_budget(ws_dir, monkeypatch):
    """Hermes's hooks carry no transcript: its plugin sums the usage Hermes gives ``post_api_request`` (hermes-agent
    0.19: ``asdict(CanonicalUsage)`` with ``prompt_tokens`` and ``total_tokens``) per session and sends it with the
    session's next recorded call. Each hook runs the real handler in this process, on the plugin's own payload."""
    import importlib.util

    task = _init(ws_dir, "--max-tokens", "1000")
    path = Path(__file__).parents[1] / "integrations" / "hermes" / "strict-loop" / "__init__.py"
    spec = importlib.util.spec_from_file_location("hermes_plugin_budget", path)
    plugin = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(plugin)  # type: ignore[union-attr]
    monkeypatch.chdir(ws_dir)
    monkeypatch.setattr(
        plugin,
        "_ask",
        lambda event, kw, _t: json.loads(
            handle("hermes", json.dumps(plugin._payload(event, kw), default=str), env={}, cwd=str(ws_dir)) or "{}"
        ),
    )
    hooks: dict = {}
    plugin.register(type("Ctx", (), {"register_hook": lambda self, name, fn: hooks.__setitem__(name, fn)})())

    def response(ids: list[str], prompt: int, cached: int, out: int) -> None:
        usage = {"input_tokens": prompt, "output_tokens": out, "cache_read_tokens": cached, "cache_write_tokens": 0}
        usage.update(reasoning_tokens=out // 2, request_count=1, prompt_tokens=prompt + cached)
        message = {"content": "On it.", "tool_calls": [{"id": i} for i in ids]}
        hooks["post_api_request"](session_id="s1", assistant_message=message, usage=usage | {"total_tokens": 0})

    def call(i: str) -> object:
        common = {"tool_name": "terminal", "args": {"command": f"echo {i}"}, "session_id": "s1", "tool_call_id": i}
        hooks["pre_tool_call"](**common)
        hooks["post_tool_call"](**common, result='{"output": "x", "exit_code": 0}', status="ok")
        hooks["on_session_end"](session_id="s1")  # the recording queued is done
        return hooks["transform_tool_result"](**common, result="x")

    def spent() -> tuple[int, int]:
        got = json.loads((task / "budget.json").read_text())
        return got["input_tokens"], got["output_tokens"]

    response(["c1"], 200, 100, 50)
    response([], 0, 0, 0)  # a response without usage adds nothing
    assert call("c1") is None and spent() == (300, 50)
    response([], 100, 0, 20)  # a final answer: counted with the session's next call
    response(["c2", "c3"], 250, 0, 80)
    assert "Most of this task's budget is spent (tokens: 800 of 1,000 (80%))" in str(call("c2"))
    assert call("c3") is None and spent() == (650, 150)  # the two calls of one response: its tokens once
    response(["c4"], 400, 0, 0)
    assert "Budget spent: tokens: 1,200 of 1,000 (120%)" in str(call("c4"))
    assert read_jsonl(task / "alerts.jsonl")[-1]["signals"][0]["kind"] == "budget_spent"
