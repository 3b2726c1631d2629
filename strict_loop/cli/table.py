"""The subcommands' parsers as data: ``table.json``, generated from the parsers the request models make, and the
parsers built back from it without importing a model.

Why: the flags of every operation are generated from its request model (``flags``), and importing the models (with
pydantic) costs many times a bare interpreter's start, which ``--help``, ``list_tasks`` and ``show_task`` should not
pay. The models stay the one source: ``table.json`` is what ``app.build_parser`` makes of them, written down; a test
checks that it still is (regenerate: ``python -m strict_loop.cli.table``). A command the file does not know (an
operation added since) is parsed by the models' parsers.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from importlib import import_module
from pathlib import Path
from typing import Any, Optional

from strict_loop.harness import registry  # the harnesses' names only

TABLE = Path(__file__).with_name("table.json")
HARNESSES = "@harnesses"
"""The choices of a harness argument: the registry's names when the parser is built (a harness added since counts)."""
COMMON = "common options"
"""The title of the options every loop command shares (``app._common``): given by the parent parser, not listed."""
_FORMATTERS = {f.__name__: f for f in (argparse.HelpFormatter, argparse.RawDescriptionHelpFormatter)}
_KINDS = {"_StoreAction": "store", "_StoreTrueAction": "store_true", "_AppendAction": "append"}
_BLANK: dict[str, Any] = {
    "nargs": None,
    "const": None,
    "default": None,
    "type": None,
    "choices": None,
    "required": False,
    "help": None,
    "metavar": None,
}
"""``add_argument``'s own defaults: a value equal to one is left out of the table."""


def _type_name(kind: Any) -> Optional[str]:
    """A flag's ``type`` as a name: ``int``, ``float``, ``json`` (``flags.json_object``) or ``load:module:function``
    (a ``Flag(load=...)``, imported only when the flag is given)."""
    if kind is None or kind in (int, float):
        return None if kind is None else kind.__name__
    if getattr(kind, "table_name", None):  # a parser built from the table
        return str(getattr(kind, "table_name"))  # noqa: B009
    if getattr(kind, "__name__", "") == "json_object":
        return "json"
    load = getattr(kind, "load", None)
    if load is not None:
        return f"load:{load.__module__}:{load.__qualname__}"
    raise TypeError(f"no table form for the argument type {kind!r}")


def _action(action: argparse.Action) -> dict[str, Any]:
    kind = _KINDS.get(type(action).__name__)
    if kind is None:
        raise TypeError(f"no table form for {type(action).__name__} ({action.option_strings or action.dest})")
    row: dict[str, Any] = {"kind": kind, "flags": list(action.option_strings) or [action.dest]}
    if action.option_strings:
        row["dest"] = action.dest
    values = {name: getattr(action, name) for name in _BLANK}
    values["type"] = _type_name(action.type)
    values["choices"] = list(action.choices) if action.choices is not None else None
    if values["choices"] == list(registry.names()):
        values["choices"] = HARNESSES
    if kind == "store_true":
        values = {k: v for k, v in values.items() if k in ("default", "required", "help")}
        values["default"] = None if values["default"] is False else values["default"]
    if not action.option_strings:
        values.pop("required")  # a positional's is implied by its nargs
    row.update({k: v for k, v in values.items() if v != _BLANK[k] or (k == "default" and v is False)})
    return row


def dump(top: argparse.ArgumentParser) -> list[dict[str, Any]]:
    """Every subcommand of ``top`` (in ``--help``'s order) as data."""
    sub = next(a for a in top._actions if isinstance(a, argparse._SubParsersAction))
    out = []
    for choice in sub._choices_actions:
        p = sub._name_parser_map[choice.dest]
        aliases = [n for n, q in sub._name_parser_map.items() if q is p and n != choice.dest]
        common = any(g.title == COMMON for g in p._action_groups)
        groups = [g for g in p._action_groups if g not in (p._positionals, p._optionals) and g.title != COMMON]
        group_of = {id(a): g for g in p._action_groups for a in g._group_actions}
        args = []
        for a in p._actions:
            g = group_of[id(a)]
            if isinstance(a, argparse._HelpAction) or g.title == COMMON:
                continue
            row = _action(a)
            if g not in (p._positionals, p._optionals):
                row["group"] = groups.index(g)
            args.append(row)
        entry: dict[str, Any] = {
            "name": choice.dest,
            "aliases": aliases,
            "help": choice.help,
            "common": common,
            "formatter": p.formatter_class.__name__,
            "allow_abbrev": p.allow_abbrev,
            "groups": [[g.title, g.description] for g in groups],
            "args": args,
        }
        entry.update({k: getattr(p, k) for k in ("description", "usage", "epilog") if getattr(p, k) is not None})
        out.append(entry)
    return out


