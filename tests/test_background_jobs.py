"""Background jobs: a command a harness runs in the background (Claude Code's ``run_in_background``, a shell's ``&``),
what it printed read back (``BashOutput`` before Claude Code 2.1, its task's output file with Read or ``tail`` since),
and the job stopped (``KillShell``, ``TaskStop``). What a job printed after each restart is that restart's outcome, as a
log read is; a check started in the background has not passed yet. And a flaky test that fails in fewer of its repeats
is failing the same way, not making progress."""

from __future__ import annotations

import pytest
from spiral_claims import check_claims, play, window_of

from strict_loop.monitor.calls import jobs

EADDRINUSE = (
    "node:events:497\n      throw er; // Unhandled 'error' event\n      ^\n\n"
    "Error: listen EADDRINUSE: address already in use :::4000\n    at Server.setupListenHandle [as _listen2] "
    "(node:net:1897:16)\n    at Object.<anonymous> (/home/dev/api/src/server.js:38:5)\n{\n  code: 'EADDRINUSE',\n"
    "  port: 4000\n}\n\nNode.js v20.17.0\n[nodemon] app crashed - waiting for file changes before starting..."
)


def start(k: int, command: str = "npm run dev") -> dict:
    return {
        "tool": "Bash",
        "args": {"command": command, "description": "Start the dev server", "run_in_background": True},
        "output": f"Command running in background with ID: bash_{k}",
        "exit_code": 0,
    }


def bash_output(k: int, text: str, stamp: str) -> dict:
    """``BashOutput`` as Claude Code before 2.1 answered it."""
    return {
        "tool": "BashOutput",
        "args": {"bash_id": f"bash_{k}"},
        "output": f"<status>running</status>\n\n<stdout>\n> api@1.8.2 dev\n> nodemon src/server.js\n\n{text}\n</stdout>"
        f"\n\n<timestamp>2025-09-03T08:{stamp}.911Z</timestamp>",
    }


def kill(k: int) -> dict:
    return {"tool": "KillShell", "args": {"shell_id": f"bash_{k}"}, "output": f"Successfully killed shell: bash_{k}"}


def edit(old: str, new: str) -> dict:
    return {
        "tool": "Edit",
        "args": {"file_path": "/home/dev/api/nodemon.json", "old_string": old, "new_string": new},
        "output": "The file /home/dev/api/nodemon.json has been updated.",
    }


def test_a_server_restarted_in_the_background_that_dies_the_same_way_each_time_is_a_restart_loop():
    turns = [start(1), bash_output(1, EADDRINUSE, "14:22")]
    for k in range(2, 5):
        turns += [
            kill(k - 1),
            edit(f'"delay": {k}', f'"delay": {k + 1}'),
            start(k),
            bash_output(k, EADDRINUSE, f"1{k}:0{k}"),
        ]
    verdict, steps = play(turns)
    assert verdict.fired_at is not None and steps[0][2][0].kind == "restart_loop"
    first, _ = play(turns[: verdict.fired_at + 1])
    assert "restarts" in first.signals[0].evidence
    assert "restarts" in check_claims(first, turns[: verdict.fired_at + 1])


def test_the_output_file_of_a_task_read_back_after_each_restart_is_its_outcome():
    """Claude Code 2.1 writes a background task's output to a file its Bash result names; the agent reads it."""
    turns = []
    for k in range(1, 5):
        path = f"/tmp/claude-1000/-home-dev-api/tasks/b8x2k{k}q.output"
        turns += [
            {
                "tool": "Bash",
                "args": {"command": "npm run dev", "run_in_background": True},
                "output": f"Command running in background with ID: b8x2k{k}q. Output is being written to: {path}",
                "exit_code": 0,
            },
            {
                "tool": "Read",
                "args": {"file_path": path},
                "output": "\n".join(f"{n:>6}\u2192{line}" for n, line in enumerate(EADDRINUSE.splitlines(), 1)),
            },
            {"tool": "TaskStop", "args": {"task_id": f"b8x2k{k}q"}, "output": f"Stopped task b8x2k{k}q"},
        ]
    verdict, steps = play(turns)
    assert verdict.fired_at is not None and steps[0][2][0].kind == "restart_loop"


