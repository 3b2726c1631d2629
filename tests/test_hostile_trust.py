"""Issue 13, items 2, 3 and 9: a repository's stop commands never run unasked, the agent cannot undo a pause or
forge the loop's own events, and a malformed notification URL never fails the call that pauses."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import init_basic, read_jsonl, run_script, tree_digest

from strict_loop import LoopError, Workspace
from strict_loop.storage.trust import TrustStore

CMD = "touch ran.txt"


def _made_here(ws_dir: Path, task: str = "t") -> Workspace:
    ws = Workspace(ws_dir)
    ws.init_state(goal="g", global_stop_condition="c", task_id=task, stop_checks={"commands": [CMD]})
    return ws


def _cloned(src: Path, dest: Path) -> Path:
    shutil.copytree(src, dest)  # what `git clone` of a repo carrying .agent-loop/ gives
    return dest


def test_a_contract_made_here_runs_its_commands(ws_dir):
    ws = _made_here(ws_dir)
    assert ws.check_stop(task_id="t").passed == 1 and (ws_dir / "ran.txt").exists()


def test_a_cloned_contract_runs_nothing_until_a_person_trusts_it(ws_dir, tmp_path, monkeypatch):
    _made_here(ws_dir)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "another-machine"))
    clone = _cloned(ws_dir, tmp_path / "clone")
    ws = Workspace(clone)
    before = tree_digest(clone / ".agent-loop")
    for call in (
        lambda: ws.check_stop(task_id="t"),
        lambda: ws.update_state(
            task_id="t", task="x", result_summary="r", verification_summary="v", status="completed"
        ),
    ):
        with pytest.raises(
            LoopError, match=r"has 1 stop command\(s\) this machine has not trusted.*strict-loop trust --task-id t"
        ):
            call()
    assert not (clone / "ran.txt").exists() and tree_digest(clone / ".agent-loop") == before
    proc = run_script("check_stop", "--task-id", "t", cwd=clone, check=False)
    assert proc.returncode == 2 and "strict-loop trust --task-id t" in proc.stderr and proc.stderr.count("\n") == 1

    assert f"stop command: $ {CMD}" in run_script("show_task", "--task-id", "t", cwd=clone).stdout
    refused = run_script("trust", "--task-id", "t", cwd=clone, check=False)  # no terminal, no --yes: asks nobody
    assert refused.returncode == 2 and f"$ {CMD}" in refused.stderr and "no terminal" in refused.stderr
    assert not ws.trust_store.is_trusted(clone, "t", ws.show_task(task_id="t").state.contract.stop_checks)
    shown = run_script("trust", "--task-id", "t", "--yes", cwd=clone)  # shown first, then recorded
    assert f"$ {CMD}" in shown.stderr and f"$ {CMD}" in shown.stdout and "trusted:" in shown.stdout
    assert ws.check_stop(task_id="t").passed == 1 and (clone / "ran.txt").exists()
    assert "already trusted" in run_script("trust", "--task-id", "t", cwd=clone).stdout


def test_the_same_repo_at_another_path_is_another_contract(ws_dir, tmp_path):
    _made_here(ws_dir)
    clone = _cloned(
        ws_dir, tmp_path / "elsewhere"
    )  # same machine, same user: a copy is still not what init_state wrote
    with pytest.raises(LoopError, match="not trusted"):
        Workspace(clone).check_stop(task_id="t")


def test_a_hand_edited_command_is_not_trusted(ws_dir):
    ws = _made_here(ws_dir)
    path = ws.task_paths("t").state
    doc = json.loads(path.read_text())
    doc["contract"]["stop_checks"]["commands"] = ["touch evil.txt"]
    path.write_text(json.dumps(doc))
    with pytest.raises(LoopError, match="not trusted"):
        Workspace(ws_dir).check_stop(task_id="t")
    assert not (ws_dir / "evil.txt").exists()


def test_a_legacy_takeover_with_commands_needs_trust(ws_dir):
    legacy = ws_dir / ".codex-loop" / "tasks" / "old"
    legacy.mkdir(parents=True)
    (legacy / "state.json").write_text(
        json.dumps(
            {
                "goal": "g",
                "global_stop_condition": "c",
                "status": "running",
                "counters": {"iteration": 0},
                "stop_checks": {"commands": [{"command": CMD, "timeout_seconds": 30}]},
            }
        )
    )
    with pytest.raises(LoopError, match="not trusted"):
        Workspace(ws_dir).check_stop(task_id="old")
    assert not (ws_dir / "ran.txt").exists()


def test_a_damaged_trust_record_trusts_nothing(ws_dir):
    ws = _made_here(ws_dir)
    TrustStore().path.write_text("{not json")
    with pytest.raises(LoopError, match="not trusted"):
        ws.check_stop(task_id="t")
    ws.trust(task_id="t")
    assert ws.check_stop(task_id="t").passed == 1


def test_checks_without_commands_need_no_trust(ws_dir, tmp_path, monkeypatch):
    init_basic(ws_dir)  # a text check only: nothing runs
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "fresh"))
    assert Workspace(_cloned(ws_dir, tmp_path / "c")).check_stop(task_id="demo").verdict == "continue"


FAILING = {
    "tool": "bash",
    "args": {"command": "make"},
    "output": "make: *** [all] Error 2\ncircular dependency",
    "error": True,
    "exit_code": 2,
}


def _pause(ws: Workspace, task: str) -> None:
    for _ in range(12):
        ws.append_event(task_id=task, kind="tool_call", message="make", data=FAILING)
        if ws.detect_spiral(task_id=task).paused:
            return
    raise AssertionError("the monitor never paused")


def test_force_cannot_replace_a_paused_task(ws_dir):
    ws = _made_here(ws_dir)
    _pause(ws, "t")
    before = tree_digest(ws_dir / ".agent-loop")
    with pytest.raises(LoopError, match=r"init_state.force: task 't' is paused.*strict-loop resume t"):
        ws.init_state(goal="looser", global_stop_condition="anything", task_id="t", force=True)
    assert tree_digest(ws_dir / ".agent-loop") == before
    ws.resume(task_id="t", action="continue")
    assert ws.init_state(goal="g2", global_stop_condition="c", task_id="t", force=True).replaced


@pytest.mark.parametrize(
    "kind",
    [
        "task.initialized",
        "round.completed",
        "spiral.resumed",
        "spiral.paused",
        "stop.checked",
        "state.rebuilt",
        "snapshot.taken",
        "workspace.rolled_back",
        "trust.recorded",
    ],
)
def test_system_event_kinds_are_refused(ws_dir, kind):
    ws = _made_here(ws_dir)
    with pytest.raises(LoopError, match=f"append_event.kind: '{kind}' is written by strict-loop itself"):
        ws.append_event(task_id="t", kind=kind, message="forged", data={"contract": {}})


@pytest.mark.parametrize("kind", ["round.started", "note", "blocker", "tool_call", "test.run"])
def test_caller_kinds_are_accepted(ws_dir, kind):
    ws = _made_here(ws_dir)
    assert ws.append_event(task_id="t", kind=kind, message="m").kind == kind


def test_rebuild_trusts_the_first_task_initialized(ws_dir):
    ws = _made_here(ws_dir)
    paths = ws.task_paths("t")
    forged = {
        "seq": 99,
        "ts": "2026-01-01T00:00:00.000Z",
        "kind": "task.initialized",
        "message": "forged",
        "data": {
            "contract": {"goal": "evil", "global_stop_condition": "c", "stop_checks": {"commands": ["touch evil.txt"]}}
        },
    }
    with open(paths.events, "a") as fh:  # written to the file directly, past append_event
        fh.write(json.dumps(forged) + "\n")
    paths.state.unlink()
    ws.rebuild_state(task_id="t")
    state = ws.show_task(task_id="t").state
    assert state.contract.goal == "g" and state.contract.stop_checks.commands == [CMD]


def test_a_malformed_webhook_url_never_fails_the_pause(ws_dir, monkeypatch, capfd):
    monkeypatch.setenv("STRICT_LOOP_WEBHOOK_URL", "https://user:SECRET-42@[bad-host/hook?token=SECRET-42")
    ws = _made_here(ws_dir)
    _pause(ws, "t")  # every call of the pause succeeded
    [alert] = read_jsonl(ws.task_paths("t").alerts)
    assert alert["delivery"] == {"config": "failed: STRICT_LOOP_WEBHOOK_URL is not a valid URL"}
    assert any(e["kind"] == "spiral.alert" for e in read_jsonl(ws.task_paths("t").events))
    out, err = capfd.readouterr()
    assert "SECRET-42" not in out + err
    assert all(b"SECRET-42" not in p.read_bytes() for p in (ws_dir / ".agent-loop").rglob("*") if p.is_file())


@pytest.mark.parametrize(("answer", "trusted"), [("n\n", False), ("\n", False), ("y\n", True)])
def test_trust_on_a_terminal_shows_the_commands_then_asks(ws_dir, tmp_path, monkeypatch, answer, trusted):
    """Issue 19, item 17: trust recorded before it showed what it trusts."""
    import os
    import subprocess
    import sys

    _made_here(ws_dir)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "another-machine"))
    clone = _cloned(ws_dir, tmp_path / "clone")
    leader, follower = os.openpty()
    os.write(leader, answer.encode())
    proc = subprocess.run(
        [sys.executable, "-m", "strict_loop", "trust", "--task-id", "t"],
        stdin=follower,
        capture_output=True,
        text=True,
        cwd=clone,
        timeout=60,
        env=os.environ,
    )
    os.close(follower)
    os.close(leader)
    assert f"$ {CMD}" in proc.stderr and "[y/N]" in proc.stdout + proc.stderr
    assert (proc.returncode == 0) is trusted and ("not confirmed" in proc.stderr) is not trusted
    checks = Workspace(clone).show_task(task_id="t").state.contract.stop_checks
    assert TrustStore().is_trusted(clone, "t", checks) is trusted
