"""Minimal edits of JSON text: add, replace or remove one member or item, and leave every other byte as it was.

Why not load and dump: a person's settings file has its own layout (compact, one-line objects, ``\\u`` escapes,
number forms) that ``json.dumps`` would not give back, so a tool that adds its entries and later removes them
would leave the file re-formatted. Here the text is only scanned for where values start and end; a new value
is written in the layout of the container it joins (one line or one per line, the file's indent), and
removing what was appended gives back exactly the bytes there were before. The text must be valid JSON:
parse it first (this module assumes it and checks nothing).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Optional, Union

Key = Union[str, int]
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]', re.DOTALL)
_SCALAR = re.compile(r"[^,\]}\s]+")
_WS = re.compile(r"[ \t\r\n]*")


@dataclass(frozen=True)
class _Child:
    key: Optional[str]  # None in an array
    start: int  # the key's first byte (an object's member) or the value's
    vstart: int
    vend: int


def _ws(text: str, i: int) -> int:
    found = _WS.match(text, i)
    return found.end() if found else i


def _value_end(text: str, i: int) -> int:
    if text[i] == '"':
        found = _STRING.match(text, i)
        assert found is not None
        return found.end()
    if text[i] not in "[{":
        scalar = _SCALAR.match(text, i)
        assert scalar is not None
        return scalar.end()
    depth = 0
    for token in _TOKEN.finditer(text, i):
        mark = token.group()
        depth += 1 if mark in "[{" else -1 if mark in "]}" else 0
        if depth == 0:
            return token.end()
    raise ValueError("unbalanced JSON")


def _children(text: str, open_at: int) -> tuple[list[_Child], int]:
    """The members (or items) of the container opening at ``open_at``, and the position of its closing bracket."""
    out: list[_Child] = []
    i = _ws(text, open_at + 1)
    if text[i] in "]}":
        return out, i
    while True:
        key, vstart = None, i
        if text[open_at] == "{":
            key_end = _value_end(text, i)
            key, vstart = json.loads(text[i:key_end]), _ws(text, _ws(text, key_end) + 1)
        vend = _value_end(text, vstart)
        out.append(_Child(key, i, vstart, vend))
        j = _ws(text, vend)
        if text[j] != ",":
            return out, j
        i = _ws(text, j + 1)


def _pick(children: list[_Child], key: Key) -> Optional[int]:
    """Index of the member named ``key`` (the last one, as parsers keep it) or of item ``key``."""
    if isinstance(key, int):
        return key if 0 <= key < len(children) else None
    found = [n for n, child in enumerate(children) if child.key == key]
    return found[-1] if found else None


def _line_indent(text: str, i: int) -> str:
    line = text[text.rfind("\n", 0, i) + 1 : i]
    return line[: len(line) - len(line.lstrip(" \t"))]


class JsonText:
    """A JSON document's text and the edits made to it, each one byte-minimal."""

    def __init__(self, text: str) -> None:
        self.text = text
        unit = re.search(r"\n([ \t]+)\S", text)
        self.unit = unit.group(1) if unit else "  "
        sep = re.search(r'"[ \t]*:([ \t]*)', text)
        self.key_sep = ":" + (sep.group(1) if sep else " ")
        self.item_sep = "," + (" " if self.key_sep.endswith(" ") else "")

    def _find(self, path: tuple[Key, ...]) -> Optional[tuple[int, bool]]:
        """Where the value at ``path`` starts, and whether a new child of it goes on a line of its own."""
        at, multiline = _ws(self.text, 0), "\n" in self.text
        for key in path:
            if self.text[at] not in "[{":
                return None
            children, _ = _children(self.text, at)
            if children:
                multiline = "\n" in self.text[at : children[0].start]
            n = _pick(children, key)
            if n is None:
                return None
            at = children[n].vstart
        if self.text[at] in "[{":
            children, _ = _children(self.text, at)
            if children:
                multiline = "\n" in self.text[at : children[0].start]
        return at, multiline

    def get(self, path: tuple[Key, ...]) -> Any:
        found = self._find(path)
        return None if found is None else json.loads(self.text[found[0] : _value_end(self.text, found[0])])

    def _render(self, key: Optional[str], value: Any, multiline: bool, indent: str) -> str:
        if multiline:
            body = json.dumps(value, indent=self.unit, separators=(",", self.key_sep), ensure_ascii=False)
            body = body.replace("\n", "\n" + indent)
        else:
            body = json.dumps(value, separators=(self.item_sep, self.key_sep), ensure_ascii=False)
        return body if key is None else json.dumps(key, ensure_ascii=False) + self.key_sep + body

    def append(self, path: tuple[Key, ...], key: Optional[str], value: Any) -> None:
        """Add ``value`` (as member ``key`` of an object, or as an array's item) after the container's last child."""
        found = self._find(path)
        assert found is not None, path
        at, multiline = found
        children, close = _children(self.text, at)
        outer = _line_indent(self.text, at)
        if not children:
            indent = outer + self.unit
            elem = self._render(key, value, multiline, indent)
            insert = f"\n{indent}{elem}\n{outer}" if multiline else elem
            self._splice(at + 1, at + 1, insert)
            return
        last = children[-1]
        before = self.text[self.text.rfind("\n", 0, last.start) + 1 : last.start]
        indent = before if multiline and not before.strip() else outer + self.unit
        elem = self._render(key, value, multiline, indent)
        self._splice(last.vend, last.vend, f",\n{indent}{elem}" if multiline else self.item_sep + elem)

    def remove(self, path: tuple[Key, ...], key: Key) -> None:
        """Take out one member or item with its separator: the inverse of ``append``, byte for byte."""
        found = self._find(path)
        assert found is not None, path
        at = found[0]
        children, _ = _children(self.text, at)
        n = _pick(children, key)
        assert n is not None, (path, key)
        if len(children) == 1:
            end, tail = children[0].vend, "\n" + _line_indent(self.text, at)
            self._splice(at + 1, end + len(tail) if self.text.startswith(tail, end) else end, "")
        elif n == len(children) - 1:
            self._splice(children[n - 1].vend, children[n].vend, "")
        else:
            self._splice(children[n].start, children[n + 1].start, "")

    def replace(self, path: tuple[Key, ...], value: Any) -> None:
        """Put ``value`` in place of the value at ``path``, in the layout of the line it is on."""
        found = self._find(path)
        assert found is not None, path
        at = found[0]
        multiline = "\n" in self.text[at : _value_end(self.text, at)]
        self._splice(at, _value_end(self.text, at), self._render(None, value, multiline, _line_indent(self.text, at)))

    def _splice(self, start: int, end: int, new: str) -> None:
        self.text = self.text[:start] + new + self.text[end:]
