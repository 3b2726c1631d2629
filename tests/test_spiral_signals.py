"""Each detector signal fires on its pattern and stays silent on the look-alike that is progress."""

from __future__ import annotations

import pytest

from strict_loop.model.monitoring import MonitorState, TurnFacts
from strict_loop.model.settings import MonitorSettings, SpiralThresholds
from strict_loop.model.turns import Turn
from strict_loop.monitor import fingerprint as fp
from strict_loop.monitor.ladder import observe, replay
from strict_loop.monitor.spiral import SpiralDetector, facts


def window_of(turns: list[dict], fstates: list[dict] | None = None) -> list[TurnFacts]:
    window: list[TurnFacts] = []
    for i, t in enumerate(turns):
        window.append(facts(Turn.model_validate(t), i, window, (fstates or [{}] * len(turns))[i]))
    return window


def fired(turns: list[dict], **thresholds) -> set[str]:
    """Signal kinds firing on the last turn."""
    return {s.kind for s in SpiralDetector(SpiralThresholds(**thresholds)).evaluate(window_of(turns))}


def bash(cmd: str, out: str, error: bool = False, thought: str = "") -> dict:
    return {"tool": "bash", "args": {"command": cmd}, "output": out, "error": error, "thought": thought}


# --- identical calls -------------------------------------------------------------------------


def test_identical_failing_calls_fire():
    turns = [
        bash(
            f"cd fastxml/ # try {i}" if i == 0 else "cd fastxml/",
            f"bash: line {40 + i}: cd: fastxml/: No such file or directory",
            True,
        )
        for i in range(5)
    ]
    assert "identical_calls" in fired(turns)


def test_polling_with_changing_output_is_silent():
    turns = [bash("tail -n 1 train.log", f"epoch {i} loss {1.0 / (i + 1):.4f}") for i in range(8)]
    assert fired(turns) == set()


def test_walking_up_with_cd_is_silent():
    assert fired([bash("cd ..", "")] * 4) == set()


# --- equivalent outcomes ---------------------------------------------------------------------


def test_equivalent_actions_differing_in_noise_fire():
    turns = [
        {
            "tool": "edit",
            "args": {"command": f"edit {10 + i}:{12 + i}\n    return x\nend_of_edit"},
            "output": "Your proposed edit has introduced new syntax error(s).\nE999 IndentationError: unexpected "
            f"indent (line {10 + i})",
            "error": True,
        }
        for i in range(4)
    ]
    assert {"equivalent_outcomes", "repeated_error"} <= fired(turns)


def test_scrolling_a_file_is_silent():
    turns = [
        {
            "tool": "scroll_down",
            "args": {},
            "output": "\n".join(f"{n}: line {n} of code {n * 7}" for n in range(k * 100, k * 100 + 100)),
        }
        for k in range(8)
    ]
    assert fired(turns) == set()


def test_normalization_drops_noise_but_keeps_meaning():
    a = "2026-11-22T10:00:01Z pid 4242 took 1.5s at 0x7f3a2b tmp_ab12cd bash: line 12: build failed"
    b = "2026-11-22T10:09:59Z pid 9999 took 87ms at 0x1111ff tmp_zz99yy bash: line 57: build failed"
    assert fp.strict(a) == fp.strict(b)
    assert fp.strict("progress 3 of 10") != fp.strict("progress 4 of 10")  # a poll that moved is new information
    assert fp.loose("progress 3 of 10") == fp.loose("progress 4 of 10")