def test_a_server_that_comes_up_after_a_fix_is_no_restart_loop():
    listening = "[nodemon] starting `node src/server.js`\napi listening on :4000"
    turns = [start(1), bash_output(1, EADDRINUSE, "14:22"), kill(1), edit('"port": 4000', '"port": 4100')]
    turns += [start(2), bash_output(2, listening.replace("4000", "4100"), "15:02")]
    turns += [edit("v1", "v2"), bash_output(2, listening.replace("4000", "4100") + "\nGET /health 200", "16:40")]
    assert play(turns)[0].fired_at is None


@pytest.mark.parametrize(
    "run",
    [
        {
            "tool": "Bash",
            "args": {"command": "uv run pytest tests/integration -v", "run_in_background": True},
            "output": "Command running in background with ID: bash_1",
            "exit_code": 0,
        },
        {
            "tool": "Bash",
            "args": {"command": "pytest tests/integration > it.log 2>&1 &"},
            "output": "[1] 48211",
            "exit_code": 0,
        },
    ],
)
def test_a_check_started_in_the_background_has_not_passed(run):
    fact = window_of([run])[0]
    assert fact.verdict is None and fact.prog != "check passes"


@pytest.mark.parametrize(
    ("tool", "args", "act"),
    [
        ("Bash", {"command": "npm run dev", "run_in_background": True}, "start"),
        ("BashOutput", {"bash_id": "bash_3"}, "read"),
        ("TaskOutput", {"task_id": "b1"}, "read"),
        ("KillShell", {"shell_id": "bash_3"}, "stop"),
        ("TaskStop", {"task_id": "b8x2k1q"}, "stop"),
        ("Read", {"file_path": "/tmp/claude-1000/-home-dev-api/tasks/b8x2k1q.output"}, "read"),
        ("Bash", {"command": "tail -20 /tmp/claude-1000/-home-dev-api/tasks/b8x2k1q.output"}, "read"),
        ("write_stdin", {"session_id": 41822, "chars": ""}, "read"),  # Codex polling a command still running
        ("write_stdin", {"session_id": 41822, "chars": "\x03"}, "stop"),  # and its Ctrl-C
        ("Read", {"file_path": "/home/dev/api/tasks/output.py"}, None),
        ("Bash", {"command": "npm run dev"}, None),
        ("Bash", {"command": "npm run dev", "run_in_background": "yes"}, None),  # not the harness's flag
    ],
)
def test_what_a_call_does_to_a_background_job(tool, args, act):
    assert jobs.job_act(tool, args) == act


def playwright(failed: int, k: int) -> dict:
    repeats = ", ".join(f"repeat{n}" for n in range(1, failed + 1))
    return {
        "tool": "Bash",
        "args": {"command": "npx playwright test checkout.spec.ts --repeat-each=5 --reporter=line"},
        "output": "Exit code 1\nRunning 5 tests using 4 workers\n  1) [chromium] › checkout.spec.ts:10:7 › shows the "
        "toast (repeat1)\n\n    Error: Timed out 15000ms waiting for expect(locator).toBeVisible()\n\n"
        f"  {failed} failed\n    [chromium] › checkout.spec.ts:10:7 › shows the toast ({repeats})\n"
        f"  {5 - failed} passed (4{k}.2s)",
        "exit_code": 1,
    }