def generate() -> str:
    """``table.json``'s text, from the models: the subcommands, and the constants ``reads`` needs."""
    from strict_loop.cli import app
    from strict_loop.loop import safeguards

    reads = {
        "recorded_kinds": list(safeguards.RECORDED_KINDS),
        "recent_turn_records": safeguards.RECENT_TURN_RECORDS,
        "warning_events": safeguards.WARNING_EVENTS,
    }
    return json.dumps({"commands": dump(app.build_parser()[0]), "reads": reads}, indent=1, ensure_ascii=False) + "\n"


_LOADED: dict[str, Any] = {}


def _table() -> dict[str, Any]:
    if not _LOADED:
        _LOADED.update(json.loads(TABLE.read_text(encoding="utf-8")))
    return _LOADED


def load() -> list[dict[str, Any]]:
    """The subcommands."""
    commands: list[dict[str, Any]] = _table()["commands"]
    return commands


def reads() -> dict[str, Any]:
    """What ``reads`` knows of the safeguards' warnings (``safeguards.RECORDED_KINDS`` and its look-backs)."""
    found: dict[str, Any] = _table()["reads"]
    return found


def names(commands: list[dict[str, Any]]) -> set[str]:
    """Every subcommand name and alias the table holds."""
    return {n for c in commands for n in (c["name"], *c["aliases"])}


def build(
    sub: Any, common: argparse.ArgumentParser, commands: list[dict[str, Any]], only: Optional[str] = "*"
) -> dict[str, argparse.ArgumentParser]:
    """Add the table's subcommands to ``sub`` (``common``: the shared options' parent); their parsers by name.
    ``only``: the command (name or alias) whose arguments are added, None for none (the top's ``--help``), ``*`` for
    every command's."""
    parsers = {}
    for c in commands:
        extra = {k: c[k] for k in ("description", "usage", "epilog") if k in c}
        p = sub.add_parser(
            c["name"],
            aliases=c["aliases"],
            parents=[common] if c["common"] else [],
            help=c["help"],
            formatter_class=_FORMATTERS[c["formatter"]],
            allow_abbrev=c["allow_abbrev"],
            **extra,
        )
        parsers[c["name"]] = p
        if only != "*" and only not in (c["name"], *c["aliases"]):
            continue
        groups = [p.add_argument_group(title, description) for title, description in c["groups"]]
        for row in c["args"]:
            kwargs = {k: v for k, v in row.items() if k not in ("kind", "flags", "group")}
            if row["kind"] == "store_true":
                kwargs.setdefault("default", False)
            if kwargs.get("default") == argparse.SUPPRESS:  # argparse tells it by identity
                kwargs["default"] = argparse.SUPPRESS
            if kwargs.get("type") is not None:
                kwargs["type"] = _type(kwargs["type"])
            if kwargs.get("choices") == HARNESSES:
                kwargs["choices"] = registry.names()
            (groups[row["group"]] if "group" in row else p).add_argument(*row["flags"], action=row["kind"], **kwargs)
    return parsers


def _type(name: str) -> Callable[[str], Any]:
    if name in ("int", "float"):
        return int if name == "int" else float
    from strict_loop.cli import flags

    if name == "json":
        return flags.json_object
    _, module, function = name.split(":")
    if not module.startswith("strict_loop."):
        raise ValueError(f"table.json names {module}, not a module of strict_loop")

    def run(text: str) -> Any:  # the module (maybe a model's) is imported only when the flag is given
        return flags.loader(getattr(import_module(module), function))(text)

    setattr(run, "table_name", name)  # noqa: B010
    return run


def main() -> None:
    """``python -m strict_loop.cli.table``: write ``table.json`` from the models."""
    TABLE.write_text(generate(), encoding="utf-8")
    print(TABLE)


if __name__ == "__main__":
    main()
