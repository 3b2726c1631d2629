"""How a check's failure is read, runner by runner: its output twice, differing only in what changes from run to run
(times, durations, counts of files checked), with an edit between, is the same failure (one signature, no "different
failure" progress), with the exit code the harness sends and without it (Codex); another test or another error
failing after the edit is another failure, whatever wrapper and summary lines both runs print."""

from __future__ import annotations

import pytest
from spiral_claims import window_of

RUNS = {
    "pytest": (
        "pytest -q",
        """..F.
=================================== FAILURES ===================================
___________________________ test_total_rounds_half_up ___________________________

    def test_total_rounds_half_up():
>       assert total([1.005]) == 1.01
E       assert 1.0 == 1.01
E        +  where 1.0 = total([1.005])

tests/test_money.py:14: AssertionError
=========================== short test summary info ============================
FAILED tests/test_money.py::test_total_rounds_half_up - assert 1.0 == 1.01
1 failed, 3 passed in {t1}s""",
    ),
    "go": (
        "go test ./...",
        """--- FAIL: TestParseDate ({t1}s)
    parse_test.go:22: got 2024-03-31 01:00:00 +0000 UTC, want 2024-03-31 02:00:00 +0100 CET
FAIL
FAIL\texample.com/cal/parse\t{t2}s
ok  \texample.com/cal/store\t(cached)
FAIL""",
    ),
    "cargo": (
        "cargo test",
        """running 3 tests
test tests::parses_header ... ok
test tests::rejects_empty ... FAILED
test tests::roundtrip ... ok

failures:

---- tests::rejects_empty stdout ----
thread 'tests::rejects_empty' panicked at src/lib.rs:88:9:
assertion `left == right` failed
  left: Ok(())
 right: Err(Empty)
note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace

failures:
    tests::rejects_empty

test result: FAILED. 2 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in {t1}s

error: test failed, to rerun pass `--lib`""",
    ),
    "rspec": (
        "bundle exec rspec",
        """..F

Failures:

  1) Invoice#total rounds half up
     Failure/Error: expect(invoice.total).to eq(1.01)

       expected: 1.01
            got: 1.0

     # ./spec/invoice_spec.rb:12:in `block (3 levels) in <top (required)>'

Finished in {t1} seconds (files took {t2} seconds to load)
3 examples, 1 failure

Failed examples:

rspec ./spec/invoice_spec.rb:10 # Invoice#total rounds half up""",
    ),
    "mocha": (
        "npx mocha",
        """  parser
    ✔ parses ints
    1) parses dates


  1 passing ({t3}ms)
  1 failing

  1) parser
       parses dates:
     AssertionError [ERR_ASSERTION]: Expected values to be strictly equal:

'2024-03-31' !== '2024-03-30'

      at Context.<anonymous> (test/parser.test.js:14:12)
      at process.processImmediate (node:internal/timers:478:21)""",
    ),
    "vitest": (
        "npx vitest run",
        """ ❯ src/parser.test.ts (2 tests | 1 failed) {t3}ms
   × parser > parses dates {t3}ms
     → expected '2024-03-30' to be '2024-03-31' // Object.is equality

⎯⎯⎯⎯⎯⎯⎯ Failed Tests 1 ⎯⎯⎯⎯⎯⎯⎯

 FAIL  src/parser.test.ts > parser > parses dates
AssertionError: expected '2024-03-30' to be '2024-03-31' // Object.is equality

 ❯ src/parser.test.ts:9:32

 Test Files  1 failed (1)
      Tests  1 failed | 1 passed (2)
   Start at  09:1{d}:22
   Duration  {t1}s (transform 31ms, setup 0ms, collect 40ms, tests {t3}ms, environment 0ms, prepare 88ms)""",
    ),
    "phpunit": (
        "vendor/bin/phpunit",
        """PHPUnit 10.5.9 by Sebastian Bergmann and contributors.

Runtime:       PHP 8.3.2

..F                                                                 3 / 3 (100%)

Time: 00:0{d}.112, Memory: 8.00 MB

There was 1 failure:

1) Tests\\InvoiceTest::testTotalRoundsHalfUp
Failed asserting that 1.0 is identical to 1.01.

/app/tests/InvoiceTest.php:14

FAILURES!
Tests: 3, Assertions: 3, Failures: 1.""",
    ),
    "dotnet": (
        "dotnet test",
        """  Failed InvoiceTests.TotalRoundsHalfUp [{t3} ms]
  Error Message:
   Assert.Equal() Failure: Values differ
Expected: 1.01
Actual:   1
  Stack Trace:
     at InvoiceTests.TotalRoundsHalfUp() in /src/InvoiceTests.cs:line 14

Failed!  - Failed:     1, Passed:     2, Skipped:     0, Total:     3, Duration: {t3} ms - Billing.Tests.dll""",
    ),
    "gradle": (
        "./gradlew test",
        """> Task :test FAILED

InvoiceTest > totalRoundsHalfUp() FAILED
    org.opentest4j.AssertionFailedError at InvoiceTest.java:14

3 tests completed, 1 failed

FAILURE: Build failed with an exception.

* What went wrong:
Execution failed for task ':test'.
> There were failing tests. See the report at: file:///home/u/app/build/reports/tests/test/index.html

BUILD FAILED in {t1}s
4 actionable tasks: {d} executed, 1 up-to-date""",
    ),
    "tsc": (
        "npx tsc --noEmit",
        """src/api.ts(14,7): error TS2322: Type 'string' is not assignable to type 'number'.

Found 1 error in src/api.ts:14
""",
    ),
    "mypy": (
        "mypy src",
        """src/api.py:14: error: Incompatible return value type (got "str", expected "int")  [return-value]
Found 1 error in 1 file (checked {d}2 source files)""",
    ),
    "eslint": (
        "npx eslint src",
        """/home/u/app/src/api.ts
  14:7  error  'x' is assigned a value but never used  @typescript-eslint/no-unused-vars

✖ 1 problem (1 error, 0 warnings)
""",
    ),
    "jest": (
        "npx jest",
        """ FAIL  src/api.test.ts ({t1} s)
  api
    ✕ returns 404 for unknown ids ({t3} ms)

  ● api › returns 404 for unknown ids

    expect(received).toBe(expected) // Object.is equality

    Expected: 404
    Received: 500

      12 |     const res = await request(app).get('/items/nope');
    > 13 |     expect(res.status).toBe(404);
         |                        ^

      at Object.<anonymous> (src/api.test.ts:13:24)

Test Suites: 1 failed, 1 total
Tests:       1 failed, 3 passed, 4 total
Snapshots:   0 total
Time:        {t1} s
Ran all test suites.""",
    ),
    "maven": (
        "mvn -q test",
        """[ERROR] Tests run: 3, Failures: 1, Errors: 0, Skipped: 0, Time elapsed: {t1} s <<< FAILURE! -- in InvoiceTest
[ERROR] com.acme.InvoiceTest.totalRoundsHalfUp -- Time elapsed: 0.0{d}1 s <<< FAILURE!
org.opentest4j.AssertionFailedError: expected: <1.01> but was: <1.0>
\tat com.acme.InvoiceTest.totalRoundsHalfUp(InvoiceTest.java:14)

[ERROR] Failures:
[ERROR]   InvoiceTest.totalRoundsHalfUp:14 expected: <1.01> but was: <1.0>
[ERROR] Tests run: 3, Failures: 1, Errors: 0, Skipped: 0
[ERROR] Failed to execute goal maven-surefire-plugin:3.2.5:test on project billing: There are test failures.
[ERROR]
[ERROR] Please refer to /home/u/billing/target/surefire-reports for the individual test results.""",
    ),
}

