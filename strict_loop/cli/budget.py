"""``strict-loop budget``: a person sets, raises or removes a task's budgets; a task its budget paused goes on.

Why a person's command, gated as ``resume`` is (``pausegate``): an agent that could raise its own budget would have
none. So it answers at a terminal (stdin and stdout), after showing the change and asking, or with ``--person-key
FILE`` for a person's script; it is no MCP tool, and the hooks refuse the agent's shell running it (``gates``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from strict_loop.base.errors import LoopError

NAME = "budget"


def add_parsers(sub: Any, common: argparse.ArgumentParser, parsers: dict[str, argparse.ArgumentParser]) -> None:
    from strict_loop.cli import pausegate
    from strict_loop.cli.flags import add_model_flags
    from strict_loop.model.budgets import BudgetInput

    p = sub.add_parser(
        NAME,
        parents=[common],
        allow_abbrev=False,
        help="set or raise a task's budgets (tool calls, wall time, tokens, dollars); a person's command",
        description="Set, raise or remove (0) a task's budgets; the budgets not given stay as they are.\n"
        "The hooks of every harness count against them: the agent is told at 80%, the task is paused at 100%.\n"
        "A task paused by a spent budget goes on when none is spent any more (this is then the answer to its pause).\n"
        "At a terminal it shows the change and asks; a person's script gives --person-key FILE.\n\n"
        "example:\n  strict-loop budget --task-id fix-parser --max-tool-calls 400 --max-wall-time 7200",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_model_flags(p, BudgetInput)
    p.add_argument(
        "--person-key",
        metavar="FILE",
        help="change it without a terminal (a person's script): FILE holds this machine's person key "
        f"({pausegate.MAKE_IT})",
    )
    parsers[NAME] = p


def run(ns: argparse.Namespace) -> int:
    """Check that a person changes it (a terminal, or the person key), then change it; the result on stdout."""
    from strict_loop.cli import pausegate
    from strict_loop.cli.commands import say
    from strict_loop.cli.flags import request_from
    from strict_loop.harness.spend import raise_budget
    from strict_loop.loop.workspace import Workspace
    from strict_loop.model.budgets import BudgetInput, lines
    from strict_loop.model.validation import validate_input

    ws = Workspace(ns.workspace)
    req: BudgetInput = validate_input(BudgetInput, request_from(ns), NAME)
    if ns.person_key is not None:
        pausegate.check_key(Path(ns.person_key), ws.root)
    elif not pausegate._at_terminal():
        raise LoopError(
            NAME,
            "a person sets a task's budget, and no terminal is attached (stdin and stdout); nothing was changed",
            f"run it in a terminal, or give --person-key FILE ({pausegate.MAKE_IT})",
        )
    store = ws.task_store(req.task_id)
    if ns.person_key is None:
        state = store.load()
        now = "; ".join(line.text for line in lines(state.contract.budget, store.budget_spent(), state.created_at))
        given = ", ".join(f"{k}={'none' if v is None else f'{v:g}'}" for k, v in req.changes().items())
        _confirm(f"task '{store.task_id}' has {now or 'no budget'}.\nSet {given or 'nothing'}? [y/N] ")
    result = raise_budget(store, ws.root, req, "a person (strict-loop budget)")
    say(result.model_dump_json(indent=2) if ns.json else f"task '{result.task_id}': {result.detail}")
    return 0


def _confirm(question: str) -> None:
    print(question, end="", file=sys.stderr, flush=True)
    if sys.stdin.readline().strip().lower() not in ("y", "yes"):
        raise LoopError(NAME, "not confirmed; nothing was changed", "run strict-loop budget again to answer yes")
