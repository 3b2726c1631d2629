"""Changes that do not move what the agent measures (``no_effect``): one measuring command run again after each change
(an edit, a setting, an index), printing the same report with numbers that only jitter. Read from what the runs
printed; a passing check, a failing run and fixed counts printed again are not it."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from spiral_claims import check_claims, play, window_of

from strict_loop.model.monitoring import MonitorState
from strict_loop.model.settings import MONITOR_PROFILES, MonitorSettings
from strict_loop.model.turns import Turn
from strict_loop.monitor import printed
from strict_loop.monitor.ladder import observe, replay

SCENARIOS = Path(__file__).parent / "fixtures" / "scenarios"


def scenario(name: str) -> list[dict]:
    return [json.loads(line) for line in (SCENARIOS / f"{name}.jsonl").read_text().splitlines()]


def bash(command: str, output: str, code: int = 0) -> dict:
    return {"tool": "Bash", "args": {"command": command}, "output": output, "exit_code": code}


def edit(path: str, old: str, new: str) -> dict:
    return {"tool": "Edit", "args": {"file_path": path, "old_string": old, "new_string": new}, "output": "ok"}


def fired(turns: list[dict], settings: MonitorSettings | None = None) -> list[int]:
    """The turns at which ``no_effect`` fired."""
    steps = replay([Turn.model_validate(t) for t in turns], settings)[1]
    return [i for i, _, signals in steps if any(s.kind == "no_effect" for s in signals)]


EXPLAIN = "psql -d shop -c \"EXPLAIN ANALYZE SELECT * FROM orders WHERE lower(email) = 'a@b.c'\""


def plan(ms: float, hits: int, scan: str = "Seq Scan on orders") -> str:
    return (
        f"{scan}  (cost=0.00..48211.00 rows=6012 width=88) (actual time=0.031..{ms - 2:.3f} rows=1 loops=1)\n"
        "  Filter: (lower((email)::text) = 'a@b.c'::text)\n"
        f"  Buffers: shared hit={hits} read={40210 - hits}\n"
        f"Planning Time: {0.2 + hits % 7 / 10:.3f} ms\n"
        f"Execution Time: {ms:.3f} ms\n"
        "(6 rows)\n"
    )


CHANGES = [
    bash('psql -d shop -c "CREATE INDEX orders_email_idx ON orders (email)"', "CREATE INDEX"),
    bash('psql -d shop -c "ANALYZE orders"', "ANALYZE"),
    bash('psql -d shop -c "CREATE INDEX orders_email_hash ON orders USING hash (email)"', "CREATE INDEX"),
    bash("psql -d shop -c \"ALTER SYSTEM SET random_page_cost = 1.1\" -c 'SELECT pg_reload_conf()'", "ALTER SYSTEM"),
]
TIMES = [(1711.4, 20412), (1698.8, 20508), (1722.1, 20644), (1704.3, 20710), (1716.2, 20590)]


def query_loop(times=TIMES, changes=CHANGES) -> list[dict]:
    turns = [bash(EXPLAIN, plan(*times[0]))]
    for change, (ms, hits) in zip(changes, times[1:], strict=False):
        turns += [change, bash(EXPLAIN, plan(ms, hits))]
    return turns


def test_a_measurement_four_changes_do_not_move_fires_and_the_diagnosis_names_it():
    turns = scenario("Z_measure_unmoved")
    verdict, steps = play(turns)
    assert verdict.fired_at == 11 and steps[0][2][0].kind == "no_effect"
    first, _ = play(turns[:12])
    assert "printed the same report after each of 3 changes before it, its numbers within 5%" in first.diagnosis
    assert "(last: Range (min … max): 797.7 ms … 826.0 ms 10 runs)" in first.diagnosis
    assert "the agent made 3 edit(s) (/home/dev/thumbs/Cargo.toml, /home/dev/thumbs/src/resize.rs)" in first.diagnosis
    assert "Find where the time or memory actually goes" in first.recommended_action
    assert {"unmoved", "tried between"} <= set(check_claims(first, turns[:12]))


def test_settings_changed_by_commands_count_as_changes():
    """No file is edited: each index created, statistics gathered, setting changed is a change the plan ignores."""
    turns = query_loop()
    assert fired(turns) == [6, 8]
    verdict, _ = play(turns[:7])
    assert "(last: Execution Time: 1704.300 ms)" in verdict.diagnosis
    assert "unmoved" in check_claims(verdict, turns[:7])


@pytest.mark.parametrize(
    "turns",
    [
        pytest.param(scenario("ZB_measure_moves"), id="a real change moves the numbers"),
        pytest.param(
            query_loop([*TIMES[:3], (0.042, 4), (0.039, 4)]), id="the plan changes once the right index exists"
        ),
        pytest.param(query_loop([(1711.4, 20412), (1520.0, 20508), (1322.1, 20644), (1104.3, 20710)]), id="falling"),
        pytest.param(
            [bash(EXPLAIN, plan(ms, hits)) for ms, hits in TIMES], id="the same measurement with nothing changed"
        ),
    ],
)
def test_numbers_that_move_or_runs_with_nothing_changed_between_stay_quiet(turns):
    assert fired(turns) == []


def test_one_report_printed_by_commands_chained_or_flagged_otherwise_is_one_measurement():
    """The measurement run after a setting set in the same command, or with another flag, prints the same report: it
    is the same measurement, and a command changed between runs is a change (``PYTHONOPTIMIZE=2 hyperfine ...``)."""
    runs = [
        "hyperfine --warmup 3 'acmectl --help'",
        "pip install -U typer rich -q && hyperfine --warmup 3 'acmectl --help'",
        "PYTHONOPTIMIZE=2 hyperfine --warmup 3 'acmectl --help'",
        "python -m compileall -q src && hyperfine --warmup 3 'acmectl --help'",
    ]
    times = [1.792, 1.781, 1.799, 1.788]
    out = "Benchmark 1: acmectl --help\n  Time (mean ± σ):      {:.3f} s ±  0.031 s    [User: 1.6{} s, System: 0.1{} s]"
    turns = [bash(c, out.format(t, k + 1, k + 2)) for k, (c, t) in enumerate(zip(runs, times, strict=True))]
    assert fired(turns) == [3]
    verdict, _ = play(turns)
    assert "unmoved" in check_claims(verdict, turns)


def wrk(p50: float, p99: float, rps: float) -> str:
    """A load test's report: its own last twelve lines."""
    return (
        "Running 30s test @ http://localhost:3000/api/orders\n  4 threads and 64 connections\n"
        "  Thread Stats   Avg      Stdev     Max   +/- Stdev\n"
        f"    Latency   {p50 + 40:.2f}ms  {p99 / 3:.2f}ms   1.20s    71.3%\n"
        f"    Req/Sec    {rps / 4:.2f}     21.1   190.0   68.9%\n"
        f"  Latency Distribution\n     50%  {p50:.2f}ms\n     75%  {p50 * 1.6:.2f}ms\n     90%  {p99 * 0.8:.2f}ms\n"
        f"     99%  {p99:.2f}ms\n  {rps * 30:.0f} requests in 30.03s, 4.61MB read\nRequests/sec:    {rps:.2f}"
    )


