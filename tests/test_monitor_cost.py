"""A turn's cost to the monitor is bounded by construction, whatever it holds (issue 24, item 8).

No timings here (``bench/adversarial_turns.py`` measures them, as ratios within one run). What is asserted is the
structure that bounds them: the error-line patterns are handed at most ``ERROR_LINES`` lines of at most
``ERROR_LINE_CHARS`` characters, a command's words are read within ``MAX_WORDS_TEXT`` characters, the patterns that
restarted at every character of a run of digits or word characters start only where the run does, and the
rewritten patterns keep their meaning. Hostile turns still give sensible facts.
"""

from __future__ import annotations

import json
import random
import re
from typing import Any

import pytest

from strict_loop.base import masking
from strict_loop.base.clipping import clip, clip_turn_data
from strict_loop.model.monitoring import MonitorState
from strict_loop.model.settings import MonitorSettings
from strict_loop.model.turns import Turn
from strict_loop.monitor import fingerprint as fp
from strict_loop.monitor import ladder, novelty, outcomes, toolkinds

MB = 1_000_000
_JSON = json.dumps(
    {"data": [{"id": i, "url": f"https://api.example.com/items/{i}?q=a:b", "ok": True} for i in range(16_000)]},
    separators=(",", ":"),
)
HOSTILE = {
    "a line without spaces": "x" * MB,
    "compact JSON": _JSON[:-1] + ',"error":{"code":500,"message":"upstream failed"}}',
    "colons": ":" * 10_000,
    "parentheses": "(" * 10_000,
    "a:1: repeated": "a:1:" * 250_000,
    "x(1, repeated": "x(1," * 250_000,
    "digits": "1" * MB,
    "FAILED ( repeated": "FAILED (" * 100_000,
    "a rule and a space": "= " * 50_000 + "@",
    "combining marks": "e\u0301" * (MB // 2),
    "RTL and zero-width": "\u202eשלום\u200b\u200dمرحبا\ufeff" * 60_000,
    "a.a. and an at sign": "a." * (MB // 2) + "@",
}


class Counting:
    """A compiled pattern that records the length of every text it is handed."""

    def __init__(self, pattern: re.Pattern[str], seen: list[int]) -> None:
        self._pattern, self._seen = pattern, seen

    def __getattr__(self, name: str) -> Any:
        method = getattr(self._pattern, name)
        if not callable(method):
            return method

        def call(*args: Any, **kwargs: Any) -> Any:
            self._seen.append(len(args[1] if name in ("sub", "subn") else args[0]))
            return method(*args, **kwargs)

        return call


def test_the_error_patterns_are_handed_a_bounded_text(monkeypatch):
    """Every pattern the fingerprint module holds sees at most ERROR_LINE_CHARS characters at a time, a bounded number
    of times, however long the lines (a clipped turn still carries a 12,000-character line of compact JSON)."""
    seen: list[int] = []
    for name, value in list(vars(fp).items()):
        if isinstance(value, re.Pattern):
            monkeypatch.setattr(fp, name, Counting(value, seen))
    outputs = [clip(text) for text in HOSTILE.values()] + ["\n".join(["x" * 5000 + " error"] * 200)]
    for output in outputs:
        start = len(seen)
        fp.error_fingerprint(output, frozenset({fp.digest("nothing")}))  # an ambient set: its lines are normalised too
        assert len(seen) - start <= 16 * fp.ERROR_LINES
    assert seen and max(seen) <= fp.ERROR_LINE_CHARS


def test_only_the_last_lines_and_the_head_and_tail_of_each_line_are_read():
    middle = "x" * fp.ERROR_LINE_CHARS
    assert fp.error_line(f"{middle} error: in the middle {middle}") is None
    assert fp.error_line(f"{middle}{middle} error: at the end").endswith("x")  # found; the line kept is its head
    assert fp.error_line(f"error: at the start {middle}{middle}").startswith("error: at the start")
    assert fp.error_line("\n".join(["ValueError: early"] + ["ok"] * fp.ERROR_LINES)) is None
    assert fp.error_line("\n".join(["ValueError: late"] + ["ok"] * (fp.ERROR_LINES - 1))) == "ValueError: late"


def test_a_command_is_read_for_its_words_within_a_cap(monkeypatch):
    handed: list[int] = []
    split = toolkinds.shlex.split
    monkeypatch.setattr(
        toolkinds.shlex, "split", lambda text, *a, **k: handed.append(len(text)) or split(text, *a, **k)
    )
    assert toolkinds.command_word("make " + "x" * 20_000) == "make"
    assert toolkinds.step_words("python -m pytest " + "'a b' " * 4000) == "python -m pytest"
    assert handed and max(handed) <= toolkinds.MAX_WORDS_TEXT


def test_a_count_starts_where_its_digits_start():
    """From a later digit the same count would end the same way: trying each cost quadratic time on a run of
    digits. unittest's summary is read by its key=count pairs (``.*?`` rescanned the line from each ``FAILED (``)."""
    assert novelty.FAILS.match("1234 failed", 0) and novelty.FAILS.match("1234 failed", 1) is None

    def counts(text: str) -> list[str]:
        return [g for m in novelty.FAILS.finditer(text) for g in m.groups() if g]

    assert counts("ran 9: FAILED (failures=2, errors=1)") == ["2"]
    assert counts("FAILED (skipped=1, errors=3) 12 failed, failures=4") == ["3", "12", "4"]
    assert novelty.FAILS.match("FAILED (" * 3 + "errors=1") is None  # a count is read after its own FAILED (


def _random_texts(alphabet: list[str], count: int, longest: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, longest))) for _ in range(count)]


