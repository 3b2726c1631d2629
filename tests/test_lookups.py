"""Lookups that keep finding nothing (``nothing_found``): the agent looking in the wrong place, each miss a new
guess, read from what the lookups printed; an empty output is unknown, never a miss."""

from __future__ import annotations

import pytest
from spiral_claims import check_claims, play, window_of

from strict_loop.monitor import outcomes


@pytest.mark.parametrize(
    ("output", "nothing"),
    [
        ("No files found", True),  # Claude Code's Glob
        ('No matches found for pattern "KB_NOTES" in path ".".', True),  # Gemini CLI's grep
        ("Found 0 results.", True),  # Cline's search
        ("Command executed.\nOutput:\nls: cannot access 'node_modules/@x/': No such file or directory", True),  # Cline
        ("File does not exist. Current working directory: /repo", True),  # Claude Code's Read
        ("Exit code 1\nls: kb/notes: No such file or directory\nls: notes: No such file or directory", True),
        ("ls: cannot access 'docs/runbooks': No such file or directory", True),
        ("(eval):1: no matches found: memory-visualizer/dist/*.json", True),  # zsh's unmatched glob
        ("       0", True),  # `| wc -l`
        ("", False),  # an export may have lost it: unknown
        ("app/core/config.py:12:    DATABASE_URL: str", False),
        ("10", False),
        ("0 files changed", False),
        ("ls: x: No such file or directory\nREADME.md", False),  # one of the two was there
        ("No such file or directory\n" * 40, False),  # a long output is no bare miss
    ],
)  # fmt: skip
def test_a_lookup_found_nothing_when_its_whole_short_output_says_so(output, nothing):
    assert outcomes.found_nothing(output) is nothing


def bash(command: str, output: str, code: int = 0) -> dict:
    return {"tool": "Bash", "args": {"command": command}, "output": output, "exit_code": code}


MISSES = [
    bash("ls docs/runbooks", "ls: docs/runbooks: No such file or directory", 1),
    bash("find . -path '*runbook*' -name '*.md' | wc -l", "       0"),
    bash("ls notes/runbooks", "ls: notes/runbooks: No such file or directory", 1),
    bash('ls "$KB_NOTES_DIR/runbooks"', "ls: ~/notes/runbooks: No such file or directory", 1),
    bash("grep -rc runbook kb/data/index.json", "0", 1),
]
FOUND = bash("grep -rln runbook kb/config", "kb/config/collections.yaml")
SAID_WHERE = {
    "tool": "user_prompt",
    "actor": "person",
    "output": "they're in ~/notes/runbooks on my disk, not in the repo",
}


def fired(turns: list[dict]) -> list[int]:
    """The turns at which ``nothing_found`` fired."""
    return [i for i, _, signals in play(turns)[1] if any(s.kind == "nothing_found" for s in signals)]


def test_five_misses_among_the_last_eight_calls_fire_and_the_diagnosis_names_them():
    turns = [MISSES[0], FOUND, MISSES[1], SAID_WHERE, MISSES[2], MISSES[3], MISSES[4]]
    verdict, steps = play(turns)
    assert verdict.fired_at == 6 and steps[0][2][0].kind == "nothing_found"
    assert "5 of the agent's last 6 calls looked for something and found nothing" in verdict.diagnosis
    assert "look there once, or ask the person" in verdict.recommended_action
    assert "nothing found" in check_claims(verdict, turns)


@pytest.mark.parametrize(
    "between",
    [
        {
            "tool": "Edit",
            "args": {"file_path": "kb/.env", "old_string": "~/", "new_string": "/Users/n/"},
            "output": "ok",
        },
        bash("pnpm kb reindex --collection adr", "indexed 41 documents"),  # a run that passed
    ],
)
def test_an_edit_or_a_passing_run_between_the_misses_starts_the_count_again(between):
    turns = [*MISSES[:3], between, *MISSES[3:]]
    assert fired(turns) == []
    assert fired([*turns, *MISSES[:3]])[:1] == [8]  # five misses since it


def test_misses_spread_among_finds_and_empty_outputs_are_no_miss():
    """Exploring: four misses among eight calls; and a lookup whose output came back empty (an export's, or a grep
    that printed nothing) is not known to have missed."""
    finds = [bash(f"grep -rln runbook kb/{d}", f"kb/{d}/a.yaml") for d in ("config", "src", "test", "docs")]
    assert fired([MISSES[0], finds[0], MISSES[1], finds[1], MISSES[2], finds[2], MISSES[3], finds[3]]) == []
    empty = [dict(t, output="") for t in MISSES]
    assert not any(f.found_nothing for f in window_of(empty))
    assert fired(empty) == []


def test_a_run_that_fails_on_a_missing_file_is_a_failure_not_a_lookup():
    runs = [
        bash(
            f"python etl.py --input data/{d}.csv",
            "python: can't open file 'etl.py': [Errno 2] No such file or directory",
            2,
        )
        for d in "abcdef"
    ]
    assert not any(f.found_nothing for f in window_of(runs))


def read(path: str, text: str) -> dict:
    return {"tool": "Read", "args": {"file_path": path}, "output": text}


REREADS = [
    read("vite.config.ts", "export default defineConfig({ plugins: [react()] })"),
    read(".env.production", "VITE_API_URL=https://api.staging.example.io"),
    read("src/api/client.ts", "const API_URL = import.meta.env.VITE_API_URL;"),
    read("Dockerfile", "FROM node:20-alpine AS build\nCOPY . .\nRUN npm run build"),
]
LOOK = bash("docker run --rm web:test sh -c 'grep -c api.staging /usr/share/nginx/html/assets/*.js'", "0")


def reread_fired(turns: list[dict]) -> list[int]:
    """The turns at which the same reads made again fired (as ``identical_calls``, with that evidence)."""
    return [
        i
        for i, _, signals in play(turns)[1]
        if any("read or searched again" in s.evidence for s in signals if s.kind == "identical_calls")
    ]


A, B, C, D = REREADS
LOOP = [A, B, C, D, LOOK, B, A, D, C, LOOK, A, C, B]


def test_the_same_files_read_again_with_commands_between_and_nothing_edited_fire():
    """A command between the reads shows the same thing each time; the agent reads the same files again, in another
    order, and edits nothing: six of its last ten calls."""
    assert reread_fired(LOOP)[:1] == [11]
    verdict, _ = play(LOOP[:12])
    assert "6 of the agent's last 10 calls read or searched again what an earlier call had" in verdict.diagnosis
    assert "nothing was changed (2 command(s) ran between)" in verdict.diagnosis
    assert "reread" in check_claims(verdict, LOOP[:12])


def test_an_edit_or_a_new_request_among_the_reads_starts_the_count_again():
    edit = {
        "tool": "Edit",
        "args": {"file_path": ".dockerignore", "old_string": ".env*", "new_string": ""},
        "output": "ok",
    }
    asked = {"tool": "user_prompt", "actor": "person", "output": "also check the nginx config please"}
    assert reread_fired([*LOOP[:7], edit, *LOOP[7:]]) == []
    assert reread_fired([*LOOP[:7], asked, *LOOP[7:]]) == []
