"""A listing of a folder read against the files the agent has just written there: a file written and then not in
its folder's listing did not take, and the same folder lacking what was written again after each rewrite is the
same failure (``monitor.listing``)."""

from __future__ import annotations

import pytest
from spiral_claims import check_claims, play, window_of

from strict_loop.model.turns import Turn
from strict_loop.monitor.calls import listing


def write(path: str, content: str = "") -> dict:
    return {"tool": "write_to_file", "args": {"path": path, "content": content}, "output": ""}


def list_files(folder: str, shown: list[str], recursive: bool = True) -> dict:
    args = {"path": folder, "recursive": "true" if recursive else "false"}
    return {"tool": "list_files", "args": args, "output": "\n".join(shown)}


def bash(command: str, output: str, code: int = 0) -> dict:
    return {"tool": "Bash", "args": {"command": command}, "output": output, "exit_code": code, "error": code != 0}


SCAFFOLD = ["controllers/user.ts", "controllers/stock.ts", "routes/user.ts", "utils/db.ts", "app.ts"]
TAKEN = ["controllers/", "controllers/user.ts", "routes/", "routes/user.ts"]  # what the listing shows each time


def _rewrites(rounds: int) -> list[dict]:
    """Scaffold files written, the folder listed, the missing ones written again: ``rounds`` times."""
    turns: list[dict] = [{"actor": "person", "tool": "user_prompt", "args": {}, "output": "scaffold the api in api/"}]
    for _ in range(rounds):
        turns += [write(f"api/src/{p}") for p in SCAFFOLD]
        turns.append(list_files("api/src", TAKEN))
    return turns


def test_files_rewritten_after_each_listing_that_lacks_them_are_the_same_failure_named_by_the_folder():
    turns = _rewrites(3)
    window = window_of(turns)
    lookups = [f for f in window if f.tool == "list_files"]
    assert all(f.verdict == "fail" for f in lookups) and len({f.fsig for f in lookups}) == 1
    assert lookups[0].ftext == "files written into api/src are not in its listing"
    verdict, steps = play(turns)
    assert steps and steps[0][0] == len(turns) - 1 and steps[0][2][0].kind == "same_failure"
    evidence = steps[0][2][0].evidence
    assert "failed the same way 3 times (files written into api/src are not in its listing)" in evidence
    assert "10 edit(s)" in evidence
    assert "same failure" in check_claims(verdict, turns)


def test_two_listings_lacking_files_are_not_yet_a_loop():
    assert not play(_rewrites(2))[1]


def test_files_that_show_in_the_listing_after_being_written_are_no_failure():
    turns = [write(f"api/src/{p}", "export {}") for p in SCAFFOLD]
    shown = ["app.ts", "controllers/", *[p for p in SCAFFOLD if "/" in p], "routes/", "utils/"]
    turns += [list_files("api/src", shown)] * 3
    assert all(f.verdict is None for f in window_of(turns))


@pytest.mark.parametrize(
    ("lookup", "why"),
    [
        (list_files("api/src", TAKEN + ["(File list truncated. Use list_files on specific subdirectories)"]), "cut"),
        (list_files("api/src", [*TAKEN, "app.ts"], recursive=False), "utils/db.ts is below the folder listed"),
        (list_files("api/other", TAKEN), "another folder"),
        (list_files("src", TAKEN), "a one-word folder name is not aligned with a longer path"),
        (bash("ls api/src/*.ts", "api/src/app.ts"), "a glob leaves out what it does not match"),
        (bash("find api/src -name '*.py'", ""), "a filter leaves out what it does not match"),
        (bash("ls -d api/src", "api/src"), "the folder itself"),
        (bash("ls api/src", "ls: cannot access 'api/src': No such file or directory", 2), "a failed listing"),
    ],
)
def test_a_listing_that_cannot_say_a_file_is_absent_is_no_failure(lookup, why):
    turns = [write("api/src/utils/db.ts"), write("api/src/app.ts"), lookup]
    assert window_of(turns)[-1].verdict is None, why


def test_a_file_removed_or_moved_since_it_was_written_is_not_looked_for():
    turns = [write("api/src/app.ts", "x"), bash("rm api/src/app.ts", ""), list_files("api/src", TAKEN)]
    assert window_of(turns)[-1].verdict is None
    turns = [write("api/src/app.ts", "x"), bash("git stash", "Saved"), bash("ls api/src", "index.ts")]
    assert window_of(turns)[-1].verdict is None


@pytest.mark.parametrize(
    ("command", "shows"),
    [
        ("ls /home/me/api/src", "index.ts\nroutes"),
        ("ls -la /home/me/api/src", "total 8\n-rw-r--r-- 1 me me 12 Nov 2 10:00 index.ts"),
        ("find /home/me/api -type f", "/home/me/api/src/index.ts"),
        ("ls -R /home/me/api", "/home/me/api:\nsrc\n\n/home/me/api/src:\nindex.ts"),
    ],
)
def test_shell_listings_lacking_a_file_just_written_there_fail(command, shows):
    turns = [
        {"tool": "Write", "args": {"file_path": "/home/me/api/src/app.ts", "content": "x"}, "output": "File created"},
        bash(command, shows),
    ]
    assert window_of(turns)[-1].ftext is not None and window_of(turns)[-1].verdict == "fail"
    present = {**turns[1], "output": turns[1]["output"] + "\napp.ts"}
    assert window_of([turns[0], present])[-1].verdict is None


@pytest.mark.parametrize(
    ("tool", "args", "expected"),
    [
        ("list_files", {"path": "./bff/src/", "recursive": "true"}, ("bff/src", True)),
        ("list_directory", {"path": "/x/y"}, ("/x/y", False)),
        ("Bash", {"command": "ls -lah docs"}, ("docs", False)),
        ("Bash", {"command": "find . -type f"}, (".", True)),
        ("Bash", {"command": "ls docs src"}, None),
        ("Bash", {"command": "ls docs | head"}, None),
        ("Bash", {"command": "cat docs/a.md"}, None),
        ("Read", {"file_path": "docs/a.md"}, None),
    ],
)
def test_which_calls_list_a_folder(tool, args, expected):
    assert listing.listed(Turn.model_validate({"tool": tool, "args": args, "output": ""})) == expected