def test_a_flaky_test_failing_in_fewer_of_its_repeats_is_not_progress():
    """Its count falls to where it was before (2, 1, 2, 1): only a new low is fewer failures."""
    counts = [2, 1, 2, 1, 2, 1]
    turns = [t for k, n in enumerate(counts) for t in (edit(f"wait {k}", f"wait {k + 1}"), playwright(n, k))]
    assert [f.prog for f in window_of(turns) if f.fails is not None] == [None, "fewer failures", *[None] * 4]
    assert play(turns)[0].fired_at is not None


def test_a_count_that_rose_from_green_and_falls_again_is_progress():
    """All green, a migration breaks 41 tests, then 18, 12, 3: each a new low since the suite was last green."""

    def pytest_run(failed: int) -> dict:
        tail = f"{failed} failed, {244 - failed} passed in 15.02s" if failed else "244 passed in 14.1s"
        return {
            "tool": "Bash",
            "args": {"command": "python -m pytest -q"},
            "exit_code": int(bool(failed)),
            "output": f"Exit code 1\n{tail}" if failed else tail,
        }

    turns = [t for k, n in enumerate([0, 41, 18, 12, 3]) for t in (edit(f"v{k}", f"v{k + 1}"), pytest_run(n))]
    assert [f.prog for f in window_of(turns) if f.fails is not None][2:] == ["fewer failures"] * 3


def test_a_run_that_names_fewer_failing_tests_than_before_is_progress():
    def pytest_run(names: list[str]) -> dict:
        lines = "\n".join(f"FAILED tests/test_p.py::{n} - assert 1 == 2" for n in names)
        return {
            "tool": "Bash",
            "args": {"command": "pytest -q"},
            "exit_code": 1,
            "output": f"Exit code 1\n{lines}\n{len(names)} failed, {6 - len(names)} passed in 0.4s",
        }

    turns = [edit("a", "b"), pytest_run(["test_a", "test_b"]), edit("b", "c"), pytest_run(["test_a"])]
    assert window_of(turns)[-1].prog == "fewer failures"


def test_a_result_a_recorder_did_not_keep_or_the_harness_says_was_empty_is_never_an_outcome_seen_again():
    """Restarts whose job's result a session logger did not keep (``No result content``), or whose result Claude Code
    wrote to its transcript as ``(BashOutput completed with no output)``: no outcome came back, so none came back the
    same after each restart."""
    for nothing in ("No result content", "(BashOutput completed with no output)"):
        turns = [
            t for k in range(1, 5) for t in (start(k), {**bash_output(k, "", "00:00"), "output": nothing}, kill(k))
        ]
        assert play(turns)[0].fired_at is None
        facts = window_of(turns)[1]
        assert facts.unknown if nothing.startswith("No") else facts.empty


def notice(task: str, status: str = "failed") -> dict:
    """The message Claude Code 2.1 sends the model when a background task ends (captured from the real binary)."""
    return {
        "tool": "user_prompt",
        "actor": "person",
        "output": f"<task-notification>\n<task-id>{task}</task-id>\n<tool-use-id>toolu_0001</tool-use-id>\n"
        f"<output-file>/tmp/claude-0/-w/77b7/tasks/{task}.output</output-file>\n<status>{status}</status>\n"
        f'<summary>Background command "Start the server" {status} with exit code 1</summary>\n</task-notification>',
    }


def test_the_harness_telling_a_background_task_ended_is_never_the_persons_word():
    """Three such notices after three starts are no report of the person's that it still fails (a false
    ``person_reports`` before), and the job's output read after each start, ending ``[exited with code 1]``, failed."""
    crash = "Traceback (most recent call last):\nOSError: [Errno 98] Address already in use\n\n[exited with code 1]\n"
    path = "/tmp/claude-0/-w/77b7/tasks/b{k}.output"
    turns = [
        t
        for k in range(3)
        for t in (start(k), notice(f"b{k}"), {"tool": "Read", "args": {"file_path": path.format(k=k)}, "output": crash})
    ]
    window = window_of(turns)
    assert not any(f.actor == "person" or f.reports for f in window)
    assert [f.failed for f in window if f.tool == "Read"] == [True] * 3
    assert "Address already in use" in (window[2].etext or "")
    verdict, _ = play(turns)
    assert verdict.fired_at is not None and "restart_loop" in {s.kind for s in verdict.signals}
    assert jobs.job_notice("<task-notification> said in passing") is None
    assert jobs.job_exit("done\n[exited with code 0]\n") == 0 and jobs.job_exit("done") is None