def test_ids_a_service_gives_each_request_are_noise_and_names_are_not():
    s3 = "Error: creating S3 Bucket (logs): StatusCode: 409, RequestID: {}, HostID: {}, BucketAlreadyExists"
    a = s3.format("EFPCNFEB088BEZFY", "b75tX9rnSD5qyCnogpjk+Vnd7zVkEaGz=")
    b = s3.format("FMYBPQ1JFZ62QZEB", "18DPm7aKAjCbOfltQumZYXrTT/VhVZ73ym=")
    assert fp.strict(a) == fp.strict(b)
    assert fp.strict('{"error":"invalid_token","requestId":"req_te6drc88z6"}') == fp.strict(
        '{"error":"invalid_token","requestId":"req_jwsjaxwkk2"}'
    )
    assert fp.strict("X-Request-Id: req_1e9b44c0f3") == fp.strict("X-Request-Id: req_a40d7e92c6")
    # a timestamp in a log file's name, its colons made underscores
    assert fp.strict("see /home/u/.npm/_logs/2024-05-21T10_02_41_233Z-debug-0.log") == fp.strict(
        "see /home/u/.npm/_logs/2024-05-21T10_07_58_671Z-debug-0.log"
    )
    # a Unix time in a JSON log line (milliseconds here); a number of that length out of its range is kept
    assert fp.strict('{"time":1717412165403,"msg":"fatal"}') == fp.strict('{"time":1717412629064,"msg":"fatal"}')
    assert fp.strict("order 1234567890 failed") != fp.strict("order 1234567891 failed")
    # a pod's generated suffix, with a digit in it or not
    assert fp.strict("pod orders-api-59c7d4f8b-dccjk crashed") == fp.strict("pod orders-api-7f5b9d6c8-s26z2 crashed")
    # a name is no id: a test, a class or a package with a digit in it stays what it is
    assert fp.strict("TestHtml5QrcodeScanner failed") != fp.strict("TestHtml5QrcodeReader failed")
    assert fp.strict("ModuleNotFoundError: No module named 'pydantic2'") != fp.strict(
        "ModuleNotFoundError: No module named 'pydantic3'"
    )


# --- repeated error through varied actions --------------------------------------------------

CYCLE = [
    "tensorrt -> torch -> cuda-python",
    "cuda-python -> tensorrt -> torch",
    "torch -> cuda-python -> tensorrt",
    "tensorrt (dev) -> torch -> cuda-python",
    "torch (minimal) -> tensorrt",
]


def build(order: str, missing: str) -> dict:
    return bash(
        f"./build.sh --order '{order}'",
        f"Step 3/7: building ...\nERROR: {missing} is required but not built yet\n"
        "error: circular dependency detected: tensorrt -> cuda-python -> torch -> tensorrt",
        True,
    )


def test_same_error_class_through_varied_actions_fires():
    turns = [
        build(order, missing)
        for order, missing in zip(CYCLE, ["torch", "NvInfer.h", "cuda-python", "torch"], strict=False)
    ]
    signals = fired(turns)
    assert "repeated_error" in signals and "identical_calls" not in signals


def test_errors_that_change_and_get_fixed_are_silent():
    turns = [
        bash("python app.py", "ModuleNotFoundError: No module named 'requests'", True),
        bash("pip install requests", "Successfully installed"),
        bash("python app.py", "KeyError: 'API_URL'", True),
        bash("export API_URL=x; python app.py", "TypeError: bad operand", True),
        {"tool": "edit", "args": {"path": "app.py", "command": "fix"}, "output": "File updated."},
        bash("python app.py", "ok: 3 records"),
    ]
    assert fired(turns) == set()


def test_one_command_failing_the_same_way_across_edits_fires():
    turns = []
    for module in ["com.x.Json", "src.com", "src.main.java.com.x.Json", "com.x.Json"]:
        turns.append(
            {
                "tool": "edit",
                "args": {"command": f"edit 2:2\nfrom {module} import Json\nend_of_edit"},
                "output": "File updated.",
            }
        )
        turns.append(bash("python test_json.py", f"ModuleNotFoundError: No module named '{module}'", True))
    assert "repeated_error" in fired(turns)


# --- file oscillation ------------------------------------------------------------------------


