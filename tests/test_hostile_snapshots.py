"""Issue 13, items 1 and 15: the snapshot store runs nothing from the repository, and rollback restores whole or not at
all.

Everything runs over real git in temporary folders.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from conftest import git, git_repo, read_jsonl, tree_digest
from person_rig import person_key

from strict_loop import Workspace
from strict_loop.base.errors import LoopError
from strict_loop.cli.app import main

ROUND = {"result_summary": "r", "verification_summary": "v"}


def store_git(ws: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess:
    """Read our own store (made by the tool, so plain git is safe on it)."""
    return subprocess.run(
        ["git", "--git-dir", str(ws / ".agent-loop" / "snapshots.git"), *args],
        capture_output=True,
        text=True,
        check=check,
    )


def task_refs(ws: Path, task: str) -> set[str]:
    out = store_git(ws, "for-each-ref", "--format=%(refname)", "refs/").stdout.split()
    return {ref.rsplit("/", 1)[1] for ref in out if ref.startswith(f"refs/strict-loop/{task}/")}


def events(ws: Path, task: str, kind_prefix: str = "snapshot.") -> list[dict]:
    return [
        e for e in read_jsonl(ws / ".agent-loop" / "tasks" / task / "events.jsonl") if e["kind"].startswith(kind_prefix)
    ]


def work_tree(ws: Path) -> str:
    """Digest of the workspace's own files (not the loop's bookkeeping nor the user's .git)."""
    h = hashlib.sha256()
    for p in sorted(ws.rglob("*")):
        rel = p.relative_to(ws)
        if p.is_file() and rel.parts[0] not in (".agent-loop", ".git"):
            h.update(str(rel).encode() + b"\0" + p.read_bytes())
    return h.hexdigest()


# ---------------------------------------------------------------- item 1: nothing from the repository runs


def hostile_store(ws: Path, marker: Path) -> Path:
    """A `.agent-loop/snapshots.git` as a clone could carry it: its fsmonitor touches `marker`."""
    store = ws / ".agent-loop" / "snapshots.git"
    store.parent.mkdir(parents=True, exist_ok=True)
    git(ws, "init", "-q", "--bare", str(store))
    git(ws, "config", "-f", str(store / "config"), "core.fsmonitor", f"touch {marker}; true")
    (store / "strict-loop-store-id").write_text("forged\n")
    return store


def test_a_store_the_tool_did_not_create_is_refused_and_never_run(ws_dir, tmp_path):
    ws, marker = git_repo(ws_dir), tmp_path / "fsmonitor-ran"
    store = hostile_store(ws, marker)
    # The test can fail: plain git on that store does run the command.
    env = {**os.environ, "GIT_DIR": str(store), "GIT_WORK_TREE": str(ws), "GIT_INDEX_FILE": str(tmp_path / "idx")}
    subprocess.run(["git", "add", "-A", "--", "a.txt"], cwd=ws, env=env, capture_output=True)
    assert marker.exists()
    marker.unlink()

    w = Workspace(ws)
    w.init_state(task_id="t", goal="g", global_stop_condition="c")
    result = w.update_state(task_id="t", task="round 1", **ROUND)
    assert not marker.exists()
    failed = events(ws, "t")
    assert [e["kind"] for e in failed] == ["snapshot.failed", "snapshot.failed"]
    assert all(e["data"]["refused"] == "foreign-store" for e in failed)
    assert "was not created by strict-loop on this machine" in failed[0]["message"] and "mv " in failed[0]["message"]
    assert any("refused" in w_ for w_ in result.warnings)
    before = tree_digest(ws)
    with pytest.raises(LoopError, match=r"resume.action: rollback refused: .*was not created by strict-loop"):
        w.resume(task_id="t", action="rollback", to=1)
    assert tree_digest(ws) == before and not marker.exists()


