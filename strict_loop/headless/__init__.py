"""A harness run without a person: its command line and environment (``wiring``), and what it prints, read as tool
calls and one verdict (``streams`` on ``streambase``; OpenCode's in ``opencodestream``); Claude Code's HTTP hooks for
one run (``httphooks``). ``strict-loop supervise`` drives these; hooks never load them.

It may import ``harness`` and below.
"""

__all__ = ["httphooks", "opencodestream", "streambase", "streams", "wiring"]
