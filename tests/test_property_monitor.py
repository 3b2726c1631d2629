"""Property tests (Hypothesis): any turns fed to the monitor leave a state that saves and loads again.

The monitor's state is written after every turn; a value JSON cannot carry (a float no JSON number holds, written as
null) would make the next load fail, and the task with it. Outputs here are biased to what broke it once: numbers of
any size, scores, times, ids.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from strict_loop.model.monitoring import MonitorState
from strict_loop.model.settings import MonitorSettings
from strict_loop.model.turns import Turn
from strict_loop.monitor.ladder import observe

EXAMPLES = int(os.environ.get("STRICT_LOOP_EXAMPLES", 30))  # raise it for a deeper search, e.g. 1500
FAST = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])

numbers = st.one_of(
    st.integers(min_value=-(10**400), max_value=10**400).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.decimals(allow_nan=False, allow_infinity=False, places=20).map(str),
)
words = st.sampled_from(["score:", "accuracy =", "took", "ms", "rows", "Execution Time:", "passed", "failed", "\n"])
outputs = st.lists(st.one_of(numbers, words, st.text(max_size=12)), max_size=30).map(" ".join)
turns = st.builds(
    lambda tool, command, output, code: {
        "tool": tool,
        "actor": "person" if tool == "user_prompt" else "agent",
        "args": {"command": command} if tool == "Bash" else {},
        "output": output,
        "exit_code": code if tool == "Bash" else None,
    },
    st.sampled_from(["Bash", "Bash", "Read", "user_prompt"]),
    st.sampled_from(["python bench.py", "pytest -q", "psql -c 'EXPLAIN ANALYZE SELECT 1'", "make"]),
    outputs,
    st.sampled_from([0, 0, 1, None]),
)


@FAST
@given(st.lists(turns, min_size=1, max_size=8))
def test_any_turns_leave_a_monitor_state_that_saves_and_loads(session):
    state = MonitorState()
    for turn in session:
        state = observe(state, Turn.model_validate(turn), MonitorSettings())[0]
        assert MonitorState.model_validate_json(state.model_dump_json()) == state