def test_a_store_changed_after_the_tool_made_it_is_refused(ws_dir, tmp_path):
    ws, marker = git_repo(ws_dir), tmp_path / "fsmonitor-ran"
    w = Workspace(ws)
    w.init_state(task_id="t", goal="g", global_stop_condition="c")
    assert [e["kind"] for e in events(ws, "t")] == ["snapshot.taken"]
    store = ws / ".agent-loop" / "snapshots.git"
    git(ws, "config", "-f", str(store / "config"), "core.fsmonitor", f"touch {marker}; true")  # e.g. by the agent
    w.update_state(task_id="t", task="round 1", **ROUND)
    assert not marker.exists()
    last = events(ws, "t")[-1]
    assert last["kind"] == "snapshot.failed" and "config that changed" in last["message"]
    # A copy of a genuine store elsewhere (same id, same config) is not trusted either: the proof is keyed by path.
    other = tmp_path / "copy"
    shutil.copytree(ws, other)
    git(other, "config", "-f", str(other / ".agent-loop" / "snapshots.git" / "config"), "--unset", "core.fsmonitor")
    Workspace(other).update_state(task_id="t", task="round 2", **ROUND)
    assert events(other, "t")[-1]["data"].get("refused") == "foreign-store"


def test_hostile_config_in_the_users_repo_and_global_config_never_run(ws_dir, tmp_path, monkeypatch):
    ws, marker = git_repo(ws_dir), tmp_path / "ran"
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    for name in (
        "pre-commit",
        "post-commit",
        "reference-transaction",
        "post-index-change",
        "post-checkout",
        "pre-auto-gc",
    ):
        (hooks / name).write_text(f"#!/bin/sh\necho {name} >> {marker}\n")
        (hooks / name).chmod(0o755)
    for key, value in (
        ("core.fsmonitor", f"echo fsmonitor >> {marker}; true"),
        ("core.hooksPath", str(hooks)),
        ("filter.evil.clean", f"sh -c 'echo clean >> {marker}; cat'"),
        ("filter.evil.required", "true"),
        ("filter.evil.smudge", f"sh -c 'echo smudge >> {marker}; cat'"),
    ):
        git(ws, "config", key, value)
    (ws / ".gitattributes").write_text("* filter=evil\n")
    (tmp_path / "global").write_text(f"[core]\n\tfsmonitor = echo global >> {marker}; true\n")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(tmp_path / "global"))
    nested = ws / "vendored"
    git(ws, "init", "-q", str(nested))
    git(nested, "config", "core.fsmonitor", f"echo nested >> {marker}; true")
    git(ws, "status")  # the test can fail: git in the user's repo runs these
    assert marker.exists()
    marker.unlink()

    w = Workspace(ws)
    w.init_state(task_id="t", goal="g", global_stop_condition="c")
    (ws / "a.txt").write_text("v1\n")
    w.update_state(task_id="t", task="round 1", **ROUND)
    (ws / "a.txt").write_text("v2\n")
    w.resume(task_id="t", action="rollback", to=1)
    assert (ws / "a.txt").read_text() == "v1\n"
    assert not marker.exists(), marker.read_text()
    assert [e["kind"] for e in events(ws, "t")] == ["snapshot.taken", "snapshot.taken"]


FIRST_SNAPSHOT = """
import sys, time
from pathlib import Path
from strict_loop import Workspace
go = Path(sys.argv[2])
while not go.exists():
    time.sleep(0.0005)
Workspace(sys.argv[1]).update_state(task_id=sys.argv[3], task="round 1", result_summary="r", verification_summary="v")
"""
TASKS = ("t1", "t2", "t3", "t4")


