"""``strict-loop``: every operation as a subcommand; ``scripts/*.py`` are shims over this.

Each operation's flags are generated from its request model (``cliflags``):
``--global-stop-condition`` for ``global_stop_condition``, with the model's
description as help and the model's default. Errors print one line to stderr
and exit 2; a successful run prints text, or the result as JSON with ``--json``.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn, Optional

from pydantic import BaseModel

from strict_loop import __version__
from strict_loop.base import skillfiles
from strict_loop.base.errors import LoopError
from strict_loop.cli import demo, schemas
from strict_loop.cli.flags import add_model_flags, request_from
from strict_loop.harness import install, registry
from strict_loop.loop import answers, operations
from strict_loop.loop.operations import EXIT_CONTINUE, EXIT_PAUSED, EXIT_SPIRAL
from strict_loop.loop.workspace import Workspace
from strict_loop.model.results import TaskList
from strict_loop.model.validation import validate_input

EXIT_ERROR = 2


class _Parser(argparse.ArgumentParser):
    """Usage mistakes print one line (not the whole usage block) and exit 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_ERROR, f"{self.prog}: error: {message} (see --help)\n")


def _common() -> _Parser:
    p = _Parser(add_help=False)
    g = p.add_argument_group("common options")
    g.add_argument(
        "--workspace",
        "--workspace-root",
        dest="workspace",
        default=".",
        metavar="DIR",
        help="workspace root holding .agent-loop/ (default: current directory)",
    )
    g.add_argument("--json", action="store_true", help="print the result as JSON")
    return p


