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
import subprocess
import sys
from typing import Any

import pytest
from test_person_words import PERSON_SAYS

from strict_loop.base import masking
from strict_loop.base.clipping import clip, clip_turn_data
from strict_loop.model.monitoring import MonitorState
from strict_loop.model.settings import MonitorSettings
from strict_loop.model.turns import Turn
from strict_loop.monitor import catalog, ladder, missing, outcomes, person
from strict_loop.monitor import fingerprint as fp
from strict_loop.monitor.calls import shellwork, toolkinds, wrappings

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
    assert outcomes.FAILS.match("1234 failed", 0) and outcomes.FAILS.match("1234 failed", 1) is None

    def counts(text: str) -> list[str]:
        return [g for m in outcomes.FAILS.finditer(text) for g in m.groups() if g]

    assert counts("ran 9: FAILED (failures=2, errors=1)") == ["2"]
    assert counts("FAILED (skipped=1, errors=3) 12 failed, failures=4") == ["3", "12", "4"]
    assert outcomes.FAILS.match("FAILED (" * 3 + "errors=1") is None  # a count is read after its own FAILED (


def _random_texts(alphabet: list[str], count: int, longest: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, longest))) for _ in range(count)]


def test_url_credentials_are_masked_as_before():
    """The userinfo pattern reads each run of scheme characters once; what it masks is what the old one did."""
    old = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^\s/?#@'\"<>]+@")
    alphabet = ["a", "K", "1", ".", "-", "+", "_", ":", "/", "://", "@", " ", "é", "u:p@", "?", "x", "\n", "a" * 40]
    alphabet += ["\u0130", "\u0131", "\u017f", "\u212a"]  # what re.I folds into [a-z]
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
        assert shellwork.edit_pair({"content": text}) == expected, text
    many = "<<<<<<< SEARCH\n\n=======\n" * 600  # no block closes: the lazy regex took seconds here
    assert shellwork.edit_pair({"content": many}) is None
    closed = old.search(many + "x\n>>>>>>> REPLACE")
    assert closed and shellwork.edit_pair({"content": many + "x\n>>>>>>> REPLACE"}) == ("", " ".join(closed[2].split()))


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


_OLD_STRICT = [  # the table before its patterns were led by a character class (observe on a 16,000-char output)
    (re.compile(r"\.\.\.\[(clipped|truncated) \d+ char(?:acter)?s\]"), r"...[\1]", ()),
    (
        re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}(?P<sep>[:_])\d{2}(?P=sep)\d{2}(?:[.,_]\d+)?(?:Z|[+-]\d{2}:?\d{2})?"),
        "<ts>",
        (),
    ),
    (re.compile(r"\b\d{1,2}:\d{2}:\d{2}(?:[.,]\d+)?\b"), "<time>", ()),
    (re.compile(r"\b1[5-9]\d{8}(?:\d{3}){0,2}(?:\.\d+)?\b"), "<ts>", ()),
    (re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b", re.I), "<uuid>", ()),
    (re.compile(r"0x[0-9a-fA-F]+"), "<addr>", ()),
    (re.compile(r"\b(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{7,64}\b"), "<hex>", ()),
    (re.compile(r"(?<=[A-Za-z_])\d{7,}(?:[-_.]\d+)*"), "<n>", ()),  # a number glued to a name: no older form either
    (re.compile(r"-(?:<hex>-[a-z0-9]{5}|[a-z0-9]{8,10}-(?=[a-z0-9]*\d)[a-z0-9]{5})\b"), "-<pod>", ()),
    # the id (new with the class-led table, no older form; written here as it is): its gate is what this checks
    (
        re.compile(r"[iI][dD](?:(?<=ID)|(?<=[A-Za-z_-]Id)|(?<![A-Za-z]id)(?<=id))([\"']?[=:]\s*[\"']?)[\w+/.=-]{6,}"),
        lambda m: m.group(0)[:2] + m.group(1) + "<id>",
        (),
    ),
    # a random id (newer than the class-led table, written here as it is): after a labelled id, as there
    (
        re.compile(
            r"\b(?:[a-z]{1,8}_)?(?=[A-Za-z0-9]{10,}\b)(?=[A-Za-z]*\d+[A-Za-z]+\d)(?=[a-z0-9]*[A-Z])(?=[A-Z0-9]*[a-z])\w+"
        ),
        "<id>",
        (),
    ),
    (re.compile(r"(/tmp|/var/folders|/private/var)/[^\s'\":]+"), "<tmp>", ()),
    (re.compile(r"\btmp[a-z0-9_]{4,}\b", re.I), "<tmp>", ()),
    (re.compile(r"\b(?:pid|PID|process)[ =:]*\d+"), "pid <n>", ()),
    (re.compile(r"\b[Ll](?:ine|INE) \d+\b"), "line <n>", ()),
    (
        re.compile(
            r"\b\d+(?:\.\d+)?\s*(?:(?P<dur>(?:ms|msec|us|µs|secs?|seconds?|s|mins?|minutes?|m|hrs?|hours?|h|days?|d)"
            r"(?:\d+(?:\.\d+)?(?:ms|h|m|s))*)(?P<ago>\s+ago)?|(?P<size>bytes|B|[kKMGT]i?B|[kKMG])(?:/s)?|"
            r"(?P<lines>(?:more )?lines))\b"
        ),
        lambda m: "<dur>" if m.group("dur") else "<size>" if m.group("size") else "<n> lines",
        (),
    ),
    (re.compile(r"\[\d+\]"), "[<n>]", ()),
    # a process's id in parentheses (newer than the class-led table, written here as it is): its gate is checked
    (re.compile(r"\((?:node:\d+|(?<=[A-Z] \()\d{1,7}(?: on [\w.-]+)?)\)"), "(<pid>)", ()),
    (re.compile(r"(?<=[A-Z] )\d{1,7}(?= --- \[)"), "<pid>", ()),
]
_NOISY = ["1", "9", "12", "2024", "-", ":", ".", ",", " ", "\n", "T", "Z", "+", "a", "f", "A", "F", "x", "_", "é", "٣"]
_NOISY += ["ms", "µs", "s", "m", "h", "d", "sec", "mins", "B", "KiB", "k", "/s", " ago", "lines", "more lines"]
_NOISY += ["pid", "PID", "process", "=", "line ", "Line ", "LINE ", "lINE ", "deadbeef", "abcd", "0"]
_NOISY += ["_", "Id: ", "ID=", "-id=", "req_1e9b44c0f3", "EFPCNFEB088BEZFY", "(", ")", "INFO ", "node:", " on web-1"]
_NOISY += [" --- [", "01HYB3K9Q8J5W2X7N4M6PRTVZA", "7ZZZZZZZZZZZZZZZZZZZZZZZZZ", "A"]