@pytest.mark.slow  # starts processes and waits on them
def test_tasks_taking_their_first_snapshot_at_once_all_succeed(ws_dir, tmp_path):
    ws, go = ws_dir, tmp_path / "go"
    for task in TASKS:  # not a git repository yet: no snapshot at init
        Workspace(ws).init_state(task_id=task, goal="g", global_stop_condition="c")
    git_repo(ws)
    procs = [subprocess.Popen([sys.executable, "-c", FIRST_SNAPSHOT, str(ws), str(go), task]) for task in TASKS]
    go.touch()
    assert [p.wait(timeout=60) for p in procs] == [0] * len(TASKS)
    for task in TASKS:
        assert [e["kind"] for e in events(ws, task)] == ["snapshot.taken"], events(ws, task)
        assert task_refs(ws, task) == {"round-1"}
    assert not list((ws / ".agent-loop").glob(".snapshots.git.tmp-*"))
    Workspace(ws).update_state(task_id="t1", task="round 2", **ROUND)  # the one store they made stays trusted
    assert events(ws, "t1")[-1]["kind"] == "snapshot.taken"


# ---------------------------------------------------------------- item 15: bounded snapshots, whole rollbacks


def test_rollback_after_force_init_never_restores_the_replaced_tasks_files(ws_dir):
    ws = git_repo(ws_dir)
    w = Workspace(ws)
    w.init_state(task_id="t", goal="old", global_stop_condition="c")
    for i in (1, 2):
        (ws / f"old{i}.txt").write_text("old task\n")
        w.update_state(task_id="t", task=f"old round {i}", **ROUND)
    w.resume(task_id="t", action="rollback", to=1)  # leaves a save of the old task's tree
    old_round_2 = store_git(ws, "rev-parse", "refs/strict-loop/t/round-2").stdout.strip()  # holds old2.txt
    w.init_state(task_id="t", goal="new", global_stop_condition="c", force=True)
    assert task_refs(ws, "t") == {"round-0"}
    replaced = store_git(ws, "for-each-ref", "--format=%(refname)", "refs/strict-loop-replaced/").stdout.split()
    assert len(replaced) == 1 and replaced[0].endswith("/before-rollback-1")
    assert events(ws, "t")[0]["kind"] == "snapshot.dropped"

    (ws / "new.txt").write_text("new task\n")
    w.update_state(task_id="t", task="new round 1", **ROUND)
    with pytest.raises(LoopError, match="resume.to: there is no snapshot of round 2 for task 't': its last round is 1"):
        w.resume(task_id="t", action="rollback", to=2)
    w.resume(task_id="t", action="rollback", to=0)  # the tree as the new task found it
    assert (ws / "old1.txt").exists() and not (ws / "old2.txt").exists() and not (ws / "new.txt").exists()
    # Even a ref the drop missed (e.g. written by a late snapshot of the old task) is refused: it names its task.
    store_git(ws, "update-ref", "refs/strict-loop/t/round-1", old_round_2)
    before = work_tree(ws)
    with pytest.raises(LoopError, match="belongs to an earlier task 't'.*nothing was changed"):
        w.resume(task_id="t", action="rollback", to=1)
    assert work_tree(ws) == before and not (ws / "old2.txt").exists()


def test_resume_to_a_round_beyond_the_last_is_one_clear_line(ws_dir, capsys):
    ws = git_repo(ws_dir)
    w = Workspace(ws)
    w.init_state(task_id="t", goal="g", global_stop_condition="c")
    w.update_state(task_id="t", task="round 1", **ROUND)
    before = tree_digest(ws)
    code = main(
        ["resume", "t", "--action", "rollback", "--to", "99", "--workspace", str(ws), "--person-key", person_key()]
    )
    err = capsys.readouterr().err.strip()
    assert code != 0 and err.count("\n") == 0
    assert err == (
        "error: resume.to: there is no snapshot of round 99 for task 't': its last round is 1 "
        "-- pass --to a round from 0 to 1 (0 = as it was at init_state)"
    )
    assert tree_digest(ws) == before


