#!/usr/bin/env python3
"""Benchmark: how fast ``strict-loop`` starts for a read command and ``--help``, next to a bare interpreter.

Every command runs as a new process, as a person or a script runs it, in a scratch workspace holding one task
with a few recorded rounds and tool calls (its home and config folders are scratch too). The runs are interleaved
(bare, --help, list_tasks, show_task, ..., repeat) so that machine noise hits all of them alike; the ratios come
from this one run: the median wall time of each over the median of ``python -c pass``, and the same for the CPU time
the process used (steadier on a busy machine). The goal (issue 27) is at most 5x for read commands and --help.

    python bench/cli_start.py              # 15 runs of each
    python bench/cli_start.py --runs 40
    git archive HEAD | tar -x -C /tmp/before && python bench/cli_start.py --baseline /tmp/before   # before / after
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

GOAL = 5.0
READS = ("--help", "show_task --help", "list_tasks", "show_task", "detect_spiral")


def _cli() -> list[str]:
    """The console script installed beside this interpreter, else ``python -m strict_loop`` (the same imports)."""
    script = Path(sys.executable).parent / "strict-loop"
    return [str(script)] if script.is_file() else [sys.executable, "-m", "strict_loop"]


def _env(tmp: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("STRICT_LOOP_", "OTEL_"))}
    env.update(HOME=str(tmp / "home"), XDG_CONFIG_HOME=str(tmp / "config"), XDG_STATE_HOME=str(tmp / "state"))
    env["XDG_RUNTIME_DIR"] = str(tmp / "run")
    for name in ("home", "config", "state", "run"):
        (tmp / name).mkdir(mode=0o700, exist_ok=True)
    return env


def _seed(cli: list[str], ws: Path, env: dict[str, str]) -> None:
    def run(*args: str) -> None:
        subprocess.run([*cli, *args, "--workspace", str(ws)], env=env, check=True, capture_output=True)

    run("init_state", "--task-id", "bench", "--goal", "bench the CLI's start", "--global-stop-condition", "never")
    for i in range(3):
        run("append_event", "--task-id", "bench", "--kind", "round.started", "--message", f"round {i}")
        run("append_event", "--task-id", "bench", "--kind", "tool_call", "--message", "t", "--data",
            f'{{"tool": "Bash", "args": {{"command": "pytest -q tests/test_{i}.py"}}, "exit_code": 0}}')  # fmt: skip
        run("update_state", "--task-id", "bench", "--task", f"step {i}", "--result-summary", "done",
            "--verification-summary", "pytest -q: 1 passed", "--skip-checks")  # fmt: skip


def _time(argv: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float]:
    """Wall and CPU seconds of one run (the CPU time the child used, user and system)."""
    t = time.perf_counter()
    proc = subprocess.Popen(argv, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode:
        raise SystemExit(f"{' '.join(argv)} failed: {proc.stderr.read().decode() if proc.stderr else ''}")
    if proc.stderr:
        proc.stderr.close()
    return wall, usage.ru_utime + usage.ru_stime


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--runs", type=int, default=15, help="runs of each command (default 15)")
    p.add_argument(
        "--also", action="append", default=[], metavar="ARGS", help="another command to time, e.g. 'detect_spiral'"
    )
    p.add_argument("--baseline", metavar="DIR", help="another checkout of the package to time beside this one")
    a = p.parse_args()
    cli = _cli()
    tmp = Path(tempfile.mkdtemp(prefix="cli-start-"))
    try:
        ws = tmp / "ws"
        ws.mkdir()
        env = _env(tmp)
        _seed(cli, ws, env)
        commands: dict[str, tuple[list[str], dict[str, str]]] = {
            "python -c pass": ([sys.executable, "-c", "pass"], env)
        }
        for args in READS + tuple(a.also):
            commands[f"strict-loop {args}"] = ([*cli, *args.split()], env)
            if a.baseline:  # the same command, its package imported from the other checkout
                commands[f"  baseline {args}"] = ([*cli, *args.split()], {**env, "PYTHONPATH": a.baseline})
        wall: dict[str, list[float]] = {name: [] for name in commands}
        cpu: dict[str, list[float]] = {name: [] for name in commands}
        for i in range(a.runs + 2):
            for name, (argv, run_env) in commands.items():
                w, c = _time(argv, run_env, ws)
                if i >= 2:  # the first two warm the file cache
                    wall[name].append(w)
                    cpu[name].append(c)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    base_w, base_c = statistics.median(wall["python -c pass"]), statistics.median(cpu["python -c pass"])
    print(f"{'command':<32}{'wall ms':>9}{'x bare':>8}{'cpu ms':>9}{'x bare':>8}")
    worst = 0.0
    for name in commands:
        w, c = statistics.median(wall[name]), statistics.median(cpu[name])
        print(f"{name:<32}{w * 1000:>9.1f}{w / base_w:>8.2f}{c * 1000:>9.1f}{c / base_c:>8.2f}")
        if name != "python -c pass" and name.removeprefix("strict-loop ") in READS:
            worst = max(worst, w / base_w)
    said = "met" if worst <= GOAL else "NOT met"
    print(f"goal: read commands and --help <= {GOAL:g}x a bare interpreter (wall, the worst {worst:.2f}x): {said}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
