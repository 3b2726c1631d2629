"""The file primitives the ledgers rely on."""

from __future__ import annotations

import random

from strict_loop.base.fsio import append_line
from strict_loop.base.jsonl import iter_lines, last_json, tail_lines


def test_tail_lines_matches_a_naive_reader(tmp_path):
    rng = random.Random(5)
    path = tmp_path / "ledger.jsonl"
    for trial in range(400):
        lines = [
            ("x" * rng.choice([0, 1, 5, 100, 5000, 20000])) + str(i) if rng.random() > 0.3 else ""
            for i in range(rng.randint(0, 40))
        ]
        data = "\n".join(lines) + ("\n" if lines else "")
        if rng.random() < 0.3:
            data += "torn fragment"
        path.write_text(data)
        complete = [line for line in data.split("\n")[:-1] if line.strip()]
        for count in (1, 2, 3, 7, 50):
            assert tail_lines(path, count) == complete[-count:], (trial, count)
        assert [text for _, text in iter_lines(path)] == complete


def test_append_line_cuts_a_torn_tail_and_last_json_skips_it(tmp_path):
    path = tmp_path / "events.jsonl"
    append_line(path, b'{"seq":1}\n')
    with open(path, "ab") as fh:
        fh.write(b'{"seq":2,"half')
    assert last_json(path) == {"seq": 1}
    append_line(path, b'{"seq":2}\n')
    assert path.read_bytes() == b'{"seq":1}\n{"seq":2}\n'
    assert tail_lines(tmp_path / "missing.jsonl", 3) == [] and last_json(tmp_path / "missing.jsonl") is None
