#!/usr/bin/env python3
"""Benchmark the progress monitor on labeled real sessions, replayed the way it runs live; and its cost per turn.

Every labeled session is replayed line by line through the path the live product uses for its harness
(bench/replay.py): Claude Code, Codex and Gemini CLI sessions as those harnesses' hook payloads fed to the hook
handler, with their transcripts written beside the workspace; every other session through ``append_event`` without
the agent's words. After every line ``detect_spiral`` says whether the monitor has fired. A session is scored on its
first firing
(its first whisper): a hit inside a labeled stuck stretch, a false alarm on a progress run or outside every stretch
(see the corpus README). Scores on the shared corpora are in-sample: the monitor was tuned while looking at them.

Leave-one-source-out: the sources of every corpus in the run are pooled and grouped into families (a trailing
``_<letter>`` split marker dropped, so ``cline`` and ``cline_a`` are one family). For each family, monitor settings
are chosen on all the others from the ``GRID`` below (the highest F1 whose false-alarm rate is at most ``MAX_FA``;
ties go to the point nearest the profile, then to the first in grid order; when no point qualifies, the lowest
false-alarm rate), and the held-out family is scored with them. A threshold the requirements fix (``SPECIFIED``) is
held at its value there; a sensitivity line tunes it too. Grid points are scored by re-running the pure
``ladder.observe`` over the very turns the monitor saw live (read back from the task's ledger); a line says on how
many sessions that pure replay agrees with the live path for the profile's own settings.

Blind to exit codes: the same turns once more through the pure replay with every error flag and exit code taken
away, as Codex's hooks deliver calls (its ``PostToolUse`` carries the output only). How much recall rests on the flag
is how much a harness without one loses; a line per corpus says so.

    python bench/spiral_bench.py                        # ../shared/corpus/{dev,interactive,interactive2}
    python bench/spiral_bench.py --corpus DIR --corpus DIR2 --jobs 2 --no-loso --skip-cost
    python bench/spiral_bench.py --skip-cost --profile strict   # score a monitor profile (default, strict, lenient)
"""

from __future__ import annotations

import argparse
import itertools
import json
import multiprocessing
import re
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from replay import replay, replay_for  # noqa: E402

from strict_loop import Workspace  # noqa: E402
from strict_loop.model.monitoring import MonitorState  # noqa: E402
from strict_loop.model.settings import MONITOR_PROFILES, MonitorSettings, SpiralThresholds  # noqa: E402
from strict_loop.model.turns import Turn  # noqa: E402
from strict_loop.monitor import ladder  # noqa: E402
from strict_loop.monitor.ladder import observe  # noqa: E402

GRID: dict[str, tuple[Any, ...]] = {
    "error_repeats": (3, 4, 5),
    "failure_repeats": (2, 3, 4),
    "person_repeats": (1, 2, 3),
    "restart_repeats": (2, 3, 4),
}
"""Thresholds (``SpiralThresholds`` fields) tried by leave-one-source-out; a name the model lacks is skipped."""
SPECIFIED = {"person_repeats": 2}
"""Thresholds the requirements fix ("two such reports with attempts between them fire"): the table holds them at this
value; a sensitivity line tunes them too."""
MAX_FA = 0.04
CORPUS_ROOT = Path(__file__).resolve().parents[2] / "shared" / "corpus"
DEFAULT_CORPORA = [CORPUS_ROOT / name for name in ("dev", "interactive", "interactive2")]
GOALS = {"dev": (0.95, 0.03, 1.0), "interactive": (0.80, 0.04, None)}
"""Corpus -> recall at least, false-alarm rate at most, median delay at most (None: no goal); a corpus named like one
of these with a number after it (interactive2), and a combined group, take that one's goals."""
COMBINED = {"interactive+interactive2": ("interactive", "interactive2")}
QUIET = {"identical_repeats": 20, "equivalent_repeats": 20, "error_repeats": 20, "command_repeats": 20}
QUIET |= {"self_talk_hits": 10, "score_drops": 10, "monologue_turns": 20, "error_rate": 1.0, "failure_repeats": 20}
QUIET |= {"poll_whisper": 500}
"""Thresholds that keep the ladder quiet while the cost is measured, so every turn is fully evaluated."""


def first_whisper(turns: list[Turn], settings: MonitorSettings) -> Optional[int]:
    """The index of the first turn on which the ladder acts (its first whisper), with ``observe`` alone."""
    state = MonitorState()
    for k, turn in enumerate(turns):
        state, action, _ = observe(state, turn, settings)
        if action != "none":
            return k
    return None


