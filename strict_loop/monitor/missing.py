"""What a failure says is missing, named: a module, a program, a file, a package (``module mypy``, ``program javac``,
``package Protobuf``). Pure text.

Why apart: a diagnosis names the thing ("package Protobuf was missing 3 times through 3 different actions"), and the
same thing missing through varied commands (another prefix path, another index, a cache cleared) is a loop whatever
the command; each toolchain says it its own way, so this table grows by reason of its own.
"""

from __future__ import annotations

import re
from typing import Optional

_MISSING = [  # (pattern, what is missing, a text the pattern cannot match without: gates read in C)
    (re.compile(r"No module named ['\"]?([\w.\-]+)"), "module", ("No module named",)),
    (re.compile(r"Cannot find module ['\"]([^'\"]+)['\"]"), "module", ("Cannot find module",)),
    (re.compile(r"(?:^|[\s:])([\w.+\-/]+): (?:command )?not found\b"), "program", (": not found", ": command not")),
    (re.compile(r"\bcommand not found:? ([\w.+\-]+)"), "program", ("command not found",)),
    (re.compile(r"'([\w.+\-]+)' is not recognized as an internal or external command"), "program", ("not recognized",)),
    (re.compile(r"\bENOENT\b.{0,60}?['\"]([^'\"]+)['\"]"), "file", ("ENOENT",)),
    (
        re.compile(r"(?:can't open file|[Nn]o such file or directory:?) ['\"]?([\w.+\-/]+)"),
        "file",
        ("can't open file", "o such file or directory"),
    ),  # zsh's cd
    (re.compile(r"\bno matches found: ([\w.+\-/*?]+)"), "file", ("no matches found",)),  # zsh: a glob matched nothing
    # the path quoted (before Go's form, which would read "reading" of tail's "cannot open 'x' for reading: No such
    # file or directory"): ls's "cannot access '/exports': No such file or directory", find's, stat's
    (re.compile(r"['\"\u2018]([^'\"\u2019\n]{1,300})['\"\u2019](?: for \w+)?: [Nn]o such fi"), "file", ("o such fi",)),
    (re.compile(r"(?<![\w.+\-/])([\w.+\-/]{1,300}): [Nn]o such file or directory"), "file", ("o such file",)),  # Go
    # a package not found by the name asked for: CMake's find_package, pkg-config, apt, pip, cargo, go
    (re.compile(r"package configuration file provided by \"([^\"]{1,200})\""), "package", ("provided by",)),
    (re.compile(r"No package '([^']{1,200})' found"), "package", ("No package",)),
    (re.compile(r"Package '([^']{1,200})',? (?:required by '[^']{0,200}',? )?not found"), "package", ("not found",)),
    (re.compile(r"Unable to locate package (\S{1,200})"), "package", ("locate package",)),
    (re.compile(r"No matching distribution found for ([\w.\-]{1,200})"), "package", ("distribution found",)),
    (re.compile(r"no matching package named `([^`]{1,200})` found"), "package", ("matching package",)),
    (re.compile(r"cannot find package \"([^\"]{1,200})\""), "package", ("find package",)),
    (re.compile(r"no required module provides package ([\w.\-/@]{1,200})"), "package", ("provides package",)),
]


def missing(text: str) -> Optional[str]:
    """What was missing, named: 'module mypy', 'program javac', 'file setup.py' (None if nothing reads like that)."""
    for pattern, what, gates in _MISSING:
        m = pattern.search(text) if any(g in text for g in gates) else None
        if m:
            return f"{what} {m.group(1).strip(chr(39) + chr(34))}"
    return None
