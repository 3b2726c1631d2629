#!/usr/bin/env python3
"""Benchmark: one ``strict-loop hook claude`` invocation, end to end, next to the bare interpreter.

A harness starts the hook as a new process for every tool call of the agent, so
the cost that matters is process start + imports + the work. In one run this
creates a workspace with a running task, then times N invocations each of:

- the venv's real interpreter doing nothing (``python -c pass``): the floor;
- the installed ``strict-loop hook claude`` with no loop in its folder;
- the hook recording a quiet turn (a PostToolUse payload on stdin);
- the hook at PreToolUse (reads the monitor's state, says nothing);
- the hook at PreToolUse on a paused task (builds the deny);
- each of the last three once in-process (``STRICT_LOOP_HOOKD=0``) and once with a warm
  hook daemon (``hookd``) of the workspace answering;
- ``strict-loop list_tasks`` (the full CLI), for comparison.

Runs are interleaved so that machine noise hits all alike; the ratios to the bare
interpreter come from this one run. The target is a hook p50 <= 100 ms.

    python bench/hook_latency.py            # 40 invocations of each
    python bench/hook_latency.py --runs 100
    python bench/hook_latency.py --codex 30 --rounds 3 --runs 30   # a real Codex session (issue 27), see codex_main
    python bench/hook_latency.py --claude 30 --rounds 5   # a real Claude Code session over HTTP hooks, see claude_main
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from strict_loop import Workspace
from strict_loop.harness import daemon as hookd
from strict_loop.harness import handler  # noqa: E402


def _installed() -> tuple[str, str]:
    """The console script and the real interpreter it runs on (not a pyenv shim)."""
    here = Path(sys.executable).parent
    exe = shutil.which("strict-loop", path=f"{here}{os.pathsep}{os.environ.get('PATH', '')}")
    if not exe:
        sys.exit("the strict-loop console script is not installed: pip install -e .")
    first = Path(exe).read_text(encoding="utf-8", errors="replace").splitlines()[0]
    python = first[2:].strip() if first.startswith("#!") else sys.executable
    return exe, python


def _payload(event: str, cwd: Path, n: int) -> bytes:
    data = {
        "session_id": "bench",
        "transcript_path": "/dev/null",
        "cwd": str(cwd),
        "hook_event_name": event,
        "tool_name": "Bash",
        "tool_input": {"command": f"ls src/module_{n}.py", "description": "list"},
        "tool_use_id": f"toolu_{n}",
    }
    if event == "PostToolUse":
        data["tool_response"] = {"stdout": f"src/module_{n}.py", "stderr": "", "interrupted": False}
    return json.dumps(data).encode()


def _time(cmd: list[str], stdin: bytes, cwd: Path, daemon: bool = False) -> float:
    env = {k: v for k, v in os.environ.items() if k != "STRICT_LOOP_TASK"}
    env["STRICT_LOOP_HOOKD"] = "1" if daemon else "0"
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, input=stdin, cwd=cwd, capture_output=True, env=env)
    elapsed = time.perf_counter() - t0
    if proc.returncode != 0:
        sys.exit(f"{cmd} exited {proc.returncode}: {proc.stderr.decode()[:500]}")
    return elapsed


def _workspaces(tmp: Path) -> dict[str, Path]:
    """An empty folder, and a running task in-process, with a daemon, and paused (once each way)."""
    found = {name: tmp / name for name in ("empty", "inproc", "daemon", "paused-inproc", "paused-daemon")}
    for name, ws in found.items():
        ws.mkdir()
        if name != "empty":
            Workspace(ws).init_state(task_id="bench", goal="Benchmark the hook", global_stop_condition="never")
    for name in ("paused-inproc", "paused-daemon"):
        failed = dict(
            json.loads(_payload("PostToolUse", found[name], 0)),
            hook_event_name="PostToolUseFailure",
            error="Exit code 1",
        )
        for _ in range(8):
            handler.handle("claude", json.dumps(failed), env={}, cwd=str(found[name]))
    return found


def _warm(exe: str, ws: Path) -> int:
    """Start the workspace's daemon (the first hook call does) and wait until it answers; its pid."""
    _time([exe, "hook", "claude"], _payload("PostToolUse", ws, -1), ws, daemon=True)
    for _ in range(100):
        found = hookd.status(str(ws))
        if found:
            return int(found["pid"])
        time.sleep(0.1)
    sys.exit(f"no hook daemon answered for {ws}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--codex", type=int, metavar="CALLS", help="a real Codex session of CALLS shell calls instead")
    parser.add_argument("--rounds", type=int, default=3, help="with --codex: timed sessions of each kind")
    parser.add_argument("--claude", type=int, metavar="CALLS", help="a real Claude Code session of CALLS shell calls")
    args = parser.parse_args()
    if args.codex:
        return codex_main(args.codex, args.rounds, args.runs)
    if args.claude:
        return claude_main(args.claude, args.rounds)
    exe, python = _installed()
    with tempfile.TemporaryDirectory(prefix="hookbench-") as tmp:
        os.environ["XDG_RUNTIME_DIR"] = tmp  # the daemons' sockets, removed with the folder
        ws = _workspaces(Path(tmp))
        # a paused task's calls are decided by the hook itself, never by a daemon: only the running one has one
        pids = [_warm(exe, ws["daemon"])]
        try:
            times = _run(args.runs, exe, python, ws)
            served = [hookd.status(str(ws["daemon"]))]
        finally:
            for pid in pids:
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGTERM)
        recorded = {
            name: sum(
                '"tool_call"' in line
                for line in (ws[name] / ".agent-loop/tasks/bench/events.jsonl").read_text().splitlines()
            )
            for name in ("inproc", "daemon")
        }
    floor = statistics.median(times["python -c pass"])
    print(f"{args.runs} invocations each, interleaved; interpreter {python}")
    print(
        f"turns recorded: in-process {recorded['inproc']}, with the daemon {recorded['daemon']} "
        f"(daemons served {[s and s['served'] for s in served]} requests)"
    )
    print(
        f"load average at the end: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs (min is the least disturbed run)"
    )
    print(f"{'case':34s} {'p50 ms':>8s} {'p90 ms':>8s} {'min ms':>8s} {'p50 / bare':>11s} {'in-proc / daemon':>17s}")
    for name, values in times.items():
        ordered = sorted(values)
        p50, p90 = statistics.median(ordered), ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))]
        twin = times.get(name.replace("daemon", "in-process")) if "daemon" in name else None
        ratio = f"{statistics.median(twin) / p50:16.2f}x" if twin else ""
        print(f"{name:34s} {p50 * 1000:8.1f} {p90 * 1000:8.1f} {ordered[0] * 1000:8.1f} {p50 / floor:10.2f}x {ratio}")


