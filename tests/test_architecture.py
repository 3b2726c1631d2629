"""The package's shape, checked on every import statement of every module: imports point down the layers, ``base``
imports only the standard library, no private name crosses a package, every package says what it exports, the
hook's fast path imports no pydantic, and no module passes 400 lines nor a function 60. Why a test: the layout is
the architecture a newcomer reads; it must not erode one convenient import at a time."""

from __future__ import annotations

import ast
import functools
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

import pytest

import strict_loop

PACKAGE = Path(strict_loop.__file__).parent
LAYERS = [
    "base",
    "model",
    "monitor",
    "telemetry",
    "storage",
    "alerts",
    "loop",
    "harness",
    "headless",
    "supervisor",
    "experiments",
    "dashboard",
    "cli",
]
"""Lowest first: a package may import its own modules and those of packages before it, never after."""
TOP = {"__init__", "__main__", "entry", "hookd"}  # the entry points (and a documented alias) sit above every layer
MAX_MODULES = 12
MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 60


class Import(NamedTuple):
    module: str  # the importing module, dotted
    line: int
    target: str  # the module imported from, dotted
    names: tuple[str, ...]


@functools.cache
def parsed(path: Path) -> ast.Module:
    """A module's syntax tree, parsed once for all the checks of a run (they read every module several times)."""
    return ast.parse(path.read_text(encoding="utf-8"))


@functools.cache
def nodes(path: Path) -> tuple[ast.AST, ...]:
    return tuple(ast.walk(parsed(path)))


def modules() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if "skill" not in p.relative_to(PACKAGE).parts)


def dotted(path: Path) -> str:
    rel = path.relative_to(PACKAGE.parent).with_suffix("")
    parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
    return ".".join(parts)


def imports(path: Path) -> Iterator[Import]:
    """Every import in the file, inside functions and ``TYPE_CHECKING`` blocks too."""
    name = dotted(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in nodes(path):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield Import(name, node.lineno, alias.name, ())
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            yield Import(name, node.lineno, base, tuple(a.name for a in node.names))


def layer(module: str) -> str:
    """The subpackage of a ``strict_loop`` module (or its own name for a top-level module)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def everything() -> list[Path]:
    """The package's modules and every other Python file of ours that uses it."""
    repo = PACKAGE.parent
    return modules() + [
        p for folder in ("tests", "mcp_server", "bench", "scripts") for p in sorted((repo / folder).glob("*.py"))
    ]


def ours() -> list[Import]:
    return [i for p in modules() for i in imports(p)]


def test_every_module_is_in_a_layer_and_no_folder_is_crowded():
    for path in modules():
        rel = path.relative_to(PACKAGE)
        assert len(rel.parts) == 1 and rel.stem in TOP or rel.parts[0] in LAYERS, f"{rel} is in no layer"
    for folder in LAYERS:
        count = len([p for p in (PACKAGE / folder).glob("*.py") if p.name != "__init__.py"])
        assert 0 < count <= MAX_MODULES, f"{folder}/ holds {count} modules"


def test_imports_point_down_the_layers():
    wrong = []
    for imp in ours():
        if not imp.target.startswith("strict_loop.") or layer(imp.module) in TOP:
            continue
        src, dst = layer(imp.module), layer(imp.target)
        if dst in TOP and imp.target != "strict_loop":
            wrong.append(f"{imp.module}:{imp.line} imports the entry point {imp.target}")
        elif dst in LAYERS and LAYERS.index(dst) > LAYERS.index(src):
            wrong.append(f"{imp.module}:{imp.line} ({src}) imports {imp.target} ({dst}), a layer above it")
    assert not wrong, "\n".join(wrong)


def test_base_imports_only_the_standard_library():
    foreign = [
        f"{i.module}:{i.line} imports {i.target}"
        for i in ours()
        if layer(i.module) == "base"
        and i.target.split(".")[0] not in sys.stdlib_module_names
        and not i.target.startswith("strict_loop.base")
        and i.target != "strict_loop"
    ]
    assert not foreign, "\n".join(foreign)


def test_the_detector_and_the_formats_import_nothing_above_them():
    for imp in ours():
        if layer(imp.module) in ("model", "monitor") and imp.target.startswith("strict_loop."):
            assert layer(imp.target) in ("base", "model", "monitor")[: LAYERS.index(layer(imp.module)) + 1], imp


def test_no_private_name_crosses_a_package():
    """Tests, benchmarks and adapters included: they use the public surface (or a documented test helper)."""
    crossing = []
    for path in everything():
        for imp in imports(path) if path.is_relative_to(PACKAGE) else _foreign_imports(path):
            if not imp.target.startswith("strict_loop"):
                continue
            same = (
                imp.module.startswith("strict_loop.")
                and layer(imp.module) == layer(imp.target)
                and imp.target != "strict_loop"
            )
            private = [n for n in imp.names if n.startswith("_") and not n.startswith("__")]
            private += [part for part in imp.target.split(".") if part.startswith("_")]
            if private and not same:
                crossing.append(f"{imp.module}:{imp.line} imports {', '.join(private)} from {imp.target}")
    assert not crossing, "\n".join(crossing)


def test_no_private_attribute_of_another_packages_module_is_used():
    """``module._name`` where ``module`` was imported from another package (or the module is used from outside)."""
    used = []
    for path in everything():
        if not set(_PRIVATE_USE.findall(path.read_text(encoding="utf-8"))) - {"self", "cls"}:
            continue  # no `name._attr` but on self: nothing to look up (most files), no tree walked
        own = layer(dotted(path)) if path.is_relative_to(PACKAGE) else None
        bound = {}
        for node in nodes(path):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("strict_loop"):
                for alias in node.names:
                    target = f"{node.module}.{alias.name}"
                    if (PACKAGE.parent / target.replace(".", "/")).with_suffix(".py").exists():
                        bound[alias.asname or alias.name] = target
        for node in nodes(path):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id in bound
                and node.attr.startswith("_")
                and not node.attr.startswith("__")
                and layer(bound[node.value.id]) != own
            ):
                used.append(f"{path.name}:{node.lineno} uses {bound[node.value.id]}.{node.attr}")
    assert not used, "\n".join(used)


