"""The spiral benchmark's pure parts (bench/spiral_bench.py, bench/replay.py): the payloads it builds from a recorded
turn, the source families, the grid and the leave-one-source-out choice, and one short live replay. Its numbers are
the benchmark's to report, never asserted here."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import replay  # noqa: E402
import spiral_bench  # noqa: E402
import written_sessions  # noqa: E402

from strict_loop.model.settings import SpiralThresholds  # noqa: E402


def test_families_drop_only_a_split_letter():
    assert spiral_bench.family("cline_a") == spiral_bench.family("cline") == "cline"
    assert spiral_bench.family("claude_code_logger_b") == "claude_code_logger"
    assert spiral_bench.family("sweagent_java_gpt-4o") == "sweagent_java_gpt-4o"
    assert spiral_bench.family("cline_md_export") == "cline_md_export"


def test_grid_names_the_model_lacks_are_skipped(monkeypatch):
    monkeypatch.setattr(spiral_bench, "GRID", {"error_repeats": (3, 4), "no_such_threshold": (1, 2)})
    assert spiral_bench.grid_points(SpiralThresholds()) == [{"error_repeats": 3}, {"error_repeats": 4}]


def test_each_source_goes_through_its_harness_path():
    assert replay.replay_for("claude_code_logger_a") is replay.claude_turns
    assert replay.replay_for("codex_cli") is replay.codex_turns
    assert replay.replay_for("gemini_cli") is replay.gemini_turns
    for source in ("cline_a", "cursor", "aider", "openhands_claude35"):
        assert replay.replay_for(source) is replay.append_turns


def test_a_gemini_session_replays_through_its_hooks_with_its_exit_codes_and_words(tmp_path):
    """Gemini CLI's AfterTool carries no exit code of its own: the shell's sections do (``Exit Code: 2``), and the
    hook reads them back; the person's line arrives through BeforeAgent, the model's words from its chat file."""
    turns = [{"turn": 0, "actor": "person", "tool": "user_prompt", "args": {}, "output": "make the build pass"}]
    turns += [
        {"turn": n, "tool": "run_shell_command", "args": {"command": "make"}, "output": "no rule", "exit_code": 2}
        for n in range(3)
    ]
    turns.append(
        {"turn": 3, "tool": "activate_skill", "args": {"name": "x"}, "output": "Skill not found", "error": True}
    )
    turns[1]["thought"] = "Let me build it."
    live = replay.replay("gemini_cli", turns, tmp_path)
    assert live.hook_errors == "" and live.unhooked == 0 and live.numbers == [0, 0, 1, 2, 3]
    person, first, *_, skill = live.turns
    assert person.actor == "person" and person.output == "make the build pass"
    assert (first.exit_code, first.error, first.output, first.thought) == (2, True, "no rule", "Let me build it.")
    assert skill.error and skill.output == "Skill not found" and skill.exit_code is None
    assert replay.gemini_response({"tool": "run_shell_command", "output": "ok"})["llmContent"] == (
        "<untrusted_context>\nOutput: ok\nProcess Group PGID: 1\n</untrusted_context>"  # as the real one sends
    )


@pytest.mark.parametrize(
    ("turn", "error"),
    [
        ({"tool": "Bash", "output": "Exit code 2\nboom", "error": True}, "Exit code 2\nboom"),
        ({"tool": "Bash", "output": "boom", "error": True}, "Exit code 1\nboom"),
        ({"tool": "Bash", "output": "boom", "error": True, "exit_code": 7}, "Exit code 7\nboom"),
        ({"tool": "Bash", "output": "", "error": True}, "Exit code 1"),
        ({"tool": "Read", "output": "File does not exist.", "error": True}, "File does not exist."),
    ],
)
def test_a_failed_claude_call_is_post_tool_use_failure(turn, error):
    payload = replay.claude_payload({"args": {"command": "x"}, **turn}, "toolu_1", {})
    assert payload["hook_event_name"] == "PostToolUseFailure"
    assert payload["error"] == error and payload["tool_use_id"] == "toolu_1" and "tool_response" not in payload


def test_claude_responses_have_the_shapes_claude_code_sends():
    bash = replay.claude_payload({"tool": "Bash", "args": {"command": "ls"}, "output": "a", "error": False}, "t", {})
    assert bash["hook_event_name"] == "PostToolUse"
    assert bash["tool_response"]["stdout"] == "a" and bash["tool_response"]["interrupted"] is False
    read = replay.claude_response("Read", {"file_path": "/a.py"}, "     1→x = 1\n     2→y = 2", {})
    assert read["file"]["content"] == "x = 1\ny = 2" and read["file"]["filePath"] == "/a.py"
    edit = replay.claude_response("Edit", {"file_path": "/a", "old_string": "x", "new_string": "y"}, "ok", {})
    assert (edit["oldString"], edit["newString"], edit["structuredPatch"][0]["lines"]) == ("x", "y", ["-x", "+y"])
    memo: dict = {}
    replay.claude_response("TodoWrite", {"todos": [{"content": "a"}]}, "", memo)
    assert replay.claude_response("TodoWrite", {"todos": []}, "", memo)["oldTodos"] == [{"content": "a"}]
    assert replay.claude_response("mcp__srv__q", {}, "found", {}) == [{"type": "text", "text": "found"}]


def test_a_lost_argument_keeps_the_recorded_result_text():
    """An export that kept no Edit text cannot give Claude Code's response: its recorded result stands in."""
    assert replay.claude_response("Edit", {"file_path": "/a"}, "updated: 3→x", {}) == "updated: 3→x"
    assert replay.claude_response("Write", {"rendered": "..."}, "File created", {}) == "File created"


