"""``strict-loop dashboard``'s API over real workspaces: the overview of two workspaces, a spiral recorded by the hook
handler shown as paused with its evidence, each answer to a pause leaving the records ``strict-loop resume`` leaves,
rollback previews, text kept as data, and the guard (Host, Origin, page token, bearer token, read-only)."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx2
import pytest
from conftest import read_jsonl, run_cli
from person_rig import person_key
from starlette.testclient import TestClient
from test_hooks import fail_until_paused, hook

from strict_loop import Workspace
from strict_loop.dashboard import guard, server
from strict_loop.storage import workspaces

BASE = "http://127.0.0.1:8780"
XSS = '<script>alert(1)</script><img src=x onerror="alert(2)">'
TOKEN = "a-bearer-token-of-enough-length"
ANSWER_KEY = "the-persons-answer-key-of-this-page"


def client(read_only: bool = False, token: str | None = None, host: str = "127.0.0.1") -> TestClient:
    """A browser that opened the person's answer link (it holds the answer cookie)."""
    access = guard.Access(guard.allowed_hosts(host, 8780, []), token, read_only, answer_key=ANSWER_KEY)
    c = TestClient(server.build(server.Config(access)), base_url=f"http://{host}:8780")
    c.cookies.set(guard.ANSWER_COOKIE, ANSWER_KEY)
    return c


@contextmanager
def serving_page(answer_key: str = ANSWER_KEY) -> Iterator[str]:
    """The page on a real loopback port (uvicorn in a thread, as `strict-loop dashboard` serves it), with the person's
    answer key; its URL until the block ends."""
    import uvicorn

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    access = guard.Access(guard.allowed_hosts("127.0.0.1", port, []), answer_key=answer_key)
    srv = uvicorn.Server(
        uvicorn.Config(server.build(server.Config(access)), host="127.0.0.1", port=port, log_level="error")
    )
    thread = threading.Thread(target=srv.run, daemon=True)
    thread.start()
    while not srv.started:
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        srv.should_exit = True
        thread.join(5)


def page_token(c: TestClient, path: str = "/") -> str:
    html = c.get(path).text
    return re.search(r'name="page-token" content="([^"]+)"', html).group(1)


def post(c: TestClient, ws: str, task: str, body: dict, **headers) -> object:
    if "pause" not in body:  # the pause the page shows, as its script sends it
        shown = c.get(f"/api/task/{ws}/{task}")
        body = {**body, "pause": shown.json()["ladder"]["pause_id"] if shown.status_code == 200 else "1@0"}
    hdrs = {"origin": BASE, "x-strict-loop-page": page_token(c), **headers}
    return c.post(f"/api/task/{ws}/{task}/answer", json=body, headers=hdrs)


def paused_task(ws: Path, goal: str = "Make the tests pass", rounds: int = 2) -> str:
    """A task with ``rounds`` snapshotted rounds (a.txt = round number), then a spiral recorded by the hook."""
    w = Workspace(ws)
    w.init_state(task_id="t1", goal=goal, global_stop_condition="pytest passes", monitor={"snapshots": "on"})
    for n in range(1, rounds + 1):
        (ws / "a.txt").write_text(f"round {n}\n")
        w.update_state(task_id="t1", task=f"round {n}", result_summary="r", verification_summary="v")
    (ws / "a.txt").write_text("after\nthe\nrounds\n")
    (ws / "new.txt").write_text("new\n")
    fail_until_paused(ws)
    return workspaces.workspace_id(ws)


def test_the_overview_lists_every_task_of_two_workspaces_paused_first(tmp_path):
    one, two = tmp_path / "one", tmp_path / "two"
    one.mkdir(), two.mkdir()
    Workspace(two).init_state(task_id="quiet", goal="Other work", global_stop_condition="done")
    ws1 = paused_task(one)
    rows = client().get("/api/overview").json()["tasks"]
    assert [(r["ws"], r["task_id"], r["group"]) for r in rows] == [
        (ws1, "t1", "paused"),
        (workspaces.workspace_id(two), "quiet", "running"),
    ]
    paused = rows[0]
    assert paused["round"] == 2 and paused["harness"] == "claude" and paused["session"]
    assert "Stuck" in paused["diagnosis"] or paused["diagnosis"]
    assert paused["link"] == f"/task/{ws1}/t1"