def test_the_normalizing_patterns_led_by_a_class_replace_what_the_old_ones_did(monkeypatch):
    """A pattern led by ``\\b`` was tried at every position of an output; led by a character class it is tried only
    where one is: the texts they normalize to are the same."""
    dense = ["1", "12", ":12", "-", " ", "a", ".", "2024", "T", "ms", "pid", "line 1", "12:12:12", "s"]
    texts = _random_texts(_NOISY, 3000, 14, seed=1) + _random_texts(dense, 3000, 12, seed=2)
    new = [(fp.strict(text), fp.readable(text, 10**6)) for text in texts]
    monkeypatch.setattr(fp, "_STRICT", _OLD_STRICT)
    monkeypatch.setattr(fp, "_READABLE_NOISE", re.compile(_OLD_STRICT[1][0].pattern + "|" + _OLD_STRICT[2][0].pattern))
    for text, (strict, readable) in zip(texts, new, strict=True):
        assert (strict, readable) == (fp.strict(text), fp.readable(text, 10**6)), text
    assert (
        fp.strict("took 12.5 ms at 10:01:02, pid 7, line 3, 4 KiB") == "took <dur> at <time>, pid <n>, line <n>, <size>"
    )
    assert (
        fp.strict("[14:21:14] INFO (44935): config loaded (3 routes)")
        == "[<time>] INFO (<pid>): config loaded (3 routes)"
    )
    assert fp.strict("(node:4242) Warning: x") == fp.strict("(node:77) Warning: x")


def _cased(phrases: list[str], count: int, seed: int) -> list[str]:
    """Random texts of the phrases in random case, with the characters re.I reads as ASCII letters (İ ı ſ K)."""
    rng = random.Random(seed)
    odd = ["\u0130", "\u0131", "\u017f", "\u212a", "é", " ", "\n", "1", "429 "]
    texts = []
    for _ in range(count):
        parts = [rng.choice(phrases + odd) for _ in range(rng.randint(0, 4))]
        text = "".join(parts)
        texts.append("".join(c.upper() if rng.random() < 0.3 else c for c in text))
        swap = {"i": "\u0131", "s": "\u017f", "k": "\u212a", "I": "\u0130"}
        texts.append("".join(swap.get(c, c) if rng.random() < 0.2 else c for c in text))
    return texts