@contextmanager
def shared_facts() -> Iterator[None]:
    """While grid points re-run the same turns, each turn's facts are made once.

    Why it is sound: ``facts`` is pure, and a turn's facts depend on the turn, its index and the facts before it, so
    the same turn object after the same fact objects gives the same facts at every grid point (a grid point that
    changes the window gets other windows, hence fresh facts). Facts are ~90% of ``observe``; nothing outlives the
    block. Should ``observe`` stop calling ``ladder.facts``, this only stops saving time.
    """
    original, made = ladder.facts, {}

    def once(turn: Turn, index: int, window: list[Any], fstate: Optional[dict[str, str]] = None) -> Any:
        if fstate is not None:
            return original(turn, index, window, fstate)
        key = (id(turn), index, tuple(map(id, window)))
        if key not in made:
            made[key] = original(turn, index, window, fstate)
        return made[key]

    ladder.facts = once  # type: ignore[assignment]
    try:
        yield
    finally:
        ladder.facts = original  # type: ignore[assignment]


def family(source: str) -> str:
    """A source's family: its name without a trailing ``_<letter>`` split marker (``cline_a`` -> ``cline``)."""
    return re.sub(r"_[a-z]\Z", "", source)


def grid_points(base: SpiralThresholds) -> list[dict[str, Any]]:
    """Every combination of the ``GRID`` values whose names ``SpiralThresholds`` has."""
    names = [n for n in GRID if n in type(base).model_fields]
    return [dict(zip(names, values, strict=True)) for values in itertools.product(*(GRID[n] for n in names))]


def changed(point: dict[str, Any], base: SpiralThresholds) -> dict[str, Any]:
    return {k: v for k, v in point.items() if getattr(base, k) != v}


@dataclass
class Session:
    """One scored session: its label, the live first firing, and the first firing at every grid point."""

    corpus: str
    source: str
    traj_id: str
    label: dict[str, Any]
    fired: Optional[int]
    kinds: list[str]
    grid: list[Optional[int]]
    pure: Optional[int]
    hook_errors: str
    unhooked: int
    blind: Optional[int] = None  # the first firing blind to exit codes (``report_blind``)


def run_session(job: tuple[Path, dict[str, Any], str, list[dict[str, Any]]]) -> Session:
    """Replay one session live, then score every grid point with ``observe`` over the turns the monitor saw."""
    corpus, label, profile, points = job
    path = corpus / label["source"] / f"{label['traj_id']}.jsonl"
    turns = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    with tempfile.TemporaryDirectory() as tmp:
        live = replay(label["source"], turns, Path(tmp), profile)
    at = lambda k: None if k is None or k >= len(live.numbers) else live.numbers[k]  # monitor turn -> corpus turn
    grid = []
    with shared_facts():
        pure = at(first_whisper(live.turns, live.settings))
        for point in points:
            thresholds = SpiralThresholds.model_validate({**live.settings.thresholds.model_dump(), **point})
            grid.append(at(first_whisper(live.turns, live.settings.model_copy(update={"thresholds": thresholds}))))
    unflagged = [
        t if t.actor == "person" else t.model_copy(update={"error": None, "exit_code": None}) for t in live.turns
    ]
    blind = at(first_whisper(unflagged, live.settings))
    fired, kinds, errors = live.fired, live.kinds, live.hook_errors
    return Session(
        corpus.name, label["source"], label["traj_id"], label, fired, kinds, grid, pure, errors, live.unhooked, blind
    )


def replay_all(corpora: list[Path], profile: str, points: list[dict[str, Any]], jobs: int) -> list[Session]:
    work = []
    for corpus in corpora:
        for line in (corpus / "labels.jsonl").read_text(encoding="utf-8").splitlines():
            if line.strip():
                label = json.loads(line)
                size = (corpus / label["source"] / f"{label['traj_id']}.jsonl").stat().st_size
                work.append((size, (corpus, label, profile, points)))
    work.sort(key=lambda w: -w[0])  # the longest first, so that no worker is left with one long session at the end
    if jobs <= 1:
        return [run_session(job) for _, job in work]
    with multiprocessing.get_context("fork").Pool(jobs) as pool:
        return list(pool.imap_unordered(run_session, [job for _, job in work]))


def hit(label: dict[str, Any], fired: Optional[int]) -> bool:
    return fired is not None and any(a <= fired <= e for a, _, e in label.get("stretches") or [])


