"""The ``strict-loop`` console script: ``hook`` goes straight to the lean hook handler, everything else to the CLI.

Why a separate entry: a harness runs ``strict-loop hook ...`` on every tool call of the
agent, and the full CLI (argparse flags generated from every request model) costs
hundreds of milliseconds to import.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Optional


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["hook"] and not {"-h", "--help"} & set(args):  # help comes from the CLI's parser
        from strict_loop.harness.handler import main as hook_main

        return hook_main(args[1:])
    from strict_loop.cli.app import main as cli_main

    return cli_main(args)
