"""Issue 26, items 3, 4, 5 and 7: what the page and the pause's alert tell the person is true and whole.

Through the page's JSON API over HTTP (the browser half is in test_dashboard_browser.py): a diagnosis sent whole and
cut only at a word with an ellipsis; the agent's note (left with the CLI, as an agent in a harness leaves it) on the
task's page and in the pause's alert; no ETA for a loop that does not go on; a ``watch`` pause in its own words and
headed ``[JOB FAILED]``; no whisper or "Carry on." where there is nothing to advise; no internal turn numbers; and a
slow rollback (or a slow preview) that holds no other request of the server, ``/mcp`` included.
"""

from __future__ import annotations

import json
import os
import re
import sys
import threading
import time
from pathlib import Path

import httpx2
import pytest
from conftest import read_jsonl, run_cli
from test_dashboard import ANSWER_KEY, client, paused_task, post
from test_hooks import hook
from test_hostile_page import serve

from strict_loop import Workspace
from strict_loop.dashboard import guard, server
from strict_loop.experiments.watch import EXIT_ESCALATED, Watch
from strict_loop.storage import workspaces
from strict_loop.storage.snapshots import Snapshots

FAILURE = (
    "FAILED tests/integration/pricing/test_pricing_engine.py::test_discount_applies_to_bulk_orders - assert 27 == 30"
)
TURN_NUMBER = re.compile(r"\bturns? \d")


def thrash(ws: Path, task_id: str = "t1", goal: str = "Fix the bulk discount") -> str:
    """A task paused by the hooks (as Claude Code calls them) after an agent edited shop/pricing.py six times while
    the same test kept failing: a diagnosis whose main evidence is over 200 characters and ends "did not change it"."""
    Workspace(ws).init_state(task_id=task_id, goal=goal, global_stop_condition="the pricing tests pass")
    (ws / "shop").mkdir(exist_ok=True)
    for k in range(7):
        (ws / "shop" / "pricing.py").write_text(f"RATE = {k}\n")
        edit = {"file_path": str(ws / "shop" / "pricing.py"), "old_string": f"RATE = {k - 1}", "new_string": f"{k}"}
        hook("claude", "claude_post_tool_use", ws, tool_name="Edit", tool_input=edit, tool_response={"ok": True})
        error = f"Exit code 1\n{FAILURE}\n1 failed in 0.{k}3s"
        hook(
            "claude", "claude_post_tool_use_failure_output", ws, tool_input={"command": "pytest -q tests/"}, error=error
        )
    return workspaces.workspace_id(ws)


def note(ws: Path, text: str, task_id: str = "t1") -> None:
    """The agent's note to the person, as an agent in a harness leaves it while paused (the CLI; MCP runs the same
    operation)."""
    run_cli("append_event", "--task-id", task_id, "--kind", "note", "--message", text, cwd=ws)


# -- item 3: whole, or cut at a word with an ellipsis -----------------------------------------------------------------


def test_a_long_diagnosis_reaches_the_page_whole(ws_dir):
    ws = thrash(ws_dir)
    row = client().get("/api/overview").json()["tasks"][0]
    assert row["paused"] and len(row["diagnosis"]) > 200
    assert row["diagnosis"].endswith("between them did not change it")  # before: cut at 200, "... between them did"
    lad = client().get(f"/api/task/{ws}/t1").json()["ladder"]
    assert "did not change it" in lad["diagnosis"] and lad["signals"][0]["evidence"] == row["diagnosis"]


def test_a_text_past_the_pages_bound_is_cut_at_a_word_with_an_ellipsis(ws_dir):
    w = Workspace(ws_dir)
    w.init_state(task_id="t1", goal="g", global_stop_condition="c")
    words = " ".join(f"word{i}" for i in range(2000))  # 13,000 characters
    w.update_state(task_id="t1", task="round 1", result_summary=words, verification_summary="pytest -q: 3 passed")
    shown = client().get(f"/api/task/{workspaces.workspace_id(ws_dir)}/t1").json()["rounds"][0]["result"]
    assert shown.endswith("…") and len(shown) <= 2000  # before: a head and a tail cut mid-word, with a marker
    assert words.startswith(shown[:-1]) and words[len(shown) - 1] == " "  # the cut falls between two words


