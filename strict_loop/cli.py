"""``strict-loop``: every operation as a subcommand; ``scripts/*.py`` are shims over this.

Flags mirror the operation's parameter names (``--global-stop-condition`` for
``global_stop_condition``). Errors print one line to stderr and exit 2; a
successful run prints text, or the result as JSON with ``--json``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any, Callable, Optional, Sequence

from pydantic import BaseModel

from . import __version__, demo, resources, schemas, summaries
from .errors import LoopError
from .models import parse_text_pattern
from .workspace import Workspace

EXIT_ERROR = 2
EXIT_CONTINUE = 3


class _Parser(argparse.ArgumentParser):
    """Usage mistakes print one line (not the whole usage block) and exit 2."""

    def error(self, message: str):  # type: ignore[override]
        self.exit(EXIT_ERROR, f"{self.prog}: error: {message} (see --help)\n")


def _common() -> argparse.ArgumentParser:
    p = _Parser(add_help=False)
    g = p.add_argument_group("common options")
    g.add_argument("--workspace", "--workspace-root", dest="workspace", default=".", metavar="DIR",
                   help="workspace root holding .agent-loop/ (default: current directory)")
    g.add_argument("--json", action="store_true", help="print the result as JSON")
    return p


def _task_id(p: argparse.ArgumentParser, required: bool = False) -> None:
    p.add_argument("--task-id", required=required, help="task slug (default: the only running task)")


def _json_arg(text: str) -> dict[str, Any]:
    if text.startswith("@"):
        text = Path(text[1:]).read_text(encoding="utf-8")
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"not valid JSON ({exc})") from None
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError("must be a JSON object")
    return value


def _text_pattern(text: str) -> str:
    try:
        parse_text_pattern(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


def _parser(prog: Optional[str] = None) -> tuple[argparse.ArgumentParser, dict[str, argparse.ArgumentParser]]:
    common = _common()
    top = _Parser(
        prog=prog or "strict-loop", allow_abbrev=False,
        description="Strict agent loop: one verified task per round, durable state under <workspace>/.agent-loop/.",
        epilog="Round lifecycle: append_event --kind round.started -> do one task -> verify -> update_state -> check_stop -> report_status.",
    )
    top.add_argument("--version", action="version", version=f"strict-agent-loop {__version__}")
    sub = top.add_subparsers(dest="command", metavar="COMMAND", required=True)
    parsers: dict[str, argparse.ArgumentParser] = {}

    def add(name: str, help_text: str, description: str) -> argparse.ArgumentParser:
        p = sub.add_parser(name, aliases=[name.replace("_", "-")], parents=[common], help=help_text,
                           description=description, allow_abbrev=False, formatter_class=argparse.RawDescriptionHelpFormatter)
        parsers[name] = p
        return p

    p = add("init_state", "define the loop contract and create a task",
            "Define the loop contract once, before round 1. Unattended mode needs at least one machine stop check.\n\n"
            "example:\n  strict-loop init_state --goal 'Fix the parser crash' \\\n"
            "    --global-stop-condition 'pytest passes and a regression test exists' \\\n"
            "    --stop-command 'pytest -q' --require-path tests/test_parser.py")
    p.add_argument("--goal", required=True, help="the overall goal")
    p.add_argument("--global-stop-condition", required=True, help="when the whole loop may stop, in words")
    _task_id(p)
    p.add_argument("--success-evidence", action="append", default=[], metavar="TEXT", help="evidence expected at success (repeatable)")
    p.add_argument("--blocker-definition", help="what counts as a real blocker")
    p.add_argument("--operating-mode", choices=["interactive", "unattended"], default="interactive")
    g = p.add_argument_group("stop checks (all must pass for the goal to count as met)")
    g.add_argument("--stop-command", action="append", default=[], metavar="CMD", help="shell command that must exit 0 (repeatable)")
    g.add_argument("--require-path", action="append", default=[], metavar="PATH", help="path that must exist (repeatable)")
    g.add_argument("--require-text", action="append", default=[], metavar="PATH::TEXT", type=_text_pattern,
                   help="file must contain TEXT, or match PATH::re:REGEX (repeatable)")
    g.add_argument("--command-timeout", type=float, metavar="SECONDS", help="kill a stop command after this long (default 600)")
    g.add_argument("--output-tail-chars", type=int, metavar="N", help="keep this much of each stop command's output (default 4000)")
    g = p.add_argument_group("limits")
    for flag, help_text in (("--max-iterations", "most rounds (default 100)"),
                            ("--max-no-progress-rounds", "rounds in a row without progress before stopping (default 3)"),
                            ("--history-window", "recent rounds kept in state.json (default 10)"),
                            ("--max-context-chars", "cap on context_snapshot (default 8000)"),
                            ("--max-rounds-per-invocation", "unattended: rounds per agent invocation (default 5)"),
                            ("--max-consecutive-failures", "unattended: failed invocations in a row before giving up (default 3)")):
        g.add_argument(flag, type=int, help=help_text)
    p.add_argument("--monitor", type=_json_arg, metavar="JSON",
                   help='progress monitor settings (JSON object or @file), e.g. \'{"thresholds": {"identical_repeats": 3}}\'; '
                        "workspace defaults come from .agent-loop/monitor-defaults.json")
    p.add_argument("--next-task", default="", help="the first atomic task")
    p.add_argument("--force", action="store_true", help="replace an existing task (old files are moved aside)")

    p = add("append_event", "append one event (e.g. a round announcement)",
            "Append one line to events.jsonl. Announce each round with --kind round.started before doing it.\n\n"
            "example:\n  strict-loop append_event --kind round.started --message 'Round 3: add the regression test'")
    _task_id(p)
    p.add_argument("--kind", required=True, help="round.started, round.completed, note, blocker, tool_call, ...")
    p.add_argument("--message", required=True, help="what happened")
    p.add_argument("--data", type=_json_arg, default={}, metavar="JSON", help="JSON object (or @file.json) with details")

    p = add("update_state", "record one verified round",
            "Record one verified round. --verification-summary is required: no progress without evidence.\n"
            "--status completed is refused while stop checks fail.\n\n"
            "example:\n  strict-loop update_state --task 'Add regression test' --result-summary 'tests/test_parser.py added' \\\n"
            "    --verification-summary 'pytest -q: 12 passed' --progress made --next-task 'Fix the crash'")
    _task_id(p)
    p.add_argument("--task", required=True, help="the one atomic task this round did")
    p.add_argument("--local-done-condition", default="", help="how this round's task counts as done")
    p.add_argument("--result-summary", required=True, help="what the round produced")
    p.add_argument("--verification-summary", required=True, help="evidence the result is real (command and outcome)")
    p.add_argument("--progress", choices=["made", "none"], default="made")
    p.add_argument("--status", choices=["running", "completed", "blocked", "failed"], default="running")
    p.add_argument("--stop-reason", default="", help="why the loop stops (required for blocked/failed)")
    p.add_argument("--needs-human-input", action="store_true", help="a person must act before the loop goes on")
    p.add_argument("--evidence", action="append", default=[], metavar="TEXT", help="evidence item (repeatable)")
    p.add_argument("--artifacts", "--artifact", action="append", default=[], metavar="PATH", help="file produced or changed (repeatable)")
    p.add_argument("--next-task", help="the next atomic task (default: keep the current one)")
    p.add_argument("--context-snapshot", help="compact summary a fresh session needs to resume")

    p = add("check_stop", "run the stop checks and hard limits",
            "Run every stop check and hard limit; write latest-stop-report.json.\n"
            "With --exit-status, exit 0 when the loop should stop and 3 when it should continue.")
    _task_id(p)
    p.add_argument("--exit-status", action="store_true", help="exit 0 = stop, 3 = continue")

    p = add("report_status", "refresh the progress broadcast",
            "Write latest-status.txt and run-summary.md and append to status-history.jsonl.")
    _task_id(p)
    p.add_argument("--label", help="tag for this broadcast, e.g. heartbeat")

    p = add("compact_state", "shrink the rolling window in state.json",
            "Move older rounds out of state.json's window (they stay in iterations.jsonl and rounds/).")
    _task_id(p)
    p.add_argument("--keep", type=int, help="rounds to keep (default: half the history window)")

    add("list_tasks", "list the tasks in this workspace",
        "List every task under .agent-loop/ (and an original .codex-loop/, if present).")

    p = add("show_task", "show one task's state", "Show a task's contract, counters, recent rounds and last stop report.")
    _task_id(p)

    p = add("rebuild_state", "rebuild state.json from the ledgers",
            "Reconstruct state.json from events.jsonl and iterations.jsonl after damage or a crash; prints what was fixed.")
    _task_id(p)

    p = add("detect_spiral", "show the progress monitor's verdict",
            "The task's current spiral verdict: signals, diagnosis, recent turns, recommended action.\n"
            "With --turns FILE.jsonl, evaluate those turns from scratch instead (nothing is written).")
    _task_id(p)
    p.add_argument("--turns", metavar="FILE.jsonl", help="one turn per line (tool, args, output, error, thought, ...)")

    p = add("resume", "answer a pause: continue, roll back, or hand back",
            "Resume a task the progress monitor paused.\n"
            "  continue   mute the signals that fired for monitor.cooldown_turns turns and go on\n"
            "  rollback   restore the workspace to round --to N from its snapshot (the current tree is saved first)\n"
            "  hand-back  end the loop as blocked and write handback.md for the person")
    p.add_argument("task", nargs="?", help="task id (same as --task-id)")
    _task_id(p)
    p.add_argument("--action", required=True, choices=["continue", "rollback", "hand-back"])
    p.add_argument("--to", type=int, help="rollback: the round to restore (0 = as at init_state)")
    p.add_argument("--note", default="", help="what you decided, for the record")

    p = add("replay", "replay a trajectory and show where the monitor would fire",
            "Feed a trajectory (JSONL, one turn per line) through the progress monitor and print each ladder step.")
    p.add_argument("file", metavar="FILE.jsonl")

    p = sub.add_parser("demo", help="run a complete first loop in a scratch workspace",
                       description="Run a real strict loop (hailstone sequence, one number per round) and print each round's status.")
    p.add_argument("--start", type=int, default=6, help="start number (default 6)")
    p.add_argument("--workspace", help="folder to run in (default: a new temporary folder)")
    parsers["demo"] = p

    p = sub.add_parser("schemas", help="write or check the JSON Schemas of the file formats",
                       description="Generate the JSON Schemas from the pydantic models.")
    p.add_argument("--write", metavar="DIR", nargs="?", const="", help="write them into DIR (default in a source checkout: references/schemas)")
    p.add_argument("--check", metavar="DIR", nargs="?", const=str(schemas.SCHEMA_DIR), help="exit 1 if DIR's files differ")
    parsers["schemas"] = p
    return top, parsers


def _init_params(a: argparse.Namespace) -> dict[str, Any]:
    stop_checks: dict[str, Any] = {"commands": a.stop_command, "paths_exist": a.require_path, "text_patterns": a.require_text}
    if a.command_timeout is not None:
        stop_checks["command_timeout_s"] = a.command_timeout
    if a.output_tail_chars is not None:
        stop_checks["output_tail_chars"] = a.output_tail_chars
    limits = {k: getattr(a, k) for k in ("max_iterations", "max_no_progress_rounds", "history_window", "max_context_chars") if getattr(a, k) is not None}
    unattended = {k: getattr(a, k) for k in ("max_rounds_per_invocation", "max_consecutive_failures") if getattr(a, k) is not None}
    params = dict(goal=a.goal, global_stop_condition=a.global_stop_condition, task_id=a.task_id,
                  success_evidence=a.success_evidence, operating_mode=a.operating_mode, stop_checks=stop_checks,
                  limits=limits, unattended=unattended, next_task=a.next_task, force=a.force)
    if a.blocker_definition is not None:
        params["blocker_definition"] = a.blocker_definition
    if a.monitor is not None:
        params["monitor"] = a.monitor
    return params


def _pick(a: argparse.Namespace, *names: str) -> dict[str, Any]:
    return {n: getattr(a, n) for n in names}


def _run(a: argparse.Namespace) -> tuple[Any, Callable[[Any], str], int]:
    ws = Workspace(a.workspace)
    cmd = a.command.replace("-", "_")
    if cmd == "init_state":
        return ws.init_state(**_init_params(a)), summaries.init, 0
    if cmd == "append_event":
        return ws.append_event(**_pick(a, "task_id", "kind", "message", "data")), summaries.event, 0
    if cmd == "update_state":
        params = _pick(a, "task_id", "task", "local_done_condition", "result_summary", "verification_summary", "progress",
                       "status", "stop_reason", "needs_human_input", "evidence", "artifacts", "next_task", "context_snapshot")
        return ws.update_state(**params), summaries.round_result, 0
    if cmd == "check_stop":
        report = ws.check_stop(task_id=a.task_id)
        code = (0 if report.should_stop else EXIT_CONTINUE) if a.exit_status else 0
        return report, summaries.stop_report, code
    if cmd == "report_status":
        return ws.report_status(**_pick(a, "task_id", "label")), lambda r: r.text.rstrip(), 0
    if cmd == "compact_state":
        return ws.compact_state(**_pick(a, "task_id", "keep")), summaries.compact, 0
    if cmd == "list_tasks":
        return ws.list_tasks(), summaries.task_list, 0
    if cmd == "show_task":
        return ws.show_task(task_id=a.task_id), summaries.task_view, 0
    if cmd == "rebuild_state":
        return ws.rebuild_state(task_id=a.task_id), summaries.rebuild, 0
    if cmd == "detect_spiral":
        turns = _read_turns(Path(a.turns)) if a.turns else None
        return ws.detect_spiral(task_id=a.task_id, turns=turns), summaries.verdict, 0
    if cmd == "resume":
        if a.task and a.task_id and a.task != a.task_id:
            raise LoopError("resume", f"two different task ids given ({a.task}, {a.task_id})", "give one")
        return ws.resume(task_id=a.task or a.task_id, action=a.action, to=a.to, note=a.note), summaries.resume, 0
    raise AssertionError(cmd)


def _run_schemas(a: argparse.Namespace) -> int:
    if a.write is not None:  # no default DIR in an installed package: its schemas are the release's copy
        for path in schemas.write_all(Path(a.write) if a.write else resources.source_schema_dir()):
            print(path)
        return 0
    directory = Path(a.check or schemas.SCHEMA_DIR)
    stale = [name for name, schema in schemas.generate().items()
             if not (directory / name).is_file() or (directory / name).read_text(encoding="utf-8") != schemas.render(schema)]
    if a.check:
        for name in stale:
            print(f"{directory / name} differs from the models; run: strict-loop schemas --write", file=sys.stderr)
        return 1 if stale else 0
    print(json.dumps(schemas.generate(), indent=2))
    return 0


def _read_turns(path: Path) -> list[dict[str, Any]]:
    turns = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if line.strip():
            try:
                value = json.loads(line)
            except ValueError as exc:
                raise LoopError(f"{path.name} line {number}", f"is not JSON ({exc})", "one JSON object per line") from None
            if not isinstance(value, dict):
                raise LoopError(f"{path.name} line {number}", "is not a JSON object", "one turn object per line")
            turns.append(value)
    return turns


def _replay(path: Path, as_json: bool) -> int:
    from .errors import validate_input
    from .monitor import replay
    from .turns import Turn

    turns = [validate_input(Turn, t, f"{path.name} line {i + 1}") for i, t in enumerate(_read_turns(path))]
    verdict, steps = replay(turns)
    if as_json:
        print(json.dumps({"fired_at": verdict.fired_at, "steps": [{"turn": t, "action": a, "signals": [s.model_dump() for s in sig]}
                                                                    for t, a, sig in steps], "verdict": verdict.model_dump(mode="json")}, indent=2))
        return 0
    if not steps:
        print(f"{path.name}: {len(turns)} turns, the monitor would stay silent")
        return 0
    for turn, action, signals in steps:
        what = {"whisper": "whisper", "whisper2": "second whisper", "pause": "PAUSE + alert"}[action]
        print(f"turn {turn}: {what} -- " + "; ".join(f"{s.kind}: {s.evidence}" for s in signals))
    print(summaries.verdict(verdict))
    return 0


def _dump(result: Any) -> str:
    if isinstance(result, list):
        return json.dumps([r.model_dump(mode="json") for r in result], indent=2, ensure_ascii=False)
    assert isinstance(result, BaseModel)
    return result.model_dump_json(indent=2)


def main(argv: Optional[Sequence[str]] = None, prog: Optional[str] = None) -> int:
    top, parsers = _parser(prog)
    args = list(sys.argv[1:] if argv is None else argv)
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
        if ns.command == "replay":
            return _replay(Path(ns.file), ns.json)
        if ns.command == "demo":
            demo.run(ns.start, Path(ns.workspace) if ns.workspace else None)
            return 0
        result, render, code = _run(ns)
    except LoopError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except OSError as exc:
        print(f"error: {exc.strerror or exc} ({exc.filename or ''})", file=sys.stderr)
        return EXIT_ERROR
    except Exception as exc:  # one line, never a traceback, unless asked for
        if os.environ.get("STRICT_LOOP_DEBUG"):
            raise
        print(f"error: unexpected {type(exc).__name__}: {exc} (set STRICT_LOOP_DEBUG=1 for a traceback)", file=sys.stderr)
        return 1
    try:
        print(_dump(result) if ns.json else render(result), flush=True)
    except BrokenPipeError:  # e.g. `strict-loop list_tasks | head -1`: the reader left, the work is done
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return code


if __name__ == "__main__":
    sys.exit(main())
