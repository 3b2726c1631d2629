"""Issue 25, items 3, 4 and 18: repository content and the agent cannot switch off, weaken or reset their monitor
unnoticed, and a removed loop folder leaves a trace.

Through the real entry points: ``strict-loop`` (in-process, as ``python -m strict_loop``), the hook as a harness calls
it (``handler.handle`` with Claude Code's and Codex's payloads), ``show_task``/``list_tasks``/``rebuild_state``.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import read_jsonl, run_cli

from strict_loop import LoopError, Workspace
from strict_loop.harness import handler
from strict_loop.model.settings import MonitorSettings
from strict_loop.storage import workspaces

FIXTURES = Path(__file__).parent / "fixtures" / "hooks"
WEAK = {"enabled": False, "snapshots": "off", "thresholds": {"identical_repeats": 20, "command_repeats": 20}}


def hook(ws: Path, name: str = "claude_post_tool_use_failure", harness: str = "claude", **changes) -> dict | None:
    data = json.loads((FIXTURES / f"{name}.json").read_text().replace("WORKSPACE", str(ws)))
    data.update(changes)
    out = handler.handle(harness, json.dumps(data), env={}, cwd="/")
    return json.loads(out) if out else None


def pre(ws: Path, tool: str, tool_input: dict, harness: str = "claude") -> dict | None:
    name = "claude_pre_tool_use" if harness == "claude" else "hermes_pre_tool_call"
    return hook(ws, name, harness, tool_name=tool, tool_input=tool_input)


def denied(out: dict | None) -> str:
    """The refusal's reason ('' when the call may run)."""
    if not out:
        return ""
    specific = out.get("hookSpecificOutput", {})
    return specific.get("permissionDecisionReason", "") if specific.get("permissionDecision") == "deny" else ""


def events(ws: Path, task: str = "t", kind: str | None = None) -> list[dict]:
    found = read_jsonl(ws / ".agent-loop" / "tasks" / task / "events.jsonl")
    return [e for e in found if kind is None or e["kind"] == kind]


def cli(ws: Path, *args: str, check: bool = True):
    return run_cli(*args, "--workspace", str(ws), cwd=ws.parent, check=check)


def start(ws: Path, task: str = "t") -> Workspace:
    w = Workspace(ws)
    w.init_state(task_id=task, goal="Parse the feed", global_stop_condition="pytest passes")
    return w


def state_path(ws: Path, task: str = "t") -> Path:
    return ws / ".agent-loop" / "tasks" / task / "state.json"


def fail(ws: Path, times: int) -> list[dict | None]:
    """The same failing test run, as Claude Code reports it after each call."""
    return [hook(ws, tool_input={"command": "pytest -q"}) for _ in range(times)]


# ---------------------------------------------------------------- item 3: a cloned repository's defaults file


def test_a_cloned_defaults_file_weakens_no_task_until_a_person_trusts_its_exact_content(ws_dir):
    defaults = ws_dir / ".agent-loop" / "monitor-defaults.json"
    defaults.parent.mkdir()
    defaults.write_text('{"enabled": true}')  # a file that changes nothing needs no trust
    plain = cli(ws_dir, "init_state", "--task-id", "plain", "--goal", "g", "--global-stop-condition", "c")
    assert "warning" not in plain.stdout
    defaults.write_text(json.dumps(WEAK))  # as `git clone` (or a pull) brings it
    made = cli(ws_dir, "init_state", "--task-id", "t", "--goal", "g", "--global-stop-condition", "c")
    assert "warning:" in made.stdout and "not trusted" in made.stdout and "enabled = false" in made.stdout
    assert Workspace(ws_dir).show_task(task_id="t").state.contract.monitor == MonitorSettings()
    (ignored,) = events(ws_dir, kind="monitor.defaults_ignored")
    assert "strict-loop trust --task-id t" in ignored["message"]
    # The person reviews it and trusts it, in the same step as a contract's commands: then it applies.
    trusted = cli(ws_dir, "trust", "--task-id", "t", "--yes")
    assert "monitor-defaults.json" in trusted.stdout and "enabled = false" in trusted.stderr
    cli(ws_dir, "init_state", "--task-id", "u", "--goal", "g", "--global-stop-condition", "c")
    assert Workspace(ws_dir).show_task(task_id="u").state.contract.monitor.enabled is False
    # One byte changed (a later pull, the agent): not what was trusted, so the built-in settings again.
    defaults.write_text(json.dumps({**WEAK, "cooldown_turns": 1000}))
    again = cli(ws_dir, "init_state", "--task-id", "v", "--goal", "g", "--global-stop-condition", "c")
    assert "not trusted" in again.stdout
    assert Workspace(ws_dir).show_task(task_id="v").state.contract.monitor == MonitorSettings()


# ---------------------------------------------------------------- item 4: the agent's own monitor