def test_file_returning_to_an_earlier_state_fires_on_the_second_revert_only():
    edit = {"tool": "Edit", "args": {"file_path": "index.html"}, "output": "ok"}
    turns = [edit, {"tool": "Read", "args": {"file_path": "index.html"}, "output": "<html>"}, edit, edit, edit]
    window = window_of(turns, [{"index.html": "A"}, {}, {"index.html": "B"}, {"index.html": "A"}, {"index.html": "B"}])
    assert "file_oscillation" not in {
        s.kind for s in SpiralDetector().evaluate(window[:4])
    }  # one revert is a correction
    assert "file_oscillation" in {s.kind for s in SpiralDetector().evaluate(window)}


def test_edit_view_churn_with_self_talk_fires_and_plain_iteration_does_not():
    def edit(thought: str) -> dict:
        return {
            "tool": "Edit",
            "args": {"file_path": "index.html", "old_string": "<main>", "new_string": thought[:5]},
            "output": "ok",
            "thought": thought,
        }

    view = {"tool": "Read", "args": {"file_path": "index.html"}, "output": "<html><main></main></html>"}
    churn = [
        edit("insert the tab wrapper"),
        view,
        edit("the insert went to the wrong place, I broke the layout"),
        view,
        edit("the file is getting messed up, let me restore it"),
    ]
    assert "file_oscillation" in fired(churn)
    calm = [edit("add header"), view, edit("add nav"), view, edit("add footer")]
    assert "file_oscillation" not in fired(calm)


# --- alternation, monologue, error rate, self-diagnosis, score --------------------------------


def test_ab_cycle_without_new_information_fires():
    a = {"tool": "search_file", "args": {"command": "search_file convert"}, "output": "Found 2 matches"}
    b = {"tool": "goto", "args": {"command": "goto 1699"}, "output": "[File: X.java (2000 lines)]\n1699: return x;"}
    assert "alternation" not in fired([a, b, a, b])  # twice through a two-step cycle: a second look, not yet a loop
    assert "alternation" in fired([a, b, a, b, a, b])


def test_descending_directories_is_not_alternation():
    turns = []
    for d in ["src", "main", "java", "com"]:
        turns += [bash(f"cd {d}/", ""), bash("ls -F", f"{d}_child_a/  {d}_child_b/  {d}.txt")]
    assert fired(turns) == set()


def test_monologue_fires_after_three_turns_without_a_tool():
    talk = {"tool": "message", "args": {}, "output": "", "thought": "Let me think about this."}
    assert "monologue" in fired([talk] * 3)
    assert fired([talk] * 2) == set()


def test_error_rate_fires_only_without_new_information():
    stuck = [bash(f"make target{i % 3}", "make: *** No rule to make target. Stop.", True) for i in range(12)]
    assert "error_rate" in fired(
        stuck, identical_repeats=20, equivalent_repeats=20, error_repeats=20, command_repeats=20
    )
    learning = [bash(f"pytest -k case{i}", f"FAILED test_case{i} - assert {i} == {i + 1}", True) for i in range(12)]
    assert "error_rate" not in fired(
        learning, identical_repeats=20, equivalent_repeats=20, error_repeats=20, command_repeats=20
    )


def test_self_diagnosis_needs_admissions_and_no_new_information():
    same = bash("python repro.py", "AssertionError: expected 3", True)
    fix = {"tool": "Edit", "args": {"file_path": "repro.py", "old_string": "a", "new_string": "b"}, "output": "ok"}
    talk = [
        same,
        dict(same, thought="Still failing. This isn't working."),
        fix,
        dict(same, thought="I broke something, let me revert my change"),
    ]
    quiet = {"identical_repeats": 20, "equivalent_repeats": 20, "error_repeats": 20, "command_repeats": 20}
    assert "self_diagnosis" in fired(talk, **quiet)
    # saying it twice while only looking, with no attempt between, is one admission
    looking = [same, dict(same, thought="Still failing. This isn't working."), dict(same, thought="I broke it")]
    assert "self_diagnosis" not in fired(looking, **quiet)
    recovering = talk[:3] + [
        bash("python repro.py", "all 12 checks passed", thought="I broke it before; let me revert the change")
    ]
    assert "self_diagnosis" not in fired(recovering)