def test_a_report_printed_after_the_lines_of_a_restart_chained_before_it_is_the_same_report():
    """Each change is restarted in the same command as the load test (``docker compose restart api && sleep 3 &&
    wrk ...``), and the restart's own lines come before the report: the report is the same, its numbers do not move."""
    restarts = ["docker compose restart api", "docker compose restart api worker", "docker compose up -d db api"]
    started = [
        "✔ Container shop-api-1  Started  1.6s",
        "✔ Container shop-worker-1  Started 2.1s\n✔ Container shop-api-1  Started 1.3s",
    ]
    turns = [bash("wrk -t4 -c64 -d30s --latency http://localhost:3000/api/orders", wrk(412.1, 851.3, 151.2))]
    for k, (restart, (p50, p99, rps)) in enumerate(
        zip(restarts, [(409.7, 846.0, 152.9), (415.3, 858.2, 150.1), (410.9, 849.7, 151.8)], strict=True)
    ):
        turns += [
            edit("src/db.ts", f"max: {10 * (k + 1)}", f"max: {10 * (k + 2)}"),
            bash(
                f"{restart} && sleep 3 && wrk -t4 -c64 -d30s --latency http://localhost:3000/api/orders",
                f"[+] Restarting\n{started[k % 2]}\n{wrk(p50, p99, rps)}",
            ),
        ]
    assert fired(turns) == [6]
    verdict, _ = play(turns)
    assert "unmoved" in check_claims(verdict, turns)


def test_fixed_counts_printed_again_after_each_refactor_step_are_no_measurement():
    """A script run after each step of a refactor to see that its output did not change: nothing jitters."""
    report = "rows read: 120431\nrows written: 120431\nrejected: 17\nfiles: 12\n"
    turns = []
    for k in range(5):
        turns += [edit("etl/load.py", f"def step{k}(", f"def _step{k}("), bash("python -m etl.load --dry-run", report)]
    assert fired(turns) == []


def vitest(ms: float) -> str:
    """A passing suite's summary: its durations jitter from run to run like a benchmark's."""
    return (
        " Test Files  12 passed (12)\n      Tests  48 passed (48)\n   Start at  10:42:07\n"
        f"   Duration  {ms:.2f}s (transform {ms * 91:.0f}ms, setup 0ms, collect {ms * 203:.0f}ms, "
        f"tests {ms * 402:.0f}ms)"
    )