def tally(sessions: Iterable[Session], firing: Callable[[Session], Optional[int]]) -> dict[str, Any]:
    s: dict[str, Any] = {"spirals": 0, "hits": 0, "progress": 0, "fa_progress": 0, "fa_spiral": 0, "delays": []}
    for x in sessions:
        fired = firing(x)
        if x.label["label"] == "spiral":
            s["spirals"] += 1
            if hit(x.label, fired):
                s["hits"] += 1
                s["delays"].append(fired - x.label["detectable_turn"])  # type: ignore[operator]
            elif fired is not None:
                s["fa_spiral"] += 1
        else:
            s["progress"] += 1
            s["fa_progress"] += fired is not None
    return s


def metrics(s: dict[str, Any]) -> tuple[float, float, float, float]:
    """Recall, false-alarm rate (progress runs), F1 (a firing outside every stretch counts as a false positive),
    median delay."""
    tp, fn, fp = s["hits"], s["spirals"] - s["hits"], s["fa_progress"] + s["fa_spiral"]
    nan = float("nan")
    recall = tp / s["spirals"] if s["spirals"] else nan
    fa = s["fa_progress"] / s["progress"] if s["progress"] else nan
    f1 = 2 * tp / (2 * tp + fp + fn) if (tp + fp + fn) else nan
    return recall, fa, f1, statistics.median(s["delays"]) if s["delays"] else nan


HEADER = f"{'source':36}{'spirals':>8}{'recall':>8}{'progress':>9}{'FA rate':>8}{'F1':>6}{'median delay':>14}"


def row(name: str, s: dict[str, Any]) -> str:
    recall, fa, f1, delay = metrics(s)
    return f"{name:36}{s['spirals']:>8}{recall:>8.2f}{s['progress']:>9}{fa:>8.3f}{f1:>6.2f}{delay:>14.1f}"


def goal_line(name: str, s: dict[str, Any], key: str = "") -> str:
    """``name``'s goals (those of ``key``, else of its name without a trailing number) against its scores."""
    goal = GOALS.get(key or re.sub(r"\d+\Z", "", name))
    if goal is None:
        return f"goals on {name}: none set"
    recall, fa, _, delay = metrics(s)
    parts = [f"recall {recall:.2f} >= {goal[0]:.2f}", f"false alarms {fa:.3f} <= {goal[1]:.2f}"]
    ok = recall >= goal[0] and fa <= goal[1]
    if goal[2] is not None:
        parts.append(f"median delay {delay:.1f} <= {goal[2]:.0f}")
        ok = ok and delay <= goal[2]
    return f"goals on {name} (in-sample): {', '.join(parts)}: {'MET' if ok else 'NOT MET'}"


def report_corpus(name: str, sessions: list[Session], profile: str) -> None:
    print(f"== corpus {name}: {len(sessions)} sessions, monitor profile '{profile}' (in-sample)\n")
    print(HEADER + "\n" + "-" * len(HEADER))
    for source in sorted({x.source for x in sessions}):
        print(row(source, tally((x for x in sessions if x.source == source), lambda x: x.fired)))
    print(row("ALL", tally(sessions, lambda x: x.fired)))
    misses = []
    for x in sorted(sessions, key=lambda x: (x.source, x.traj_id)):
        spiral = x.label["label"] == "spiral"
        if hit(x.label, x.fired) if spiral else x.fired is None:
            continue
        misses.append(
            f"  {'missed spiral' if spiral else 'false alarm  '} {x.source}/{x.traj_id}: fired at {x.fired} "
            f"({', '.join(x.kinds) or 'never'}), labeled {x.label.get('stretches') or 'progress'}"
        )
    print("\nnot as labeled:\n" + ("\n".join(misses) if misses else "  (none)"))
    print(f"\n{goal_line(name, tally(sessions, lambda x: x.fired))}\n")


def report_blind(sessions: list[Session]) -> None:
    """Each corpus scored again with no exit code or error flag on any call (pure replay): a harness without them."""
    print("blind to exit codes (every error flag and exit code taken away, as Codex's hooks send calls; pure replay):")
    for corpus in sorted({x.corpus for x in sessions}):
        members = [x for x in sessions if x.corpus == corpus]
        seen, blind = tally(members, lambda x: x.pure), tally(members, lambda x: x.blind)
        (r, f, _, _), (rb, fb, _, _) = metrics(seen), metrics(blind)
        print(f"  {corpus:14} recall {r:.2f} -> {rb:.2f}   false alarms {f:.3f} -> {fb:.3f}")