def test_the_outputs_of_several_jobs_read_one_after_another_are_no_repeat():
    """An inventory of the background shells (``BashOutput`` of each id) whose outputs read alike: each id is another
    job, never noise to fold, so the reads are not equivalent actions with one outcome."""
    same = "> api@1.0.0 api\n> node src/server.js\nClient version 1.15.1 is incompatible with server version 1.7.0."
    turns = [bash_output(k, same, f"1{k}:00") | {"args": {"bash_id": f"{k}7fb6{k}"}} for k in range(6)]
    assert play(turns)[0].fired_at is None
    assert len({f.asig for f in window_of(turns)}) == 6


def test_failures_under_one_shared_header_are_told_apart_by_the_line_each_prints_under_it():
    """webpack-dev-server 5 says "Invalid options object..." over each removed option it finds in turn; fixed one by
    one (https, onBeforeSetupMiddleware, proxy), these are three failures, not the same one three times."""
    header = (
        "[webpack-cli] Invalid options object. Dev Server has been initialized using an options object that does not"
    )
    header += " match the API schema."
    causes = [
        " - options has an unknown property 'https'. These properties are valid:",
        " - options has an unknown property 'onBeforeSetupMiddleware'. These properties are valid:",
        " - options.proxy should be an array:",
    ]
    run = "timeout 40 npx webpack serve --config webpack.dev.js 2>&1 | head -6"
    turns = []
    for k, cause in enumerate(causes):
        out = f"{header}\n{cause}\n   object {{ allowedHosts?, bonjour?, client?, compress? }}"
        turns += [
            edit(f"opt {k}", f"opt {k + 1}"),
            {"tool": "Bash", "args": {"command": run}, "output": out, "exit_code": 1},
        ]
    failures = [f for f in window_of(turns) if f.failed]
    assert len({f.err for f in failures}) == 3 and play(turns)[0].fired_at is None
    same = [t if t["tool"] != "Bash" else {**t, "output": f"{header}\n{causes[0]}"} for t in turns]
    assert len({f.err for f in window_of(same) if f.failed}) == 1


SUITE_STUCK = (
    "============================= test session starts ==============================\n"
    "platform linux -- Python 3.12.6, pytest-8.3.3, pluggy-1.5.0\nrootdir: /home/dev/invoicer\n"
    "configfile: pyproject.toml\nplugins: django-4.9.0, xdist-3.6.1\ncollected 214 items\n\n"
    "tests/billing/test_invoices.py ........................                  [ 11%]\n"
    "tests/billing/test_numbering.py "
)


def task_started(job: str, command: str) -> dict:
    """A start as Claude Code 2.1 answers it: the task's id and the file its output goes to."""
    path = f"/tmp/claude-1000/-home-dev-invoicer/tasks/{job}.output"
    return {
        **start(0, command),
        "output": f"Command running in background with ID: {job}. Output is being written to: {path}",
    }


def task_tail(job: str, wait: int, text: str) -> dict:
    path = f"/tmp/claude-1000/-home-dev-invoicer/tasks/{job}.output"
    return {"tool": "Bash", "args": {"command": f"sleep {wait} && tail -n 12 {path}"}, "output": text, "exit_code": 0}


def task_stop(job: str) -> dict:
    return {"tool": "TaskStop", "args": {"task_id": job}, "output": f"Successfully stopped task: {job}"}