NOISE = [{"t1": "1.23", "t2": "0.45", "t3": "31", "d": "3"}, {"t1": "2.87", "t2": "0.61", "t3": "118", "d": "7"}]


@pytest.mark.parametrize("blind", [False, True], ids=["exit code", "no exit code"])
@pytest.mark.parametrize("runner", sorted(RUNS))
def test_a_runner_failing_the_same_way_twice_is_the_same_failure(runner, blind):
    command, output = RUNS[runner]
    turns = []
    for k, noise in enumerate(NOISE):
        run = {"tool": "Bash", "args": {"command": command}, "output": output.format(**noise)}
        turns.append(run if blind else {**run, "exit_code": 1, "error": True})
        turns.append({"tool": "Edit", "args": {"file_path": "src/x", "old_string": f"a{k}", "new_string": f"b{k}"}})
    first, again = window_of(turns)[0], window_of(turns)[2]
    assert first.failed and again.failed and first.fsig is not None
    assert again.fsig == first.fsig and again.prog != "different failure", (first.ftext, again.ftext)


OTHER = {  # what another failure of each runner says instead
    "pytest": ("test_total_rounds_half_up", "test_tax_is_rounded"),
    "jest": ("returns 404 for unknown ids", "returns 400 for bad ids"),
    "go": ("TestParseDate", "TestParseTime"),
    "cargo": ("rejects_empty", "rejects_blank"),
    "tsc": ("TS2322: Type 'string' is not assignable to type 'number'", "TS2345: Argument of type 'null'"),
    "mypy": ('Incompatible return value type (got "str", expected "int")', "Missing return statement"),
    "rspec": ("rounds half up", "adds tax"),
    "vitest": ("parses dates", "parses times"),
    "phpunit": ("testTotalRoundsHalfUp", "testAddsTax"),
    "dotnet": ("TotalRoundsHalfUp", "AddsTax"),
    "gradle": ("totalRoundsHalfUp", "addsTax"),
    "maven": ("totalRoundsHalfUp", "addsTax"),
    "mocha": ("parses dates", "parses times"),
    "eslint": ("'x' is assigned a value but never used  @typescript-eslint/no-unused-vars", "Unexpected any"),
}