def test_a_gone_workspace_is_pruned_from_the_index(tmp_path):
    """The workspace folder itself gone (a person's move); a removed .agent-loop/ alone stays: test_hostile_page."""
    one = tmp_path / "one"
    one.mkdir()
    Workspace(one).init_state(task_id="a", goal="g", global_stop_condition="c")
    assert list(workspaces.known().values()) == [one.resolve()]
    import shutil

    shutil.rmtree(one)
    assert workspaces.known() == {}
    assert json.loads(workspaces.index_path().read_text())["workspaces"] == {}
    assert workspaces.index_path().stat().st_mode & 0o777 == 0o600


def test_a_paused_task_shows_its_evidence_turns_and_snapshots(ws_dir):
    ws = paused_task(ws_dir)
    d = client().get(f"/api/task/{ws}/t1").json()
    lad = d["ladder"]
    assert lad["paused"] and lad["signals"] and all(s["evidence"] and s["turns"] for s in lad["signals"])
    assert lad["diagnosis"] and len(lad["whispers"]) == 2
    assert len(d["turns"]) == 8 and all(t["failed"] for t in d["turns"])
    assert [r["iteration"] for r in d["rounds"]] == [1, 2]
    assert d["snapshots"]["rounds"] == [0, 1, 2]  # 0: as it was at init_state
    assert sum(p["calls"] for p in d["plot"]) == 8 and d["plot"][-1]["failures"] == 8
    preview = client().get(f"/api/task/{ws}/t1/rollback/1").json()
    assert {f["path"]: (f["change"], f["lines_added"], f["lines_removed"]) for f in preview["files"]} == {
        "a.txt": ("modified", 1, 3),
        "new.txt": ("deleted", 0, 1),
    }
    assert (ws_dir / "a.txt").read_text() == "after\nthe\nrounds\n"  # a preview changes nothing
    assert client().get(f"/api/task/{ws}/t1/rollback/7").status_code == 400


def normalized(ws: Path) -> tuple[list, dict]:
    """The records an answer leaves, without what differs between twins by nature (time, the path)."""
    drop = {"ts", "since", "saved", "saved_ref", "restored", "commit", "created_at"}

    def clean(v):
        if isinstance(v, dict):
            return {k: clean(x) for k, x in v.items() if k not in drop}
        if isinstance(v, list):
            return [clean(x) for x in v]
        return v.replace(str(ws), "WS") if isinstance(v, str) else v

    events = read_jsonl(ws / ".agent-loop" / "tasks" / "t1" / "events.jsonl")
    events = [e for e in events if e["kind"] in ("spiral.resumed", "workspace.rolled_back", "task.handed_back")]
    events = [{**e, "message": re.sub(r"\(([0-9a-f]{12})\)|before-rollback-\d+", "", e["message"])} for e in events]
    mon = json.loads((ws / ".agent-loop" / "tasks" / "t1" / "monitor.json").read_text())
    return clean(events), clean({k: v for k, v in mon.items() if k != "window"})