def stuck_runs(commands: list[str], between: list[dict]) -> list[dict]:
    """Each command started in the background, its output read twice unchanged (a test that never returns), stopped."""
    turns: list[dict] = []
    for k, command in enumerate(commands):
        job = f"b{k}x7q2m"
        turns += [task_started(job, command), task_tail(job, 45, SUITE_STUCK), task_tail(job, 90, SUITE_STUCK)]
        turns += [task_stop(job), *between]
    return turns


def test_a_check_in_the_background_stopped_each_time_it_stops_printing_is_a_hang_loop():
    """The stop cuts off a job that hung, as a timeout would: varied command lines and an edit between each run do not
    make the hang new, and the diagnosis names the command that hung, not the stop."""
    commands = ["uv run pytest -n 4 -q", "uv run pytest tests/billing -x", "uv run pytest tests/billing -p no:randomly"]
    turns = stuck_runs(commands, [edit('"workers": 4', '"workers": 2')])
    verdict, steps = play(turns)
    assert verdict.fired_at == 13 and steps[0][2][0].kind == "restart_loop"
    first, _ = play(turns[:14])
    assert "uv run pytest tests/billing -p no:randomly` hung and was cut off 3 times" in first.signals[0].evidence
    assert "hangs" in check_claims(first, turns[:14])


def test_a_server_stopped_while_its_log_idles_or_a_check_still_printing_is_no_hang():
    listening = "[nodemon] starting `node src/server.js`\napi listening on :4000"
    served = stuck_runs(["npm run dev"] * 3, [edit('"port": 4000', '"port": 4100')])
    for k in range(3):
        served[1 + 5 * k]["output"] = served[2 + 5 * k]["output"] = listening
    assert play(served)[0].fired_at is None
    moving = stuck_runs(["uv run pytest -q"] * 3, [edit('"workers": 4', '"workers": 2')])
    for k in range(3):
        moving[2 + 5 * k]["output"] = SUITE_STUCK + "......\ntests/billing/test_pdf.py ...."
    assert not any(f.hang for f in window_of(moving))


def test_every_read_of_a_task_by_its_output_file_is_one_job_whatever_the_wait_before_it():
    turns = [task_started("b1x7q2m", "uv run pytest -q"), task_tail("b1x7q2m", 45, SUITE_STUCK)]
    turns += [task_tail("b1x7q2m", 120, SUITE_STUCK), task_stop("b1x7q2m")]
    window = window_of(turns)
    assert [f.job for f in window] == ["b1x7q2m"] * 4 and window[0].check
    assert window[1].step == window[2].step and window[2].polls == 2 and window[3].hang
    assert jobs.job_id({"file_path": "/tmp/claude-0/x/tasks/b1x7q2m.output"}) == "b1x7q2m"


def suite_ended(job: str, code: int, failure: str) -> dict:
    """``BashOutput`` of a check run in the background that has ended."""
    text = f"{SUITE_STUCK}F\n\n{failure}\n==== 1 failed, 213 passed in 41.07s ====" if code else "==== 214 passed ===="
    return {
        "tool": "BashOutput",
        "args": {"bash_id": job},
        "output": f"<status>{'failed' if code else 'completed'}</status>\n\n<exit_code>{code}</exit_code>\n\n"
        f"<stdout>\n{text}\n</stdout>",
    }


