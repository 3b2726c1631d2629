"""Issue 29's "Done when" for budgets in an interactive session: the real Claude Code binary, driven by a scripted model
on loopback, works on a task whose person gave it a budget of ``N`` tool calls. The hooks ``strict-loop install``
wrote, and nothing else (the model never calls a loop tool), whisper at 80%, pause the task at ``N`` and refuse the
call after it; the person raises the budget on the page (over HTTP, with the answer cookie their answer link set)
while the session waits for its model, and the session's next call runs and is recorded. The session is started
with the workspace's hook token, as the install tells a person to: its calls reach the warm endpoint over HTTP (a
paused task's PreToolUse goes to the full hook, by the pause flag the budget's pause set).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import httpx2
import pytest
from conftest import read_jsonl, run_cli
from model_servers import AnthropicModel, Final, Shell, Step, strings
from test_dashboard import ANSWER_KEY, serving_page
from test_harness_e2e import _harness, _run_detail

from strict_loop import Workspace
from strict_loop.harness import daemon
from strict_loop.storage import workspaces

pytestmark = pytest.mark.slow
TASK = "budgeted"
N = 5
WHISPER = "[strict-loop budget] Most of this task's budget is spent (tool calls: 4 of 5 (80%))"


@dataclass(frozen=True)
class Meanwhile:
    """A step the scripted model takes before answering the request it holds: ``action`` runs (the person acts while
    the session waits for its model), then the next step answers the request."""

    action: Callable[[], None] = field(hash=False)


class PersonActs(AnthropicModel):
    """The Anthropic scripted model that also plays :class:`Meanwhile` steps."""

    def take(self, body: dict) -> Step:
        step = super().take(body)
        if isinstance(step, Meanwhile):
            step.action()
            with self._lock:
                step = self._advance()
        return step


def raise_on_the_page(base: str, ws_id: str, limit: int, seen: dict) -> None:
    """The person opens their answer link (the cookie), reads the task's Budget card and sets ``limit`` there; what
    they saw goes into ``seen`` (an error too: the test reports it, the model server's thread would lose it)."""
    try:
        seen.update(_raise(base, ws_id, limit))
    except Exception as exc:  # noqa: BLE001
        seen["error"] = repr(exc)


def _raise(base: str, ws_id: str, limit: int) -> dict:
    with httpx2.Client(timeout=30) as browser:
        opened = browser.get(f"{base}/?answer={ANSWER_KEY}", follow_redirects=False)
        shown = browser.get(f"{base}/api/task/{ws_id}/{TASK}").json()
        token = re.search(r'name="page-token" content="([^"]+)"', browser.get(f"{base}/").text).group(1)
        headers = {"origin": base, "x-strict-loop-page": token}
        done = browser.post(f"{base}/api/task/{ws_id}/{TASK}/budget", json={"max_tool_calls": limit}, headers=headers)
    return {"opened": opened.status_code, "shown": shown, "status": done.status_code, "answer": done.json()}


def test_claude_a_tool_call_budget_whispers_at_80_percent_pauses_at_n_and_a_raise_on_the_page_lets_it_go_on(
    tmp_path: Path, monkeypatch
):
    harness = _harness("claude", tmp_path)
    work = tmp_path / "w"
    work.mkdir()
    monkeypatch.setenv("HOME", str(harness.home))  # `strict-loop install` writes the session's HOME
    run_cli("install", "claude", "--workspace", str(work), cwd=work)
    harness.mcp = False  # only the hooks are under test: the MCP server the install configured is not started
    # a session started with the workspace's hook token, as the install says: its calls go to the warm endpoint
    record = daemon.read_record(work, os.environ)
    assert record is not None
    hook_token = {daemon.TOKEN_ENV: record["token"]}
    goal = ("--goal", "Write the five notes", "--global-stop-condition", "the notes exist")
    run_cli("init_state", "--task-id", TASK, *goal, "--max-tool-calls", str(N), cwd=work)  # the person's budget
    ws, ws_id = Workspace(work), workspaces.workspace_id(work)
    page: dict = {}
    steps = [Shell(f"echo note {k} > note{k}.txt") for k in range(1, N + 1)]  # the N calls the budget allows
    steps += [
        Shell("touch refused-marker"),  # paused: refused before it runs
        Meanwhile(lambda: raise_on_the_page(base, ws_id, 2 * N, page)),  # the session waits for its model
        Shell("touch raised-marker"),  # after the raise: runs
        Final("All notes written."),
    ]
    with serving_page() as base, PersonActs(steps) as model:
        proc = harness.run("Write the five notes, then the marker.", work, model.url, extra_env=hook_token)
    events = read_jsonl(ws.task_paths(TASK).events)
    detail = (
        _run_detail(proc, model)
        + f"\npage: {json.dumps(page)[:2000]}\nevents:\n"
        + "\n".join(f"{e['kind']}: {str(e.get('message', ''))[:200]}" for e in events)
    )
    asked = [list(strings(body)) for body in model.model_requests]

    def first_with(text: str) -> int:
        return next((i for i, said in enumerate(asked) if any(text in s for s in said)), -1)

    # The N calls ran; the 4th (80%) whispered, and the model got the whisper with that call's result, not before.
    assert all((work / f"note{k}.txt").is_file() for k in range(1, N + 1)), detail
    assert first_with(WHISPER) == 4, detail
    assert [e["kind"] for e in events].count("budget.whisper") == 1, detail

    # The N-th call paused the task (an alert says which budget, and how to raise it); the call after it was refused.
    paused = [e for e in events if e["kind"] == "spiral.paused"]
    assert len(paused) == 1 and "Budget spent: tool calls: 5 of 5 (100%)" in paused[0]["message"], detail
    alerts = read_jsonl(ws.task_paths(TASK).alerts)
    assert [a["signals"][0]["kind"] for a in alerts] == ["budget_spent"], detail
    assert first_with("Budget spent: tool calls: 5 of 5 (100%)") == N, detail  # with the N-th call's result
    assert not (work / "refused-marker").exists(), detail
    assert first_with("PAUSED") == N, detail
    results = [b for b in model.model_requests[N + 1]["messages"][-1]["content"] if b.get("type") == "tool_result"]
    assert len(results) == 1 and results[0].get("is_error"), detail  # the refusal, as the call's result
    assert "PAUSED by the strict-loop progress monitor: Budget spent" in json.dumps(results[0]), detail

    # The person saw the spent budget on the page, raised it there with the answer cookie, and the task went on.
    assert page.get("opened") == 303 and page["shown"]["ladder"]["paused"], detail
    assert page["shown"]["budget"][0]["text"] == "tool calls: 5 of 5 (100%)", detail
    assert page["status"] == 200 and page["answer"]["resumed"] is True, detail
    assert "tool calls: 5 of 10 (50%); the task paused by its budget goes on" in page["answer"]["detail"], detail

    # The session's next call ran and was recorded, after the raise and the resume, and was counted (6 of 10).
    assert (work / "raised-marker").is_file(), detail
    kinds = [e["kind"] for e in events]
    assert kinds.index("budget.changed") < kinds.index("spiral.resumed") < len(kinds) - 1, detail
    after = [e["data"] for e in events[kinds.index("spiral.resumed") :] if e["kind"] == "tool_call"]
    assert ["raised-marker" in json.dumps(t["args"]) for t in after] == [True], detail
    assert any("Resumed by a person (continue)" in s for s in asked[-1]), detail
    assert json.loads((ws.task_paths(TASK).root / "budget.json").read_text())["tool_calls"] == N + 1, detail
    assert not ws.supervisor(TASK).paused and proc.returncode == 0, detail
