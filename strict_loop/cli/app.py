"""``strict-loop``: every operation as a subcommand; ``scripts/*.py`` are shims over this.

Each operation's flags are generated from its request model (``cli.flags``):
``--global-stop-condition`` for ``global_stop_condition``, with the model's
description as help and the model's default. Errors print one line to stderr
and exit 2; a successful run prints text, or the result as JSON with ``--json``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, Optional

from strict_loop import __version__
from strict_loop.base.errors import LoopError, storage_error
from strict_loop.base.layout import find_root
from strict_loop.cli import budget, commands, pausegate, reads, table
from strict_loop.cli.flags import SEP, request_from

if TYPE_CHECKING:  # what a command uses is imported when it runs: --help and the reads load no model
    from strict_loop.loop.workspace import Workspace

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
        metavar="DIR",
        help="workspace root holding .agent-loop/ (default: the nearest folder at or above the current directory "
        "holding .agent-loop/, as the hook finds it; else the current directory)",
    )
    g.add_argument("--json", action="store_true", help="print the result as JSON")
    p.set_defaults(nearest_workspace=True)  # not demo's, install's nor dashboard's own --workspace
    return p


def _nearest_workspace(ns: argparse.Namespace) -> None:
    """Fill in a --workspace not given: from a subfolder of a workspace, the command works on that workspace."""
    if getattr(ns, "nearest_workspace", False) and ns.workspace is None:
        try:
            ns.workspace = str(find_root(Path.cwd()) or ".")
        except OSError:  # the current directory was removed: Workspace says so
            ns.workspace = "."


def _top(prog: Optional[str]) -> tuple[argparse.ArgumentParser, Any]:
    top = _Parser(
        prog=prog or "strict-loop",
        allow_abbrev=False,
        description="Strict agent loop: one verified task per round, durable state under <workspace>/.agent-loop/.",
        epilog="Round lifecycle: append_event --kind round.started -> do one task -> verify -> update_state -> "
        "check_stop -> report_status.",
    )
    top.add_argument("--version", action="version", version=f"strict-agent-loop {__version__}")
    return top, top.add_subparsers(dest="command", metavar="COMMAND", required=True)


Parsers = tuple[argparse.ArgumentParser, dict[str, argparse.ArgumentParser]]


def fast_parser(prog: Optional[str] = None) -> Parsers:
    """The parsers of ``table.json``: what ``build_parser`` makes, without importing a model."""
    top, sub = _top(prog)
    return top, table.build(sub, _common(), table.load())


def build_parser(prog: Optional[str] = None) -> Parsers:
    """The parsers generated from the operations' request models (and the person's commands): the source of
    ``table.json``, and the parser of a command that file does not know."""
    from strict_loop.cli.flags import add_model_flags
    from strict_loop.loop import operations
    from strict_loop.loop.operations import EXIT_CONTINUE, EXIT_PAUSED, EXIT_SPIRAL

    common = _common()
    top, sub = _top(prog)
    parsers: dict[str, argparse.ArgumentParser] = {}
    for op in operations.OPERATIONS:
        p = sub.add_parser(
            op.name,
            aliases=[op.name.replace("_", "-")] if "_" in op.name else [],
            parents=[common],
            help=op.summary,
            description=op.cli_text,
            allow_abbrev=False,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        if op.flags is not None:
            add_model_flags(p, op.flags)
        parsers[op.name] = p
    parsers["check_stop"].add_argument(
        "--exit-status",
        action="store_true",
        help=f"exit 0 = stop, {EXIT_CONTINUE} = continue, {EXIT_PAUSED} = paused (launch nothing: a person answers)",
    )
    parsers["detect_spiral"].add_argument(
        "--exit-status",
        action="store_true",
        help=f"exit 0 = quiet, {EXIT_SPIRAL} = spiral detected, {EXIT_PAUSED} = paused",
    )
    parsers["trust"].add_argument(
        "--yes",
        action="store_true",
        help="do not ask: trust the commands shown (for scripts; needed without a terminal)",
    )
    parsers["resume"].add_argument("task", nargs="?", help="task id (same as --task-id)")
    parsers["resume"].add_argument("--task", dest="task_flag", metavar="ID", help="task id (same as --task-id)")

    parsers.update(commands.add_parsers(sub, common))
    pausegate.add_parsers(sub, common, parsers)  # resume --person-key, person-key
    budget.add_parsers(sub, common, parsers)  # a person's, gated as resume is
    return top, parsers


def _run(a: argparse.Namespace) -> tuple[Any, Callable[[Any], str], int]:
    from strict_loop.loop import operations
    from strict_loop.loop.operations import EXIT_CONTINUE, EXIT_PAUSED, EXIT_SPIRAL
    from strict_loop.loop.workspace import Workspace

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
        pausegate.bind(ws, params, a.person_key)  # a person answers (a terminal, or the person key), bound to a pause
    if name == "trust":
        _confirm_trust(ws, params.get("task_id"), a.yes)
    result = getattr(ws, name)(**params)
    code = 0
    if name == "check_stop" and a.exit_status:
        code = 0 if result.should_stop else EXIT_PAUSED if result.supervisor.paused else EXIT_CONTINUE
    if name == "detect_spiral" and a.exit_status:
        code = EXIT_PAUSED if result.paused else EXIT_SPIRAL if result.detected else 0
    return result, op.answer, code


def _confirm_trust(ws: Workspace, task_id: Optional[str], yes: bool) -> None:
    """Show the commands a person is about to trust, then ask (``--yes`` answers for a script); refuse without a
    terminal to ask on. Trust is the person's decision about code that came with a repository: never implied."""
    state = ws.show_task(task_id=task_id).state
    checks = state.contract.stop_checks
    monitor = ws.untrusted_monitor(state.task_id)  # repository content that would weaken or change the monitor
    if (not checks.commands or ws.trust_store.is_trusted(ws.root, state.task_id, checks)) and not monitor:
        return
    shown = "\n".join(f"  $ {c}" for c in checks.commands)
    if checks.commands and not ws.trust_store.is_trusted(ws.root, state.task_id, checks):
        print(
            f"task '{state.task_id}' in {ws.root} runs these stop commands (each killed after "
            f"{checks.command_timeout_s:g}s):\n{shown}",
            file=sys.stderr,
        )
    if monitor:
        said = "\n".join(f"  {line}" for line in monitor)
        print(
            f"these progress monitor settings would apply (each against the built-in value):\n{said}", file=sys.stderr
        )
    if yes:
        return
    if not sys.stdin.isatty():
        raise LoopError(
            "trust",
            "asks a person and no terminal is attached; nothing was recorded",
            "read the commands above, then run it in a terminal or add --yes",
        )
    if input("Trust them to run on this machine? [y/N] ").strip().lower() not in ("y", "yes"):
        raise LoopError("trust", "not confirmed; nothing was recorded", "run strict-loop trust again to answer yes")


