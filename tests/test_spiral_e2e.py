"""The two seed scenarios end to end over MCP, the webhook, pause on every tool, and resume."""

from __future__ import annotations

import json
import os
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import pytest
from alert_rig import FAST, settled
from conftest import git, git_repo, read_jsonl, run_cli, run_script, tree_digest
from mcp_helpers import call, memory_client, stdio_client
from person_rig import person_key

from strict_loop import LoopError, Workspace
from strict_loop.storage.trust import TrustStore

pytestmark = pytest.mark.anyio

ORDERS = [
    "cuda-python -> tensorrt -> torch -> tensorrt-llm",
    "tensorrt -> cuda-python -> torch -> tensorrt-llm",
    "tensorrt (dev) -> torch -> cuda-python -> tensorrt-llm",
    "torch (minimal) -> tensorrt -> cuda-python -> tensorrt-llm",
    "torch (cuda) -> tensorrt -> cuda-python -> tensorrt-llm",
    "cuda-python (stub) -> torch -> tensorrt -> tensorrt-llm",
]
FAILURES = [
    "ModuleNotFoundError: No module named 'torch'",
    "fatal error: NvInfer.h: No such file or directory",
    "error: cuda-python is required at build time for JIT support",
    "ImportError: torch was built without CUDA support",
    "error: cuda-python>=11.8 is required",
    "error: cuda-python has no stub build mode",
]


def build_turn(i: int) -> dict:
    return {
        "tool": "bash",
        "args": {"command": f"./build.sh --order '{ORDERS[i]}'"},
        "error": True,
        "exit_code": 1,
        "thought": f"Attempting build order {i + 1}: {ORDERS[i]}",
        "output": f"[build {i + 1}] step 4/6 failed\n{FAILURES[i]}\nerror: circular dependency detected: tensorrt -> "
        "cuda-python -> torch -> tensorrt",
    }


class Hook(BaseHTTPRequestHandler):
    received: list[dict] = []
    fail_first = 0

    def do_POST(self):  # noqa: N802
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if Hook.fail_first > 0:
            Hook.fail_first -= 1
            self.send_response(503)
        else:
            Hook.received.append({"path": self.path, "body": body})
            self.send_response(200)
        self.end_headers()

    def log_message(self, *args):
        pass


@pytest.fixture
def webhook():
    Hook.received, Hook.fail_first = [], 0
    server = HTTPServer(("127.0.0.1", 0), Hook)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}/hooks/SECRET-TOKEN-4242", Hook
    server.shutdown()