def report_paths(sessions: list[Session]) -> None:
    """How the sessions reached the monitor, whether the hooks logged errors, and whether pure and live agree."""
    paths: dict[str, list[Session]] = defaultdict(list)
    for x in sessions:
        paths[replay_for(x.source).__name__].append(x)
    for name, group in sorted(paths.items()):
        unhooked = sum(x.unhooked for x in group)
        print(f"replayed by {name}: {len(group)} sessions; {unhooked} recorded calls reached no hook")
    broken = [x for x in sessions if x.hook_errors]
    for x in broken[:5]:
        print(f"  HOOK ERRORS in {x.source}/{x.traj_id}: {x.hook_errors.strip().splitlines()[0][:300]}")
    print(f"sessions whose hooks logged errors: {len(broken)}")
    differ = [x for x in sessions if x.pure != x.fired]
    print(
        f"pure ladder.observe replay vs the live path (profile settings): first firing agrees on "
        f"{len(sessions) - len(differ)} of {len(sessions)} sessions"
    )
    for x in differ[:5]:
        print(f"  differs: {x.source}/{x.traj_id}: live {x.fired}, pure {x.pure}")


def choose(train: list[Session], points: list[dict[str, Any]], base: SpiralThresholds, allowed: list[int]) -> int:
    """The grid point (index, among ``allowed``) with the highest F1 on ``train`` among those whose false-alarm rate is
    at most ``MAX_FA`` (ties: fewest thresholds changed from the profile, then grid order); else the lowest rate."""
    scored = []
    for k in allowed:
        _, fa, f1, _ = metrics(tally(train, lambda x, k=k: x.grid[k]))
        fa = 0.0 if fa != fa else fa  # no progress run in training: nothing to alarm on
        scored.append(
            (fa <= MAX_FA, (f1 if f1 == f1 else 0.0) if fa <= MAX_FA else -fa, -len(changed(points[k], base)), -k)
        )
    return -max(scored)[3]


def held_out(
    sessions: list[Session], points: list[dict[str, Any]], base: SpiralThresholds, allowed: list[int]
) -> tuple[dict[str, int], list[str]]:
    """Each family's grid point chosen on the others, and the families with 3 or more spirals below recall 0.5."""
    pick = {
        fam: choose([x for x in sessions if family(x.source) != fam], points, base, allowed)
        for fam in sorted({family(x.source) for x in sessions})
    }
    weak = [
        fam
        for fam in pick
        if (s := tally((x for x in sessions if family(x.source) == fam), lambda x, k=pick[fam]: x.grid[k]))["spirals"]
        >= 3
        and metrics(s)[0] < 0.5
    ]
    return pick, weak


def _recall(sessions: list[Session], fam: str, k: int) -> tuple[float, float, dict[str, int]]:
    """The recall and false-alarm rate of family ``fam`` at grid point ``k``, and its tally."""
    s = tally([x for x in sessions if family(x.source) == fam], lambda x: x.grid[k])
    recall, fa, _, _ = metrics(s)
    return recall, fa, s


def loso(sessions: list[Session], points: list[dict[str, Any]], base: SpiralThresholds) -> None:
    fixed = [k for k, p in enumerate(points) if all(p.get(n, v) == v for n, v in SPECIFIED.items())]
    print(
        f"== leave-one-source-out over {len(fixed)} grid points ({', '.join(f'{k} {v}' for k, v in GRID.items())}; "
        f"held at {', '.join(f'{k}={v}' for k, v in SPECIFIED.items())}): chosen on the other families by the highest "
        f"F1 with false alarms <= {MAX_FA}\n"
    )
    head = f"{'family (held out)':38}{'spirals':>8}{'progress':>9}{'recall':>8}{'FA rate':>8}  chosen on the others"
    print(head + "\n" + "-" * len(head))
    pick, weak = held_out(sessions, points, base, fixed)
    for fam, k in pick.items():
        recall, fa, s = _recall(sessions, fam, k)
        said = ", ".join(f"{n}={v}" for n, v in changed(points[k], base).items()) or "the profile's own"
        print(f"{fam:38}{s['spirals']:>8}{s['progress']:>9}{recall:>8.2f}{fa:>8.3f}  {said}")
    recall, fa, f1, _ = metrics(tally(sessions, lambda x: x.grid[pick[family(x.source)]]))
    print(f"{'ALL (each family held out)':38}{'':>17}{recall:>8.2f}{fa:>8.3f}  F1 {f1:.2f}")
    print(f"\nfamilies with >= 3 spirals and held-out recall below 0.5: {', '.join(weak) or 'none'}")
    every, weak = held_out(sessions, points, base, list(range(len(points))))
    recall, fa, f1, _ = metrics(tally(sessions, lambda x: x.grid[every[family(x.source)]]))
    tuned = ", ".join(f"{fam} ({_recall(sessions, fam, every[fam])[0]:.2f})" for fam in weak)
    print(
        f"sensitivity, {', '.join(SPECIFIED)} tuned too ({len(points)} points): recall {recall:.2f}, false alarms "
        f"{fa:.3f}, F1 {f1:.2f}; families below 0.5: {tuned or 'none'}\n"
    )