_PARAMETER = re.compile(r"(?<![\w.`'/-])([a-z][a-z0-9]*(?:_[a-z0-9]+)*)(=true)?(?![\w='/-])")
"""A parameter as an operation's advice names it: ``task_id``, ``force=true`` (the MCP tools' spelling); not a
quoted value, a path, a dotted field nor a command in backticks."""


def for_cli(exc: LoopError, parsers: dict[str, argparse.ArgumentParser]) -> LoopError:
    """``exc`` with its advice in the command line's words: ``--force`` for ``force=true``, ``--task-id`` for
    ``task_id``. The core advises in the MCP tools' spelling; a person at a terminal types flags. Only the advice
    is translated (the problem quotes the caller's values), and not the task ids it may list."""
    flags: dict[str, tuple[str, bool]] = {}
    for parser in parsers.values():
        for action in parser._actions:
            if action.dest.startswith("f" + SEP) and action.option_strings:
                switch = action.nargs == 0 and action.const is True  # a store_true flag
                flags.setdefault(action.dest.rsplit(SEP, 1)[-1], (action.option_strings[0], switch))

    def word(m: re.Match[str]) -> str:
        flag, switch = flags.get(m.group(1), ("", False))
        if flag and (switch if m.group(2) else "_" in m.group(1) and not switch):
            return flag
        return m.group(0)

    advice, listed, ids = exc.fix.partition("known tasks: ")
    fix = _PARAMETER.sub(word, advice) + listed + ids
    return exc if fix == exc.fix else LoopError(exc.field, exc.problem, fix)