@pytest.mark.slow  # the real server process: full suite only (the churn seed runs in-memory in the fast tier)
async def test_seed_build_cycle_whisper_whisper_pause_alert(ws_dir, webhook):
    url, hook = webhook
    hook.fail_first = 1  # the first delivery attempt fails: delivery is retried
    ladder = []
    env = {"STRICT_LOOP_WEBHOOK_URL": url, "XDG_CONFIG_HOME": os.environ["XDG_CONFIG_HOME"], **FAST}
    async with stdio_client(ws_dir, env=env) as client:
        await call(
            client,
            "init_state",
            task_id="trt",
            goal="Package tensorrt-llm for jetson-containers",
            global_stop_condition="the image builds and imports",
            operating_mode="unattended",
            stop_checks={"paths_exist": ["image.built"]},
        )
        for i in range(6):
            err, out, text = await call(
                client, "append_event", task_id="trt", kind="tool_call", message=f"build {i + 1}", data=build_turn(i)
            )
            assert not err, text
            sup = out["supervisor"]
            ladder.append("pause" if sup["paused"] else "+".join(str(m["level"]) for m in sup["messages"]) or "-")
        assert ladder == ["-", "-", "-", "1", "2", "pause"]  # the stronger whisper supersedes the ignored one
        assert "PAUSED" in text
        # While paused, every tool result tells the agent to stop and wait.
        calls = [
            ("append_event", {"kind": "note", "message": "trying build 7"}),
            ("check_stop", {}),
            ("report_status", {}),
            ("show_task", {}),
            ("detect_spiral", {}),
            ("compact_state", {}),
            ("rebuild_state", {}),
        ]
        for tool, args in calls:
            err, out, text = await call(client, tool, task_id="trt", **args)
            assert not err and out["supervisor"]["paused"] is True and text.startswith("PAUSED"), tool
        # ... and no round can be recorded until a person answers.
        err, _, text = await call(
            client,
            "update_state",
            task_id="trt",
            task="build 7",
            result_summary="failed",
            verification_summary="build.sh exit 1",
            progress="none",
        )
        assert (
            err
            and "is paused by the progress monitor" in text
            and "--task trt --action continue|rollback|hand-back" in text
        )
        err, verdict, _ = await call(client, "detect_spiral", task_id="trt")
        assert verdict["paused"] and verdict["level"] == 3 and verdict["detected"]
        assert (
            "circular dependency" in verdict["diagnosis"]
            and "tried 6 different actions in 6 turns" in verdict["diagnosis"]
        )
        assert "not adopted" in verdict["diagnosis"] and "multi-stage" in verdict["recommended_action"]
        assert len(verdict["recent"]) == 5 and "resume" in verdict["recommended_action"]
    task = ws_dir / ".agent-loop" / "tasks" / "trt"
    (alert,) = settled(task / "alerts.jsonl")  # delivered by the outbox worker, after the agent's call returned
    assert (
        alert["delivery"]["webhook"] == "delivered after 2 attempt(s)" and "circular dependency" in alert["diagnosis"]
    )
    (received,) = hook.received
    assert received["path"] == "/hooks/SECRET-TOKEN-4242" and received["body"]["text"].startswith("[SPIRALING] trt:")
    kinds = [e["kind"] for e in read_jsonl(task / "events.jsonl")]
    assert kinds.count("spiral.whisper") == 2 and kinds.count("spiral.paused") == 1 and kinds.count("spiral.alert") == 1
    for path in (ws_dir / ".agent-loop").rglob("*"):  # the webhook URL is never written down
        if path.is_file():
            assert b"SECRET-TOKEN" not in path.read_bytes() and b"127.0.0.1:" not in path.read_bytes(), path
    # A person resumes from the command line; the signal is muted for the cooldown.
    answer = ("resume", "trt", "--action", "continue", "--workspace", str(ws_dir), "--person-key", person_key())
    proc = run_cli(*answer, cwd=ws_dir.parent, check=False)
    assert proc.returncode == 0 and "repeated_error" in proc.stdout
    ws = Workspace(ws_dir)
    assert ws.supervisor("trt").paused is False
    for i in range(3):
        ws.append_event(task_id="trt", kind="tool_call", message="build again", data=build_turn(i))
    assert ws.detect_spiral(task_id="trt").level == 0  # muted for cooldown_turns


@pytest.mark.slow  # a real server process or seconds of waiting: full suite only
async def test_webhook_failure_is_recorded_and_never_fatal(ws_dir):
    ws = Workspace(ws_dir)
    ws.init_state(task_id="w", goal="g", global_stop_condition="c")
    env = {"STRICT_LOOP_WEBHOOK_URL": "http://127.0.0.1:9/hooks/SECRET-TOKEN-9", **FAST}  # nothing listens on port 9
    os.environ.update(env)
    try:
        stuck = {
            "tool": "bash",
            "args": {"command": "cd fastxml/"},
            "output": "No such file or directory",
            "error": True,
        }
        for _ in range(6):
            ws.append_event(task_id="w", kind="tool_call", message="cd", data=stuck)
    finally:
        for name in env:
            del os.environ[name]
    (alert,) = settled(ws.task_paths("w").alerts)
    assert alert["delivery"]["webhook"].startswith("failed after 3 attempt(s): ")
    assert "SECRET-TOKEN" not in json.dumps(alert) and "127.0.0.1" not in json.dumps(alert)
    assert ws.supervisor("w").paused