# -- item 4: the agent's note ----------------------------------------------------------------------------------------


def test_the_agents_note_is_on_the_page_and_in_the_pauses_alert(ws_dir):
    Workspace(ws_dir).init_state(task_id="t1", goal="g", global_stop_condition="c")
    note(ws_dir, "The fixture server needs `DB_URL`; I cannot start it.")  # left before the pause: in its alert
    for _ in range(8):
        hook("claude", "claude_post_tool_use_failure", ws_dir, tool_input={"command": "pytest -q"})
    alert = read_jsonl(ws_dir / ".agent-loop" / "tasks" / "t1" / "alerts.jsonl")[-1]
    assert alert["diagnosis"].startswith("Stuck: ")
    assert alert["diagnosis"].endswith("The agent's note to you: The fixture server needs `DB_URL`; I cannot start it.")
    note(ws_dir, "Paused: I stop here. Please set DB_URL in .env and resume.")  # the one write allowed while paused
    lad = client().get(f"/api/task/{workspaces.workspace_id(ws_dir)}/t1").json()["ladder"]
    assert [(n["text"], n["current"]) for n in lad["notes"]] == [
        ("The fixture server needs `DB_URL`; I cannot start it.", True),
        ("Paused: I stop here. Please set DB_URL in .env and resume.", True),
    ]


def test_a_note_from_before_the_last_answer_is_not_this_pauses(ws_dir):
    ws = paused_task(ws_dir)
    note(ws_dir, "about the first pause")
    assert post(client(), ws, "t1", {"action": "continue"}).status_code == 200
    for _ in range(8):
        hook("claude", "claude_post_tool_use_failure", ws_dir, tool_input={"command": "pytest -q"})
    lad = client().get(f"/api/task/{ws}/t1").json()["ladder"]
    assert lad["paused"] and [n["current"] for n in lad["notes"]] == [False]
    assert "note to you" not in read_jsonl(ws_dir / ".agent-loop" / "tasks" / "t1" / "alerts.jsonl")[-1]["diagnosis"]


def test_a_note_from_an_earlier_round_is_not_this_pauses(ws_dir):
    w = Workspace(ws_dir)
    w.init_state(task_id="t1", goal="g", global_stop_condition="c")
    note(ws_dir, "starting with the parser")
    w.append_event(task_id="t1", kind="round.started", message="Round 1: the tokenizer")
    for _ in range(8):
        hook("claude", "claude_post_tool_use_failure", ws_dir, tool_input={"command": "pytest -q"})
    assert "note to you" not in read_jsonl(ws_dir / ".agent-loop" / "tasks" / "t1" / "alerts.jsonl")[-1]["diagnosis"]
    lad = client().get(f"/api/task/{workspaces.workspace_id(ws_dir)}/t1").json()["ladder"]
    assert lad["paused"] and [(n["text"], n["current"]) for n in lad["notes"]] == [("starting with the parser", False)]


# -- item 5: nothing that is not so -----------------------------------------------------------------------------------


def rounds_done(ws: Path, task_id: str, n: int) -> Workspace:
    w = Workspace(ws)
    w.init_state(task_id=task_id, goal="g", global_stop_condition="c", limits={"max_iterations": 50})
    for i in range(1, n + 1):
        w.update_state(task_id=task_id, task=f"round {i}", result_summary="r", verification_summary="v")
    return w


