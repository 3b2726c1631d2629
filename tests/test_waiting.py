"""The agent waits for the person (issue 29): each harness's notification hook, through the hook entry with the real
payloads (tests/fixtures/hooks), is kept for the page until the session goes on, recorded, and sent to the person's
channels once per kind and task within the window; the agent's words are clipped and masked, and the hook never
waits on a receiver."""

from __future__ import annotations

import importlib.util
import json
import time
from pathlib import Path

import httpx2
from alert_rig import FAST, receiver, settled, wait_until
from conftest import read_jsonl, run_cli
from test_dashboard import serving_page
from test_hooks import FIXTURES

from strict_loop import Workspace
from strict_loop.alerts import outbox, waiting
from strict_loop.harness import handler
from strict_loop.storage import workspaces

REPO = Path(__file__).resolve().parent.parent


def _start(ws: Path) -> Path:
    Workspace(ws).init_state(task_id="t1", goal="Make the tests pass", global_stop_condition="pytest passes")
    return ws / ".agent-loop" / "tasks" / "t1"


def _fixture(name: str, ws: Path, **changes) -> dict:
    data = json.loads((FIXTURES / f"{name}.json").read_text().replace("WORKSPACE", str(ws)))
    return {**data, **changes}


def _claude_permission(ws: Path) -> str:
    """The captured permission prompt, its transcript (as it stood when the hook ran) written where it says."""
    found = json.loads((FIXTURES / "claude_notification_permission.json").read_text().replace("WORKSPACE", str(ws)))
    transcript = ws.parent / "transcript.jsonl"
    transcript.write_text("\n".join(found["transcript"]) + "\n")
    return json.dumps({**found["payload"], "transcript_path": str(transcript)})


def _hook(harness: str, data: str | dict, env: dict) -> str:
    return handler.handle(harness, data if isinstance(data, str) else json.dumps(data), env=env, cwd="/")


def test_a_permission_prompt_is_kept_recorded_and_alerted_once(ws_dir):
    task = _start(ws_dir)
    with receiver() as http:
        env = {**FAST, "STRICT_LOOP_WEBHOOK_URL": http.url("/ok/hook")}
        assert _hook("claude", _claude_permission(ws_dir), env) == ""  # nothing answered: Claude Code goes on asking
        wait_until(lambda: http.received, 10, "the alert")
        settled(task / "alerts.jsonl")
        assert _hook("claude", _claude_permission(ws_dir), env) == ""  # the same prompt again: within the window
        assert not outbox.pending(ws_dir)
    [sent] = http.received
    text = "Claude Code waits for you: permission to run `touch permission-marker`"
    assert sent["body"]["text"].startswith(f"[WAITING] t1: {text}\nresume: answer it in the Claude Code session")
    assert waiting.current(task)["text"] == "waiting for you: permission to run `touch permission-marker`"
    said = [e for e in read_jsonl(task / "events.jsonl") if e["kind"] == "agent.waiting"]
    assert [(e["data"]["kind"], e["data"]["throttled"]) for e in said] == [("permission", False), ("permission", True)]
    assert [e["data"]["command"] for e in said] == ["touch permission-marker"] * 2


def test_the_page_shows_the_wait_until_the_session_goes_on(ws_dir):
    task = _start(ws_dir)
    workspaces.remember(ws_dir)
    ws_id = workspaces.workspace_id(ws_dir)
    _hook("claude", _claude_permission(ws_dir), {})
    session = json.loads(_claude_permission(ws_dir))["session_id"]
    with serving_page() as url:
        [row] = httpx2.get(f"{url}/api/overview").json()["tasks"]
        shown = httpx2.get(f"{url}/api/task/{ws_id}/t1").json()["row"]
        assert row["group"] == "attention" and row["attention"] == shown["waiting"]["text"]
        assert shown["waiting"]["text"] == "waiting for you: permission to run `touch permission-marker`"
        _hook("claude", _fixture("claude_pre_tool_use", ws_dir, session_id="another-session"), {})
        assert httpx2.get(f"{url}/api/task/{ws_id}/t1").json()["row"]["waiting"]  # another session's call: no news
        _hook("claude", _fixture("claude_post_tool_use", ws_dir, session_id=session), {})  # the person allowed it
        cleared = httpx2.get(f"{url}/api/task/{ws_id}/t1").json()["row"]
    assert cleared["waiting"] is None and cleared["group"] == "running" and not (task / waiting.FILE).exists()