async def test_seed_edit_view_churn_on_index_html(ws_dir):
    page = ws_dir / "index.html"
    base = "<html><style>main{}</style><main>\n<p>hello</p>\n</main></html>\n"
    inserted = base.replace("<main>\n", "<main>\n<div class=tabs>\n")
    misplaced = base.replace("</main>", "<div class=tabs></div></main>")
    broken_style = inserted.replace("main{}", "main{")
    steps = [  # (file content after the turn or None for a view, tool, thought)
        (inserted, "Edit", "insert the tab wrapper after <main>"),
        (None, "Read", "the insert went to the wrong place, let me look"),
        (misplaced, "Edit", "re-insert the wrapper"),
        (None, "Read", "the file is getting messed up, let me look"),
        (inserted, "Edit", "let me restore the earlier version"),
        (broken_style, "Edit", "I broke the <style> block, fixing it"),
        (inserted, "Edit", "try to fix the style again"),
        (misplaced, "Edit", "this isn't working, one more try"),
    ]
    page.write_text(base)
    ladder = []
    async with memory_client(
        ws_dir
    ) as client:  # the MCP process boundary is the first seed's; this one is the monitor's
        await call(
            client, "init_state", task_id="tabs", goal="Add tabs to index.html", global_stop_condition="tabs render"
        )
        for content, tool, thought in steps:
            if content is not None:
                page.write_text(content)
            turn = {
                "tool": tool,
                "args": {"file_path": "index.html", **({"new_string": content[-40:]} if content else {})},
                "output": "ok" if content else page.read_text(),
                "thought": thought,
            }
            err, out, text = await call(
                client, "append_event", task_id="tabs", kind="tool_call", message=thought, data=turn
            )
            assert not err, text
            ladder.append(
                "pause"
                if out["supervisor"]["paused"]
                else max((m["level"] for m in out["supervisor"]["messages"]), default=0)
            )
        err, verdict, _ = await call(client, "detect_spiral", task_id="tabs")
    assert ladder[:4] == [0, 0, 0, 0] and ladder[4] == 1 and ladder[5] == 2 and ladder[6] == "pause"
    assert verdict["paused"] and "index.html" in verdict["diagnosis"]
    assert {s["kind"] for s in verdict["signals"]} & {"file_oscillation"}


async def test_detect_spiral_on_a_list_touches_nothing(ws_dir):
    Workspace(ws_dir).init_state(task_id="t", goal="g", global_stop_condition="c")
    before = tree_digest(ws_dir)
    stuck = {
        "tool": "bash",
        "args": {"command": "javac Repro.java"},
        "output": "bash: line 3: javac: command not found",
        "error": True,
    }
    async with memory_client(ws_dir) as client:
        err, out, text = await call(client, "detect_spiral", turns=[stuck] * 6)
        assert not err and out["detected"] and out["level"] == 3 and out["fired_at"] == 3
        assert (
            "command not found" in out["diagnosis"]
            and "which" in out["recommended_action"]
            and "resume" in out["recommended_action"]
        )
        err, out, _ = await call(
            client,
            "detect_spiral",
            turns=[{"tool": "bash", "args": {"command": f"ls d{i}"}, "output": f"f{i}"} for i in range(6)],
        )
        assert not err and not out["detected"]
        err, _, text = await call(client, "detect_spiral", turns=[{"tool": 5}])
        assert err and "detect_spiral.turns.0.tool" in text
        err, _, text = await call(
            client, "append_event", task_id="t", kind="tool_call", message="m", data={"args": "not an object"}
        )
        assert err and "append_event.data.args" in text
    assert tree_digest(ws_dir) == before