def build_parser(prog: Optional[str] = None) -> tuple[argparse.ArgumentParser, dict[str, argparse.ArgumentParser]]:
    common = _common()
    top = _Parser(
        prog=prog or "strict-loop",
        allow_abbrev=False,
        description="Strict agent loop: one verified task per round, durable state under <workspace>/.agent-loop/.",
        epilog="Round lifecycle: append_event --kind round.started -> do one task -> verify -> update_state -> "
        "check_stop -> report_status.",
    )
    top.add_argument("--version", action="version", version=f"strict-agent-loop {__version__}")
    sub = top.add_subparsers(dest="command", metavar="COMMAND", required=True)
    parsers: dict[str, argparse.ArgumentParser] = {}
    for op in operations.OPERATIONS:
        p = sub.add_parser(
            op.name,
            aliases=[op.name.replace("_", "-")],
            parents=[common],
            help=op.summary,
            description=op.cli_text,
            allow_abbrev=False,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        if op.flags is not None:
            add_model_flags(p, op.flags)
        parsers[op.name] = p
    parsers["check_stop"].add_argument("--exit-status", action="store_true", help="exit 0 = stop, 3 = continue")
    parsers["detect_spiral"].add_argument(
        "--exit-status",
        action="store_true",
        help=f"exit 0 = quiet, {EXIT_SPIRAL} = spiral detected, {EXIT_PAUSED} = paused",
    )
    parsers["resume"].add_argument("task", nargs="?", help="task id (same as --task-id)")
    parsers["resume"].add_argument("--task", dest="task_flag", metavar="ID", help="task id (same as --task-id)")

    _person_parsers(sub, common, parsers)
    parsers["supervise"] = _supervise_parser(sub, common)
    parsers["watch"] = _watch_parser(sub, common)

    p = sub.add_parser(
        "alerts",
        parents=[common],
        help="show the alert outbox: channels configured here, each alert's delivery",
        description=(
            "Show the channels this environment configures (names only, never URLs) and every pause alert with\n"
            "its delivery per channel. --retry sends the failed ones again. See references/alerts.md."
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--task-id", help="one task (default: every task in the workspace)")
    p.add_argument(
        "--retry", action="store_true", help="queue every failed channel again and start the delivery worker"
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
    p.add_argument(
        "--check", metavar="DIR", nargs="?", const=str(schemas.SCHEMA_DIR), help="exit 1 if DIR's files differ"
    )
    parsers["schemas"] = p
    return top, parsers


def _person_parsers(sub: Any, common: argparse.ArgumentParser, parsers: dict[str, argparse.ArgumentParser]) -> None:
    """The commands that are not MCP tools: replay, demo, install, hook."""
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

    parsers["install"] = install.add_parser(sub)

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
            "5 paused by the progress monitor, 6 too many failed invocations in a row, 130/143 SIGINT/SIGTERM.\n"
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
    p.add_argument(
        "--invocation-timeout",
        dest="invocation_timeout_s",
        type=float,
        metavar="S",
        help=helped("invocation_timeout_s"),
    )
    p.add_argument("--max-cost-usd", type=float, metavar="X", help=helped("max_cost_usd"))
    p.add_argument("--usd-per-mtok-in", type=float, metavar="X", help=helped("usd_per_mtok_in"))
    p.add_argument("--usd-per-mtok-out", type=float, metavar="X", help=helped("usd_per_mtok_out"))
    p.add_argument("--heartbeat", dest="heartbeat_s", type=float, metavar="S", help=helped("heartbeat_s"))
    p.add_argument("--backoff-base", dest="backoff_base_s", type=float, metavar="S", help=helped("backoff_base_s"))
    p.add_argument("--backoff-max", dest="backoff_max_s", type=float, metavar="S", help=helped("backoff_max_s"))
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


def _watch(a: argparse.Namespace) -> int:
    from strict_loop.experiments.watch import Watch

    job = a.job[1:] if a.job[:1] == ["--"] else a.job
    result = Watch(a.workspace, a.task_id, job, request_from(a)).run()
    if a.json:
        print(json.dumps(dataclasses.asdict(result), indent=2), flush=True)
    else:
        print(f"{a.task_id}: {result.outcome} after {result.runs} run(s): {result.reason}", flush=True)
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
    ).run()
    if a.json:
        print(json.dumps(dataclasses.asdict(result), indent=2), flush=True)
    else:
        print(
            f"{a.task_id}: {result.action} after {result.invocations} invocation(s), {result.rounds} "
            f"round(s): {result.reason}",
            flush=True,
        )
    return result.exit_code


def _run(a: argparse.Namespace) -> tuple[Any, Callable[[Any], str], int]:
    ws = Workspace(a.workspace)
    name = a.command.replace("-", "_")
    op = operations.by_name(name)
    if op.request is None:
        return op.call(ws), op.answer, 0
    params = request_from(a)
    if name == "resume":
        given = {t for t in (a.task, a.task_flag, params.get("task_id")) if t}
        if len(given) > 1:
            raise LoopError("resume", f"different task ids given ({', '.join(sorted(given))})", "give one")
        if given:
            params["task_id"] = given.pop()
    result = getattr(ws, name)(**params)
    code = 0
    if name == "check_stop" and a.exit_status:
        code = 0 if result.should_stop else EXIT_CONTINUE
    if name == "detect_spiral" and a.exit_status:
        code = EXIT_PAUSED if result.paused else EXIT_SPIRAL if result.detected else 0
    return result, op.answer, code


def _run_schemas(a: argparse.Namespace) -> int:
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
    if a.check:
        for name in stale:
            print(f"{directory / name} differs from the models; run: strict-loop schemas --write", file=sys.stderr)
        return 1 if stale else 0
    print(json.dumps(schemas.generate(), indent=2))
    return 0


def _replay(path: Path, as_json: bool) -> int:
    from strict_loop.model.turns import Turn, read_turns
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


def _dump(result: Any) -> str:
    if isinstance(result, TaskList):  # `list_tasks --json` stays a list, as scripts read it (the count is in the text)
        result = result.tasks
    if isinstance(result, list):
        return json.dumps([r.model_dump(mode="json") for r in result], indent=2, ensure_ascii=False)
    assert isinstance(result, BaseModel)
    return result.model_dump_json(indent=2)


def main(argv: Optional[Sequence[str]] = None, prog: Optional[str] = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["hook"] and not {"-h", "--help"} & set(args):  # the handler parses its own two arguments
        from strict_loop.harness.handler import main as hook_main

        return hook_main(args[1:])
    top, parsers = build_parser(prog)
    if prog and args and args[0] in parsers:  # a script shim: show the subcommand's own help and usage
        sub = parsers[args[0]]
        sub.prog = prog
        top = sub
        ns = sub.parse_args(args[1:])
        ns.command = args[0]
    else:
        ns = top.parse_args(args)
    try:
        if ns.command == "schemas":
            return _run_schemas(ns)
        if ns.command == "alerts":
            from strict_loop.cli import alertview

            return alertview.run(ns.workspace, ns.task_id, ns.retry, ns.json)
        if ns.command == "replay":
            return _replay(Path(ns.file), ns.json)
        if ns.command == "install":
            print(
                install.run(ns.harness, ns.scope, ns.workspace, dry_run=ns.dry_run, uninstall=ns.uninstall), flush=True
            )
            return 0
        if ns.command == "supervise":
            return _supervise(ns)
        if ns.command == "watch":
            return _watch(ns)
        if ns.command == "demo":
            demo.run(ns.start, Path(ns.workspace) if ns.workspace else None)
            return 0
        result, render, code = _run(ns)
    except LoopError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:  # stop commands' process groups are already gone (stopchecks); no traceback
        print("interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # one line, never a traceback, unless asked for
        if os.environ.get("STRICT_LOOP_DEBUG"):
            raise
        print(
            f"error: unexpected {type(exc).__name__}: {exc} (set STRICT_LOOP_DEBUG=1 for a traceback)", file=sys.stderr
        )
        return 1
    try:
        print(_dump(result) if ns.json else render(result), flush=True)
    except BrokenPipeError:  # e.g. `strict-loop list_tasks | head -1`: the reader left, the work is done
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return code


if __name__ == "__main__":
    sys.exit(main())
