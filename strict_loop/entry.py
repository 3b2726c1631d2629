"""The ``strict-loop`` console script: ``hook`` goes straight to the lean hook handler, everything else to the CLI.

Why a separate entry: a harness runs ``strict-loop hook ...`` on every tool call of the
agent, and the full CLI (argparse flags generated from every request model) costs
hundreds of milliseconds to import.

Run as a file, ``python -S .../strict_loop/entry.py hook codex`` is the thin hook that Codex's installed hooks run
(``harness.client.hook_words``): no site, and no module of the package but ``harness/client.py``, loaded from its
cached bytecode, unless the event needs the full hook.
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # typing imports re: the thin hook loads this file
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Optional


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["hook"] and not {"-h", "--help"} & set(args):  # help comes from the CLI's parser
        from strict_loop.harness.handler import main as hook_main

        return hook_main(args[1:])
    from strict_loop.cli.app import main as cli_main

    return cli_main(args)


if __name__ == "__main__":  # the thin hook: sys.path[0], this file's folder, becomes the client's for that import only
    import os

    sys.path[0] = os.path.join(os.path.dirname(os.path.realpath(__file__)), "harness")
    client = __import__("client")
    del sys.path[0]  # no place to import from: the full hook, when needed, finds the package as the console script does
    sys.exit(client.main())
