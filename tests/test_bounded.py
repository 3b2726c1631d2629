"""state.json stays bounded however many rounds are recorded and however large their text is."""

from __future__ import annotations

from strict_loop import Workspace
from strict_loop.model.records import MAX_STATE_BYTES


def test_state_never_exceeds_64_kib_with_maximal_inputs(tmp_path):
    ws = Workspace(tmp_path)
    big = "x" * 3999
    ws.init_state(
        goal=big,
        global_stop_condition=big,
        task_id="big",
        success_evidence=["e" * 500] * 8,
        stop_checks={"commands": ["true " + "y" * 1000] * 4},
        next_task="n" * 2000,
        limits={"history_window": 50, "max_context_chars": 20000, "max_iterations": 1000},
    )
    paths = ws.task_paths("big")
    sizes = []
    for i in range(60):  # the window (50 maximal rounds) is full, then 10 more
        ws.update_state(
            task_id="big",
            task="t" * 2000,
            local_done_condition="d" * 2000,
            result_summary="r" * 20000,
            verification_summary="v" * 20000,
            evidence=["e" * 1000] * 50,
            artifacts=["a" * 1000] * 50,
            next_task="n" * 2000,
            context_snapshot="c" * 20000,
            progress="none" if i % 3 else "made",
            stop_reason="s" * 2000,
            skip_checks=True,
        )  # sizes, not checks: 480 commands would add seconds
        sizes.append(paths.state.stat().st_size)
    assert max(sizes) <= MAX_STATE_BYTES
    state = ws.show_task(task_id="big").state
    assert state.counters.iteration == 60
    assert len(state.recent_rounds) + state.archive.rounds == 60
    assert state.archive.progress_rounds + sum(r.progress == "made" for r in state.recent_rounds) == 20
    # The ledger still has the full text of every round.
    last = paths.iterations.read_text().splitlines()[-1]
    assert len(last) > 60000


def test_state_size_is_flat_in_round_count(tmp_path):
    ws = Workspace(tmp_path)
    ws.init_state(goal="g", global_stop_condition="c", task_id="flat", limits={"max_iterations": 10000})
    paths = ws.task_paths("flat")
    sizes = {}
    for i in range(1, 121):  # the window (10 rounds) is full at 20; 100 more rounds add nothing but digits
        ws.update_state(task_id="flat", task=f"round {i}", result_summary="r" * 100, verification_summary="v" * 100)
        if i in (20, 120):
            sizes[i] = paths.state.stat().st_size
    assert abs(sizes[120] - sizes[20]) < 200  # only digits of counters and timestamps change
