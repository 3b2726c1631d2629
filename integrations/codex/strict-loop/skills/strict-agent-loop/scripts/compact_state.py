#!/usr/bin/env python3
"""strict-agent-loop: `compact_state` (run with --help). Works installed or from a copy of the repo."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from strict_loop.cli.app import main  # noqa: E402

sys.exit(main(["compact_state", *sys.argv[1:]], prog=Path(__file__).name))