def test_no_eta_for_a_loop_that_does_not_go_on_and_no_whisper_line_for_a_pause(ws_dir):
    w = rounds_done(ws_dir, "going", 2)
    rounds_done(ws_dir, "done", 2).update_state(
        task_id="done", task="round 3", result_summary="r", verification_summary="v", status="completed"
    )
    for _ in range(8):
        hook("claude", "claude_post_tool_use_failure", ws_dir, tool_input={"command": "pytest -q"})
    assert w.detect_spiral(task_id="going").paused  # the hook's turns go to the running task, which pauses
    rows = {r["task_id"]: r for r in client().get("/api/overview").json()["tasks"]}
    assert rows["done"]["status"] == "completed" and rows["done"]["eta_s"] is None  # before: "completed, ETA 4.6 h"
    assert rows["going"]["paused"] and rows["going"]["eta_s"] is None
    assert rows["going"]["attention"] is None and rows["going"]["whisper"] is None  # before: "whispered (level 3)"


def test_a_completed_task_shows_no_old_whisper_and_no_advice(ws_dir):
    w = rounds_done(ws_dir, "t1", 1)
    for _ in range(4):  # a whisper, not yet a pause
        hook("claude", "claude_post_tool_use_failure", ws_dir, tool_input={"command": "pytest -q"})
    assert w.detect_spiral(task_id="t1").level >= 1
    row = client().get("/api/overview").json()["tasks"][0]
    assert row["whisper"]["text"] and row["attention"]  # running: said
    w.update_state(task_id="t1", task="round 2", result_summary="r", verification_summary="v", status="completed")
    row = client().get("/api/overview").json()["tasks"][0]
    assert row["status"] == "completed" and row["whisper"] is None and row["attention"] is None
    lad = client().get(f"/api/task/{workspaces.workspace_id(ws_dir)}/t1").json()["ladder"]
    assert lad["recommended_action"] == "" and lad["signals"] == []
    assert lad["diagnosis"] == "The loop is completed: the monitor no longer watches it."


@pytest.mark.parametrize("action", ["rollback", "hand-back"])
def test_after_an_answer_the_card_says_the_answer_and_advises_nothing(ws_dir, action):
    ws = paused_task(ws_dir)
    body = {"action": action, "note": "my call", **({"to": 1} if action == "rollback" else {})}
    assert post(client(), ws, "t1", body).status_code == 200
    lad = client().get(f"/api/task/{ws}/t1").json()["ladder"]
    assert not lad["paused"] and lad["recommended_action"] == ""  # before: "Carry on."
    assert lad["answered"]["action"] == action and lad["answered"]["text"].endswith("Your note: my call")


def test_no_text_of_the_page_names_an_internal_turn_number(ws_dir):
    ws = paused_task(ws_dir)
    d = client().get(f"/api/task/{ws}/t1").json()
    said = [
        d["ladder"]["diagnosis"],
        *(w["text"] for w in d["ladder"]["whispers"]),
        *(a["diagnosis"] for a in d["alerts"]),
    ]
    said += [s["evidence"] for s in d["ladder"]["signals"]]
    assert "Already suggested 2 time(s), not adopted." in d["ladder"]["diagnosis"]  # before: "(turns 3, 4)"
    assert not [t for t in said if TURN_NUMBER.search(t)]
    assert all(w["ts"] for w in d["ladder"]["whispers"])  # each whisper is placed in time instead


def test_a_watch_pause_is_shown_in_its_own_words_and_alerted_as_a_failed_job(ws_dir):
    w = Workspace(ws_dir)
    w.init_state(task_id="t", goal="Train the model", global_stop_condition="the run finishes")
    (ws_dir / "job.py").write_text(
        'print("step 0 loss 1.0", flush=True)\nraise ModuleNotFoundError("No module named \'torchx\'")\n'
    )
    result = Watch(
        ws_dir, "t", [sys.executable, "-I", "-S", "job.py"], {"heartbeat_s": 3600}, env=dict(os.environ)
    ).run()
    assert result.exit_code == EXIT_ESCALATED
    alert = read_jsonl(ws_dir / ".agent-loop" / "tasks" / "t" / "alerts.jsonl")[-1]
    assert alert["message"]["headline"].startswith("[JOB FAILED] t: strict-loop watch: ")  # before: [SPIRALING]
    lad = client().get(f"/api/task/{workspaces.workspace_id(ws_dir)}/t").json()["ladder"]
    assert lad["paused"] and lad["paused_by"] == "strict-loop watch (the job failed)"
    assert lad["recommended_action"] == alert["recommended_action"]  # the failure's own advice, not a generic remedy
    assert lad["recent"] == alert["recent"] and lad["recent"][0].startswith("run 1: ")
    assert lad["diagnosis"] == alert["diagnosis"]