@pytest.mark.parametrize(
    "body",
    [
        {"action": "continue", "note": "try the other parser"},
        {"action": "rollback", "to": 1, "note": "back to round 1"},
        {"action": "hand-back", "note": "I take it from here"},
        {"action": "wait", "note": ""},
    ],
    ids=lambda b: b["action"],
)
def test_each_answer_leaves_the_records_the_cli_leaves(tmp_path, body):
    page, cli = tmp_path / "page", tmp_path / "cli"
    page.mkdir(), cli.mkdir()
    ws = paused_task(page)
    paused_task(cli)
    r = post(client(), ws, "t1", body)
    assert r.status_code == 200, r.text
    if body["action"] != "wait":
        args = [
            "resume",
            "--workspace",
            str(cli),
            "--task-id",
            "t1",
            "--action",
            body["action"],
            "--note",
            body["note"],
            "--person-key",
            person_key(),
        ]
        run_cli(*args, *(["--to", str(body["to"])] if "to" in body else []), cwd=tmp_path)
    assert normalized(page) == normalized(cli)
    state = json.loads((page / ".agent-loop" / "tasks" / "t1" / "state.json").read_text())
    paused = json.loads((page / ".agent-loop" / "tasks" / "t1" / "monitor.json").read_text())["paused"]
    if body["action"] == "wait":
        assert paused and state["status"] == "running"
    elif body["action"] == "continue":
        out = hook("codex", "codex_post_tool_use", page)["hookSpecificOutput"]["additionalContext"]
        assert "Resumed by a person" in out and "try the other parser" in out
    elif body["action"] == "rollback":
        assert (page / "a.txt").read_text() == "round 1\n" and not (page / "new.txt").exists()
    else:
        assert state["status"] == "blocked" and (page / ".agent-loop" / "tasks" / "t1" / "handback.md").is_file()


def test_text_from_an_agent_stays_data(ws_dir):
    ws = paused_task(ws_dir, goal=f"Fix {XSS}")
    c = client()
    assert c.get(f"/api/task/{ws}/t1").json()["contract"]["goal"] == f"Fix {XSS}"
    for path in ("/", f"/task/{ws}/t1"):
        html = c.get(path).text
        assert "<script>alert" not in html and "onerror" not in html
    js = c.get("/static/dashboard.js").text
    assert "innerHTML" not in js and "insertAdjacentHTML" not in js
    assert "script-src 'self'" in c.get("/").headers["content-security-policy"]


def test_bad_answers_get_a_4xx_with_a_message(ws_dir):
    ws = paused_task(ws_dir)
    c = client()
    for body, status in (
        ({"action": "explode"}, 400),
        ({"action": "rollback"}, 400),
        ({"action": "continue", "note": 3}, 400),
    ):
        r = post(c, ws, "t1", body)
        assert r.status_code == status and r.json()["error"], (body, r.text)
    for raw in ('{"action": "wait", "x": ' + "[" * 8000 + "]" * 8000 + "}", '{"action": "rollback", "to": NaN}'):
        hdrs = {"origin": BASE, "x-strict-loop-page": page_token(c), "content-type": "application/json"}
        r = c.post(f"/api/task/{ws}/t1/answer", content=raw, headers=hdrs)
        assert r.status_code == 400 and ("deep" in r.json()["error"] or "NaN" in r.json()["error"]), r.text
    r = post(c, ws, "t1", {"action": "rollback", "to": True})
    assert r.status_code == 400 and "round number" in r.json()["error"]
    assert Workspace(ws_dir).supervisor("t1").paused  # nothing was answered
    assert post(c, "0" * 12, "t1", {"action": "continue"}).status_code == 404
    assert post(c, ws, "nope", {"action": "continue"}).status_code == 404
    assert c.get(f"/api/task/{ws}/..%2f..").status_code == 404


@pytest.mark.parametrize("planted", ["fifo", "link"])
def test_a_planted_handback_file_is_named_never_followed_or_waited_on(ws_dir, tmp_path, planted):
    """A FIFO hung every route of the page; a link to /dev/zero filled memory, one to a file showed that file."""
    ws = paused_task(ws_dir)
    path = ws_dir / ".agent-loop" / "tasks" / "t1" / "handback.md"
    if planted == "fifo":
        os.mkfifo(path)
    else:
        (tmp_path / "private.txt").write_text("the person's private notes")
        path.symlink_to(tmp_path / "private.txt")
    shown = client().get(f"/api/task/{ws}/t1").json()["handback"]
    assert shown.startswith("(handback.md is not shown:") and "private notes" not in shown