def _dump(result: Any) -> str:
    from pydantic import BaseModel

    from strict_loop.model.results import TaskList

    if isinstance(result, TaskList):  # `list_tasks --json` stays a list, as scripts read it (the count is in the text)
        result = result.tasks
    if isinstance(result, list):
        return json.dumps([r.model_dump(mode="json") for r in result], indent=2, ensure_ascii=False)
    assert isinstance(result, BaseModel)
    return result.model_dump_json(indent=2)


def main(argv: Optional[Sequence[str]] = None, prog: Optional[str] = None) -> int:
    """Run one command; its exit code. A reader of stdout that left early (``| head -1``, also for ``--help``) ends
    it quietly: no traceback, exit 141 (or the command's own code when its output was the last thing it did)."""
    try:
        return _main(argv, prog)
    except BrokenPipeError:
        if not commands.reader_gone():
            raise
        commands.silence_stdout()
        return commands.EXIT_READER_GONE
    finally:
        spool = sys.modules.get("strict_loop.telemetry.spool")  # only a command that wrote a record spooled it
        if spool is not None and spool.SPOOLED and list(sys.argv[1:] if argv is None else argv)[:1] != ["hook"]:
            from strict_loop.telemetry import export  # the hook's path never loads the SDK

            export.send_spooled()  # what this command spooled goes out as it ends (bounded, silent; issue 26)


def _parse(args: list[str], prog: Optional[str]) -> tuple[argparse.Namespace, Callable[[], dict[str, Any]]]:
    """The command line, parsed by ``table.json``'s parsers (only the command given gets its arguments); and a
    function giving every command's parser, whose flags an error's advice may name."""
    known = table.load()
    first = args[0] if args and not args[0].startswith("-") else None
    if first is not None and first not in table.names(known):  # an operation added since table.json (or a typo)
        top, parsers = build_parser(prog)
        every = lambda: parsers  # noqa: E731
    else:
        top, sub = _top(prog)
        parsers = table.build(sub, _common(), known, only=first)
        every = lambda: fast_parser(prog)[1]  # noqa: E731
    if prog and first in parsers:  # a script shim: show the subcommand's own help and usage
        shim = parsers[args[0]]
        shim.prog = prog
        ns = shim.parse_args(args[1:])
        ns.command = args[0]
    else:
        ns = top.parse_args(args)
    return ns, every


def _main(argv: Optional[Sequence[str]], prog: Optional[str]) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["hook"] and not {"-h", "--help"} & set(args):  # the handler parses its own two arguments
        from strict_loop.harness.handler import main as hook_main

        return hook_main(args[1:])
    ns, every = _parse(args, prog)
    try:
        _nearest_workspace(ns)
        person = (
            pausegate.make_key()
            if ns.command == "person-key"
            else budget.run(ns)
            if ns.command == budget.NAME
            else commands.run(ns)
        )
        if person is not None:
            return person
        text = (
            None
            if ns.json or ns.command not in reads.COMMANDS
            else reads.answer(ns.command, ns.workspace, request_from(ns))
        )
        if text is not None:  # read without a model: the same text (None: the full path says what it could not)
            commands.say(text)
            return 0
        result, render, code = _run(ns)
    except LoopError as exc:
        print(f"error: {for_cli(exc, every())}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:  # stop commands' process groups are already gone (stopchecks); no traceback
        print("interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # one line, never a traceback, unless asked for
        if isinstance(exc, BrokenPipeError) and commands.reader_gone():  # `strict-loop replay x | head -1`
            raise  # main ends it quietly
        if os.environ.get("STRICT_LOOP_DEBUG"):
            raise
        if isinstance(exc, OSError):  # a read-only or full file system outside the operations' own boundary
            print(f"error: {storage_error(ns.command, exc)}", file=sys.stderr)
            return EXIT_ERROR
        print(
            f"error: unexpected {type(exc).__name__}: {exc} (set STRICT_LOOP_DEBUG=1 for a traceback)", file=sys.stderr
        )
        return 1
    commands.say(_dump(result) if ns.json else render(result))  # `list_tasks | head -1`: the work is done, quietly
    return code


if __name__ == "__main__":
    sys.exit(main())