# -- item 7: blocking work off the event loop -------------------------------------------------------------------------


def held(monkeypatch, name: str) -> tuple[threading.Event, threading.Event]:
    """``Snapshots.<name>`` made slow: it waits (at most 10 s) until the test lets it go on; (entered, release)."""
    entered, release = threading.Event(), threading.Event()
    original = getattr(Snapshots, name)

    def slow(self, *args, **kwargs):
        entered.set()
        release.wait(10)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(Snapshots, name, slow)
    return entered, release


def in_background(call) -> tuple[threading.Thread, list]:
    out: list = []
    thread = threading.Thread(target=lambda: out.append(call()), daemon=True)
    thread.start()
    return thread, out


def test_a_slow_rollback_holds_no_other_request_of_the_page(ws_dir, monkeypatch):
    ws = paused_task(ws_dir)
    pause = client().get(f"/api/task/{ws}/t1").json()["ladder"]["pause_id"]
    entered, release = held(monkeypatch, "restore")

    def app(port: int):
        access = guard.Access(guard.allowed_hosts("127.0.0.1", port, []), answer_key=ANSWER_KEY)
        return server.build(server.Config(access))

    with serve(app) as (port, _):
        base = f"http://127.0.0.1:{port}"
        token = re.search(r'name="page-token" content="([^"]+)"', httpx2.get(base + "/").text).group(1)
        headers = {"origin": base, "x-strict-loop-page": token, "cookie": f"{guard.ANSWER_COOKIE}={ANSWER_KEY}"}
        body = {"action": "rollback", "to": 1, "pause": pause}
        thread, out = in_background(
            lambda: httpx2.post(base + f"/api/task/{ws}/t1/answer", json=body, headers=headers, timeout=30)
        )
        try:
            assert entered.wait(10)
            started = time.monotonic()
            assert httpx2.get(base + "/api/overview", timeout=3).status_code == 200  # before: waited for the rollback
            assert time.monotonic() - started < 3
        finally:
            release.set()
            thread.join(30)
    assert out[0].status_code == 200 and json.loads(out[0].text)["action"] == "rollback"
    assert (ws_dir / "a.txt").read_text() == "round 1\n"


@pytest.mark.slow  # about a second or more of waiting on processes: the fast tier stays under 30 s
def test_a_slow_rollback_preview_holds_no_agents_mcp_call(ws_dir, monkeypatch):
    """``strict-loop-mcp --http``: the page and the agents' ``/mcp`` share one server."""
    from mcp_server import http_transport
    from mcp_server.server import build_server, parse_args

    ws = paused_task(ws_dir)
    entered, release = held(monkeypatch, "preview")

    def app(port: int):
        http = http_transport.settings(parse_args(["--http", "--port", str(port)]))
        return http_transport.build_app(build_server(ws_dir), http)

    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
    }
    with serve(app) as (port, _):
        base = f"http://127.0.0.1:{port}"
        thread, out = in_background(lambda: httpx2.get(base + f"/api/task/{ws}/t1/rollback/1", timeout=30))
        try:
            assert entered.wait(10)
            headers = {"Accept": "application/json, text/event-stream"}
            r = httpx2.post(base + "/mcp", json=init, headers=headers, timeout=3)  # before: waited for the preview
            assert r.status_code == 200 and "serverInfo" in r.text
        finally:
            release.set()
            thread.join(30)
    assert out[0].status_code == 200 and out[0].json()["to"] == 1