def test_score_dropping_twice_fires_and_a_rising_score_suppresses_everything():
    turns = [dict(bash("eval", "score"), score=s) for s in (0.82, 0.78, 0.71)]
    assert "score_drop" in fired(turns)
    rising = [bash("cd fastxml/", "No such file or directory", True)] * 3 + [
        dict(bash("cd fastxml/", "No such file or directory", True), score=0.5)
    ]
    rising[-2] = dict(rising[-2], score=0.4)
    assert fired(rising) == set()


def test_fewer_failures_are_counted_against_the_same_command_only():
    """Jest failing 1 test after tsc found 5 errors is no drop: they count other things."""
    turns = [
        bash("npx tsc --noEmit", "Found 5 errors in 2 files.", True),
        bash("npm test -- webhook", "Tests:       1 failed, 1 total", True),
        bash("npm test -- webhook", "Tests:       1 failed, 1 total", True),
        bash("npx tsc --noEmit", "Found 3 errors in 2 files.", True),
    ]
    progs = [f.prog for f in window_of(turns)]
    assert progs[1] != "fewer failures" and progs[3] == "fewer failures"


def test_failing_test_count_going_down_suppresses():
    turns = [bash("pytest -q", f"{n} failed, {20 - n} passed", True) for n in (9, 7, 5, 3)]
    assert fired(turns) == set()


@pytest.mark.parametrize(
    "message, name",
    [
        ("RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB", "CUDA out of memory"),
        ("step 400: loss nan", "NaN loss"),
        ("ImportError: cannot import name 'x' from 'y'", "missing module"),
        ("OSError: [Errno 28] No space left on device", "disk full"),
        ("subprocess.TimeoutExpired: timed out after 30 seconds", "timeout"),
        ("PermissionError: [Errno 13] Permission denied: '/etc/x'", "permission denied"),
        ("requests.exceptions.ConnectionError: [Errno 111] Connection refused", "connection refused"),
        ("openai.RateLimitError: 429 Too Many Requests", "rate limit"),
        ("This model's maximum context length is 128000 tokens", "context window"),
        ('  File "a.py", line 3\nSyntaxError: invalid syntax', "syntax error"),
        ("error: circular dependency detected: a -> b -> a", "circular dependency"),
        ("curl: (60) SSL certificate problem: unable to get local issuer certificate", "untrusted certificate"),
        ("npm ERR! code SELF_SIGNED_CERT_IN_CHAIN", "untrusted certificate"),
        ("x509: certificate signed by unknown authority", "untrusted certificate"),
        ("[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed", "untrusted certificate"),
        (
            "PreToolUse:Edit hook error: [python3 guard.py]: BLOCKED: db/versions/0012.py is append-only",
            "blocked by a hook",
        ),
        ("Command blocked by PreToolUse hook: no force push. Command: git push -f", "blocked by a hook"),
    ],
)
def test_failure_classes_have_remedies(message, name):
    cls = fp.classify([message])
    assert cls is not None and cls.name == name and len(cls.remedy) > 20


def test_one_failure_class_through_other_tools_each_saying_it_their_way_is_the_same_error():
    """pip, curl, requests and npm each word an untrusted TLS chain differently (new lines each time): the class keeps
    coming back, so the fourth is no news."""
    said = {
        "pip install -r requirements.txt": "WARNING: Retrying ... SSLError(SSLCertVerificationError(1, '[SSL: "
        "CERTIFICATE_VERIFY_FAILED] certificate verify failed: unable to get local issuer certificate'))",
        "curl -sS https://pypi.org/simple/ -o /dev/null": "curl: (60) SSL certificate problem: unable to get local "
        "issuer certificate",
        "python -c 'import requests; requests.get(\"https://pypi.org\")'": "requests.exceptions.SSLError: "
        "HTTPSConnectionPool(host='pypi.org', port=443): certificate verify failed",
        "cd web && npm ci": "npm ERR! code SELF_SIGNED_CERT_IN_CHAIN\nnpm ERR! errno SELF_SIGNED_CERT_IN_CHAIN\n"
        "npm ERR! request to https://registry.npmjs.org/zod failed, reason: self-signed certificate in chain",
    }
    turns = [bash(command, output, True) for command, output in said.items()]
    assert "repeated_error" in fired(turns)
    assert "repeated_error" not in fired(turns[:3])


