"""Stop checks run for real: commands with timeouts and output caps, paths, text and regex patterns."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from strict_loop import Workspace
from strict_loop.loop.stopchecks import run_checks, run_command
from strict_loop.model.records import StopChecks


def _alive(pid: int) -> bool:
    """Running, not killed: a zombie (dead, not yet reaped by its new parent) counts as dead."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    except OSError:  # no /proc: ask the kernel
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True
    return stat.rsplit(")", 1)[1].split()[0] not in ("Z", "X")


@pytest.mark.slow  # starts processes and waits on them
def test_command_timeout_kills_the_whole_process_group(tmp_path):
    pidfile = tmp_path / "grandchild.pid"
    started = time.monotonic()
    # The shell backgrounds a grandchild; a timeout must kill it too, not only the shell.
    result = run_command(f"sleep 60 & echo $! > {pidfile}; sleep 60", tmp_path, timeout_s=1.0, tail_chars=100)
    elapsed = time.monotonic() - started
    assert result.timed_out and not result.passed and result.exit_code is None
    assert "timed out after 1s" in result.detail
    assert elapsed < 10
    grandchild = int(pidfile.read_text())
    deadline = time.monotonic() + 10
    while _alive(grandchild) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(grandchild), "the backgrounded grandchild survived the timeout"


def test_exit_codes_output_tail_and_cwd(tmp_path):
    (tmp_path / "here.txt").write_text("x")
    ok = run_command("test -f here.txt && echo found", tmp_path, 10, 100)
    assert ok.passed and ok.exit_code == 0 and ok.output_tail.strip() == "found"
    bad = run_command("echo to-stderr >&2; exit 7", tmp_path, 10, 100)
    assert not bad.passed and bad.exit_code == 7 and bad.detail == "exit code 7" and "to-stderr" in bad.output_tail
    chatty = run_command("python3 -c \"print('a' * 200000 + 'END')\"", tmp_path, 30, 50)
    assert chatty.passed and len(chatty.output_tail) == 50 and chatty.output_tail.rstrip().endswith("END")


def test_paths_and_text_patterns(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "report.md").write_text("# Report\nTotal: 42 rounds\n")
    checks = StopChecks(
        paths_exist=["docs/report.md", "docs/missing.md"],
        text_patterns=[
            "docs/report.md::Total:",
            "docs/report.md::re:^Total: \\d+ rounds$",
            "docs/report.md::re:^Nope",
            "docs/missing.md::x",
            "docs::x",
        ],
    )
    results = run_checks(checks, tmp_path)
    assert [r.passed for r in results] == [True, False, True, True, False, False, False]
    assert results[4].detail == "docs/report.md lacks regex '^Nope'"
    assert results[5].detail == "docs/missing.md is missing"
    assert "cannot be read" in results[6].detail


def test_check_stop_writes_report_and_event(tmp_path):
    ws = Workspace(tmp_path)
    ws.init_state(
        goal="g",
        global_stop_condition="c",
        task_id="s",
        stop_checks={"commands": ["sleep 5"], "command_timeout_s": 0.3, "paths_exist": ["out.txt"]},
    )
    report = ws.check_stop(task_id="s")
    assert report.verdict == "continue" and report.failed == 2 and report.checks[0].timed_out
    (tmp_path / "out.txt").write_text("ok")
    ws.init_state(
        goal="g",
        global_stop_condition="c",
        task_id="s",
        force=True,
        stop_checks={"commands": ["true"], "paths_exist": ["out.txt"]},
    )
    report = ws.check_stop(task_id="s")
    assert report.verdict == "goal_met" and report.should_stop and report.passed == 2
    state = ws.show_task(task_id="s").state
    assert state.last_stop and state.last_stop.verdict == "goal_met"
    assert ws.show_task(task_id="s").last_stop_report.model_dump() == report.model_dump(exclude={"supervisor"})


def test_no_checks_means_completion_is_the_agents_word(tmp_path):
    ws = Workspace(tmp_path)
    ws.init_state(goal="g", global_stop_condition="c", task_id="n")
    assert ws.check_stop(task_id="n").verdict == "continue"
    ws.update_state(task_id="n", task="t", result_summary="r", verification_summary="v", status="completed")
    report = ws.check_stop(task_id="n")
    assert report.verdict == "completed" and report.checks == []


def test_completed_task_with_a_regressed_check_still_reports_completed(tmp_path):
    ws = Workspace(tmp_path)
    (tmp_path / "out.txt").write_text("ok")
    ws.init_state(goal="g", global_stop_condition="c", task_id="r", stop_checks={"paths_exist": ["out.txt"]})
    ws.update_state(task_id="r", task="t", result_summary="r", verification_summary="v", status="completed")
    (tmp_path / "out.txt").unlink()
    report = ws.check_stop(task_id="r")
    assert report.verdict == "completed" and report.should_stop and "1 stop check(s) fail now" in report.reason
