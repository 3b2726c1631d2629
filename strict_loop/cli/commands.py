"""The commands a person runs and an agent never calls as MCP tools: their parsers and what they run.

Why apart from ``app``: ``app`` turns every loop operation into a subcommand generated from its request model;
these commands (replay, demo, install, hook, supervise, watch, alerts, schemas) are written by hand, and an
unattended run or an install must never be reachable through the MCP server.
"""

from __future__ import annotations

import argparse
import json
import os
import select
import sys
from pathlib import Path
from typing import Any, Optional

from strict_loop.cli import serve
from strict_loop.cli.flags import add_model_flags, request_from
from strict_loop.harness import registry  # the harnesses' names only: each harness's modules load on first use


def add_parsers(sub: Any, common: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    """Add every person's command to ``sub`` (after the loop operations, in ``--help``'s order); their parsers."""
    parsers: dict[str, argparse.ArgumentParser] = {}
    _replay_demo_install_hook(sub, common, parsers)
    parsers["supervise"] = _supervise_parser(sub, common)
    parsers["watch"] = _watch_parser(sub, common)
    _alerts_schemas(sub, common, parsers)
    serve.add_parsers(sub, common, parsers)  # dashboard, compute
    return parsers


EXIT_READER_GONE = 141
"""128 + SIGPIPE: what a shell reports for a program that a closed pipe ended quietly."""


def say(text: str) -> None:
    """Print ``text`` to stdout; a reader that has gone (``| head -1``) is no error: the rest goes nowhere."""
    try:
        print(text, flush=True)
    except BrokenPipeError:
        silence_stdout()


def silence_stdout() -> None:
    """Point stdout at /dev/null, so that nothing written later (nor the flush at exit) fails again."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


def reader_gone() -> bool:
    """Whether stdout is a pipe (or socket) whose reader has left: a BrokenPipeError from anything else is a fault."""
    try:
        poller = select.poll()
        poller.register(sys.stdout.fileno(), select.POLLOUT)
        return any(events & (select.POLLERR | select.POLLHUP) for _, events in poller.poll(0))
    except (AttributeError, OSError, ValueError):  # no poll here, or stdout is no file (a test's capture)
        return False


def run(ns: argparse.Namespace) -> Optional[int]:
    """Run a person's command; its exit code, or None when ``ns.command`` is not one (the hook runs from ``main``)."""
    if ns.command == "schemas":
        return _schemas(ns)
    if ns.command in ("dashboard", "compute"):
        return serve.run(ns)
    if ns.command == "alerts":
        from strict_loop.cli import alertview

        return alertview.run(ns.workspace, ns.task_id, ns.retry, ns.json, ns.test)
    if ns.command == "replay":
        return _replay(Path(ns.file), ns.json)
    if ns.command == "install":
        from strict_loop.harness import install

        say(install.run(ns.harness, ns.scope, ns.workspace, dry_run=ns.dry_run, uninstall=ns.uninstall, hooks=ns.hooks))
        return 0
    if ns.command == "supervise":
        return _supervise(ns)
    if ns.command == "watch":
        return _watch(ns)
    if ns.command == "demo":
        from strict_loop.cli import demo

        demo.run(ns.start, Path(ns.workspace) if ns.workspace else None)
        return 0
    return None


def _replay_demo_install_hook(
    sub: Any, common: argparse.ArgumentParser, parsers: dict[str, argparse.ArgumentParser]
) -> None:
    """replay, demo, install, hook."""
    p = sub.add_parser(
        "replay",
        help="replay a trajectory and show where the monitor would fire",
        parents=[common],
        description=(
            "Feed a trajectory (JSONL, one turn per line) through the progress monitor and print each ladder step."
        ),
    )
    p.add_argument("file", metavar="FILE.jsonl")
    parsers["replay"] = p

    p = sub.add_parser(
        "demo",
        help="run a complete first loop in a scratch workspace",
        description="Run a real strict loop (hailstone sequence, one number per round) and print each round's status.",
    )
    p.add_argument("--start", type=int, default=6, help="start number (default 6)")
    p.add_argument("--workspace", help="folder to run in (default: a new temporary folder)")
    parsers["demo"] = p

    parsers["install"] = _install_parser(sub)

    p = sub.add_parser(
        "hook",
        help="a harness hook: record the tool call, enforce a pause (reads hook JSON on stdin)",
        description="Run by Claude Code, Codex or Hermes hooks: reads the hook's JSON on stdin, records tool calls\n"
        "as turns of the running task, prints a whisper, a refusal while paused, or a block at Stop.\n"
        "Task: $STRICT_LOOP_TASK, else the single running task. Always exits 0.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("harness", choices=registry.names())
    p.add_argument(
        "--workspace",
        metavar="DIR",
        help="workspace root (default: the nearest folder above the hook's cwd holding .agent-loop/)",
    )
    parsers["hook"] = p


def _supervise_parser(sub: Any, common: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """``supervise``: CLI only (a person starts an unattended run; an agent must not start one through MCP)."""
    from strict_loop.supervisor.budgets import SupervisorSettings

    fields = SupervisorSettings.model_fields

    def helped(name: str) -> str:
        return f"{fields[name].description or name} (default: {fields[name].default})"

    def contract(name: str) -> str:
        return (
            f"{fields[name].description} (default: the contract's unattended.{name}, {fields[name].default} unless set)"
        )

    p = sub.add_parser(
        "supervise",
        parents=[common],
        help="run a task unattended: re-invoke a harness until the stop rules say stop",
        description=(
            "Run the task unattended: invoke Codex, Claude Code or Hermes headless, again and again, from disk,\n"
            "until the stop checks say stop, a budget is reached, or the progress monitor pauses the task.\n"
            "Exit codes: 0 stop checks say stop, 2 bad input or untrusted stop commands, 3 a budget reached,\n"
            "5 paused by the progress monitor, 6 too many failed invocations in a row, 7 a usage limit resets\n"
            "later than --max-limit-wait (the person is alerted), 130/143 SIGINT/SIGTERM.\n"
            "See references/supervisor.md."
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--task-id", required=True, help="the task to run (created with init_state)")
    p.add_argument("--harness", required=True, choices=registry.names(), help="the agent harness to invoke")
    p.add_argument("--harness-bin", metavar="PATH", help="the harness executable (default: found on PATH)")
    p.add_argument("--model", help="the model the harness uses (default: the harness's own)")
    p.add_argument(
        "--no-mcp", action="store_true", help="wire no MCP server into the harness (the agent uses the strict-loop CLI)"
    )
    p.add_argument("--hooks", choices=("http", "command"), help="claude: HTTP hooks (default) or command hooks")
    p.add_argument(
        "--harness-arg",
        action="append",
        default=[],
        metavar="ARG",
        help="one more argument for the harness's command line, repeatable; write one that starts with '-' "
        "as --harness-arg=-t (e.g. --harness-arg=-t --harness-arg=terminal: Hermes with one toolset)",
    )
    p.add_argument("--max-invocations", type=int, metavar="N", help=helped("max_invocations"))
    p.add_argument("--max-rounds-per-invocation", type=int, metavar="N", help=contract("max_rounds_per_invocation"))
    p.add_argument("--max-consecutive-failures", type=int, metavar="N", help=contract("max_consecutive_failures"))
    p.add_argument("--max-cost-usd", type=float, metavar="X", help=helped("max_cost_usd"))
    p.add_argument("--usd-per-mtok-in", type=float, metavar="X", help=helped("usd_per_mtok_in"))
    p.add_argument("--usd-per-mtok-out", type=float, metavar="X", help=helped("usd_per_mtok_out"))
    for flag in ("invocation-timeout", "heartbeat", "backoff-base", "backoff-max", "max-limit-wait"):  # seconds
        dest = f"{flag.replace('-', '_')}_s"
        p.add_argument(f"--{flag}", dest=dest, type=float, metavar="S", help=helped(dest))
    return p


def _watch_parser(sub: Any, common: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """``watch``: CLI only, like supervise: the person starting a job declares what its remedies may change."""
    from strict_loop.experiments.remedies import WatchSettings

    p = sub.add_parser(
        "watch",
        parents=[common],
        help="run a long experiment: log, progress, known failures repaired, the rest escalated",
        description="Run the command after -- (never through a shell) in its own process group, log it to\n"
        ".agent-loop/tasks/T/watch/, read its progress, heartbeat with an ETA; when it fails, classify the\n"
        "failure and apply an allowed remedy (--allow) within its budget, or pause the task and alert a person.\n"
        "Exit codes: 0 the job succeeded, 2 bad input, 3 --max-runs or --timeout reached, 5 escalated\n"
        "(task paused, person alerted), 130/143 SIGINT/SIGTERM. See references/experiments.md.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        usage="strict-loop watch --task-id T [options] -- COMMAND [ARG ...]",
    )
    p.add_argument("--task-id", required=True, help="the task the job belongs to (created with init_state)")
    add_model_flags(p, WatchSettings)
    p.add_argument("job", nargs=argparse.REMAINDER, metavar="-- COMMAND", help="the job's command and arguments")
    return p


def _alerts_schemas(sub: Any, common: argparse.ArgumentParser, parsers: dict[str, argparse.ArgumentParser]) -> None:
    """alerts, schemas."""
    p = sub.add_parser(
        "alerts",
        parents=[common],
        help="show the alert outbox: channels configured here, each alert's delivery",
        description=(
            "Show the channels this environment configures (names only, never URLs) and every pause alert with\n"
            "its delivery per channel. --retry sends the failed ones again; --test sends a test message now.\n"
            "See references/alerts.md."
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--task-id", help="one task (default: every task in the workspace)")
    p.add_argument(
        "--retry", action="store_true", help="queue every failed channel again and start the delivery worker"
    )
    p.add_argument(
        "--test",
        action="store_true",
        help="send a test message through every channel now and say how each went (exit 1 if one failed)",
    )
    parsers["alerts"] = p

    p = sub.add_parser(
        "schemas",
        help="write or check the JSON Schemas of the file formats",
        description="Generate the JSON Schemas from the pydantic models.",
    )
    p.add_argument(
        "--write",
        metavar="DIR",
        nargs="?",
        const="",
        help="write them into DIR (default in a source checkout: references/schemas)",
    )
    p.add_argument("--check", metavar="DIR", nargs="?", const="", help="exit 1 if DIR's files differ")
    parsers["schemas"] = p


INSTALL_HELP = """\
Make a harness run the loop: copy the skill (SKILL.md, references/, scripts/) where it finds skills,
register the MCP server as 'strict-loop', and add hooks that record every tool call, whisper the
progress monitor's warnings, block tool calls while the task is paused and keep an unattended agent
going while the stop checks say continue. Hooks and server use this installation's absolute paths.
Running it again changes nothing; it merges into existing settings and leaves other entries alone.

  claude  project: .claude/settings.json, .mcp.json, .claude/skills/strict-agent-loop/
          user:    ~/.claude/settings.json, ~/.claude.json, ~/.claude/skills/strict-agent-loop/
  codex   project: .codex/hooks.json, .codex/config.toml, .agents/skills/strict-agent-loop/
          user:    $CODEX_HOME (~/.codex): hooks.json, config.toml, skills/strict-agent-loop/
  hermes  user:    $HERMES_HOME (~/.hermes): config.yaml (mcp_servers, plugins.enabled),
                   plugins/strict-loop/, skills/strict-agent-loop/

examples:
  strict-loop install claude --workspace ~/src/myproject
  strict-loop install codex --scope user --dry-run
  strict-loop install hermes
  strict-loop install claude --uninstall
"""


def _install_parser(sub: Any) -> argparse.ArgumentParser:
    """The ``install`` subcommand's parser (a person's command: the CLI only, never an MCP tool)."""
    p = sub.add_parser(
        "install",
        help="install the skill, MCP server and hooks into Claude Code, Codex or Hermes",
        description=INSTALL_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        allow_abbrev=False,
    )
    p.add_argument("harness", choices=registry.names(), help="the harness to install into")
    p.add_argument(
        "--scope",
        choices=("project", "user"),
        help="project: files in the workspace (default for claude, codex); user: your home folder (default for hermes)",
    )
    p.add_argument(
        "--workspace",
        metavar="DIR",
        help="the project folder (default: current directory); with --scope user it "
        "pins the MCP server and hooks to DIR instead of the folder each session starts in",
    )
    p.add_argument("--dry-run", action="store_true", help="print the changes as diffs and write nothing")
    p.add_argument("--uninstall", action="store_true", help="remove exactly what the install added")
    p.add_argument("--hooks", choices=("http", "command"), help="claude: HTTP hooks (default) or only command hooks")
    return p


def _watch(a: argparse.Namespace) -> int:
    from strict_loop.experiments.watch import Watch

    job = a.job[1:] if a.job[:1] == ["--"] else a.job
    result = Watch(a.workspace, a.task_id, job, request_from(a)).run()
    if a.json:
        import dataclasses

        say(json.dumps(dataclasses.asdict(result), indent=2))
    else:
        say(f"{a.task_id}: {result.outcome} after {result.runs} run(s): {result.reason}")
    return result.exit_code


def _supervise(a: argparse.Namespace) -> int:
    from strict_loop.supervisor.budgets import SupervisorSettings
    from strict_loop.supervisor.runner import Supervisor

    given = {name: getattr(a, name) for name in SupervisorSettings.model_fields if getattr(a, name, None) is not None}
    result = Supervisor(
        a.workspace,
        a.task_id,
        a.harness,
        overrides=given,
        model=a.model,
        harness_bin=a.harness_bin,
        extra_args=a.harness_arg,
        mcp=not a.no_mcp,
        http_hooks=a.hooks != "command",
    ).run()
    if a.json:
        import dataclasses

        say(json.dumps(dataclasses.asdict(result), indent=2))
    else:
        counts = f"{result.invocations} invocation(s), {result.rounds} round(s)"
        say(f"{a.task_id}: {result.action} after {counts}: {result.reason}")
    return result.exit_code


def _schemas(a: argparse.Namespace) -> int:
    from strict_loop.base import skillfiles
    from strict_loop.cli import schemas

    if a.write is not None:  # no default DIR in an installed package: its schemas are the release's copy
        for path in schemas.write_all(Path(a.write) if a.write else skillfiles.source_schema_dir()):
            print(path)
        return 0
    directory = Path(a.check or schemas.SCHEMA_DIR)
    stale = [
        name
        for name, schema in schemas.generate().items()
        if not (directory / name).is_file() or (directory / name).read_text(encoding="utf-8") != schemas.render(schema)
    ]
    if a.check is not None:
        for name in stale:
            what = "differs from" if (directory / name).is_file() else "is missing; it is generated from"
            print(f"{directory / name} {what} the models; run: strict-loop schemas --write", file=sys.stderr)
        if not stale:
            print(f"{len(schemas.generate())} schemas in {directory} match the models")
        return 1 if stale else 0
    print(json.dumps(schemas.generate(), indent=2))
    return 0


def _replay(path: Path, as_json: bool) -> int:
    from strict_loop.loop import answers
    from strict_loop.model.turns import Turn, read_turns
    from strict_loop.model.validation import validate_input
    from strict_loop.monitor.ladder import replay

    turns = [validate_input(Turn, t, f"{path.name} line {i + 1}") for i, t in enumerate(read_turns(path))]
    verdict, steps = replay(turns)
    if as_json:
        print(
            json.dumps(
                {
                    "fired_at": verdict.fired_at,
                    "steps": [
                        {"turn": t, "action": a, "signals": [s.model_dump() for s in sig]} for t, a, sig in steps
                    ],
                    "verdict": verdict.model_dump(mode="json"),
                },
                indent=2,
            )
        )
        return 0
    if not steps:
        print(f"{path.name}: {len(turns)} turns, the monitor would stay silent")
        return 0
    for turn, action, signals in steps:
        what = {"whisper": "whisper", "whisper2": "second whisper", "pause": "PAUSE + alert"}[action]
        print(f"turn {turn}: {what} -- " + "; ".join(f"{s.kind}: {s.evidence}" for s in signals))
    print(answers.verdict(verdict))
    return 0
