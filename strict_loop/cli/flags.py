"""Command-line flags generated from a request model, so the CLI never restates a field.

Each field becomes ``--field-name`` (or the names in its :class:`~strict_loop.model.fields.Flag`);
its help is the field's description, its choices a ``Literal``'s values, and its
default the model's own: a flag the user did not give is left out of the request,
so the model applies its default. Nested settings models marked ``flatten`` become
flags of their own under a help heading.
"""

from __future__ import annotations

import argparse
import types
import typing
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Optional, Union

from strict_loop.base.errors import LoopError
from strict_loop.base.jsontext import parse_json

if TYPE_CHECKING:  # the models (and pydantic) are imported only to make flags: parsing a command line needs neither
    from pydantic import BaseModel
    from pydantic.fields import FieldInfo

    from strict_loop.model.fields import Flag

SEP = "__"
"""Joins a nested field's path into an argparse ``dest`` (``stop_checks__commands``)."""


def json_object(text: str) -> dict[str, Any]:
    """A JSON object given inline or as ``@file.json`` (a UTF-8 byte order mark is accepted)."""
    what = "the value"
    if text.startswith("@"):
        what = repr(text[1:])
        try:
            text = Path(text[1:]).read_text(encoding="utf-8-sig")
        except (OSError, UnicodeDecodeError) as exc:
            raise argparse.ArgumentTypeError(f"cannot read {what} ({getattr(exc, 'strerror', None) or exc})") from None
    try:
        value = parse_json(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"{what} {exc}") from None
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError("must be a JSON object")
    return value


def add_model_flags(
    parser: argparse.ArgumentParser, model: type[BaseModel], *, skip: frozenset[str] = frozenset()
) -> None:
    """Add a flag for every field of ``model`` (except ``skip``) to ``parser``."""
    _add(parser, parser, model, (), skip)


def request_from(ns: argparse.Namespace) -> dict[str, Any]:
    """The request dict of the flags given on the command line (nested by ``dest`` path)."""
    out: dict[str, Any] = {}
    for dest, value in vars(ns).items():
        if not dest.startswith("f" + SEP):
            continue
        *parents, leaf = dest.split(SEP)[1:]
        node = out
        for part in parents:
            node = node.setdefault(part, {})
        node[leaf] = value
    return out


def _add(
    parser: argparse.ArgumentParser, target: Any, model: type[BaseModel], path: tuple[str, ...], skip: frozenset[str]
) -> None:
    from pydantic import BaseModel

    from strict_loop.model.fields import Flag

    for name, info in model.model_fields.items():
        if name in skip:
            continue
        flag = next((m for m in info.metadata if isinstance(m, Flag)), Flag())
        kind = _unwrap(info.annotation)
        if flag.flatten and isinstance(kind, type) and issubclass(kind, BaseModel):
            _add(parser, parser.add_argument_group(flag.group or name), kind, path + (name,), frozenset())
            continue
        names = flag.names or (f"--{name.replace('_', '-')}",)
        kwargs: dict[str, Any] = {
            "dest": SEP.join(("f",) + path + (name,)),
            "default": argparse.SUPPRESS,
            "help": _help(info),
        }
        kwargs.update(_value_kwargs(kind, flag, name.rsplit("_", 1)[-1].upper()))
        if flag.json:
            kwargs["help"] += "; a JSON object, or @file.json"
        if flag.note:
            kwargs["help"] += f"; {flag.note}"
        if kwargs.get("action") == "append":
            kwargs["help"] += "; repeatable"
        if info.is_required() and not path:
            kwargs["required"] = True
        target.add_argument(*names, **kwargs)


def _value_kwargs(kind: Any, flag: Flag, word: str) -> dict[str, Any]:
    if flag.json:
        return {"type": json_object, "metavar": "JSON"}
    if flag.load is not None:
        return {"type": loader(flag.load), "metavar": flag.metavar}
    if kind is bool:
        return {"action": "store_true"}
    if typing.get_origin(kind) is Literal:
        return {"choices": list(typing.get_args(kind))}
    if typing.get_origin(kind) is list:
        return {"action": "append", "metavar": flag.metavar or "TEXT"}
    if kind in (int, float):
        return {"type": kind, "metavar": flag.metavar or "N"}
    if kind is str:
        return {"metavar": flag.metavar or word}
    raise TypeError(f"no command-line form for field type {kind!r}: give it a Flag(json=True) or Flag(load=...)")


def loader(load: Callable[[str], Any]) -> Callable[[str], Any]:
    """A flag's type that turns the text into the field's value; a LoopError is the flag's usage error."""

    def run(text: str) -> Any:
        try:
            return load(text)
        except LoopError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    setattr(run, "load", load)  # noqa: B010 (what table.json names)
    return run


def _unwrap(annotation: Any) -> Any:
    """``Optional[X]`` -> ``X``; ``Annotated[X, ...]`` -> ``X``."""
    while True:
        origin = typing.get_origin(annotation)
        if origin is typing.Annotated:
            annotation = typing.get_args(annotation)[0]
        elif origin in (Union, types.UnionType):
            args = [a for a in typing.get_args(annotation) if a is not type(None)]
            if len(args) != 1:
                return annotation
            annotation = args[0]
        else:
            return annotation


def _help(info: FieldInfo) -> str:
    import annotated_types

    text = (info.description or "").rstrip(".")
    cap = next((m.max_length for m in info.metadata if isinstance(m, annotated_types.MaxLen)), None)
    if cap is not None:
        text += f" (at most {cap} {'items' if typing.get_origin(_unwrap(info.annotation)) is list else 'characters'})"
    default = _default(info)
    if default is not None:
        text += f" (default: {default})"
    return text.replace("%", "%%")


def _default(info: FieldInfo) -> Optional[str]:
    from pydantic_core import PydanticUndefined

    value = info.default
    if value is PydanticUndefined or value is None or value == "" or isinstance(value, bool):
        return None
    return str(value)