def test_rollback_restores_a_round_and_loses_nothing(ws_dir):
    git_repo(ws_dir)
    head, branch = git(ws_dir, "rev-parse", "HEAD"), git(ws_dir, "branch", "--show-current")
    ws = Workspace(ws_dir)
    ws.init_state(task_id="rb", goal="g", global_stop_condition="c")  # snapshots are 'auto': on in a git repository
    (ws_dir / "a.txt").write_text("v1\n")
    (ws_dir / "b.txt").write_text("b1\n")
    ws.update_state(task_id="rb", task="round 1", result_summary="r", verification_summary="v")
    (ws_dir / "a.txt").write_text("v2\n")
    (ws_dir / "b.txt").unlink()
    (ws_dir / "c.txt").write_text("c2 precious\n")
    git(ws_dir, "add", "c.txt")  # the person's own staged change
    ws.update_state(task_id="rb", task="round 2", result_summary="r", verification_summary="v")
    (ws_dir / "d.txt").write_text("written after round 2\n")
    out = run_cli(
        "resume",
        "--task-id",
        "rb",
        "--action",
        "rollback",
        "--to",
        "1",
        "--workspace",
        str(ws_dir),
        "--json",
        "--person-key",
        person_key(),
        cwd=ws_dir.parent,
    ).stdout
    result = json.loads(out)
    assert (ws_dir / "a.txt").read_text() == "v1\n" and (ws_dir / "b.txt").read_text() == "b1\n"
    assert not (ws_dir / "c.txt").exists() and not (ws_dir / "d.txt").exists()
    # Nothing is lost: the tree as it was is in the private snapshot store.
    store = ["git", "--git-dir", str(ws_dir / ".agent-loop" / "snapshots.git")]
    saved = result["saved_commit"]
    show = lambda path: (
        subprocess.run([*store, "show", f"{saved}:{path}"], capture_output=True, text=True, check=True).stdout
    )  # noqa: E731
    assert show("c.txt") == "c2 precious\n" and show("d.txt") == "written after round 2\n" and show("a.txt") == "v2\n"
    # and the answer says how to get it back: its recipe, run as written, gives the tree as it was
    recipe = result["detail"].split("to get it back into a folder: ", 1)[1].replace("DIR", str(ws_dir.parent / "got"))
    (ws_dir.parent / "got").mkdir()
    subprocess.run(recipe, shell=True, cwd=ws_dir, check=True)
    assert (ws_dir.parent / "got" / "d.txt").read_text() == "written after round 2\n"
    # The person's repository is untouched: HEAD, branch, index, refs.
    assert git(ws_dir, "rev-parse", "HEAD") == head and git(ws_dir, "branch", "--show-current") == branch
    assert git(ws_dir, "diff", "--cached", "--name-only") == "c.txt"
    assert "strict-loop" not in git(ws_dir, "for-each-ref")
    # The loop's own history is not rolled back.
    assert ws.show_task(task_id="rb").state.counters.iteration == 2
    with pytest.raises(LoopError, match="there is no snapshot of round 7"):
        ws.resume(task_id="rb", action="rollback", to=7)


def test_hand_back_ends_the_loop_as_blocked_with_a_summary(ws_dir):
    ws = Workspace(ws_dir)
    ws.init_state(task_id="hb", goal="Fix the importer", global_stop_condition="c")
    with pytest.raises(LoopError, match="is not paused"):
        ws.resume(task_id="hb", action="continue")
    stuck = {"tool": "bash", "args": {"command": "python import.py"}, "output": "KeyError: 'id'", "error": True}
    for _ in range(6):
        ws.append_event(task_id="hb", kind="tool_call", message="run", data=stuck)
    assert ws.supervisor("hb").paused
    result = ws.resume(task_id="hb", action="hand-back", note="I will look at the data file myself")
    text = Path(result.handback_file).read_text()
    assert "Fix the importer" in text and "KeyError" in text and "I will look at the data file myself" in text
    state = ws.show_task(task_id="hb").state
    assert state.status == "blocked" and state.needs_human_input and "handed back" in state.stop_reason
    assert ws.check_stop(task_id="hb").verdict == "blocked" and not ws.supervisor("hb").paused


