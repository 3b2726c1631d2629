#!/usr/bin/env python3
"""The monitor's cost on hostile turn content, as a ratio to an ordinary turn's, within one run.

Why: a turn is evaluated inside a harness hook (30 s timeout) under the task lock, and an agent's output is
whatever a command printed: a failed curl's compact JSON, a minified bundle, a 100,000-line log, a person
pasting a big document. Clipping bounds the text to 16,000 characters (head and tail), but what the regular
expressions do with those characters is up to them. Every turn should cost at most 5 times an ordinary one.

Three paths are timed for each turn: ``ladder.observe`` alone (default ``MonitorSettings``, from the same state:
a window of ordinary corpus turns); the whole ``Workspace.append_event(kind="tool_call")``; and ``record_turn``
given the raw (unclipped) turn, as a harness hook gives it (masking runs before clipping there). Each hostile
content is tried as a failing and as a passing agent turn and as a person's message; argument cases only as
agent turns. Ratios are to an ordinary corpus turn of about median cost timed just before each timing, at the same
point of the same session (the machine's load drifts over the minutes of a run, and the session's state grows); the
corpora keep at most 2,000 characters of an output, so a reference row (corpus outputs joined to 1 MB, clipped like
any turn) shows what size alone costs, and 'vs ref' what the content costs beyond it.

    python bench/adversarial_turns.py                    # ../shared/corpus/*/*/*.jsonl as the ordinary turns
    python bench/adversarial_turns.py --repeat 1 --only json   # a quick look at some cases
    python bench/adversarial_turns.py --skip "'a.'"            # leave some out (before a fix, a case can take minutes)
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from strict_loop import Workspace  # noqa: E402
from strict_loop.base.clipping import clip_turn_data  # noqa: E402
from strict_loop.loop.recording import record_turn  # noqa: E402
from strict_loop.model.monitoring import MonitorState  # noqa: E402
from strict_loop.model.settings import MonitorSettings  # noqa: E402
from strict_loop.model.turns import Turn  # noqa: E402
from strict_loop.monitor.ladder import observe  # noqa: E402

DEFAULT_CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus"
BOUND = 5.0
MB = 1_000_000


def _nested(depth: int) -> Any:
    node: Any = {"leaf": "value", "n": 1}
    for k in range(depth):
        node = {"level": k, "child": node, "list": [k, "x"]}
    return node


def _big_json(n: int) -> str:
    rows = {
        f"item{i}": {
            "id": i,
            "url": f"https://api.example.com/v1/items/{i}?q=a:b",
            "tags": ["a", "b"],
            "ok": i % 2 == 0,
        }
        for i in range(n)
    }
    return json.dumps({"data": rows, "error": {"code": 500, "message": "upstream failed"}}, separators=(",", ":"))


def contents() -> dict[str, str]:
    """Hostile outputs (a person pastes the same texts): names to texts."""
    rng = random.Random(7)
    token = "".join(rng.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/") for _ in range(MB))
    log = "\n".join(
        f"2024-05-01T12:{i // 60 % 60:02d}:{i % 60:02d}Z worker[{i % 7}] "
        + ("ERROR request failed: timeout" if i % 997 == 0 else f"processed batch {i} in {i % 90}ms")
        for i in range(100_000)
    )
    return {
        "1 MB line, one char": "x" * MB,
        "1 MB line, base64-like": token,
        "1 MB compact JSON": _big_json(9000)[:MB],
        "deep JSON (200 levels)": json.dumps(_nested(200), separators=(",", ":")),
        "deep JSON text ([ x 100k)": "[" * 100_000 + "]" * 100_000,
        "1 MB of é": "é" * MB,
        "1 MB of e + U+0301": "e\u0301" * (MB // 2),
        "1 MB of U+0301 alone": "\u0301" * MB,
        "RTL + zero-width mix": ("\u202eשלום\u200b\u200dمرحبا\u2066x\u2069\ufeff" * 40_000)[:MB],
        "astral chars": "\U0001f600\U00010348\U0001d11e" * 100_000,
        "100,000-line log": log,
        "10,000 ':'": ":" * 10_000,
        "10,000 '('": "(" * 10_000,
        "'a:1:' x 250k": "a:1:" * 250_000,
        "'x(1,' x 250k": "x(1," * 250_000,
        "1 MB of digits": "1" * MB,
        "'FAILED (' x 100k": "FAILED (" * 100_000,
        "'=' x 1M then '!'": "=" * MB + "!",
        "'a.' x 500k then '@'": "a." * (MB // 2) + "@",
        "'E   ' x 250k": "E   " * 250_000,
        "'Error.' x 150k": "Error." * 150_000,
        "short lines 'f:1:2: e'": "f:1:2: e\n" * 110_000,
    }


def arg_cases() -> dict[str, dict[str, Any]]:
    """Hostile arguments: name to (tool, args), output ordinary."""
    blocks = "<<<<<<< SEARCH\n\n=======\n" * 600
    return {
        "1 MB command": {"tool": "bash", "args": {"command": "echo " + "a" * MB}},
        "1 MB quoted command": {"tool": "bash", "args": {"command": "printf '%s' " + "'ab c' " * (MB // 7)}},
        "15 kB command, ':' only": {"tool": "bash", "args": {"command": ":" * 15_000}},
        "1 MB file write": {"tool": "write", "args": {"path": "a.py", "content": "x = 1\n" * (MB // 6)}},
        "15 kB of SEARCH blocks": {"tool": "apply_diff", "args": {"path": "a.py", "diff": blocks}},
        "5,000 argument keys": {"tool": "mcp_tool", "args": {f"k{i}": "v" * 20 for i in range(5000)}},
        "1 MB path": {"tool": "read", "args": {"path": "/a" * (MB // 2)}},
    }


def variants(name: str, text: str) -> list[tuple[str, dict[str, Any]]]:
    return [
        (
            f"{name} | agent, failing",
            {"tool": "bash", "args": {"command": "curl -s api"}, "output": text, "exit_code": 1},
        ),
        (
            f"{name} | agent, passing",
            {"tool": "bash", "args": {"command": "curl -s api"}, "output": text, "exit_code": 0},
        ),
        (f"{name} | person", {"tool": "user_prompt", "actor": "person", "args": {}, "output": text}),
    ]


def hostile_turns(only: str = "", skip: str = "\0") -> list[tuple[str, dict[str, Any]]]:
    turns = [v for name, text in contents().items() for v in variants(name, text)]
    for name, case in arg_cases().items():
        for failed in (True, False):
            out = "Traceback (most recent call last):\nValueError: bad value" if failed else "done"
            label = f"{name} | agent, {'failing' if failed else 'passing'}"
            turns.append((label, {**case, "output": out, "exit_code": int(failed)}))
    return [t for t in turns if only.lower() in t[0].lower() and skip.lower() not in t[0].lower()]


def corpus_turns(root: Path, count: int) -> list[dict[str, Any]]:
    everything = []
    for path in sorted(root.glob("*/*/*.jsonl")):
        everything += [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    if not everything:
        raise SystemExit(f"no corpus turns under {root}/*/*/*.jsonl")
    return everything[:: max(1, len(everything) // count)][:count]


def _timed(fn: Callable[[], Any]) -> float:
    t0 = time.perf_counter()
    fn()
    return (time.perf_counter() - t0) * 1000


class Paths:
    """The three timed paths, each from the same starting point for every turn."""

    def __init__(self, root: Path, warm: list[dict[str, Any]]) -> None:
        self.settings = MonitorSettings()
        self.state = MonitorState()
        for d in warm:  # a window of ordinary turns, the state every evaluation starts from
            self.state, _, _ = observe(self.state, Turn.model_validate(clip_turn_data(d)), self.settings)
        self.ws = Workspace(root)
        self.ws.init_state(task_id="adv", goal="adversarial", global_stop_condition="never")
        self.store = self.ws.task_store("adv")
        self.warm = warm
        self.typical: list[dict[str, Any]] = warm[-1:]
        """Ordinary turns near the median cost, one timed beside each hostile timing in turn (set once the ordinary
        turns are timed; taken in turn, so that no repeat fires)."""
        self.k = 0

    def _ordinary_turn(self) -> None:
        """An ordinary turn first, so that each hostile one meets a window of ordinary ones (and no repeats fire)."""
        self.k += 1
        d = self.warm[self.k % len(self.warm)]
        self.ws.append_event(task_id="adv", kind="tool_call", message="warm", data=d)

    def measure(self, data: dict[str, Any]) -> tuple[float, float, float]:
        turn = Turn.model_validate(clip_turn_data(data))
        evaluate = _timed(lambda: observe(self.state, turn, self.settings))
        self._ordinary_turn()
        append = _timed(lambda: self.ws.append_event(task_id="adv", kind="tool_call", message="t", data=data))
        self._ordinary_turn()
        hook = _timed(lambda: record_turn(self.store, self.ws.root, "t", data))
        return evaluate, append, hook


def _medians(paths: Paths, data: dict[str, Any], repeat: int) -> tuple[list[float], float, list[float]]:
    """The median of each path over ``repeat`` timings, the slowest single timing, and the median of each path's
    ratio to an ordinary turn timed just before it (the shared machine's load drifts over a run of minutes)."""
    samples, ratios = [], []
    for _ in range(repeat):
        paths.k += 1
        ordinary = paths.measure(paths.typical[paths.k % len(paths.typical)])
        got = paths.measure(data)
        samples.append(got)
        ratios.append([g / max(o, 1e-6) for g, o in zip(got, ordinary, strict=True)])
    return (
        [statistics.median(s[k] for s in samples) for k in range(3)],
        max(max(s) for s in samples),
        [statistics.median(r[k] for r in ratios) for k in range(3)],
    )


def run(corpus: Path, repeat: int, only: str, skip: str) -> int:
    ordinary = corpus_turns(corpus, 240)
    hostile = hostile_turns(only, skip)
    joined = "\n".join(d["output"] for d in ordinary if isinstance(d.get("output"), str) and d["output"].strip())
    reference = variants("corpus outputs joined to 1 MB (reference)", (joined * (MB // max(len(joined), 1) + 1))[:MB])
    with tempfile.TemporaryDirectory() as tmp:
        paths = Paths(Path(tmp), ordinary[:40])
        base = [paths.measure(d) for d in ordinary[40:]]
        medians = [statistics.median(b[k] for b in base) for k in range(3)]
        near = sorted(range(len(base)), key=lambda j: sum(abs(base[j][k] / medians[k] - 1) for k in range(3)))
        paths.typical = [ordinary[40 + j] for j in near[:20]]
        spread = [sorted(b[k] for b in base) for k in range(3)]
        tails = [
            f"{s[int(0.99 * (len(s) - 1))] / m:.1f}x / {s[-1] / m:.1f}x" for s, m in zip(spread, medians, strict=True)
        ]
        print(
            f"ordinary corpus turn (median of {len(base)}; corpus outputs are at most 2,000 characters): observe "
            f"{medians[0]:.2f} ms, append_event {medians[1]:.2f} ms, record_turn unclipped {medians[2]:.2f} ms\n"
            f"the ordinary turns' own p99 / max: observe {tails[0]}, append {tails[1]}, hook {tails[2]}\n"
            "ratios are to an ordinary turn of about median cost timed just before each (the median ratio); 'vs ref' "
            "is observe against the reference row of the same kind (ordinary text at the clip size, 16,000 "
            "characters): what the content costs beyond its size\n"
        )
        header = f"{'turn':58}{'observe':>10}{'append':>10}{'hook':>10}{'vs ref':>8}{'worst ms':>10}"
        print(header + "\n" + "-" * len(header))
        ref = {}
        for label, data in reference:
            ref[label.split(" | ")[1]], _, _ = _medians(paths, data, repeat)
        flagged = 0
        whole = 0  # above the bound on a path a turn takes whole (append_event, the hook), not observe alone
        for label, data in reference + hostile:
            got, worst, ratios = _medians(paths, data, repeat)
            over = [r > BOUND for r in ratios]
            hostile_row = "(reference)" not in label
            flagged += any(over) and hostile_row
            whole += any(over[1:]) and hostile_row
            cells = "".join(f"{r:>9.1f}{'!' if o else ' '}" for r, o in zip(ratios, over, strict=True))
            own = ref[label.split(" | ")[1]][0]
            print(f"{label[:58]:58}{cells}{got[0] / own:>8.1f}{worst:>10.1f}", flush=True)
    print(f"\n{flagged} of {len(hostile)} hostile turns above {BOUND:g}x the ordinary turn on some path (marked !)")
    print(f"{whole} of {len(hostile)} above it on a path a turn takes whole (append_event or the hook)")
    return flagged


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--corpus", type=Path, default=DEFAULT_CORPUS, help="a folder of <corpus>/<source>/<run>.jsonl")
    p.add_argument("--repeat", type=int, default=3, help="timings per hostile turn (median)")
    p.add_argument("--only", default="", help="only the turns whose label contains this text")
    p.add_argument("--skip", default="\0", help="leave out the turns whose label contains this text")
    a = p.parse_args()
    raise SystemExit(1 if run(a.corpus, a.repeat, a.only, a.skip) else 0)


if __name__ == "__main__":
    main()
