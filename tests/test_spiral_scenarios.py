"""Healthy repetition stays quiet, a cycle of recurring errors fires at the recurrence, and what the monitor says is
true of the turns: scenarios in several variants with noise turns between, and seeded random loops for noise."""

from __future__ import annotations

import random

import pytest
from spiral_claims import check_claims, play, window_of

NOISE = [
    {"tool": "bash", "args": {"command": "ls"}, "output": "README.md\nsrc\ntests\n"},
    {"tool": "bash", "args": {"command": "cat notes.md"}, "output": "# notes\n- check the rollout\n"},
    {
        "tool": "str_replace_editor",
        "args": {"command": "view", "path": "/repo/setup.cfg"},
        "output": "[metadata]\nname = app\n",
    },
]


def with_noise(turns: list[dict], every: int, seed: int) -> list[dict]:
    """``turns`` with a noise turn after every ``every`` of them (which one is seeded)."""
    rng, out = random.Random(seed), []
    for k, t in enumerate(turns, start=1):
        out.append(t)
        if every and k % every == 0:
            out.append(rng.choice(NOISE))
    return out


def bash(command: str, output: str, code: int = 0) -> dict:
    return {"tool": "bash", "args": {"command": command}, "output": output, "exit_code": code}


# --- healthy repetition: none may fire -----------------------------------------------------


def kubectl_polls(statuses: list[str]) -> list[dict]:
    return [
        bash(
            "kubectl get pods -l app=web",
            f"NAME READY STATUS RESTARTS AGE\nweb-7f9c8d6b5-x2k4p {'1/1' if s == 'Running' else '0/1'} "
            f"{s} 0 {5 + 7 * k}s",
        )
        for k, s in enumerate(statuses)
    ]


def rollout_polls(statuses: list[str]) -> list[dict]:
    return [
        bash(
            "kubectl rollout status deploy/web --timeout=1s",
            f'Waiting for deployment "web" rollout to finish: {s}\n'
            f"error: timed out waiting for the condition after {k + 1}.0{k}s",
            1,
        )
        for k, s in enumerate(statuses)
    ]


def ci_polls(statuses: list[str]) -> list[dict]:
    return [
        bash(
            "gh run view 4211",
            f"X main CI #4211 · {s}\nTriggered via push about {k + 1} minutes ago\nJOBS\n* build ({s}) "
            f"in {10 + k}m{k}s (ID 9f3a{k}c2e1b)",
        )
        for k, s in enumerate(statuses)
    ]


POLLS = {
    "pods": (kubectl_polls, ["Pending", "Pending", "ContainerCreating", "ContainerCreating", "Running", "Running"]),
    "rollout": (
        rollout_polls,
        [f"{n} of 3 updated replicas are available..." for n in (0, 0, 1, 1, 2, 2)]
        + ["old replicas are pending termination..."],
    ),
    "ci": (
        ci_polls,
        ["queued", "in_progress", "in_progress", "in_progress (2/5 steps)", "in_progress (4/5 steps)", "completed"],
    ),
}


@pytest.mark.parametrize("every", [0, 1, 2])
@pytest.mark.parametrize("name", sorted(POLLS))
def test_polling_a_rollout_whose_status_changes_is_quiet(name, every):
    make, statuses = POLLS[name]
    turns = with_noise(make(statuses), every, seed=every)
    verdict, _ = play(turns)
    assert verdict.fired_at is None, verdict.diagnosis
    assert any(f.prog == "new output" for f in window_of(turns))


def scroll_pages(tool: str, pages: int) -> list[dict]:
    def page(k: int) -> str:
        return "\n".join(f"{n}:    value_{n} = compute({n}, cache[{n % 7}])" for n in range(k * 100 + 1, k * 100 + 101))

    if tool == "scroll_down":
        return [
            {
                "tool": "scroll_down",
                "args": {},
                "output": f"[File: /repo/big.py (900 lines total)]\n{page(k)}\n({800 - 100 * k} more lines below)",
            }
            for k in range(pages)
        ]
    if tool == "sed":
        return [bash(f"sed -n '{k * 100 + 1},{k * 100 + 100}p' big.py", page(k)) for k in range(pages)]
    return [
        {
            "tool": "str_replace_editor",
            "args": {"command": "view", "path": "/repo/big.py", "view_range": [k * 100 + 1, k * 100 + 100]},
            "output": page(k),
        }
        for k in range(pages)
    ]