def test_a_monitor_switched_off_in_state_json_is_recorded_told_undone_and_still_pauses(ws_dir):
    start(ws_dir)
    doc = json.loads(state_path(ws_dir).read_text())
    doc["contract"]["monitor"]["enabled"] = False  # what one Write (or a script) of the agent's does
    state_path(ws_dir).write_text(json.dumps(doc))
    answers = fail(ws_dir, 8)
    assert Workspace(ws_dir).supervisor("t").paused, answers
    (changed,) = events(ws_dir, kind="monitor.settings_changed")
    assert "enabled = false, sealed true" in changed["message"]
    alerts = read_jsonl(ws_dir / ".agent-loop" / "tasks" / "t" / "alerts.jsonl")
    assert any("changed outside the loop" in a.get("diagnosis", "") for a in alerts)
    assert json.loads(state_path(ws_dir).read_text())["contract"]["monitor"]["enabled"] is True
    view = cli(ws_dir, "show_task", "--task-id", "t").stdout
    assert "warning: recorded at" in view and "changed outside the loop" in view


def test_removing_monitor_json_now_and_then_does_not_reset_the_window(ws_dir):
    start(ws_dir)
    monitor = ws_dir / ".agent-loop" / "tasks" / "t" / "monitor.json"
    for _ in range(8):
        fail(ws_dir, 1)
        if not events(ws_dir, kind="spiral.paused"):  # once paused, every tool of the agent's is refused
            monitor.unlink()  # the agent's cleanup between its calls
    assert Workspace(ws_dir).supervisor("t").paused
    rebuilt = events(ws_dir, kind="monitor.state_rebuilt")
    assert rebuilt and "was removed" in rebuilt[0]["message"]
    assert any("monitor.json was removed" in w for w in Workspace(ws_dir).show_task(task_id="t").warnings)


def test_rebuild_state_restores_the_sealed_monitor_settings(ws_dir):
    w = start(ws_dir)
    doc = json.loads(state_path(ws_dir).read_text())
    doc["contract"]["monitor"]["thresholds"]["identical_repeats"] = 20
    state_path(ws_dir).write_text(json.dumps(doc))
    assert any("differ from the sealed" in x for x in w.show_task(task_id="t").warnings)
    repaired = w.rebuild_state(task_id="t").repaired
    assert any("identical_repeats = 20, sealed 4" in r for r in repaired)
    assert w.show_task(task_id="t").state.contract.monitor == MonitorSettings()
    with pytest.raises(LoopError, match="monitor"):  # nor can a caller forge what the safeguards record
        w.append_event(task_id="t", kind="monitor.settings_trusted", message="a person trusted it")


def test_a_task_that_came_with_the_repository_runs_on_built_in_settings_until_trusted(tmp_path):
    other, ws = tmp_path / "other", tmp_path / "ws"
    other.mkdir(), ws.mkdir()
    Workspace(other).init_state(task_id="t", goal="g", global_stop_condition="c", monitor={"enabled": False})
    shutil.copytree(other / ".agent-loop", ws / ".agent-loop")  # a clone of a repository carrying its loop
    fail(ws, 8)
    assert Workspace(ws).supervisor("t").paused
    (changed,) = events(ws, kind="monitor.settings_changed")
    assert "sealed by no person on this machine" in changed["message"]
    trusted = cli(ws, "trust", "--task-id", "t", "--yes")
    assert "enabled = false" in trusted.stdout
    assert Workspace(ws).show_task(task_id="t").state.contract.monitor.enabled is False


# ---------------------------------------------------------------- item 4: the agent's tools and the loop's folder

REFUSED = [
    ("Write", {"file_path": "{ws}/.agent-loop/tasks/t/state.json", "content": "{}"}),
    ("Edit", {"file_path": "{ws}/.agent-loop/tasks/t/state.json", "old_string": "true", "new_string": "false"}),
    ("MultiEdit", {"file_path": "{ws}/.agent-loop/monitor-defaults.json", "edits": []}),
    ("Bash", {"command": "rm -rf .agent-loop"}),
    ("Bash", {"command": "rm .agent-loop/tasks/t/monitor.json"}),
    ("Bash", {"command": "jq '.contract.monitor.enabled=false' x.json > .agent-loop/tasks/t/state.json"}),
    ("Bash", {"command": "cd .agent-loop/tasks/t && rm -f monitor.json"}),
    ("Bash", {"command": "bash -lc 'mv .agent-loop /tmp/gone'"}),
    ("Bash", {"command": "rm -rf .ag*"}),
    ("Bash", {"command": "rm -rf ../ws"}),
    ("Bash", {"command": "mkdir -p .agent-loop/telemetry && mkfifo .agent-loop/telemetry/spool.jsonl"}),
    ("Bash", {"command": "python3 -c \"import os; os.remove('.agent-loop/tasks/t/monitor.json')\""}),
    ("Bash", {"command": "apply_patch <<'EOF'\n*** Begin Patch\n*** Delete File: .agent-loop/tasks/t/state.json\nEOF"}),
    ("Bash", {"command": "sed -i s/true/false/ .agent-loop/tasks/t/state.json"}),
]
ALLOWED = [
    ("Bash", {"command": "cat .agent-loop/tasks/t/state.json"}),
    ("Bash", {"command": "python3 -c \"import json; print(json.load(open('.agent-loop/tasks/t/state.json')))\""}),
    ("Bash", {"command": "rm -rf build && echo done > notes.txt && mv notes.txt .."}),
    ("Bash", {"command": "find . -name '*.pyc' -delete"}),
    ("Bash", {"command": "cp .agent-loop/tasks/t/state.json /tmp/copy.json"}),
    ("Write", {"file_path": "{ws}/src/app.py", "content": "x = 1"}),
    ("Read", {"file_path": "{ws}/.agent-loop/tasks/t/state.json"}),
]