def test_damaged_monitor_state_is_rebuilt_from_the_ledger(ws_dir):
    ws = Workspace(ws_dir)
    ws.init_state(task_id="m", goal="g", global_stop_condition="c")
    stuck = {"tool": "bash", "args": {"command": "make"}, "output": "make: *** No rule to make target", "error": True}
    for _ in range(4):
        ws.append_event(task_id="m", kind="tool_call", message="make", data=stuck)
    assert ws.detect_spiral(task_id="m").level == 1
    ws.task_paths("m").monitor.write_text('{"turns": "many"')
    fresh = Workspace(ws_dir)
    assert fresh.detect_spiral(task_id="m").turns_seen == 4
    fresh.append_event(task_id="m", kind="tool_call", message="make", data=stuck)
    assert fresh.detect_spiral(task_id="m").detected


def test_replay_cli_prints_where_and_why(tmp_path):
    traj = tmp_path / "run.jsonl"
    stuck = {
        "tool": "bash",
        "args": {"command": "cd fastjson/"},
        "output": "bash: line 9: cd: fastjson/: No such file or directory",
        "error": True,
    }
    traj.write_text("\n".join(json.dumps(dict(stuck, turn=i)) for i in range(6)) + "\n")
    proc = run_cli("replay", str(traj), cwd=tmp_path, check=False)
    assert proc.returncode == 0
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("turn 3: whisper -- identical_calls") and lines[1].startswith("turn 4: second whisper")
    assert lines[2].startswith("turn 5: PAUSE + alert")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"tool": "bash"}\nnot json\n')
    proc = run_cli("replay", str(bad), cwd=tmp_path, check=False)
    assert proc.returncode == 2 and "bad.jsonl line 2: is not valid JSON" in proc.stderr


def test_thresholds_are_overridable_per_workspace_and_per_task(ws_dir):
    (ws_dir / ".agent-loop").mkdir()
    (ws_dir / ".agent-loop" / "monitor-defaults.json").write_text(
        json.dumps({"thresholds": {"identical_repeats": 3, "identical_window": 5}, "cooldown_turns": 4})
    )
    TrustStore().record_defaults(ws_dir, (ws_dir / ".agent-loop" / "monitor-defaults.json").read_bytes())
    run_script("init_state", "--task-id", "strict", "--goal", "g", "--global-stop-condition", "c", cwd=ws_dir)
    run_script(
        "init_state",
        "--task-id",
        "lenient",
        "--goal",
        "g",
        "--global-stop-condition",
        "c",
        "--monitor",
        '{"thresholds": {"identical_repeats": 6}}',
        cwd=ws_dir,
    )
    ws = Workspace(ws_dir)
    strict = ws.show_task(task_id="strict").state.contract.monitor
    lenient = ws.show_task(task_id="lenient").state.contract.monitor
    assert (strict.thresholds.identical_repeats, strict.thresholds.identical_window, strict.cooldown_turns) == (3, 5, 4)
    assert (lenient.thresholds.identical_repeats, lenient.thresholds.identical_window, lenient.cooldown_turns) == (
        6,
        5,
        4,
    )
    stuck = {"tool": "bash", "args": {"command": "cd fastxml/"}, "output": "No such file or directory", "error": True}
    for task in ("strict", "lenient"):
        for _ in range(3):
            ws.append_event(task_id=task, kind="tool_call", message="cd", data=stuck)
    assert ws.detect_spiral(task_id="strict").detected and not ws.detect_spiral(task_id="lenient").detected
    proc = run_script(
        "init_state",
        "--task-id",
        "typo",
        "--goal",
        "g",
        "--global-stop-condition",
        "c",
        "--monitor",
        '{"thresholds": {"identical_repeat": 3}}',
        cwd=ws_dir,
        check=False,
    )
    assert proc.returncode == 2 and "thresholds.identical_repeat: Extra inputs are not permitted" in proc.stderr