@pytest.mark.parametrize("runner", sorted(RUNS))
def test_another_test_or_error_failing_after_an_edit_is_another_failure(runner):
    """Red, edit, red again on another test (or another error): the work moved, whatever wrapper and summary lines
    both runs print."""
    command, output = RUNS[runner]
    first = output.format(**NOISE[0])
    other = first.replace(*OTHER[runner])
    turns = [
        {"tool": "Bash", "args": {"command": command}, "output": first, "exit_code": 1, "error": True},
        {"tool": "Edit", "args": {"file_path": "src/x", "old_string": "a", "new_string": "b"}},
        {"tool": "Bash", "args": {"command": command}, "output": other, "exit_code": 1, "error": True},
    ]
    window = window_of(turns)
    assert window[2].fsig != window[0].fsig and window[2].prog == "different failure"


@pytest.mark.parametrize(
    ("command", "output"),
    [
        ("timeout 150 go test ./internal/store/... -run TestOrderRepo -count=1 -v", "=== RUN   TestOrderRepo_Create\n"),
        ("npx jest src/api", " RUNS  src/api/orders.test.ts\n"),
        ("pytest -q tests/", "============ test session starts ============\ncollecting ... "),
    ],
    ids=["go", "jest", "pytest"],
)
def test_a_run_with_no_exit_status_that_stops_as_a_test_starts_is_no_pass(command, output):
    """Codex sends no exit code: a run cut off stops on the test it started: it passed nothing."""
    cut, done = window_of(
        [
            {"tool": "Bash", "args": {"command": command}, "output": output},
            {"tool": "Bash", "args": {"command": command}, "output": output + "ok\n1 passed in 0.31s\nPASS"},
        ]
    )
    assert cut.verdict is None and cut.prog != "check passes"
    assert done.verdict == "pass"


def test_an_error_line_read_in_a_log_or_pasted_by_the_person_is_still_the_cause_when_a_run_prints_it():
    """A line successful runs print too is noise; the same error read in a log, or pasted by the person, before the
    run that fails with it is no noise: it is what failed."""
    error = "requests.exceptions.HTTPError: 401 Client Error: Unauthorized for url: https://auth.example.com/token"
    frame = '  File "push.py", line 26, in get_token\n    r.raise_for_status()\n'
    trace = f"Traceback (most recent call last):\n{frame}{error}"
    window = window_of(
        [
            {"tool": "user_prompt", "actor": "person", "output": f"the nightly export fails:\n{trace}"},
            {"tool": "Bash", "args": {"command": "tail -n 5 /var/log/export.log"}, "output": trace, "exit_code": 0},
            {"tool": "Bash", "args": {"command": "python push.py --dry-run"}, "output": trace, "exit_code": 1},
        ]
    )
    assert window[2].failed and window[2].err is not None and "401 Client Error" in (window[2].etext or "")