def test_url_credentials_are_masked_as_before():
    """The userinfo pattern reads each run of scheme characters once; what it masks is what the old one did."""
    old = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^\s/?#@'\"<>]+@")
    alphabet = ["a", "K", "1", ".", "-", "+", "_", ":", "/", "://", "@", " ", "é", "u:p@", "?", "x", "\n", "a" * 40]
    many = "".join(_random_texts(alphabet, 1000, 10, seed=4))  # over 256 '://': the regular expression reads it
    for text in [*_random_texts(alphabet, 4000, 10, seed=1), many, "b." * 40 + "://u:p@h", "c" * 70 + "://u@h"]:
        assert masking.mask_with(text, []) == old.sub(lambda m: f"{m.group(1)}***@", text), text
    assert masking.mask_with("see 1a.b+git://me:pw@host/x", []) == "see 1a.b+git://***@host/x"


def test_search_replace_blocks_are_read_as_before():
    old = re.compile(r"<<<<<<< SEARCH\n(.*?)\n=======\n(.*?)\n>>>>>>> REPLACE", re.S)
    parts = ["<<<<<<< SEARCH\n", "\n=======\n", "\n>>>>>>> REPLACE", "\n", "=", "a b", ">>>>>>> REPLACE"]
    for text in _random_texts(parts, 4000, 8, seed=2):
        found = old.search(text)
        expected = (" ".join(found.group(1).split()), " ".join(found.group(2).split())) if found else None
        assert outcomes.edit_pair({"content": text}) == expected, text
    many = "<<<<<<< SEARCH\n\n=======\n" * 600  # no block closes: the lazy regex took seconds here
    assert outcomes.edit_pair({"content": many}) is None
    closed = old.search(many + "x\n>>>>>>> REPLACE")
    assert closed and outcomes.edit_pair({"content": many + "x\n>>>>>>> REPLACE"}) == ("", " ".join(closed[2].split()))


def test_wrapper_lines_are_told_as_before():
    old = re.compile(r"\bexit status \d+$|\d+ errors? generated|^Found \d+ errors?\b", re.I)
    alphabet = ["1", "2", " ", "a", " error generated", " errors generated", "Found ", "exit status "]
    for text in _random_texts(alphabet, 3000, 8, seed=3):
        assert fp.summary(text) == bool(old.search(text.strip())), text


def _facts(data: dict[str, Any]):
    state, _, _ = ladder.observe(MonitorState(), Turn.model_validate(clip_turn_data(data)), MonitorSettings())
    return state.window[-1]


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_content_is_read_as_failing_passing_or_said(name):
    text = HOSTILE[name]
    for data in (
        {"tool": "bash", "args": {"command": "curl -s api"}, "output": text, "exit_code": 1},
        {"tool": "bash", "args": {"command": "curl -s api"}, "output": text, "exit_code": 0},
        {"tool": "user_prompt", "actor": "person", "args": {}, "output": text},
    ):
        f = _facts(data)
        assert f.failed == (data.get("exit_code") == 1)
        assert len(f.brief) <= 200 and len(f.etext or "") <= 160 and len(f.err or "") <= 240


def test_a_failing_json_line_is_named_and_a_pasted_json_is_no_verdict():
    failed = _facts(
        {"tool": "bash", "args": {"command": "curl -s api"}, "output": HOSTILE["compact JSON"], "exit_code": 7}
    )
    assert failed.failed and failed.err and failed.etext
    pasted = _facts({"tool": "user_prompt", "actor": "person", "output": HOSTILE["compact JSON"]})
    assert pasted.verdict != "fail" and not pasted.reports
    said = _facts({"tool": "user_prompt", "actor": "person", "output": "still the same error:\n" + _JSON})
    assert said.verdict == "fail"