def _filled(value: dict, ws: Path) -> dict:
    return json.loads(json.dumps(value).replace("{ws}", str(ws)))


@pytest.mark.parametrize(("tool", "tool_input"), REFUSED, ids=[f"{t}-{i}" for i, (t, _) in enumerate(REFUSED)])
def test_the_agents_tools_never_write_into_the_loops_folder(ws_dir, tool, tool_input):
    start(ws_dir)
    reason = denied(pre(ws_dir, tool, _filled(tool_input, ws_dir)))  # a running task, not paused: any time
    assert "inside the loop's folder" in reason and "Refused" in reason
    (refused,) = events(ws_dir, kind="loop.write_refused")
    assert refused["data"]["tool"] == tool


def test_hermes_and_mcp_file_tools_are_refused_and_reads_or_writes_elsewhere_go_on(ws_dir):
    start(ws_dir)
    out = pre(ws_dir, "write_file", {"path": ".agent-loop/tasks/t/state.json", "content": "{}"}, harness="hermes")
    assert out and "inside the loop's folder" in json.dumps(out)
    mcp = pre(ws_dir, "mcp__filesystem__write_file", {"path": f"{ws_dir}/.agent-loop/registry.json", "content": ""})
    assert "inside the loop's folder" in denied(mcp)
    for tool, tool_input in ALLOWED:
        assert pre(ws_dir, tool, _filled(tool_input, ws_dir)) is None, (tool, tool_input)
    assert len(events(ws_dir, kind="loop.write_refused")) == 2


# ---------------------------------------------------------------- item 18: a removed loop folder leaves a trace


def test_a_removed_loop_folder_is_noticed_listed_and_recorded_in_the_next_task(ws_dir):
    start(ws_dir)
    shutil.rmtree(ws_dir / ".agent-loop")  # as a script of the agent's would (its shell `rm` is refused)
    gone = workspaces.vanished()
    assert [(v.path, v.tasks, v.whole) for v in gone.values()] == [(ws_dir.resolve(), ("t",), True)]
    listed = cli(ws_dir, "list_tasks").stdout
    assert "warning: the loop folder" in listed and "was removed" in listed and "t" in listed
    missing = cli(ws_dir, "show_task", "--task-id", "t", check=False)
    assert missing.returncode == 2 and "was removed" in missing.stderr
    made = cli(ws_dir, "init_state", "--task-id", "next", "--goal", "g", "--global-stop-condition", "c")
    assert "was removed" in made.stdout
    (recorded,) = events(ws_dir, "next", kind="workspace.loop_removed")
    assert recorded["data"]["tasks"] == ["t"] and recorded["data"]["whole"] is True
    assert workspaces.vanished() == {} and "warning" not in cli(ws_dir, "list_tasks").stdout


def test_a_removed_task_folder_is_noticed_too(ws_dir):
    start(ws_dir, "a")
    start(ws_dir, "b")
    shutil.rmtree(ws_dir / ".agent-loop" / "tasks" / "a")
    (gone,) = workspaces.vanished().values()
    assert gone.tasks == ("a",) and not gone.whole
    assert "task(s) a" in cli(ws_dir, "list_tasks").stdout


# ---------------------------------------------------------------- item 2: a person's commands are never the agent's


@pytest.mark.parametrize(
    "command",
    [
        "while sleep 5; do strict-loop resume --action continue --person-key ~/.config/strict-loop/person.key; done &",
        "nohup python -m strict_loop resume t --action continue >/dev/null 2>&1 &",
        "strict-loop trust --task-id t --yes",
        "KEY=$(strict-loop person-key) && echo ok",
        "cat ~/.config/strict-loop/person.key",
        "python3 scripts/resume.py --task t --action continue",
    ],
)
def test_the_agents_shell_never_runs_a_persons_command(ws_dir, command):
    """Before any pause, while it still has a shell, the agent cannot leave behind a loop that answers its pause, grant
    itself trust or read the person key: the hook refuses the call at any time and the ledger records it."""
    start(ws_dir)
    reason = denied(pre(ws_dir, "Bash", {"command": command}))
    assert "the person's alone" in reason and "Refused" in reason
    assert len(events(ws_dir, kind="loop.write_refused")) == 1


def test_the_agent_still_reads_its_task_and_records_its_round(ws_dir):
    start(ws_dir)
    for command in ("strict-loop show_task --task-id t", "strict-loop append_event --task-id t --kind note", "ls"):
        assert pre(ws_dir, "Bash", {"command": command}) is None, command