_PRIVATE_USE = re.compile(r"\b([A-Za-z_]\w*)\._(?!_)[A-Za-z]")
_MAY_IMPORT_PRIVATE = re.compile(r"\._[A-Za-z]|import[^\n]*[\s,(]_[A-Za-z]|^\s+_[A-Za-z]\w*,?\s*$", re.M)
"""What a file must contain to import a private name of ours (``from x import _y``, ``strict_loop._x``, ``_y`` alone
on a line of a parenthesized import): files without it are not parsed for the check (most tests)."""


def _foreign_imports(path: Path) -> Iterator[Import]:
    if not _MAY_IMPORT_PRIVATE.search(path.read_text(encoding="utf-8")):
        return
    for node in nodes(path):
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            yield Import(str(path.name), node.lineno, node.module, tuple(a.name for a in node.names))


@pytest.mark.parametrize("folder", LAYERS)
def test_each_package_says_what_it_owns_and_exports(folder):
    init = PACKAGE / folder / "__init__.py"
    tree = ast.parse(init.read_text(encoding="utf-8"))
    doc = ast.get_docstring(tree) or ""
    assert "may import" in doc, f"{folder}/__init__.py must say what the package may import"
    exported = next(
        ast.literal_eval(n.value)
        for n in tree.body
        if isinstance(n, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in n.targets)
    )
    assert set(exported) >= {p.stem for p in (PACKAGE / folder).glob("*.py") if p.name != "__init__.py"}


def test_no_module_or_function_is_too_long():
    """Issue 17: a module over 400 lines or a function over 60 is split by concern before it grows further."""
    offenders = []
    for path in modules() + sorted((PACKAGE.parent / "mcp_server").rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        name = path.relative_to(PACKAGE.parent)
        lines = text.count("\n")
        if lines > MAX_MODULE_LINES:
            offenders.append(f"{name}: {lines} lines (max {MAX_MODULE_LINES})")
        for node in nodes(path):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                if length > MAX_FUNCTION_LINES:
                    offenders.append(f"{name}:{node.lineno} {node.name}(): {length} lines (max {MAX_FUNCTION_LINES})")
    assert not offenders, "\n".join(offenders)


def test_no_module_is_named_like_the_standard_library():
    clashes = [str(p.relative_to(PACKAGE)) for p in modules() if p.stem in sys.stdlib_module_names]
    assert not clashes, clashes


def test_the_hooks_fast_path_imports_no_pydantic_nor_opentelemetry():
    """What a hook call imports before it knows there is a loop: the entry, the handler, the registry, the payloads;
    and the telemetry spool every event passes through (issue 21: the SDK loads only in the exporting processes)."""
    code = (
        "import sys; import strict_loop.entry, strict_loop.harness.handler, strict_loop.harness.registry, "
        "strict_loop.harness.payloads, strict_loop.harness.client, strict_loop.telemetry.spool; "
        "print('pydantic' in sys.modules, any(m.startswith('opentelemetry') for m in sys.modules))"
    )
    env = {**os.environ, "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:9"}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=PACKAGE.parent, env=env
    )
    assert out.stdout.strip() == "False False"


def test_the_hooks_own_name_of_the_state_folder_is_the_layouts():
    from strict_loop.base import layout
    from strict_loop.harness import handler

    assert handler.MANAGER_DIR == layout.MANAGER_DIR