def _run(runs: int, exe: str, python: str, ws: dict[str, Path]) -> dict[str, list[float]]:
    hook = [exe, "hook", "claude"]
    cases = {
        "python -c pass": lambda n: ([python, "-c", "pass"], b"", ws["empty"]),
        "hook, no loop": lambda n: (hook, _payload("PostToolUse", ws["empty"], n), ws["empty"]),
    }
    for way, daemon in (("in-process", False), ("daemon", True)):
        plain, paused = ws["daemon" if daemon else "inproc"], ws[f"paused-{'daemon' if daemon else 'inproc'}"]
        cases.update(
            {
                f"hook {way}, quiet turn recorded": lambda n, w=plain, d=daemon: (
                    hook,
                    _payload("PostToolUse", w, n),
                    w,
                    d,
                ),
                f"hook {way}, PreToolUse": lambda n, w=plain, d=daemon: (hook, _payload("PreToolUse", w, n), w, d),
                f"hook {way}, PreToolUse paused": lambda n, w=paused, d=daemon: (
                    hook,
                    _payload("PreToolUse", w, n),
                    w,
                    d,
                ),
            }
        )
    cases["strict-loop list_tasks"] = lambda n: ([exe, "list_tasks"], b"", ws["inproc"])
    times: dict[str, list[float]] = {name: [] for name in cases}
    for n in range(runs):
        for name, make in cases.items():
            times[name].append(_time(*make(n)))
    return times