@pytest.mark.parametrize("tool", ["scroll_down", "sed", "view"])
def test_paging_through_a_long_file_is_quiet(tool):
    turns = with_noise(scroll_pages(tool, 9), 2 if tool == "sed" else 3, seed=3)
    assert play(turns)[0].fired_at is None


def runner_output(kind: str, failing: int, total: int = 12) -> dict:
    passed = total - failing
    if kind == "pytest":
        tail = f"{failing} failed, {passed} passed in 0.{failing + 3}1s" if failing else f"{passed} passed in 0.42s"
        return bash(
            "python -m pytest -q tests/test_parser.py",
            f"{'F' * failing}{'.' * passed}\nFAILED tests/test_parser.py::test_quote\n{tail}",
            1 if failing else 0,
        )
    if kind == "unittest":
        tail = f"FAILED (failures={failing})" if failing else "OK"
        return bash(
            "python -m unittest tests.test_parser",
            f"Ran {total} tests in 0.0{failing}2s\n\n{tail}",
            1 if failing else 0,
        )
    if kind == "go":
        fails = "".join(f"--- FAIL: TestParse/case_{n} (0.0{n}s)\n" for n in range(failing))
        return bash(
            "go test ./parser/...",
            f"{fails}{'FAIL' if failing else 'ok'}  example.com/parser  0.{failing}12s",
            1 if failing else 0,
        )
    tail = (
        f"Tests: {failing} failed, {passed} passed, {total} total"
        if failing
        else f"Tests: {passed} passed, {total} total"
    )
    return bash("npx jest parser", f"FAIL src/parser.test.js\n{tail}\nTime: 1.{failing}2 s", 1 if failing else 0)


def edit(k: int) -> dict:
    return {
        "tool": "str_replace_editor",
        "args": {
            "command": "str_replace",
            "path": "/repo/src/parser.py",
            "old_str": f"    return tokens[{k}]",
            "new_str": f"    return tokens[{k + 1}]",
        },
        "output": (
            "The file /repo/src/parser.py has been edited. Review the changes and make sure they are as expected."
        ),
    }


@pytest.mark.parametrize("edits_between", [1, 2])
@pytest.mark.parametrize("kind", ["pytest", "unittest", "jest", "go"])
def test_a_test_driven_loop_with_a_falling_failure_count_is_quiet(kind, edits_between):
    turns, k = [], 0
    for failing in (5, 3, 2, 1, 0):
        turns.append(runner_output(kind, failing))
        for _ in range(edits_between if failing else 0):
            turns.append(edit(k))
            k += 1
    turns = with_noise(turns, 3, seed=edits_between)
    assert play(turns)[0].fired_at is None
    assert [f.prog for f in window_of(turns) if f.fails is not None].count("fewer failures") == 4


@pytest.mark.parametrize("variant", ["score-on-edit", "verifier-run", "with-views", "printed-score"])
def test_many_small_edits_to_one_file_while_the_score_rises_is_quiet(variant):
    turns = []
    for k in range(12):
        e = edit(k)
        if variant == "score-on-edit":
            e["score"] = 0.1 + k * 0.05
        turns.append(e)
        if variant == "printed-score":  # no score field: the verifier prints it
            turns.append(bash("python verify.py", f"checked 14 cases\nScore: {0.1 + k * 0.05:.2f}"))
        elif variant != "score-on-edit":
            turns.append({**bash("python verify.py", f"score: {0.1 + k * 0.05:.2f}"), "score": 0.1 + k * 0.05})
        if variant == "with-views":
            turns.append(
                {
                    "tool": "str_replace_editor",
                    "args": {"command": "view", "path": "/repo/src/parser.py"},
                    "output": f"   1\tdef parse(tokens):\n   2\t    return tokens[{k + 1}]\n",
                }
            )
    assert play(turns)[0].fired_at is None
    assert [f.prog for f in window_of(turns) if f.score is not None][1:] == ["higher score"] * 11


def test_equal_confirmations_of_different_edits_are_not_equivalent():
    window = window_of([edit(k) for k in range(6)])
    assert len({f.asig for f in window}) == 6 and len({f.out for f in window}) == 1


# --- the seed's cycle: fires at the recurrence, with the cycle named ------------------------