def test_every_rollback_save_is_kept_and_numbered(ws_dir):
    ws = git_repo(ws_dir)
    w = Workspace(ws)
    w.init_state(task_id="t", goal="g", global_stop_condition="c")
    (ws / "a.txt").write_text("v1\n")
    w.update_state(task_id="t", task="round 1", **ROUND)
    saved = []
    for text in ("first mistake\n", "second mistake\n"):
        (ws / "a.txt").write_text(text)
        result = w.resume(task_id="t", action="rollback", to=1)
        assert (ws / "a.txt").read_text() == "v1\n"
        saved.append(result.saved_commit)
    assert {"before-rollback-1", "before-rollback-2"} <= task_refs(ws, "t")
    for n, text in ((1, "first mistake\n"), (2, "second mistake\n")):
        ref = f"refs/strict-loop/t/before-rollback-{n}"
        assert store_git(ws, "show", f"{ref}:a.txt").stdout == text
        assert store_git(ws, "rev-parse", ref).stdout.strip() == saved[n - 1]
    assert "before-rollback-2" in events(ws, "t", "workspace.")[-1]["message"]


def test_a_target_with_a_missing_object_is_refused_before_any_file_changes(ws_dir):
    ws = git_repo(ws_dir)
    os.utime(ws / "a.txt", (1_500_000_000, 1_500_000_000))  # not racily clean: git trusts its index entry
    w = Workspace(ws)
    w.init_state(task_id="t", goal="g", global_stop_condition="c")  # a.txt = v0 lives in the user's .git (shared)
    (ws / "b.txt").write_text("b\n")
    w.update_state(task_id="t", task="round 1", **ROUND)
    # The user's gc prunes the blob the snapshots share with their repository.
    blob = git(ws, "rev-parse", "HEAD:a.txt")
    (ws / ".git" / "objects" / blob[:2] / blob[2:]).unlink()
    (ws / "b.txt").write_text("b changed\n")
    before, refs = work_tree(ws), task_refs(ws, "t")
    with pytest.raises(
        LoopError, match=r"resume.to: the snapshot of round 0 is incomplete: 1 of its files .*\(e.g. a.txt\)"
    ):
        w.resume(task_id="t", action="rollback", to=0)
    assert work_tree(ws) == before and task_refs(ws, "t") == refs  # not even a save was made
    # The next snapshot still works (its index entry for a.txt points at the pruned blob: it is rebuilt) ...
    w.update_state(task_id="t", task="round 2", **ROUND)
    assert events(ws, "t")[-1]["kind"] == "snapshot.taken"
    assert store_git(ws, "show", "refs/strict-loop/t/round-2:a.txt").stdout == "v0\n"
    # ... and, holding a.txt itself now, makes the older rounds whole again.
    w.resume(task_id="t", action="rollback", to=0)
    assert not (ws / "b.txt").exists() and (ws / "a.txt").read_text() == "v0\n"


def test_big_files_are_left_out_of_snapshots_and_listed(ws_dir):
    ws = git_repo(ws_dir)
    w = Workspace(ws)
    (ws / "grows.bin").write_bytes(b"x" * 1000)
    w.init_state(task_id="t", goal="g", global_stop_condition="c", monitor={"snapshot_max_file_mb": 0.01})
    assert events(ws, "t")[-1]["data"]["skipped"] == []
    (ws / "big.bin").write_bytes(b"y" * 20_000)
    (ws / "grows.bin").write_bytes(b"x" * 30_000)
    result = w.update_state(task_id="t", task="round 1", **ROUND)
    taken = events(ws, "t")[-1]
    assert taken["kind"] == "snapshot.taken" and taken["data"]["skipped_count"] == 2
    assert sorted((s["path"], s["bytes"]) for s in taken["data"]["skipped"]) == [
        ("big.bin", 20_000),
        ("grows.bin", 30_000),
    ]
    assert "over the 0.01 MB cap" in taken["message"] and "big.bin" in taken["message"]
    assert not [x for x in result.warnings if "snapshot" in x]
    files = store_git(ws, "ls-tree", "-r", "--name-only", "refs/strict-loop/t/round-1").stdout.split()
    assert "a.txt" in files and "big.bin" not in files and "grows.bin" not in files  # no stale copy of the grown file
    # Round 0 holds the small grows.bin: restoring it would destroy the big one, which no snapshot holds.
    before, refs = work_tree(ws), task_refs(ws, "t")
    with pytest.raises(LoopError, match="resume.to: round 0 has grows.bin, which is now left out of snapshots"):
        w.resume(task_id="t", action="rollback", to=0)
    assert work_tree(ws) == before and task_refs(ws, "t") == refs
    (ws / "grows.bin").rename(ws_dir.parent / "grows.bin")
    w.resume(task_id="t", action="rollback", to=0)  # files left out are never touched by a rollback
    assert (ws / "big.bin").stat().st_size == 20_000 and (ws / "grows.bin").stat().st_size == 1000


