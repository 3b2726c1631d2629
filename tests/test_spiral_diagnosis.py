"""Every sentence of a diagnosis is true of the turns it describes (checked by parsing its claims), placeholders are
never shown, and one result carries the diagnosis once."""

from __future__ import annotations

import json

import pytest
from spiral_claims import check_claims, play

from strict_loop import Workspace
from strict_loop.loop import answers

PYTEST_NO_RAISE = (
    "tests/test_parse.py F\n=== FAILURES ===\n___ test_rejects_bad_input ___\n    def test_rejects_bad_input():\n"
    ">       with pytest.raises(ValueError):\nE       Failed: DID NOT RAISE <class 'ValueError'>\n"
    "tests/test_parse.py:{n}: Failed\n=== short test summary info ===\n"
    "FAILED tests/test_parse.py::test_rejects_bad_input - Failed: DID NOT RAISE <class 'ValueError'>\n1 failed in "
    "0.0{n}s"
)
DOUBLED = (
    'Traceback (most recent call last):\n  File "run.py", line {n}, in <module>\nIndexError: IndexError: list '
    "index out of range"
)


def run(cmd: str, output: str) -> dict:
    return {"tool": "bash", "args": {"command": cmd}, "output": output, "exit_code": 1}


def edit(k: int, path: str = "/repo/src/parse.py") -> dict:
    return {
        "tool": "str_replace_editor",
        "args": {"command": "str_replace", "path": path, "old_str": f"a{k}", "new_str": f"b{k}"},
        "output": f"The file {path} has been edited.",
    }


def fired(turns: list[dict]):
    """The verdict as of the first firing (what the agent is told first) and as of the end."""
    first, _ = play(turns)
    assert first.fired_at is not None, "expected the monitor to fire"
    at_first, _ = play(turns[: first.fired_at + 1])
    return at_first, first


STUCK = {
    "same command, nothing changed": [
        run("pytest -q tests/test_parse.py", PYTEST_NO_RAISE.format(n=3)) for _ in range(6)
    ],
    "same command, edits between": [
        t for k in range(5) for t in (run("pytest -q tests/test_parse.py", PYTEST_NO_RAISE.format(n=k)), edit(k))
    ][:-1],
    "varied commands, same error": [
        run(f"pytest -q tests/test_parse.py -k {name}", PYTEST_NO_RAISE.format(n=4))
        for name in ("bad", "input", "rejects", "parse", "bad_input", "x")
    ],
    "doubled prefix": [run(f"python run.py --case {k}", DOUBLED.format(n=10 + k)) for k in range(3)] * 2,
    "many ways": [run(f"python run.py --case {k}", DOUBLED.format(n=10)) for k in range(7)],
    "identical": [run("cd fastxml/", "bash: cd: fastxml/: No such file or directory")] * 5,
}


@pytest.mark.parametrize("name", sorted(STUCK))
def test_each_diagnosis_sentence_is_true_of_its_turns(name):
    turns = STUCK[name]
    for verdict in fired(turns):
        claims = check_claims(verdict, turns)
        assert claims, verdict.diagnosis  # at least one claim was recognized and checked


def test_pytest_did_not_raise_is_not_called_the_exception_it_expected():
    at_first, last = fired(STUCK["varied commands, same error"])
    for v in (at_first, last):
        assert "did not raise ValueError" in v.diagnosis
        assert "ValueError:" not in v.diagnosis and "<class" not in v.diagnosis and "a ValueError" not in v.diagnosis


def test_no_code_changing_is_claimed_unless_files_changed():
    quiet, _ = fired(STUCK["same command, nothing changed"])
    assert "kept changing" not in quiet.diagnosis
    busy, _ = fired(STUCK["same command, edits between"])
    assert (
        "changed files" in busy.diagnosis or "edit(s)" in busy.diagnosis
    ) and "no file changed" not in busy.diagnosis


def test_the_varied_count_matches_the_list():
    v, _ = fired(STUCK["doubled prefix"])
    assert "IndexError: IndexError" not in json.dumps(v.model_dump())
    wide, _ = fired(STUCK["many ways"])
    assert "different actions in" in wide.diagnosis or "ways:" in wide.diagnosis
    assert "varied" in check_claims(v, STUCK["doubled prefix"]) or "tried" in check_claims(v, STUCK["doubled prefix"])


def test_detect_spiral_while_paused_names_the_pause_turn_and_says_the_diagnosis_once(ws_dir):
    ws = Workspace(ws_dir)
    ws.init_state(task_id="t", goal="g", global_stop_condition="c")
    turns = (
        STUCK["same command, nothing changed"] + [run("pytest -q tests/test_parse.py", PYTEST_NO_RAISE.format(n=3))] * 2
    )
    for t in turns:
        ws.append_event(task_id="t", kind="tool_call", message="pytest", data=t)
    v = ws.detect_spiral(task_id="t")
    assert v.paused and v.fired_at == 5  # whisper at 3, stronger at 4, pause at 5
    first = v.diagnosis.split(". ")[0]
    assert json.dumps(v.model_dump()).count(first) == 1 and answers.verdict(v).count(first) == 1
    assert v.supervisor.paused and "a person must run" in v.supervisor.messages[0].text
    check_claims(v, turns)
    ws.resume(task_id="t", action="continue")
    after = ws.detect_spiral(task_id="t")
    assert not after.paused and after.fired_at is None


@pytest.mark.parametrize(
    "line, said",
    [
        ("E       Failed: DID NOT RAISE <class 'ValueError'>", "did not raise ValueError"),
        ("IndexError: IndexError: list index out of range", "IndexError: list index out of range"),
        ("2026-11-23 14:05:33 ERROR: connection reset", "ERROR: connection reset"),
        (
            "FAILED t.py::test_x - Failed: DID NOT RAISE <class 'pkg.errors.ParseError'>",
            "FAILED t.py::test_x - Failed: did not raise ParseError",
        ),
    ],
)
def test_error_lines_are_said_as_a_person_reads_them(line, said):
    from strict_loop.monitor import fingerprint as fp

    assert fp.readable(line) == said
    assert not fp.error_fingerprint(line).startswith("ValueError")  # an exception expected, not raised


def test_fingerprints_add_no_type_prefix_a_line_already_has():
    from strict_loop.monitor import fingerprint as fp

    assert fp.error_fingerprint("IndexError: list index out of range") == "IndexError: list index out of range"
    assert fp.error_fingerprint("x = f()  # raises KeyError: 'a'").startswith("KeyError: ")