DEPS = [
    "ModuleNotFoundError: No module named 'torch'",
    "fatal error: NvInfer.h: No such file or directory",
    "error: cuda-python is required at build time for JIT support",
    "ImportError: cannot import name 'cudart' from 'cuda'",
]
BUILDS = {
    "docker": lambda k: (
        "docker build --build-arg ORDER="
        + ",".join(["torch", "tensorrt", "cuda-python"][k % 3 :] + ["torch", "tensorrt", "cuda-python"][: k % 3])
        + " -t trt ."
    ),
    "script": lambda k: (
        f"./build.sh --order '{' -> '.join(['cuda-python', 'tensorrt', 'torch'][:: 1 if k % 2 else -1])}' "
        f"--jobs {k + 2}"
    ),
    "make": lambda k: (
        "cd /src && make "
        f"{' '.join(['torch', 'trt', 'cuda', 'llm'][k % 4 :] + ['torch', 'trt', 'cuda', 'llm'][: k % 4])}"
    ),
}


def build(variant: str, k: int, error: str) -> dict:
    wrapper = (
        '\nERROR: failed to solve: process "/bin/sh -c ./install.sh" did not complete successfully: exit code: 1'
        if variant == "docker"
        else ""
    )  # BuildKit says the step failed after the step's own error
    return bash(BUILDS[variant](k), f"[build {k + 1}] step 4/6 failed after {31 + k}.{k}s\n{error}{wrapper}", 1)


@pytest.mark.parametrize("cycle", [[0, 1, 2, 3, 0], [0, 1, 2, 0], [2, 0, 3, 1, 2]])
@pytest.mark.parametrize("variant", sorted(BUILDS))
def test_a_build_whose_errors_come_back_in_a_cycle_fires_at_the_recurrence(variant, cycle):
    every = len(cycle) % 2  # with and without noise turns between the builds
    builds = [build(variant, k, DEPS[e]) for k, e in enumerate(cycle)]
    turns = with_noise(builds, every, seed=len(cycle))
    verdict, steps = play(turns)
    assert verdict.fired_at == turns.index(builds[-1])  # the first firing is the error coming back
    (step,) = [s for s in steps if s[0] == verdict.fired_at]
    assert [s.kind for s in step[2]] == ["error_cycle"] and step[2][0].failure_class == "circular dependency"
    cycle_text = " -> ".join(DEPS[e] for e in cycle)
    assert cycle_text in step[2][0].evidence
    replayed, _ = play(turns[: verdict.fired_at + 1])
    assert cycle_text in replayed.diagnosis and "circular dependency" in replayed.diagnosis
    assert "cycle" in check_claims(replayed, turns[: verdict.fired_at + 1])


def test_other_steps_of_the_same_program_between_the_builds_do_not_hide_the_cycle():
    builds = [build("docker", k, DEPS[e]) for k, e in enumerate([0, 1, 2, 0])]
    between = [
        bash("docker images", "REPOSITORY TAG IMAGE ID\nbase latest 3f2a1b4c5d6e"),
        bash("docker ps -a", "CONTAINER ID IMAGE"),
        bash("ls missing/", "ls: cannot access 'missing/': No such file or directory", 2),
    ]
    turns = [t for k, b in enumerate(builds) for t in (b, between[k % 3])][:-1]
    verdict, steps = play(turns)
    assert verdict.fired_at == len(turns) - 1 and "error_cycle" in {s.kind for s in steps[0][2]}


def test_a_cycle_broken_by_a_success_or_an_edit_does_not_fire():
    a, b, c = (DEPS[0], DEPS[1], DEPS[2])
    ok = bash(BUILDS["docker"](9), "Successfully built 3f2a1b4c")
    fix = edit(0)
    for between in (ok, fix):
        turns = [build("docker", 0, a), build("docker", 1, b), between, build("docker", 2, c), build("docker", 3, a)]
        assert play(turns)[0].fired_at is None
    same = [build("docker", 0, a), build("docker", 0, b), build("docker", 0, a)]  # not varied: the same call
    assert "error_cycle" not in {s.kind for st in play(same)[1] for s in st[2]}