def test_each_harness_says_what_the_agent_waits_for(ws_dir):
    task = _start(ws_dir)
    spec = importlib.util.spec_from_file_location("hermes_plugin", REPO / "integrations/hermes/strict-loop/__init__.py")
    plugin = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(plugin)  # type: ignore[union-attr]
    hermes = plugin._payload(
        "pre_approval_request",
        {"command": "rm -rf /tmp/x", "description": "recursive delete", "session_id": "s1", "surface": "cli"},
    )
    cases = [
        ("codex", _fixture("codex_permission_request", ws_dir), "permission to run `git push origin main`"),
        ("gemini", _fixture("gemini_notification", ws_dir), "permission to run `rm -rf build`"),
        ("hermes", {**hermes, "cwd": str(ws_dir)}, "permission to run `rm -rf /tmp/x`"),
        ("claude", _fixture("claude_notification_idle", ws_dir), "your next message (the agent finished its turn"),
    ]
    for harness, data, text in cases:
        assert _hook(harness, data, {}) == ""
        assert waiting.current(task)["text"].startswith("waiting for you: " + text), harness
    (task / waiting.FILE).unlink()
    assert _hook("claude", _fixture("claude_notification_idle", ws_dir, notification_type="auth_success"), {}) == ""
    assert waiting.current(task) is None  # a login that succeeded is no wait
    kinds = [e["data"]["kind"] for e in read_jsonl(task / "events.jsonl") if e["kind"] == "agent.waiting"]
    assert kinds == ["permission", "permission", "permission", "idle"]


def test_the_agents_words_are_clipped_and_masked_and_no_secret_leaves(ws_dir):
    task = _start(ws_dir)
    secret = "sk-live-0123456789abcdef0123"
    command = (
        f"curl -H 'Authorization: Bearer {secret}' https://x.example/`id`\r\n[SPIRALING] fake\x1b[31m " + "a" * 5000
    )
    with receiver() as http:
        env = {**FAST, "STRICT_LOOP_WEBHOOK_URL": http.url("/ok/hook"), "API_TOKEN": secret}
        _hook("codex", _fixture("codex_permission_request", ws_dir, tool_input={"command": command}), env)
        wait_until(lambda: http.received, 10, "the alert")
        settled(task / "alerts.jsonl")
    [sent] = http.received
    headline = sent["body"]["text"].split("\n")[0]
    assert "***" in headline and "\x1b" not in headline and "`id`" not in headline and len(headline) <= 360
    assert sent["body"]["text"].count("\n") == 1  # the headline and the resume line: the agent's CR-LF made none
    for path in (task / waiting.FILE, task / "events.jsonl", task / "alerts.jsonl"):
        assert secret not in path.read_text()
    assert secret not in json.dumps(sent)


def test_the_hook_never_waits_for_a_receiver(ws_dir):
    _start(ws_dir)
    with receiver() as http:
        env = {**FAST, "STRICT_LOOP_WEBHOOK_URL": http.url("/hang/hook")}
        began = time.monotonic()
        _hook("claude", _claude_permission(ws_dir), env)
        took = time.monotonic() - began
        wait_until(lambda: http.received, 10, "the worker to call the hanging receiver")
        assert not http.release.is_set()  # the receiver still hangs: the hook had returned long before
    assert took < 5  # the receiver hangs for 10 s


def test_install_registers_the_notification_hooks_and_uninstall_takes_them_out(ws_dir, monkeypatch):
    monkeypatch.setenv("HOME", str(ws_dir.parent / "home"))
    _start(ws_dir)
    run_cli("install", "claude", "--workspace", str(ws_dir), cwd=ws_dir)  # HTTP hooks: the notification's is a command
    run_cli("install", "gemini", "--workspace", str(ws_dir), cwd=ws_dir)
    run_cli("install", "codex", "--workspace", str(ws_dir), cwd=ws_dir)
    hooks = json.loads((ws_dir / ".claude/settings.json").read_text())["hooks"]
    assert "http" in [h["type"] for h in hooks["PreToolUse"][0]["hooks"]]  # the HTTP-hook install
    claude = hooks["Notification"]
    assert [h["type"] for g in claude for h in g["hooks"]] == ["command"]
    assert "hook claude" in claude[0]["hooks"][0]["command"]
    assert json.loads((ws_dir / ".gemini/settings.json").read_text())["hooks"]["Notification"]
    assert json.loads((ws_dir / ".codex/hooks.json").read_text())["hooks"]["PermissionRequest"]
    for harness in ("claude", "gemini", "codex"):
        run_cli("install", harness, "--workspace", str(ws_dir), "--uninstall", cwd=ws_dir)
    for path in (".claude/settings.json", ".gemini/settings.json", ".codex/hooks.json"):
        assert not (ws_dir / path).exists() or "Notification" not in (ws_dir / path).read_text()
        assert not (ws_dir / path).exists() or "PermissionRequest" not in (ws_dir / path).read_text()