def cost(corpora: list[Path], total: int) -> None:
    """Per-turn cost at ~100 and ~`total` recorded turns: the pure evaluation and the whole append_event."""
    everything = []
    for corpus in corpora:
        for path in sorted(corpus.glob("*/*.jsonl")):
            everything += [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    samples = 300
    # A fixed block of turns from across the corpus, repeated: both measured stretches see the same turns.
    pool = everything[:: max(1, len(everything) // samples)][:samples]
    total = (total // samples) * samples + 100
    settings = MonitorSettings()
    eval_ms: dict[int, list[float]] = defaultdict(list)
    append_ms: dict[int, list[float]] = defaultdict(list)
    with tempfile.TemporaryDirectory() as tmp:
        ws = Workspace(tmp)
        quiet = {k: v for k, v in QUIET.items() if k in SpiralThresholds.model_fields}
        ws.init_state(task_id="cost", goal="cost", global_stop_condition="never", monitor={"thresholds": quiet})
        state = MonitorState()
        for n in range(total):
            turn_dict = pool[n % len(pool)]
            turn = Turn.model_validate(turn_dict)
            t0 = time.perf_counter()
            state, _, _ = observe(state, turn, settings)
            t1 = time.perf_counter()
            ws.append_event(task_id="cost", kind="tool_call", message="turn", data=turn_dict)
            t2 = time.perf_counter()
            bucket = 100 if 100 <= n < 100 + samples else total if n >= total - samples else None
            if bucket:
                eval_ms[bucket].append((t1 - t0) * 1000)
                append_ms[bucket].append((t2 - t1) * 1000)
    print(
        f"cost per turn (median over the same {samples} corpus turns at both points; ladder kept quiet so "
        "every turn is fully evaluated):"
    )
    for label, data in (
        ("evaluation (facts + signals + ladder)", eval_ms),
        ("append_event(tool_call) end to end", append_ms),
    ):
        a, b = statistics.median(data[100]), statistics.median(data[total])
        print(f"  {label:40} at ~100 turns {a:.3f} ms | at ~{total} turns {b:.3f} ms | ratio {b / a:.2f}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--corpus", type=Path, action="append", help="a labeled corpus folder (repeatable)")
    p.add_argument("--cost-turns", type=int, default=10_000)
    p.add_argument("--skip-cost", action="store_true")
    p.add_argument("--no-loso", action="store_true", help="skip leave-one-source-out (and its grid)")
    p.add_argument("--jobs", type=int, default=2, help="sessions replayed in parallel (processes)")
    p.add_argument("--profile", choices=sorted(MONITOR_PROFILES), default="default", help="the monitor profile")
    a = p.parse_args()
    corpora = a.corpus or DEFAULT_CORPORA
    for corpus in corpora:
        if not (corpus / "labels.jsonl").is_file():
            raise SystemExit(f"no labels.jsonl under {corpus}")
    started = time.perf_counter()
    base = MonitorSettings.model_validate(MONITOR_PROFILES[a.profile]).thresholds
    points = [] if a.no_loso else grid_points(base)
    sessions = replay_all(corpora, a.profile, points, a.jobs)
    print(f"replayed {len(sessions)} sessions live ({a.jobs} processes) in {time.perf_counter() - started:.0f}s")
    print(
        "Every figure on the shared corpora below is IN-SAMPLE: the monitor was tuned while looking at these sessions. "
        "Only the leave-one-source-out table scores sources the settings were not chosen on (and only for the grid).\n"
    )
    for corpus in corpora:
        report_corpus(corpus.name, [x for x in sessions if x.corpus == corpus.name], a.profile)
    for name, members in COMBINED.items():
        group = [x for x in sessions if x.corpus in members]
        if {x.corpus for x in group} == set(members):
            print(f"== {name} together (in-sample)\n{HEADER}\n{row('ALL', tally(group, lambda x: x.fired))}")
            print(f"{goal_line(name, tally(group, lambda x: x.fired), members[0])}\n")
    report_paths(sessions)
    print()
    report_blind(sessions)
    print()
    if points:
        loso(sessions, points, base)
    print(f"scored in {time.perf_counter() - started:.0f}s\n")
    if not a.skip_cost:
        cost(corpora, a.cost_turns)


if __name__ == "__main__":
    main()