def test_errors_that_come_back_while_the_failures_fall_are_no_cycle():
    """Edits chained before each run (``sed -i ... && pytest``) while the failures fall 6, 3, 2, 1: the error a
    narrower run showed before showing again is the last failure left, not a cycle."""

    def run(edit: str, fails: int, error: str) -> dict:
        tail = f"FAILED tests/test_report.py::test_summary - {error}\n{fails} failed, {24 - fails} passed in 0.4s"
        return bash(f"sed -i 's/{edit}/Decimal/' budget/report.py && python -m pytest -q", tail, 1)

    narrow = bash("python -m pytest -q tests/test_envelopes.py::test_rollover", "E       " + TYPE_ERROR, 1)
    turns = [run("float", 6, TYPE_ERROR), run("0.0", 3, "InvalidOperation"), narrow, run("sum", 2, TYPE_ERROR)]
    turns += [run("carry", 1, TYPE_ERROR), bash("python -m pytest -q tests/test_report.py", "E       " + TYPE_ERROR, 1)]
    assert "error_cycle" not in {s.kind for st in play(turns)[1] for s in st[2]}


TYPE_ERROR = "TypeError: unsupported operand type(s) for +: 'float' and 'decimal.Decimal'"


# --- noise never makes a loop look like progress ---------------------------------------------


def noisy(rng: random.Random, kinds: list[int]) -> str:
    """Pure noise of the given kinds (times, ages, ids, pids, durations, byte counts), with fresh values each call."""
    choices = [
        f"2026-0{rng.randint(1, 9)}-1{rng.randint(0, 9)}T1{rng.randint(0, 9)}"
        f":{rng.randint(10, 59)}:{rng.randint(10, 59)}Z",
        f"{rng.randint(1, 59)}{rng.choice('smh')} ago",
        f"age {rng.randint(1, 300)}s",
        f"id {rng.getrandbits(64):016x}",
        f"run {rng.getrandbits(128):032x}"[:40],
        f"{rng.getrandbits(32):08x}-{rng.getrandbits(16):04x}-{rng.getrandbits(16):04x}"
        f"-{rng.getrandbits(16):04x}-{rng.getrandbits(48):012x}",
        f"pid {rng.randint(100, 99999)}",
        f"took {rng.randint(1, 999)}ms",
        f"in {rng.random() * 9:.2f}s",
        f"wrote {rng.randint(1, 9999)} bytes",
        f"{rng.randint(1, 999)} KB",
        f"{rng.randint(1, 59)}m{rng.randint(1, 59)}s",
    ]
    return " ".join(choices[k] for k in kinds)


LOOPS = [
    ("bash", {"command": "kubectl get pods"}, "NAME READY STATUS\nweb-0 0/1 CrashLoopBackOff {noise}", 0),
    (
        "bash",
        {"command": "python train.py"},
        "loading data {noise}\nRuntimeError: CUDA error: device-side assert triggered {noise}",
        1,
    ),
    (
        "bash",
        {"command": "curl -s localhost:8080/health"},
        "{noise} curl: (7) Failed to connect to localhost port 8080",
        7,
    ),
    ("bash", {"command": "./deploy.sh"}, "deploy started {noise}\nwaiting {noise}\nerror: image not found", 1),
]


@pytest.mark.parametrize("seed", range(8))
def test_noise_only_changes_never_make_a_loop_look_like_progress(seed):
    rng = random.Random(seed)
    tool, args, template, code = LOOPS[seed % len(LOOPS)]
    kinds = [rng.sample(range(12), 3) for _ in range(2)]  # which noise goes where: the same in every repetition
    turns = [
        {
            "tool": tool,
            "args": args,
            "exit_code": code,
            "output": template.replace("{noise}", noisy(rng, kinds[0]), 1).replace("{noise}", noisy(rng, kinds[1]), 1),
        }
        for _ in range(6)
    ]
    window = window_of(turns)
    assert [f.prog for f in window] == [None] * 6 and len({f.out for f in window}) == 1
    verdict, _ = play(turns)
    assert verdict.fired_at is not None and verdict.fired_at <= 4


def test_a_poll_that_stops_changing_fires_and_says_what_reset_the_count():
    statuses = [
        "Pending",
        "ContainerCreating",
        "CrashLoopBackOff",
        "CrashLoopBackOff",
        "CrashLoopBackOff",
        "CrashLoopBackOff",
    ]
    turns = kubectl_polls(statuses)
    verdict, steps = play(turns)
    assert verdict.fired_at == 5
    (signal,) = [s for s in steps[0][2] if s.kind == "identical_calls"]
    assert signal.turns == [2, 3, 4, 5] and "since turn 2 brought new output" in signal.evidence
    check_claims(play(turns[:6])[0], turns)