# ---------------------------------------------------------------- issue 27: a real Codex session, our hooks vs no-op


def codex_main(calls: int, rounds: int, runs: int) -> None:
    """A scripted Codex session of ``calls`` shell calls (tests/harness_rig.py, tests/model_servers.py: the real
    binary, a scripted Responses server on loopback), ``rounds`` times each with our hooks as ``strict-loop install
    codex`` writes them, with the same hook entries running ``cat >/dev/null``, and with no hooks, interleaved after
    one warm-up round; then ``runs`` invocations of each hook command alone, through bash as Codex runs them."""
    sys.path.insert(1, str(Path(__file__).resolve().parent.parent / "tests"))  # the harness rig the e2e tests use
    from harness_rig import find_binary

    binary = find_binary("codex") or sys.exit("codex is not installed: python3 tests/harnesses/install.py")
    with tempfile.TemporaryDirectory(prefix="codexbench-") as tmp:
        base = Path(tmp)
        (base / "run").mkdir(mode=0o700)
        os.environ["XDG_RUNTIME_DIR"] = str(base / "run")  # the daemon our hooks start: stopped and removed below
        kinds = ("no hooks", "no-op hooks", "our hooks", "strict-loop hook")
        sessions = {kind: _codex_setup(base / f"v{i}", binary, kind, calls) for i, kind in enumerate(kinds)}
        try:
            walls: dict[str, list[float]] = {kind: [] for kind in kinds}
            for n in range(rounds + 1):
                for kind in kinds:
                    elapsed = _codex_session(*sessions[kind], calls)
                    if n:  # round 0 warms up: Codex's first start, our daemon's
                        walls[kind].append(elapsed)
            ours = sessions["our hooks"][1]
            recorded = read_events(ours)
            alone = _codex_invocations(ours, runs)
        finally:
            _stop_daemons(base / "run")
    _codex_report(walls, alone, recorded, calls, rounds, runs)


def _codex_setup(folder: Path, binary: Path, kind: str, calls: int) -> tuple[Any, Path]:
    """A home and a workspace for one kind of session: its hooks.json, a running task, the files the calls read."""
    from harness_rig import Harness

    from strict_loop.harness import configedit, plans

    home, work = folder / "home", folder / "w"
    (work / "src").mkdir(parents=True)
    harness = Harness("codex", binary, home)
    harness.trust_project(work)
    for i in range(calls):  # distinct files, distinct outputs: a session making progress (the monitor stays quiet)
        (work / "src" / f"m{i}.py").write_text(f"def step_{i}():\n    return {i * 7919 % 1000}\n")
    Workspace(work).init_state(task_id="bench", goal="Benchmark the hooks", global_stop_condition="never")
    hooks = work / ".codex" / "hooks.json"
    hooks.parent.mkdir()
    if kind == "no hooks":
        return harness, work
    if kind == "our hooks":  # only the hooks of `strict-loop install codex` (its MCP server would start with Codex)
        planned = plans.plan_codex("project", work, True)
        hooks.write_text(next(e.new for e in planned.edits if e.path.name == "hooks.json") or "")
    else:  # the same entries running a no-op, or `strict-loop hook codex` (what the install wrote before issue 27)
        line = "cat >/dev/null" if kind == "no-op hooks" else f"{_installed()[0]} hook codex --workspace {work}"
        hooks.write_text(json.dumps({"hooks": configedit.hook_groups("codex", line)}, indent=2))
    return harness, work