def test_codex_calls_as_codex_hands_them_to_a_hook():
    assert replay.codex_call("shell", {"command": ["bash", "-lc", "ls -l"]}) == ("Bash", {"command": "ls -l"})
    assert replay.codex_call("exec_command", {"cmd": "pytest"}) == ("Bash", {"command": "pytest"})
    assert replay.codex_call("apply_patch", {"input": "*** Begin Patch"}) == (
        "apply_patch",
        {"command": "*** Begin Patch"},
    )
    assert replay.codex_call("mcp__fs__read", {"path": "a"}) == ("mcp__fs__read", {"path": "a"})
    assert replay.codex_call("update_plan", {"plan": []}) is None


def _session(fired_at_points, label):
    return spiral_bench.Session("c", "s", "t", label, None, [], fired_at_points, None, "", 0)


def test_the_choice_is_the_best_f1_within_the_false_alarm_cap():
    spiral = {"label": "spiral", "stretches": [[5, 5, 9]], "detectable_turn": 5}
    progress = {"label": "progress"}
    points = [{"error_repeats": 2}, {"error_repeats": 4}, {"error_repeats": 5}]
    # point 0 catches everything but alarms on a progress run; points 1 and 2 tie, 1 is the profile's own
    train = [_session([6, 6, 6], spiral), _session([6, None, None], spiral)]
    train += [_session([3, None, None], progress)] + [_session([None] * 3, progress) for _ in range(9)]
    assert spiral_bench.choose(train, points, SpiralThresholds(), [0, 1, 2]) == 1
    assert spiral_bench.choose(train, points, SpiralThresholds(), [0, 2]) == 2  # only the points allowed


def test_a_threshold_the_requirements_fix_is_held_in_the_table_and_tuned_only_for_the_sensitivity_line(capsys):
    spiral = {"label": "spiral", "stretches": [[5, 5, 9]], "detectable_turn": 5}
    progress = {"label": "progress"}
    points = [{"person_repeats": 2}, {"person_repeats": 3}]
    # family "a" is caught only at 2; on family "b" (the others) 3 is better: it drops a false alarm
    sessions = [spiral_bench.Session("c", "a", "t", spiral, None, [], [6, None], None, "", 0) for _ in range(3)]
    sessions += [spiral_bench.Session("c", "b", "t", spiral, None, [], [6, 6], None, "", 0) for _ in range(3)]
    sessions += [spiral_bench.Session("c", "b", "t", progress, None, [], [2, None], None, "", 0)]
    sessions += [spiral_bench.Session("c", "b", "t", progress, None, [], [None, None], None, "", 0) for _ in range(9)]
    spiral_bench.loso(sessions, points, SpiralThresholds())
    out = capsys.readouterr().out
    assert "below 0.5: none" in out and "families below 0.5: a (0.00)" in out, out


def test_a_claude_session_replays_through_the_hooks(tmp_path):
    turns = [{"turn": 0, "actor": "person", "tool": "user_prompt", "args": {}, "output": "run it", "error": False}]
    turns += [
        {"turn": n, "tool": "Bash", "args": {"command": "make"}, "output": "Exit code 2\nno rule", "error": True}
        for n in range(4)
    ]
    turns.append({"turn": 4, "tool": "Edit", "args": {}, "output": "<tool_use_error>not read</tool_use_error>"})
    turns[1]["thought"] = "Let me build it."
    live = replay.replay("claude_code_x", turns, tmp_path)
    assert live.hook_errors == "" and live.unhooked == 1  # the call Claude Code refused before running reaches no hook
    assert live.numbers == [0, 0, 1, 2, 3] and [t.actor for t in live.turns][:2] == ["person", "agent"]
    assert live.turns[1].exit_code == 2 and live.turns[1].output == "no rule"
    lines = [json.loads(line) for line in (tmp_path / "transcript.jsonl").read_text().splitlines()]
    blocks = [b["type"] for line in lines if line["type"] == "assistant" for b in line["message"]["content"]]
    assert blocks[:2] == ["text", "tool_use"] and blocks.count("tool_use") == 5
    first = spiral_bench.first_whisper(live.turns, live.settings)  # the pure ladder agrees with the live path
    assert (None if first is None else live.numbers[first]) == live.fired