def test_how_a_check_run_in_the_background_ended_is_that_checks_verdict():
    """Read back once it ended, a background test run fails or passes as it would have in the foreground: the same
    failure after each of three different edits is one, and its pass is progress."""
    failure = "E       AssertionError: assert 'INV-2024-00002' == 'INV-2024-00003'"
    turns: list[dict] = []
    for k in range(3):
        turns += [start(k, "uv run pytest -q"), suite_ended(f"bash_{k}", 1, failure)]
        turns += [edit(f'"lock": {k}', f'"lock": {k + 1}')]
    window = window_of(turns)
    assert [f.verdict for f in window if f.tool == "BashOutput"] == ["fail"] * 3
    verdict, steps = play(turns[:-1])  # a rerun in the background is a restart too: the same outcome after each
    assert verdict.fired_at == 7 and {s.kind for s in steps[0][2]} == {"restart_loop", "same_failure"}
    named = next(s for s in steps[0][2] if s.kind == "same_failure").evidence
    assert named.startswith("`Bash uv run pytest -q` failed the same way 3 times (AssertionError: assert")
    passed = window_of([start(9, "uv run pytest -q"), suite_ended("bash_9", 0, "")])[-1]
    assert passed.verdict == "pass" and passed.prog == "check passes"
    served = window_of([start(9, "npm run dev"), suite_ended("bash_9", 1, failure)])[-1]
    assert served.verdict is None  # a server that ended is no check's verdict


def test_a_check_restarted_each_time_it_shows_where_the_run_before_it_hung_is_a_hang_loop():
    """A release build blocked on a lock another process holds: the first run read twice unchanged and stopped hung;
    each run after it, read once showing only what that one showed, hangs at the same place (a second look would show
    no more), so three stops are a hang loop. The harness's notice of a stop is no log of the job's."""
    blocked = "    Blocking waiting for file lock on build directory"
    build = "cargo build --release -p ingest-core 2>&1"
    turns = [start(1, build), bash_output(1, blocked, "30:12"), bash_output(1, blocked, "31:40"), kill(1)]
    for k in (2, 3):
        turns += [start(k, build), bash_output(k, blocked, f"3{k}:25"), kill(k)]
    window = window_of(turns)
    assert [f.hang for f in window if f.tool == "KillShell"] == [True, True, True]
    assert not any(f.logerr for f in window)
    verdict, steps = play(turns)
    assert steps and steps[0][0] == len(turns) - 1 and steps[0][2][0].kind == "restart_loop"
    assert "hangs" in check_claims(verdict, turns)
    moved = [*turns[:4], start(2, build), bash_output(2, "   Compiling ingest-core v0.4.1", "32:25"), kill(2)]
    assert not window_of(moved)[-1].hang  # it got further this time: stopped, not hung


def _finished(k: int, text: str) -> dict:
    """``BashOutput`` of a job that ended with 0: the 0 of the `tail` it was piped into."""
    return {
        "tool": "BashOutput",
        "args": {"bash_id": f"bash_{k}"},
        "output": f"<status>completed</status>\n\n<exit_code>0</exit_code>\n\n<stdout>\n{text}\n</stdout>",
    }


BUILD_FAILED = (
    '#8 2.821       Error: pg_config executable not found.\n#8 ERROR: process "/bin/sh -c pip install -r '
    'requirements.txt" did not complete successfully: exit code: 1\nERROR: failed to solve: process "/bin/sh -c pip '
    'install -r requirements.txt" did not complete successfully: exit code: 1'
)


def test_a_background_check_piped_into_tail_is_judged_by_what_it_printed_not_by_the_pipes_zero():
    """``docker build . 2>&1 | tail -45`` in the background ends with tail's 0: the build failed as its output says,
    and the same failure after each edit is the same failure; without the pipe the job's own 0 is a pass."""
    build = "docker build --progress=plain -t api . 2>&1 | tail -45"
    turns = []
    for k in range(1, 4):
        turns += [start(k, build), _finished(k, BUILD_FAILED), edit(f"libpq{k}", f"libpq{k + 1}")]
    window = window_of(turns)
    assert [f.verdict for f in window if f.tool == "BashOutput"] == ["fail", "fail", "fail"]
    verdict, steps = play(turns[:-1])
    assert steps and any(s.kind == "same_failure" for s in steps[0][2])
    assert "same failure" in check_claims(verdict, turns[:-1])
    unpiped = [
        start(1, "docker build --progress=plain -t api ."),
        _finished(1, "#9 naming to docker.io/library/api done"),
    ]
    assert window_of(unpiped)[-1].verdict == "pass"