def _codex_session(harness, work: Path, calls: int) -> float:
    from model_servers import Final, ResponsesModel, Shell

    steps = [Shell(f"cat src/m{i}.py") for i in range(calls)] + [Final("Read them all.")]
    with ResponsesModel(steps) as model:
        t0 = time.perf_counter()
        proc = harness.run("Read each module once.", work, model.url)
        elapsed = time.perf_counter() - t0
    if proc.returncode != 0 or model.steps_used != len(steps):
        sys.exit(f"codex session failed (rc {proc.returncode}, {model.steps_used} steps): {proc.stderr[-1500:]}")
    return elapsed


def _codex_invocations(work: Path, runs: int) -> dict[str, list[tuple[float, float]]]:
    """Each hook command alone on a PreToolUse and a PostToolUse of the warm workspace, through ``bash -c``: (wall,
    CPU time of the hook's processes; the daemon's is not counted), next to the interpreter doing nothing."""
    exe, python = _installed()
    command = json.loads((work / ".codex" / "hooks.json").read_text())["hooks"]["PostToolUse"][0]["hooks"][0]
    cases = {
        "bash -c 'cat >/dev/null'": "cat >/dev/null",
        "python -S -c pass": f"{python} -S -c pass",
        "our hook, PreToolUse": command["command"],
        "our hook, PostToolUse": command["command"],
        "strict-loop hook codex, PreToolUse": f"{exe} hook codex --workspace {work}",
        "strict-loop hook codex, PostToolUse": f"{exe} hook codex --workspace {work}",
    }
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in cases}
    for n in range(runs):
        for name, line in cases.items():
            event = "PostToolUse" if "Post" in name else "PreToolUse"
            data = json.loads(_payload(event, work, 1000 + n))
            if event == "PostToolUse":
                data["tool_response"] = f"src/module_{1000 + n}.py\n"  # Codex's: the output as text
            before, t0 = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
            subprocess.run(["bash", "-c", line], input=json.dumps(data).encode(), capture_output=True, cwd=work)
            wall, after = time.perf_counter() - t0, resource.getrusage(resource.RUSAGE_CHILDREN)
            times[name].append((wall, after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime))
    return times


def read_events(work: Path) -> list[dict]:
    path = work / ".agent-loop" / "tasks" / "bench" / "events.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _stop_daemons(folder: Path) -> None:
    for lock in folder.glob("strict-loop/*.lock"):
        with contextlib.suppress(OSError, ValueError):
            os.kill(int(lock.read_text().strip()), signal.SIGTERM)