def test_cross_origin_and_tokenless_posts_are_refused(ws_dir):
    ws = paused_task(ws_dir)
    c = client()
    url = f"/api/task/{ws}/t1/answer"
    good = {"origin": BASE, "x-strict-loop-page": page_token(c)}
    body = {"action": "continue"}
    assert c.post(url, json=body, headers={**good, "origin": "http://evil.example"}).status_code == 403
    assert c.post(url, json=body, headers={"origin": BASE}).status_code == 403
    assert c.post(url, json=body, headers={"x-strict-loop-page": good["x-strict-loop-page"]}).status_code == 403
    assert c.post(url, json=body, headers={**good, "sec-fetch-site": "cross-site"}).status_code == 403
    assert c.get("/api/overview", headers={"host": "evil.example:8780"}).status_code == 421
    assert json.loads((ws_dir / ".agent-loop" / "tasks" / "t1" / "monitor.json").read_text())["paused"]
    ro = client(read_only=True)
    assert post(ro, ws, "t1", body).status_code == 403
    assert 'name="read-only" content="1"' in ro.get("/").text


def test_off_loopback_needs_the_token_and_a_browser_gets_a_cookie(ws_dir):
    paused_task(ws_dir)
    c = client(token=TOKEN, host="10.1.2.3")
    assert c.get("/api/overview").status_code == 401
    assert c.get("/api/overview", headers={"authorization": "Bearer wrong-token-wrong-token"}).status_code == 401
    assert c.get("/api/overview", headers={"authorization": f"Bearer {TOKEN}"}).status_code == 200
    r = c.get(f"/?token={TOKEN}", follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == "/"
    assert "HttpOnly" in r.headers["set-cookie"] and "SameSite=Strict" in r.headers["set-cookie"]
    assert c.get("/api/overview").status_code == 200  # the cookie now
    assert TOKEN not in c.get("/").text and TOKEN not in c.get("/api/overview").text


def test_no_secret_leaves_the_server(ws_dir, monkeypatch):
    monkeypatch.setenv("STRICT_LOOP_WEBHOOK_URL", "https://hooks.example/very-secret-path")
    ws = paused_task(ws_dir, goal="Use https://hooks.example/very-secret-path to report")
    text = client().get(f"/api/task/{ws}/t1").text
    assert "very-secret-path" not in text


def test_cli_refuses_an_open_bind_without_a_token(ws_dir, monkeypatch):
    monkeypatch.delenv(guard.TOKEN_ENV, raising=False)
    out = run_cli("dashboard", "--host", "0.0.0.0", cwd=ws_dir, check=False)
    assert out.returncode == 2 and "no token is set" in out.stderr
    out = run_cli("dashboard", "--workspace", str(ws_dir), cwd=ws_dir, check=False)
    assert out.returncode == 2 and "--workspace" in out.stderr


def test_compute_is_an_answer_without_gpus_or_docker(ws_dir, monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent")
    rep = json.loads(run_cli("compute", "--workspace", str(ws_dir), "--json", cwd=ws_dir).stdout)
    assert rep["gpus"] == [] and rep["containers"] == [] and rep["cpu_count"] >= 1 and rep["disk_free_gb"] > 0
    assert any("no GPU" in n for n in rep["notes"])
    assert client().get("/api/compute").json()["cpu_count"] >= 1


def test_an_alert_carries_the_pages_link_when_a_public_url_is_set(ws_dir):
    env = {"STRICT_LOOP_DASHBOARD_URL": "https://loops.example.org/", "STRICT_LOOP_WEBHOOK_URL": "http://127.0.0.1:9/x"}
    Workspace(ws_dir).init_state(task_id="t1", goal="g", global_stop_condition="c")
    fail_until_paused_with(ws_dir, env)
    line = read_jsonl(ws_dir / ".agent-loop" / "tasks" / "t1" / "alerts.jsonl")[0]
    link = f"https://loops.example.org/task/{workspaces.workspace_id(ws_dir)}/t1"
    assert line["message"]["resume"].startswith(f"answer at {link} or run: strict-loop resume")


def fail_until_paused_with(ws: Path, env: dict) -> None:
    env = {"XDG_CONFIG_HOME": os.environ["XDG_CONFIG_HOME"], **env}  # the alert's outbox: this test's, not the user's
    for _ in range(8):
        hook("claude", "claude_post_tool_use_failure", ws, env=env, tool_input={"command": "pytest -q"})


def test_one_served_process_gives_the_mcp_endpoint_and_the_page(ws_dir):
    """Issue 20: the page mounted inside `strict-loop-mcp --http` at `/`, the MCP endpoint unchanged at /mcp (the app
    that command serves, on a loopback port; its process starting: tests/test_hostile_http.py)."""
    from test_hostile_http import served_here

    from strict_loop import Workspace

    Workspace(ws_dir).init_state(task_id="shown", goal="Be listed", global_stop_condition="never")
    with served_here(ws_dir) as s:
        sid = s.open_session()
        assert s.alive(sid)  # MCP over HTTP as before
        base = s.url.rsplit("/mcp", 1)[0]
        page = s.client.get(base + "/")
        assert page.status_code == 200 and "text/html" in page.headers["content-type"]
        rows = s.client.get(base + "/api/overview").json()["tasks"]
        assert [r["task_id"] for r in rows] == ["shown"]
        assert s.client.post(base + "/api/task/x/shown/answer", json={"action": "wait"}).status_code == 403


def test_a_port_in_use_is_said_before_anything_is_announced(ws_dir):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        out = run_cli("dashboard", "--port", port, cwd=ws_dir, check=False)
        assert out.returncode == 2 and f"cannot listen on 127.0.0.1:{port}" in out.stderr
        assert "strict-loop dashboard: http" not in out.stderr  # no page announced that never served


@pytest.mark.slow  # a real server process: full suite only
def test_the_dashboard_command_serves_the_page_and_a_second_one_on_its_port_is_refused(ws_dir, monkeypatch, capsys):
    """The dashboard's own process serves; a second dashboard and `strict-loop-mcp --http` on its port are refused
    (their main functions, in this process: the refusal, not their processes, is the subject here)."""
    from test_hostile_http import _never_served

    from mcp_server import http_transport
    from mcp_server.server import main
    from strict_loop.dashboard import guard

    Workspace(ws_dir).init_state(task_id="shown", goal="Be listed", global_stop_condition="never")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = str(probe.getsockname()[1])
    cmd = [sys.executable, "-m", "strict_loop", "dashboard", "--port", port, "--workspace", str(ws_dir)]
    proc = subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True)
    try:
        assert "strict-loop dashboard: http://127.0.0.1:" in proc.stderr.readline()  # said once it listens
        rows = httpx2.get(f"http://127.0.0.1:{port}/api/overview", timeout=10).json()["tasks"]
        assert [r["task_id"] for r in rows] == ["shown"]
        monkeypatch.setattr(guard, "serve_on", _never_served)  # a second server that binds fails, never hangs here
        monkeypatch.setattr(http_transport, "serve_on", _never_served)
        second = run_cli("dashboard", "--port", port, "--workspace", str(ws_dir), cwd=ws_dir, check=False)
        assert second.returncode == 2 and "cannot listen on" in second.stderr and "Traceback" not in second.stderr
        for key in [k for k in os.environ if k.startswith("OTEL_")]:
            monkeypatch.delenv(key)  # no exporter left running in this process
        with pytest.raises(SystemExit) as third:
            main(["--workspace", str(ws_dir), "--http", "--port", port])
        assert third.value.code == 2 and "strict-loop-mcp: error: --port: cannot listen on" in capsys.readouterr().err
    finally:
        proc.terminate()
        proc.wait(10)