def test_failure_classes_and_error_lines_read_behind_their_literal_gates_as_before(monkeypatch):
    """A case-insensitive pattern is tried only when one of its literals is in the lowercased text; the characters
    that lowercase to no ASCII letter re.I still reads as one (İ ı ſ) turn the gates off."""
    phrases = ["CUDA out of memory", "OutOfMemoryError", "loss is nan", "nan loss", "inf or nan", "circular import"]
    phrases += ["dependency cycle", "ImportError", "No module named", "ENOSPC", "timed out", "TimeoutError", "EPERM"]
    phrases += ["Permission denied", "ECONNREFUSED", "Could not connect", "EADDRINUSE", "port 80 is in use", "429"]
    phrases += ["bind() failed", "Address already in use", "rate limit", "context window", "maximum context", "E999"]
    phrases += [
        "prompt is too long",
        "SyntaxError",
        "unexpected token",
        "command not found",
        "No such file or directory",
    ]
    phrases += ["authentication failed", "invalid credentials", "WRONGPASS", "HTTP/1.1 401", "InvalidClientTokenId"]
    phrases += ["Permission denied (publickey)", "invalid_token", "Access denied for user"]
    for text in _cased(phrases, 1000, seed=5):
        old = next((n for n, pattern, _, _ in catalog.FAILURES if pattern.search(text)), None)
        got = fp.classify([text])
        assert (got.name if got else None) == old, text
    said = [said for _, said in PERSON_SAYS]  # the person's words: read behind their literals as without them
    said_not = ["don't push", "DON'T force push", "never touch `settings.py`", "do not modify files in ./migrations"]
    said_not += ["never use sudo", "stop running npm install", "no more deploys", "NO force pushing", "no merging"]
    texts = _cased(said + said_not + [w for words in said for w in words.split()[:3]], 1000, seed=7)
    gated = [(person.read(text), person.forbidden(text)) for text in texts]
    monkeypatch.setattr(fp, "may_match", lambda low, gates: True)
    assert gated == [(person.read(text), person.forbidden(text)) for text in texts]
    monkeypatch.undo()
    errors = ["error", "exception", "failed", "failure", "fatal", "cannot", "can't", "could not", "couldn't", "killed"]
    errors += ["not found", "no such", "denied", "refused", "invalid", "unexpected", "is required", "timed out"]
    errors += ["timeout", "timedout", "time out", "abort", "panic", "segmentation", "not permitted", "unrecognized"]
    errors += ["does not exist", "no matches", "not defined", "E501", "e1234", "E12", "a"]
    old_error = re.compile(rf"(?:{'|'.join(errors[:-4])}|timed? ?out|E\d{{3}}\b)", re.I)
    for text in _cased(errors, 1500, seed=6):
        line = " ".join(text.split())
        assert fp.error_line(line) is not None or not old_error.search(line), line
    running = ["running", "in_progress", "in progress", "status: ", "state=", "pending", "queued", "still ", "not yet "]
    running += ["finished", "complete", "done", "building", "<status>", "</status>", " 0/1 Pending ", " 1/2 Init:0/1 "]
    running += [" 0/1 ContainerCreating ", " 0/1 PodInitializing ", "not "]
    for text in _cased(running + ["New problems detected after saving the file", "<workspace_diagnostics>"], 1500, 7):
        assert outcomes.running(text) == bool(outcomes.RUNNING.search(text)), text
        head = re.search(r"New problems detected after saving the file|<workspace_diagnostics>", text, re.I)
        assert (outcomes.diagnostics(text + "\n- [Error] x") is not None) == bool(head), text
    absent = ["x: not found", "sh: command not found", ": ", "not found", "command ", " ", "a"]
    old_missing = re.compile(r"(?:^|[\s:])([\w.+\-/]+): (?:command )?not found\b")
    for text in _random_texts(absent, 1500, 6, seed=8):
        found = old_missing.search(text)
        assert (missing.missing(text) == f"program {found.group(1)}") if found else True, text


def test_refusals_and_failing_counts_read_behind_their_literal_gates_as_before():
    """The refusal pattern (searched in every output an agent gets) and the failing-count patterns are tried only
    when one of their literals is there; what they read is what the ungated patterns read."""
    refusals = ["The user denied this operation", "The user doesn't want to proceed with this tool use", "user "]
    refusals += ["tool use was rejected", "was declined by the user", "rejected by user", "user cancelled the", "x"]
    refusals += ["Permission for this tool use was denied", "User denied this command", "Command denied by user"]
    refusals += ["The user rejected permission to use this", "The user has specified a rule which prevents you from"]
    refusals += ["user canceled to", "were denied by the user", "doesnt want to take this action", " "]
    for text in _cased(refusals, 800, seed=9):
        assert bool(wrappings.refusal(text)) == bool(wrappings.REFUSAL.search(text)), text
    counts = ["3 failed", "12 failing", "1 failure", "2 errors", "FAILED (failures=2)", "FAILED (errors=1, ", "x"]
    counts += ["failures=4", "10 passed", "OK", "ok", "All tests passed", "--- FAIL: ", "\n", " ", "1", "s="]
    for text in _cased(counts, 500, seed=10):
        old = [int(g) for m in outcomes.FAILS.finditer(text) for g in m.groups() if g]
        go = len(outcomes.GO_FAIL.findall(text)) if "--- FAIL: " in text else 0
        expected = max(old) if old else go or (0 if outcomes.PASSED.search(text) else None)
        assert _facts({"tool": "bash", "args": {"command": "npm test"}, "output": text, "exit_code": 1}).fails == (
            expected
        ), text


def test_the_persons_long_patterns_are_compiled_only_when_a_message_is_read():
    """A command or a hook's fallback that imports the monitor and reads no person's message pays no compile time for
    the patterns of many languages."""
    code = (
        "from strict_loop.monitor import person\n"
        "before = (person.PERSIST._compiled, person.CIRCLES._compiled)\n"
        "word = person.read('still broken')\n"
        "print(before == (None, None), person.PERSIST._compiled is not None, word.verdict)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["True", "True", "fail"]