def gobench(ns: int) -> str:
    return (
        "goos: linux\ngoarch: amd64\npkg: example.com/ledger/export\n"
        f"BenchmarkEncode-8   \t   25187\t     {ns} ns/op\t   21345 B/op\t     412 allocs/op\n"
        f"BenchmarkEncode-8   \t   25055\t     {ns + 251} ns/op\t   21344 B/op\t     412 allocs/op\n"
        "PASS\nok  \texample.com/ledger/export\t6.365s"
    )


def test_a_passing_check_or_a_failing_run_is_judged_by_its_verdict_not_by_its_numbers():
    passing = [
        t
        for k, ms in enumerate([2.31, 2.29, 2.30, 2.28, 2.32])
        for t in (edit("app/views.py", f"v{k}", f"v{k + 1}"), bash("npx vitest run", vitest(ms)))
    ]
    assert fired(passing) == []
    failing = [t | {"exit_code": 1, "output": f"Exit code 1\n{t['output']}\nERROR: slow query"} for t in query_loop()]
    assert not any(f.kind == "no_effect" for _, _, s in play(failing)[1] for f in s)


def test_a_benchmark_passes_whatever_its_timings_so_its_pass_is_no_progress():
    """``go test -bench`` ends with PASS: a check's verdict, but its numbers are what the changes were to move."""
    command = "go test -run '^$' -bench Encode -benchmem ./export"
    turns = [bash(command, gobench(47642))]
    for k, ns in enumerate([47411, 47959, 47039, 48222]):
        turns += [edit("export/encode.go", f"size {k}", f"size {k + 1}"), bash(command, gobench(ns))]
    assert fired(turns)[:1] == [6]
    assert fired([{**t, "args": {"command": "go test ./export"}} if "go test" in str(t) else t for t in turns]) == []


def test_a_new_request_or_a_checkout_starts_the_count_again():
    turns = query_loop()
    asked = {"tool": "user_prompt", "actor": "person", "output": "also add a created_at filter to the query"}
    assert fired([*turns[:5], asked, *turns[5:]]) == []
    bisect = bash("git bisect good", "Bisecting: 3 revisions left to test after this (roughly 2 steps)")
    assert fired([*turns[:5], bisect, *turns[5:]]) == []


def test_the_lenient_profile_waits_for_six_runs():
    lenient = MonitorSettings.model_validate(MONITOR_PROFILES["lenient"])
    times = [*TIMES, (1709.9, 20533), (1713.0, 20471)]
    changes = [*CHANGES, *CHANGES[:2]]
    assert fired(query_loop(times, changes), lenient)[:1] == [10]  # six runs; the default fires at the fourth


def test_a_report_is_known_by_its_shape_and_read_by_its_numbers():
    one = "12:00:01 run 4f2a9c1e\n  Time (mean ± σ):     812.4 ms ±   9.7 ms\n  Range:  800.2 ms … 828.6 ms    10 runs"
    two = "12:07:45 run 9b31d07a\n  Time (mean ± σ):     806.9 ms ±   9.7 ms\n  Range:  794.8 ms … 823.0 ms    10 runs"
    shape, numbers, reading = printed.measure(one)
    assert shape == printed.measure(two)[0]  # a time of day and a run id are no measurement
    assert numbers == [812.4, 9.7, 800.2, 828.6, 10.0]
    assert reading == "Range: 800.2 ms … 828.6 ms 10 runs"
    assert printed.measure("Time: 812.4 ms")[0] != shape
    assert printed.measure("done\nno numbers here") == (None, [], None)
    assert len(printed.measure(" ".join(str(n) for n in range(100)))[1]) == 24


def test_only_a_run_is_measured():
    facts = window_of(
        [bash(EXPLAIN, plan(1711.4, 20412)), {"tool": "Read", "args": {"file_path": "a"}, "output": "1 2"}]
    )
    assert facts[0].shape is not None and facts[0].nums and facts[1].shape is None and facts[1].nums == []


def test_a_number_no_float_holds_leaves_state_that_loads():
    """A run printing a 400-digit number (an id, a hash in decimal), or a score of one: the facts keep only numbers a
    float holds, so the state written after the turn reads back (JSON has no infinity)."""
    huge = "9" * 400
    turns = [bash("python ids.py", f"id {huge} took 1.5 s\nscore: {huge}\nrows 12"), bash("python ids.py", "1e999 2.0")]
    state = replay_state(turns)
    assert MonitorState.model_validate_json(state.model_dump_json()) == state
    assert all(math.isfinite(n) for f in state.window for n in f.nums) and state.window[0].score is None


def replay_state(turns: list[dict]) -> MonitorState:
    state = MonitorState()
    for t in turns:
        state = observe(state, Turn.model_validate(t), MonitorSettings())[0]
    return state
