"""``list_tasks``, ``show_task`` and a quiet ``detect_spiral`` as text without importing a model: the reads a person
or a script runs most, at the cost of a shell tool's start.

Why: the full path (``Workspace``, the models, pydantic) costs several bare interpreter starts. These read the same
files with the standard library, check each document against its shipped JSON Schema (generated from the models:
``references/schemas``), and render with the same ``answers`` functions. Whatever they cannot vouch for gives None,
and the full path answers, so it says it as always: a file that does not conform (damaged, of an older version),
a task of an original ``.codex-loop/``, a crash to roll forward, a monitor with something to say (a signal, a pause,
a whisper, a notice), a warning to give, a seal that differs, an id to refuse. A test holds both paths to the same text.
The schema cannot say everything a model checks (a blank goal, which only a hand edit makes): that is reported by
the next write, and by ``show_task --json``, not by these texts.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from contextlib import closing
from itertools import islice
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Optional

from strict_loop.base.errors import LoopError
from strict_loop.base.fsio import read_own
from strict_loop.base.jsonl import last_json, records_backwards, tail_lines
from strict_loop.base.jsontext import parse_json, read_object
from strict_loop.base.layout import MANAGER_DIR, Layout
from strict_loop.cli import table

_ANNOTATIONS = frozenset({"title", "description", "default", "examples", "$id", "$schema", "$defs"})


class _Unsure(Exception):
    """The full path must answer."""


COMMANDS = frozenset({"list_tasks", "list-tasks", "show_task", "show-task", "detect_spiral", "detect-spiral"})


def answer(command: str, workspace: str, params: dict[str, Any]) -> Optional[str]:
    """The text of ``list_tasks``, ``show_task`` or a quiet ``detect_spiral`` (``params``: its flags), or None for the
    full path to answer."""
    try:
        root = Path(workspace).expanduser()
        if not root.is_dir() or command not in COMMANDS:
            return None
        reader = _Reader(root.resolve())
        if command.startswith("list"):
            return reader.task_list()
        if set(params) <= {"task_id"}:
            if command.startswith("detect"):
                return reader.quiet_verdict(params.get("task_id"))
            return reader.task_view(params.get("task_id"))
    except (_Unsure, LoopError, OSError, ValueError, KeyError, TypeError, AttributeError):
        pass
    return None


class _Reader:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.layout = Layout(root)
        self.checks: dict[str, Check] = {}

    def _document(self, path: Path, schema: str) -> dict[str, Any]:
        """A stored document that conforms to its schema (shipped beside the skill), as data."""
        doc = parse_json(read_own(path))
        if schema not in self.checks:
            from strict_loop.base.skillfiles import schema_dir

            root = json.loads((schema_dir() / f"{schema}.schema.json").read_bytes())  # the package's own file
            self.checks[schema] = compile_schema(root, root.get("$defs", {}))
        if not isinstance(doc, dict) or not self.checks[schema](doc):
            raise _Unsure(path)
        return doc

    def _state(self, task_id: str) -> dict[str, Any]:
        state = self._document(self.layout.task(task_id).state, "state")
        if state["task_id"] != task_id:
            raise _Unsure(task_id)
        return state

    def summaries(self) -> list[SimpleNamespace]:
        """``TaskIndex.summaries`` for a workspace without an original ``.codex-loop/``."""
        if self.layout.legacy_task_ids():
            raise _Unsure("legacy tasks")
        out = []
        for task_id in self.layout.task_ids():
            state = self._state(task_id)
            out.append(
                _obj(
                    {
                        "task_id": task_id,
                        "goal": state["contract"]["goal"],
                        "status": state["status"],
                        "iteration": state["counters"]["iteration"],
                        "max_iterations": state["contract"]["limits"]["max_iterations"],
                        "needs_human_input": state["needs_human_input"],
                        "paused": (read_object(self.layout.task(task_id).monitor) or {}).get("paused") is True,
                        "source": "agent-loop",
                        "problem": None,
                    }
                )
            )
        return out

    def task_list(self) -> str:
        from strict_loop.loop import answers
        from strict_loop.storage import sessions, workspaces

        lost = workspaces.vanished_here(self.root)
        tasks = self.summaries()
        count = sessions.unclaimed_count(self.root / MANAGER_DIR)
        listing = SimpleNamespace(tasks=tasks, unclaimed_calls=count, warnings=[lost.describe()] if lost else [])
        return answers.task_list(listing)  # type: ignore[arg-type]

    def task_view(self, task_id: Optional[str]) -> str:
        from strict_loop.loop import answers

        task_id = task_id or self._running()
        paths = self.layout.task(task_id)
        if not paths.exists():
            raise _Unsure(task_id)
        state = self._state(task_id)
        last = last_json(paths.iterations)
        if last and isinstance(last.get("iteration"), int) and last["iteration"] > state["counters"]["iteration"]:
            raise _Unsure("a round to roll forward")
        self._quiet(task_id, state)
        if any(v is not None for v in (state["contract"].get("budget") or {}).values()):
            raise _Unsure("a budget to count")  # what is spent: the full path reads it
        view = SimpleNamespace(
            summary=SimpleNamespace(source="agent-loop"),
            state=_obj(state),
            paths=paths.as_dict(),
            warnings=[],
            supervisor=SimpleNamespace(messages=[]),
        )
        return answers.task_view(view)  # type: ignore[arg-type]

    def quiet_verdict(self, task_id: Optional[str]) -> str:
        """``detect_spiral`` of a task whose monitor is quiet (level 0: no signal; no pause, whisper nor notice)."""
        from strict_loop.loop import answers

        paths = self.layout.task(task_id or self._running())
        if not paths.exists():
            raise _Unsure(task_id)
        turns = 0
        if os.path.lexists(paths.monitor):
            mon = self._document(paths.monitor, "monitor")
            if mon.get("level", 0) or mon.get("paused") or mon.get("whispers") or mon.get("notice"):
                raise _Unsure("the monitor speaks")
            turns = mon.get("turns", 0)
        verdict = SimpleNamespace(detected=False, turns_seen=turns, supervisor=SimpleNamespace(messages=[]))
        return answers.verdict(verdict)  # type: ignore[arg-type]

    def _running(self) -> str:
        """``TaskIndex.resolve(None)``: the only running task, else the only task (any doubt: the full path)."""
        tasks = self.summaries()
        running = [t.task_id for t in tasks if t.status == "running"]
        if len(running) == 1:
            return str(running[0])
        if len(tasks) == 1:
            return str(tasks[0].task_id)
        raise _Unsure("which task")

    def _quiet(self, task_id: str, state: dict[str, Any]) -> None:
        """The monitor has nothing to say and ``safeguards.task_warnings`` no warning; else _Unsure."""
        from strict_loop.storage import seal

        paths = self.layout.task(task_id)
        reads = table.reads()
        if os.path.lexists(paths.monitor):
            mon = self._document(paths.monitor, "monitor")
            if mon.get("paused") or mon.get("whispers") or mon.get("notice"):
                raise _Unsure("the monitor speaks")
        else:
            with closing(records_backwards(paths.events)) as records:  # as safeguards._last_turn looks back
                if any(ev.get("kind") == "tool_call" for ev in islice(records, reads["recent_turn_records"])):
                    raise _Unsure("monitor.json is missing")
        sealed = seal.read(self.root, task_id)
        if sealed is None or sealed.monitor != state["contract"]["monitor"]:
            raise _Unsure("the seal")
        kinds = reads["recorded_kinds"]
        lines = tail_lines(paths.events, reads["warning_events"])  # the lines store.events(last=N) parses
        text = "\n".join(lines)  # a kind not in the text is in no record, unless a line spells it with escapes
        if any(kind in text for kind in kinds) or any(_kind(line) in kinds for line in lines if "\\u" in line):
            raise _Unsure("recorded warnings")


def _kind(line: str) -> Any:
    """The kind of a ledger line whose text may spell it with escapes."""
    try:
        record = json.loads(line)
    except (ValueError, RecursionError):
        return None
    return record.get("kind") if isinstance(record, dict) else None


def _obj(value: Any) -> Any:
    """JSON data with attribute access, as the ``answers`` functions read a model."""
    if isinstance(value, dict):
        return SimpleNamespace(**{k: _obj(v) for k, v in value.items()})
    if isinstance(value, list):
        return [_obj(v) for v in value]
    return value


Check = Callable[[Any], bool]
_PYTHON: dict[str, set[type]] = {
    "string": {str},
    "integer": {int},
    "number": {int, float},
    "boolean": {bool},
    "null": {type(None)},
    "object": {dict},
    "array": {list},
}
"""What each JSON type is once parsed (exactly: ``json`` makes no subclass, and a bool is no number here)."""


def _never(node: Any) -> bool:
    return False


def compile_schema(schema: dict[str, Any], defs: dict[str, Any], memo: Optional[dict[str, Check]] = None) -> Check:
    """A function telling whether a value conforms to ``schema``, in the part of JSON Schema the models' schemas use
    (built once: a monitor's window has thousands of values); a keyword outside that part makes it say no (the full
    path then decides)."""
    memo = {} if memo is None else memo
    checks: list[Check] = []
    for key, want in schema.items():
        if key in _ANNOTATIONS:
            continue
        check = _ref(want, defs, memo) if key == "$ref" else _keyword(key, want, schema, defs, memo)
        if check is None:
            return _never
        checks.append(check)
    return checks[0] if len(checks) == 1 else lambda node: all(c(node) for c in checks)


def _ref(ref: Any, defs: dict[str, Any], memo: dict[str, Check]) -> Optional[Check]:
    name = ref[len("#/$defs/") :] if isinstance(ref, str) and ref.startswith("#/$defs/") else ""
    if name not in defs:
        return None
    if name not in memo:
        memo[name] = _never  # while it is built (the models are not recursive)
        memo[name] = compile_schema(defs[name], defs, memo)
    return lambda node: memo[name](node)


def _keyword(
    key: str, want: Any, schema: dict[str, Any], defs: dict[str, Any], memo: dict[str, Check]
) -> Optional[Check]:
    def sub(part: dict[str, Any]) -> Check:
        return compile_schema(part, defs, memo)

    if key == "type":
        kinds: set[type] = set().union(*(_PYTHON.get(k, set()) for k in (want if isinstance(want, list) else [want])))
        return lambda n: type(n) in kinds
    if key == "anyOf":
        options = [sub(part) for part in want]
        return lambda n: any(c(n) for c in options)
    if key in ("enum", "const"):
        values = list(want) if key == "enum" else [want]
        return lambda n: any(n == v and type(n) is type(v) for v in values)
    if key in ("minLength", "maxLength", "pattern"):
        rx = re.compile(want) if key == "pattern" else None
        if rx is not None:
            return lambda n: type(n) is not str or rx.search(n) is not None
        return lambda n: type(n) is not str or (len(n) >= want if key == "minLength" else len(n) <= want)
    if key in _BOUNDS:
        test = _BOUNDS[key]
        return lambda n: type(n) not in (int, float) or test(n, want)
    if key in ("maxItems", "minItems"):
        return lambda n: type(n) is not list or (len(n) <= want if key == "maxItems" else len(n) >= want)
    if key == "items":
        each = sub(want)
        return lambda n: type(n) is not list or all(map(each, n))
    if key == "properties":
        pairs = [(name, sub(part)) for name, part in want.items()]
        return lambda n: type(n) is not dict or all(c(n[k]) for k, c in pairs if k in n)
    if key == "required":
        return lambda n: type(n) is not dict or all(k in n for k in want)
    if key == "additionalProperties":
        named = set(schema.get("properties", {}))
        rest = sub(want) if isinstance(want, dict) else (lambda n: bool(want))
        return lambda n: type(n) is not dict or all(rest(v) for k, v in n.items() if k not in named)
    return None


_BOUNDS: dict[str, Callable[[Any, Any], bool]] = {
    "minimum": lambda n, w: n >= w,
    "maximum": lambda n, w: n <= w,
    "exclusiveMinimum": lambda n, w: n > w,
    "exclusiveMaximum": lambda n, w: n < w,
}