def test_old_round_snapshots_are_dropped_and_their_objects_pruned(ws_dir):
    ws = git_repo(ws_dir)
    w = Workspace(ws)
    w.init_state(task_id="t", goal="g", global_stop_condition="c", monitor={"snapshot_keep": 2})
    blobs = {}
    for i in range(1, 11):
        (ws / "work.txt").write_text(f"only in round {i}\n")
        w.update_state(task_id="t", task=f"round {i}", **ROUND)
        blobs[i] = store_git(ws, "rev-parse", f"refs/strict-loop/t/round-{i}:work.txt").stdout.strip()
    assert task_refs(ws, "t") == {"round-0", "round-9", "round-10"}
    assert events(ws, "t")[-1]["data"]["pruned"] is True
    gone = [i for i in blobs if store_git(ws, "cat-file", "-e", blobs[i], check=False).returncode != 0]
    assert gone == list(range(1, 9))


GIT_WRAPPER = """#!/bin/sh
# Real git, held at `git add` until the test says go: a snapshot that takes as long as the test wants.
for a in "$@"; do
  if [ "$a" = add ]; then touch "{started}"; while [ ! -e "{go}" ]; do sleep 0.01; done; break; fi
done
exec "{git}" "$@"
"""


def test_the_task_lock_is_free_while_a_snapshot_runs(ws_dir, tmp_path, monkeypatch):
    ws = git_repo(ws_dir)
    w = Workspace(ws)
    w.init_state(task_id="t", goal="g", global_stop_condition="c")
    started, go, bindir = tmp_path / "started", tmp_path / "go", tmp_path / "bin"
    bindir.mkdir()
    (bindir / "git").write_text(GIT_WRAPPER.format(started=started, go=go, git=shutil.which("git")))
    (bindir / "git").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ['PATH']}")
    done: list = []
    worker = threading.Thread(target=lambda: done.append(w.update_state(task_id="t", task="round 1", **ROUND)))
    worker.start()
    try:
        for _ in range(3000):
            if started.exists():
                break
            threading.Event().wait(0.01)
        assert started.exists(), "the snapshot never started"
        # The round is recorded and the lock released while the snapshot is held at `git add`.
        Workspace(ws, lock_timeout=5).append_event(task_id="t", kind="note", message="written during the snapshot")
    finally:
        go.touch()
        worker.join(timeout=60)
    assert done and done[0].iteration == 1
    kinds = [
        (e["kind"], e["data"].get("iteration")) for e in read_jsonl(ws / ".agent-loop" / "tasks" / "t" / "events.jsonl")
    ]
    assert kinds[-3:] == [("round.completed", 1), ("note", None), ("snapshot.taken", 1)]


def test_snapshot_settings_are_part_of_the_contract(ws_dir):
    w = Workspace(git_repo(ws_dir))
    w.init_state(task_id="t", goal="g", global_stop_condition="c")
    monitor = w.show_task(task_id="t").state.contract.monitor
    assert (monitor.snapshot_max_file_mb, monitor.snapshot_keep) == (10.0, 50)
    with pytest.raises(LoopError, match="snapshot_keep"):
        w.init_state(task_id="u", goal="g", global_stop_condition="c", monitor={"snapshot_keep": 0})
    assert (
        json.loads((ws_dir / ".agent-loop" / "tasks" / "t" / "state.json").read_text())["contract"]["monitor"][
            "snapshot_keep"
        ]
        == 50
    )