def test_the_blind_line_scores_the_same_turns_with_no_exit_code_or_error_flag(tmp_path, capsys):
    """A failure only its exit code tells (``no rule``) is caught with the flag and missed blind; one its output tells
    (a traceback) is caught both ways; the line says how recall changed."""
    source = tmp_path / "corpus" / "claude_code_x"
    source.mkdir(parents=True)
    outputs = {"quiet": "no rule", "told": "Traceback (most recent call last):\nOSError: [Errno 98] Address in use"}
    sessions = []
    for name, output in outputs.items():
        turns = [
            {"turn": n, "tool": "Bash", "args": {"command": f"python3 run.py {x}"}, "output": output, "error": True}
            for n, x in enumerate("abcde")
        ]
        (source / f"{name}.jsonl").write_text("".join(json.dumps(t) + "\n" for t in turns))
        label = {"source": "claude_code_x", "traj_id": name, "label": "spiral", "stretches": [[0, 2, 4]]}
        sessions.append(spiral_bench.run_session((source.parent, {**label, "detectable_turn": 2}, "default", [])))
    quiet, told = sessions
    assert quiet.fired is not None and quiet.pure == quiet.fired and quiet.blind is None
    assert told.fired is not None and told.blind == told.fired
    spiral_bench.report_blind(sessions)
    assert "corpus         recall 1.00 -> 0.50" in capsys.readouterr().out


def test_calls_that_never_ran_reach_the_monitor_at_the_next_hook_whose_turn_is_when_it_can_act(tmp_path):
    """A call the person refused and one a guard's hook blocked reach no hook: the next hook records both from the
    transcript, before its own turn; what the monitor says of them reaches the agent then, so they count at turn 3."""
    refused = "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file"
    blocked = "PreToolUse:Bash hook error: [node guard.js]: BLOCKED by policy: no deletes under build/"
    turns = [
        {"turn": 0, "tool": "Bash", "args": {"command": "ls"}, "output": "a.py", "error": False},
        {"turn": 1, "tool": "Bash", "args": {"command": "rm -rf build"}, "output": refused, "error": True},
        {"turn": 2, "tool": "Bash", "args": {"command": "rm -r build"}, "output": blocked, "error": True},
        {"turn": 3, "tool": "Bash", "args": {"command": "make"}, "output": "ok", "error": False},
    ]
    live = replay.replay("claude_code_x", turns, tmp_path)
    assert live.hook_errors == "" and live.numbers == [0, 3, 3, 3]  # recorded from the transcript, before turn 3
    assert live.turns[1].args == {"command": "rm -rf build"} and live.turns[1].output.startswith("The user doesn't")
    assert live.turns[2].args == {"command": "rm -r build"} and live.turns[2].output == blocked and live.turns[2].error


def test_every_written_set_loads_with_labels_that_fit_its_turns():
    for name in written_sessions.SETS:
        found = written_sessions.sessions(name)
        assert found and {s["harness"] for s in found} <= set(written_sessions.HARNESSES)
        for s in found:
            fits = 0 <= s["onset"] <= s["end"] < len(s["turns"]) if s["expect"] == "fire" else s["onset"] is None
            assert fits, (name, s["name"])


def test_a_written_session_is_scored_by_its_first_firing_against_the_reviewers_onset():
    failing = {
        "tool": "Bash",
        "args": {"command": "pytest -q"},
        "output": "E   KeyError: 'id'\n1 failed",
        "exit_code": 1,
    }
    turns = [failing] * 6  # the identical failing call: the monitor fires on the 4th (turn 3)
    spiral = {"expect": "fire", "onset": 4, "end": 5, "harness": "claude", "turns": turns}
    assert written_sessions.outcome(spiral) == ("caught", 3)
    assert written_sessions.outcome({**spiral, "onset": 5})[0] == "caught"  # two turns early still counts
    assert written_sessions.outcome({**spiral, "onset": 6, "end": 6})[0] == "early"
    assert written_sessions.outcome({**spiral, "onset": 1, "end": 2}) == ("late", 3)  # past where stopping helps
    assert written_sessions.outcome({**spiral, "expect": "quiet", "onset": None}) == ("false alarm", 3)
    names = ("alpha", "beta", "gamma", "delta", "epsilon", "zeta")
    calm = [{"tool": "Read", "args": {"file_path": f"src/{n}.py"}, "output": f"def {n}(): ..."} for n in names]
    assert written_sessions.outcome({**spiral, "turns": calm}) == ("missed", None)
    # Codex's calls carry no exit code: the same session replays without them
    assert written_sessions.outcome({**spiral, "harness": "codex"})[1] is not None
    # an export carries no words of the agent: admissions between edits fire in Claude Code, not from Cline's history
    said = "I'm going in circles, this approach is wrong"
    look = {"tool": "Read", "args": {"file_path": "a.py"}, "output": "def a(): ..."}
    sorry = [look] + [
        {**step, "thought": said}
        for k in range(1, 4)
        for step in (
            {"tool": "Edit", "args": {"file_path": "a.py", "old_string": f"x{k}", "new_string": f"y{k}"}},
            look,
        )
    ]
    admitted = {**spiral, "onset": 2, "end": 6, "turns": sorry}
    assert written_sessions.outcome(admitted)[0] == "caught"
    assert written_sessions.outcome({**admitted, "harness": "cline"}) == ("missed", None)