def _codex_report(walls: dict, alone: dict, recorded: list[dict], calls: int, rounds: int, runs: int) -> None:
    p50 = {kind: statistics.median(values) for kind, values in walls.items()}
    turns = [e for e in recorded if e["kind"] == "tool_call"]
    agent = sum(e["data"].get("actor") != "person" for e in turns)
    said = [e["kind"] for e in recorded if e["kind"].startswith("spiral.")]
    print(f"Codex session: {calls} shell calls, {rounds} rounds of each kind after a warm-up, interleaved")
    print(f"load average at the end: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    low = {kind: min(values) for kind, values in walls.items()}
    print(f"{'session':16s} {'p50 s':>7s} {'min s':>7s} {'per call over no hooks (p50)':>30s} {'p50 / no-op':>12s}")
    for kind in walls:
        extra = (p50[kind] - p50["no hooks"]) / calls * 1000
        ratio = p50[kind] / p50["no-op hooks"]
        print(f"{kind:16s} {p50[kind]:7.2f} {low[kind]:7.2f} {extra:27.1f} ms {ratio:11.2f}x")
    print(
        f"our hooks / no-op hooks: {p50['our hooks'] / p50['no-op hooks']:.2f}x p50, "
        f"{low['our hooks'] / low['no-op hooks']:.2f}x min (goal <= 1.5x); before issue 27 (strict-loop hook): "
        f"{p50['strict-loop hook'] / p50['no-op hooks']:.2f}x p50"
    )
    print(
        f"recorded with our hooks: {agent} of {calls * (rounds + 1)} calls and {len(turns) - agent} prompts; "
        f"monitor events {said or 'none'}"
    )
    floor = statistics.median(w for w, _ in alone["bash -c 'cat >/dev/null'"])
    print(f"one hook invocation alone, through bash as Codex runs it ({runs} each, interleaved; CPU: the hook's own):")
    for name, values in alone.items():
        mid, cpu = statistics.median(w for w, _ in values), statistics.median(c for _, c in values)
        low = min(w for w, _ in values)
        line = f"p50 {mid * 1e3:6.1f} ms  min {low * 1e3:6.1f} ms  {mid / floor:5.2f}x no-op  CPU {cpu * 1e3:5.1f} ms"
        print(f"  {name:36s} {line}")


CLAUDE_KINDS = ("no hooks", "no-op hooks", "our HTTP hooks", "our command hooks")


def claude_main(calls: int, rounds: int) -> None:
    """A scripted Claude Code session of ``calls`` shell calls (the real binary, a scripted Anthropic server on
    loopback: tests/harness_rig.py, tests/model_servers.py), ``rounds`` times each: with no hooks; with the entries of
    ``strict-loop install claude --hooks command`` running ``cat >/dev/null`` (the no-op floor); with our HTTP hooks as
    ``strict-loop install claude`` writes them, in sessions started with the workspace's token; and with our command
    hooks. Interleaved (the order rotates each round), after one untimed round (in it, the first session's
    SessionStart starts the warm endpoint, which the later sessions find; its time is printed as the cold start)."""
    sys.path.insert(1, str(Path(__file__).resolve().parent.parent / "tests"))  # the harness rig the e2e tests use
    from harness_rig import find_binary

    binary = find_binary("claude") or sys.exit("claude is not installed: python3 tests/harnesses/install.py")
    with tempfile.TemporaryDirectory(prefix="claudebench-") as tmp:
        base = Path(tmp)
        (base / "run").mkdir(mode=0o700)
        os.environ.update(XDG_RUNTIME_DIR=str(base / "run"), XDG_CONFIG_HOME=str(base / "config"))
        sessions = {kind: _claude_setup(base / f"c{i}", binary, kind) for i, kind in enumerate(CLAUDE_KINDS)}
        walls: dict[str, list[float]] = {kind: [] for kind in CLAUDE_KINDS}
        try:
            for n in range(rounds + 1):
                for kind in CLAUDE_KINDS[n % 4 :] + CLAUDE_KINDS[: n % 4]:  # each kind after each other in turn
                    walls[kind].append(_claude_session(*sessions[kind], calls))
            work = sessions["our HTTP hooks"][1]
            served = _endpoint_served(work)
            recorded = read_events(work)
        finally:
            _stop_daemons(base / "run")
            for lock in (base / "run").glob("strict-loop/http-*/lock"):  # the endpoints
                with contextlib.suppress(OSError, ValueError):
                    os.kill(int(lock.read_text().strip()), signal.SIGTERM)
    _claude_report(walls, recorded, served, calls, rounds)


def _claude_setup(folder: Path, binary: Path, kind: str) -> tuple[Any, Path, dict[str, str]]:
    """A home and a workspace for one kind of session: its .claude/settings.json (and the HTTP hooks' record), a
    running task, the files the calls read; and the session's extra environment."""
    from harness_rig import Harness

    from strict_loop.base import fsio
    from strict_loop.harness import configedit, daemon, plans

    home, work = folder / "home", folder / "w"
    (work / "src").mkdir(parents=True)
    home.mkdir()
    for i in range(100):  # distinct files, distinct outputs: a session making progress (the monitor stays quiet)
        (work / "src" / f"m{i}.py").write_text(f"def step_{i}():\n    return {i * 7919 % 1000}\n")
    Workspace(work).init_state(task_id="bench", goal="Benchmark the hooks", global_stop_condition="never")
    settings = work / ".claude" / "settings.json"
    settings.parent.mkdir()
    if kind == "no-op hooks":  # each event our HTTP install hooks (SessionStart too), one no-op command
        noop = configedit.hook_groups("claude", "cat >/dev/null")
        noop["SessionStart"] = [{"hooks": [{"type": "command", "command": "cat >/dev/null", "timeout": 30}]}]
        settings.write_text(json.dumps({"hooks": noop}, indent=2))
    elif kind != "no hooks":  # only the hooks of `strict-loop install claude` (its MCP server would start with Claude)
        planned = plans.plan_claude("project", work, True, "http" if kind == "our HTTP hooks" else "command")
        for edit in planned.edits:
            if edit.new is not None and (edit.private or edit.path == settings):
                fsio.replace_keeping_mode(edit.path, edit.new.encode())
    record = daemon.read_record(work, os.environ)
    return Harness("claude", binary, home), work, {daemon.TOKEN_ENV: record["token"]} if record else {}


def _claude_session(harness, work: Path, extra: dict[str, str], calls: int) -> float:
    from model_servers import AnthropicModel, Final, Shell

    steps = [Shell(f"cat src/m{i % 100}.py") for i in range(calls)] + [Final("Read them all.")]
    with AnthropicModel(steps) as model:
        t0 = time.perf_counter()
        proc = harness.run("Read each module once.", work, model.url, extra_env=extra)
        elapsed = time.perf_counter() - t0
    if proc.returncode != 0 or model.steps_used != len(steps):
        sys.exit(f"claude session failed (rc {proc.returncode}, {model.steps_used} steps): {proc.stderr[-1500:]}")
    return elapsed


def _endpoint_served(work: Path) -> int:
    from strict_loop import hookd
    from strict_loop.harness import daemon

    folder = daemon.http_dir(work, os.environ, create=False)
    status = hookd.ask(folder, {"op": "status"}) if folder else None
    return int(status["served"]) if status else 0


def _claude_report(walls: dict, recorded: list[dict], served: int, calls: int, rounds: int) -> None:
    timed = {kind: values[1:] for kind, values in walls.items()}  # round 0 warmed up
    p50 = {kind: statistics.median(values) for kind, values in timed.items()}
    low = {kind: min(values) for kind, values in timed.items()}
    turns = [e for e in recorded if e["kind"] == "tool_call"]
    agent = sum(e["data"].get("actor") != "person" for e in turns)
    print(f"Claude Code session: {calls} shell calls, {rounds} rounds of each kind after a warm-up, interleaved")
    print(f"load average at the end: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    print(f"{'session':18s} {'p50 s':>7s} {'min s':>7s} {'per call over no hooks (p50)':>30s} {'p50 / no-op':>12s}")
    for kind in timed:
        extra = (p50[kind] - p50["no hooks"]) / calls * 1000
        print(f"{kind:18s} {p50[kind]:7.2f} {low[kind]:7.2f} {extra:27.1f} ms {p50[kind] / p50['no-op hooks']:11.2f}x")
    http, command = p50["our HTTP hooks"], p50["our command hooks"]
    print(
        f"our HTTP hooks / no-op hooks: {http / p50['no-op hooks']:.2f}x p50, "
        f"{low['our HTTP hooks'] / low['no-op hooks']:.2f}x min (goal <= 1.10x); our command hooks: "
        f"{command / p50['no-op hooks']:.2f}x p50; the first session (cold endpoint) "
        f"{walls['our HTTP hooks'][0]:.2f} s"
    )
    print(
        f"recorded with our HTTP hooks: {agent} of {calls * (rounds + 1)} calls and {len(turns) - agent} prompts; "
        f"the endpoint served {served} requests"
    )


if __name__ == "__main__":
    main()
