"""Issue 27: the CLI starts like a shell tool. ``--help`` and the reads (``list_tasks``, ``show_task``) load no model:
their parsers come from ``table.json`` (generated from the request models, held to them here), and the reads are
answered from the files with the standard library, in the same words as the full path, which answers whatever they
cannot vouch for."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO, run_cli

from strict_loop import Workspace
from strict_loop.cli import app, reads, table
from strict_loop.harness import registry
from strict_loop.loop import answers
from strict_loop.storage import seal

MODEL_MODULES = ("pydantic", "strict_loop.model", "strict_loop.loop.workspace")


_RUN = """
import json, sys
from strict_loop.entry import main
loaded = {}
for args in json.loads(sys.argv[1]):
    try:
        main(args)
    except SystemExit:  # --help
        pass
    loaded[" ".join(args)] = sorted(m for m in sys.modules if m.startswith(tuple(json.loads(sys.argv[2]))))
print(json.dumps(loaded), file=sys.stderr)
"""


def _imported(commands: list[list[str]], cwd: Path) -> tuple[dict[str, list[str]], str]:
    """The model modules loaded after each of ``commands``, run one after the other through the console script's
    ``main`` in one new process; and what they printed."""
    proc = subprocess.run(
        [sys.executable, "-c", _RUN, json.dumps(commands), json.dumps(MODEL_MODULES)],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stderr.splitlines()[-1]), proc.stdout


def _seed(ws: Path, task_id: str = "t", rounds: int = 2, calls: int = 0) -> Workspace:
    w = Workspace(ws)
    w.init_state(
        task_id=task_id, goal="fix the parser", global_stop_condition="tests pass", stop_checks={"commands": ["true"]}
    )
    for i in range(rounds):
        w.update_state(
            task_id=task_id, task=f"step {i}", result_summary="done", verification_summary="ok", skip_checks=True
        )
    for i in range(calls):
        w.append_event(
            task_id=task_id, kind="tool_call", message="t", data={"tool": "Bash", "args": {"command": f"ls {i}"}}
        )
    return w


def test_help_and_the_reads_import_no_model(ws_dir):
    _seed(ws_dir, calls=3)
    commands = [["--help"], ["show_task", "--help"], ["list_tasks"], ["show_task"], ["show-task", "--task-id", "t"]]
    commands += [["detect_spiral", "--exit-status"]]
    loaded, out = _imported(commands, ws_dir)
    assert loaded == {" ".join(args): [] for args in commands}
    assert "task t (agent-loop): running, 2/100 rounds\ngoal: fix the parser\n" in out and "usage: strict-loop" in out
    assert "no spiral: 3 turns seen, nothing repeating without progress" in out


def test_table_snapshot_is_what_the_models_make():
    """Regenerate after a deliberate change: STRICT_LOOP_UPDATE_SNAPSHOT=1 python -m pytest tests/test_cli_start.py
    (or python -m strict_loop.cli.table)."""
    text = table.generate()
    if os.environ.get("STRICT_LOOP_UPDATE_SNAPSHOT"):
        table.TABLE.write_text(text, encoding="utf-8")
    assert table.TABLE.read_text(encoding="utf-8") == text, "table.json is stale: python -m strict_loop.cli.table"


LINES = [
    ["init_state", "--goal", "g", "--global-stop-condition", "c", "--stop-command", "pytest", "--stop-command", "ruff",
     "--require-path", "a.py", "--max-iterations", "9", "--command-timeout", "2.5", "--monitor",
     '{"thresholds": {"identical_repeats": 3}}', "--operating-mode", "unattended", "--force"],
    ["append_event", "--kind", "note", "--message", "m", "--data", '{"a": 1}', "--workspace", "w", "--json"],
    ["update_state", "--task", "t", "--result-summary", "r", "--verification-summary", "v", "--evidence", "e1",
     "--evidence", "e2", "--status", "blocked", "--stop-reason", "why", "--skip-checks"],
    ["check_stop", "--exit-status"], ["detect-spiral", "--task-id", "t", "--exit-status"], ["list_tasks"],
    ["show_task", "--task-id", "t"], ["resume", "t", "--action", "rollback", "--to", "2", "--person-key", "k"],
    ["trust", "--yes"], ["watch", "--task-id", "t", "--max-runs", "3", "--", "python", "train.py"],
    ["supervise", "--task-id", "t", "--harness", "codex", "--harness-arg=-t", "--max-cost-usd", "1.5"],
    ["install", "claude", "--scope", "user", "--dry-run"], ["schemas", "--check"], ["schemas", "--write", "d"],
    ["dashboard", "--port", "9000", "--allow-host", "h"], ["replay", "f.jsonl"], ["demo", "--start", "7"],
    ["compute"], ["person-key"], ["alerts", "--retry"], ["hook", "codex"], ["compact-state", "--keep", "2"],
]  # fmt: skip


def test_the_table_parses_and_helps_as_the_models_parsers(tmp_path):
    (tmp_path / "turns.jsonl").write_text('{"tool": "Bash", "args": {"command": "ls"}}\n')
    lines = [*LINES, ["detect_spiral", "--turns", str(tmp_path / "turns.jsonl")]]
    full_top, full = app.build_parser()
    fast_top, fast = app.fast_parser()
    assert fast_top.format_help() == full_top.format_help() and list(fast) == list(full)
    for name in full:
        assert fast[name].format_help() == full[name].format_help(), name
    for args in lines:
        assert vars(fast_top.parse_args(args)) == vars(full_top.parse_args(args)), args
    for bad in (["init_state", "--goal", "g"], ["append_event", "--kind", "note", "--message", "m", "--data", "[1]"]):
        for top in (full_top, fast_top):
            with pytest.raises(SystemExit):
                top.parse_args(bad)


def test_a_harness_added_since_the_table_was_written_is_a_choice(monkeypatch):
    monkeypatch.setitem(registry.HARNESSES, "opencode", registry.get("claude")._replace(name="opencode"))
    top, _ = app.fast_parser()
    assert top.parse_args(["install", "opencode"]).harness == "opencode"
    assert top.parse_args(["supervise", "--task-id", "t", "--harness", "opencode"]).harness == "opencode"


def _full_view(ws: Path, task_id: str | None = None) -> str:
    return answers.task_view(Workspace(ws).show_task(task_id=task_id))


def _full_list(ws: Path) -> str:
    return answers.task_list(Workspace(ws).task_list())


def _same(ws: Path, lean_expected: bool, task_id: str | None = None) -> str:
    """show_task, detect_spiral and list_tasks print the full path's text; the model-free reads answered (or left it)
    as expected."""
    params = {"task_id": task_id} if task_id else {}
    assert (reads.answer("show_task", str(ws), params) is not None) is lean_expected
    verdict = run_cli(
        "detect_spiral", "--exit-status", *(["--task-id", task_id] if task_id else []), cwd=ws, check=False
    )
    if task_id:
        assert verdict.stdout == answers.verdict(Workspace(ws).detect_spiral(task_id=task_id)) + "\n"
    shown = run_cli("show_task", *(["--task-id", task_id] if task_id else []), cwd=ws, check=False)
    assert shown.stdout == _full_view(ws, task_id) + "\n"
    listed = run_cli("list_tasks", cwd=ws)
    assert listed.stdout == _full_list(ws) + "\n"
    return shown.stdout


def test_the_reads_say_what_the_full_path_says(ws_dir):
    assert reads.answer("list_tasks", str(ws_dir), {}) == _full_list(ws_dir) == "no tasks (create one with init_state)"
    w = _seed(ws_dir, rounds=0)
    _same(ws_dir, True)
    w.check_stop(task_id="t")  # a last stop report
    w.update_state(task_id="t", task="x", result_summary="r", verification_summary="v", next_task="n", skip_checks=True)
    _same(ws_dir, True, "t")
    _seed(ws_dir, "u", rounds=1, calls=4)  # a monitor.json, quiet; two tasks running: show_task names one
    assert _same(ws_dir, True, "u").startswith("task u (agent-loop): running, 1/100 rounds")
    assert reads.answer("show_task", str(ws_dir), {}) is None  # which one: the full path says
    assert run_cli("show_task", cwd=ws_dir, check=False).returncode == 2


def _state(ws: Path, task_id: str = "t") -> Path:
    return ws / ".agent-loop" / "tasks" / task_id / "state.json"


@pytest.mark.parametrize(
    "damage",
    ["iteration", "deep", "task_id", "json", "link"],
)
def test_a_damaged_state_is_left_to_the_full_path(ws_dir, damage):
    _seed(ws_dir)
    path = _state(ws_dir)
    doc = json.loads(path.read_text())
    if damage == "iteration":
        doc["counters"]["iteration"] = "2"
    elif damage == "deep":
        doc["recent_rounds"][0]["progress"] = "maybe"
    elif damage == "task_id":
        doc["task_id"] = "other"
    path.write_text("{not json" if damage == "json" else json.dumps(doc))
    if damage == "link":
        path.rename(path.with_name("real.json"))
        path.symlink_to("real.json")
    assert reads.answer("list_tasks", str(ws_dir), {}) is None
    assert reads.answer("show_task", str(ws_dir), {"task_id": "t"}) is None
    listed = run_cli("list_tasks", cwd=ws_dir)
    assert "DAMAGED" in listed.stdout and listed.stdout == _full_list(ws_dir) + "\n"


def test_what_the_monitor_or_the_safeguards_say_is_left_to_the_full_path(ws_dir):
    w = _seed(ws_dir, calls=2)
    monitor = ws_dir / ".agent-loop" / "tasks" / "t" / "monitor.json"
    mon = json.loads(monitor.read_text())
    monitor.write_text(json.dumps({**mon, "notice": "a person resumed the task"}))
    assert reads.answer("show_task", str(ws_dir), {"task_id": "t"}) is None
    assert reads.answer("detect_spiral", str(ws_dir), {"task_id": "t"}) is None
    monitor.write_text(json.dumps({**mon, "level": 1}))  # a signal fired: the full path judges
    assert reads.answer("detect_spiral", str(ws_dir), {"task_id": "t"}) is None
    _same(ws_dir, True, "t")
    monitor.write_text(json.dumps(mon))
    assert reads.answer("show_task", str(ws_dir), {"task_id": "t"}) is not None
    quiet = answers.verdict(w.detect_spiral(task_id="t"))
    assert (
        reads.answer("detect_spiral", str(ws_dir), {"task_id": "t"})
        == quiet
        == "no spiral: 2 turns seen, nothing repeating without progress"
    )
    monitor.unlink()  # tool calls recorded and no monitor.json: a warning
    assert "monitor.json is missing" in _same(ws_dir, False, "t")
    w.append_event(task_id="t", kind="tool_call", message="t", data={"tool": "Bash", "args": {"command": "pwd"}})
    doc = json.loads(_state(ws_dir).read_text())
    doc["contract"]["monitor"]["enabled"] = False  # the agent switched its monitor off: the seal disagrees
    _state(ws_dir).write_text(json.dumps(doc))
    assert "sealed" in _same(ws_dir, False, "t")
    seal.forget(ws_dir, "t")  # no seal (a cloned task): the full path says what applies
    assert reads.answer("show_task", str(ws_dir), {"task_id": "t"}) is None


def test_a_round_to_roll_forward_or_an_original_codex_loop_is_left_to_the_full_path(ws_dir):
    _seed(ws_dir)
    iterations = ws_dir / ".agent-loop" / "tasks" / "t" / "iterations.jsonl"
    last = json.loads(iterations.read_text().splitlines()[-1])
    with iterations.open("a") as f:  # a crash after the ledger line, before state.json
        f.write(json.dumps({**last, "iteration": last["iteration"] + 1}) + "\n")
    assert "3/100 rounds" in _same(ws_dir, False, "t")
    legacy = ws_dir / ".codex-loop" / "tasks" / "old"
    legacy.mkdir(parents=True)
    (legacy / "state.json").write_text("{}")
    assert reads.answer("list_tasks", str(ws_dir), {}) is None