def test_one_guard_blocking_the_same_change_through_every_tool_is_the_same_error():
    """A PreToolUse hook blocks an edit of an applied migration, then the same change by MultiEdit, Write and sed: the
    reasons differ with the tool, the block is the same; three blocks are not yet a loop."""
    reason = "[python3 ~/.claude/hooks/guard_paths.py]: BLOCKED: migrations/versions/0012_job.py is append-only"
    path = {"file_path": "migrations/versions/0012_job.py"}
    turns = [
        Turn(
            tool="Edit",
            args={**path, "old_string": "sa.Integer()", "new_string": "sa.SmallInteger()"},
            output=f"PreToolUse:Edit hook error: {reason}",
            error=True,
        ),
        Turn(
            tool="MultiEdit",
            args={**path, "edits": [{"old_string": "Integer", "new_string": "SmallInteger"}]},
            output=f"PreToolUse:MultiEdit hook error: {reason}",
            error=True,
        ),
        Turn(
            tool="Write",
            args={**path, "content": "revision = '0012'"},
            output=f"PreToolUse:Write hook error: {reason}",
            error=True,
        ),
        Turn(
            tool="Bash",
            args={"command": "sed -i 's/Integer/SmallInteger/' migrations/versions/0012_job.py"},
            output=f"PreToolUse:Bash hook error: {reason} (command writes to a protected path)",
            error=True,
        ),
    ]
    verdict, steps = replay(turns)
    assert verdict.fired_at == 3 and steps[-1][2][0].kind == "repeated_error"
    assert "blocked by a hook" in steps[-1][2][0].evidence and "hook blocks this on purpose" in verdict.whisper
    assert replay(turns[:3])[0].fired_at is None


def test_ladder_whispers_twice_then_pauses_and_a_quiet_stretch_resets():
    settings = MonitorSettings()
    stuck = Turn(tool="bash", args={"command": "cd fastxml/"}, output="No such file or directory", error=True)
    state, actions = MonitorState(), []
    for _ in range(7):
        state, action, _ = observe(state, stuck, settings)
        actions.append(action)
    assert actions == ["none", "none", "none", "whisper", "whisper2", "pause", "none"] and state.paused
    calm, _ = replay(
        [stuck] * 4 + [Turn(tool="bash", args={"command": f"ls dir{i}"}, output=f"file{i}.txt") for i in range(8)]
    )
    assert calm.level == 0 and calm.fired_at == 3


def test_state_stays_bounded_over_a_long_run():
    state = MonitorState()
    for i in range(500):
        state, _, _ = observe(
            state, Turn(tool="bash", args={"command": f"echo {i}"}, output=f"value {i}\n" * 50), MonitorSettings()
        )
    size = SpiralDetector().window_size  # 42 turns: the longest window, a CI run's push-wait-read cycles
    assert len(state.window) == size and len(state.model_dump_json()) < 1_850 * size  # each fact bounded (its flags)


def test_writing_a_new_file_is_an_attempt_not_progress():
    fail = bash("python repro.py", "AssertionError: expected 3", True)
    new_file = {
        "tool": "Write",
        "args": {"file_path": "tests/test_new_case.py", "content": "def test(): ..."},
        "output": "ok",
    }
    assert "repeated_error" not in fired([fail] * 3)
    assert "repeated_error" in fired([fail] * 3 + [new_file, fail])  # the check after the new file failed the same way
    assert fired([fail] * 4 + [new_file]) == set()  # the write itself fires nothing
