"""``strict-loop watch`` on real jobs: small Python scripts that run out of memory under a real limit, produce NaN,
fill a small filesystem, crash on a missing module, or need two remedies before they succeed."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from conftest import read_jsonl, run_cli

from strict_loop.base.errors import LoopError
from strict_loop.experiments.watch import EXIT_ESCALATED, EXIT_LIMIT, EXIT_OK, Watch
from strict_loop.loop.workspace import Workspace

PY = [sys.executable, "-I", "-S"]  # a bare interpreter: the jobs start in a few ms


@pytest.fixture
def ws(ws_dir: Path) -> Workspace:
    w = Workspace(ws_dir)
    w.init_state(task_id="t", goal="Train the model", global_stop_condition="the run finishes")
    return w


def job(ws: Workspace, body: str, name: str = "job.py") -> list[str]:
    (ws.root / name).write_text(textwrap.dedent(body))
    return [*PY, name]


def watch(ws: Workspace, argv: list[str], env: dict | None = None, **settings) -> tuple:
    out = io.StringIO()
    env = {**os.environ, **(env or {})}
    result = Watch(ws.root, "t", argv, {"heartbeat_s": 3600, **settings}, env=env, stream=out).run()
    return result, out.getvalue()


def events(ws: Workspace, kind: str) -> list[dict]:
    return [e for e in read_jsonl(ws.task_paths("t").events) if e["kind"] == kind]


def assert_escalated(ws: Workspace, result, kind: str) -> dict:
    """Paused as the monitor pauses (monitor.json, spiral.paused) and one alert recorded; no round can be recorded
    now."""
    assert result.exit_code == EXIT_ESCALATED and result.outcome == "escalated"
    paths = ws.task_paths("t")
    assert json.loads(paths.monitor.read_text())["paused"] is True
    paused = events(ws, "spiral.paused")[-1]["data"]
    assert paused["failure"] == kind
    assert ws.detect_spiral(task_id="t").fired_at == paused["turn"]  # the turn of the pause, as for the monitor's own
    alerts = read_jsonl(paths.alerts)
    assert (
        len(alerts) == 1 and kind in alerts[0]["diagnosis"] and "strict-loop resume" in alerts[0]["recommended_action"]
    )
    assert "PAUSED" in paths.latest_status.read_text()
    with pytest.raises(LoopError, match="paused"):
        ws.update_state(task_id="t", task="x", result_summary="x", verification_summary="x")
    return alerts[0]


OOM_JOB = """
    import os
    batch = int(os.environ["BATCH_SIZE"])
    print(f"step 0 loss 1.0 batch {batch}", flush=True)
    buf = bytearray(batch * 2 * 1024 * 1024)  # 2 MB per sample: 64 and 32 exceed the 64 MB limit, 16 fits
    print(f"step 1 loss 0.5 allocated {len(buf) >> 20} MB", flush=True)
"""


def test_oom_under_a_real_memory_limit_needs_two_halvings_then_succeeds(ws: Workspace):
    argv = job(ws, OOM_JOB)
    result, err = watch(ws, argv, memory_limit_mb=64, allow=["halve-batch:2"], batch_var="BATCH_SIZE", batch_size=64)
    assert result.exit_code == EXIT_OK and result.outcome == "succeeded" and result.runs == 3
    assert result.failures == ["host_oom", "host_oom"] and result.remedies == ["halve-batch", "halve-batch"]
    assert "BATCH_SIZE 64 -> 32" in err and "BATCH_SIZE 32 -> 16" in err
    logs = [Path(p) for p in result.logs]
    assert [p.name for p in logs] == ["run-0001.log", "run-0002.log", "run-0003.log"]
    assert "MemoryError" in logs[0].read_text() and "allocated 32 MB" in logs[2].read_text()
    rounds = read_jsonl(ws.task_paths("t").iterations)  # each remedy is a round
    assert [r["task"] for r in rounds] == [
        "watch: halve-batch after host out of memory (run 1)",
        "watch: halve-batch after host out of memory (run 2)",
    ]
    assert [r["progress"] for r in rounds] == ["none", "made"]  # the second halving let the job finish
    runs = events(ws, "watch.run")  # each run is the job's own event, never an agent turn
    assert [r["data"]["failure"] for r in runs] == ["host_oom", "host_oom", None]
    assert all(r["data"]["command"].endswith("job.py") for r in runs) and events(ws, "tool_call") == []
    assert runs[0]["data"]["summary"].startswith("host_oom") and not ws.task_paths("t").alerts.exists()


def test_the_budget_is_honoured_then_the_task_is_paused_and_a_person_alerted(ws: Workspace):
    argv = job(ws, OOM_JOB)
    result, _ = watch(ws, argv, memory_limit_mb=64, allow=["halve-batch:1"], batch_var="BATCH_SIZE", batch_size=64)
    assert result.runs == 2 and result.remedies == ["halve-batch"]
    alert = assert_escalated(ws, result, "host_oom")
    assert "halve-batch used its budget of 1" in alert["diagnosis"]
    with pytest.raises(LoopError, match="paused"):  # a paused task is not watched again until a person resumes it
        watch(ws, argv)


def test_nan_loss_kills_the_run_at_once_and_a_lower_learning_rate_fixes_it(ws: Workspace):
    argv = job(
        ws,
        """
        import os, time
        lr = float(os.environ["LR"])
        print("step 1 loss 0.9", flush=True)
        if lr > 0.06:
            print("step 2 loss nan", flush=True)
            time.sleep(60)  # a NaN run would go on burning hours: watch must end it, not wait
        print("step 2 loss 0.4", flush=True)
    """,
    )
    result, err = watch(ws, argv, allow=["lower-lr:1"], lr_var="LR", lr=0.1)
    assert result.exit_code == EXIT_OK and result.failures == ["nan_loss"] and result.remedies == ["lower-lr"]
    assert "LR 0.1 -> 0.05" in err and "loss=nan at step 2" in err
    assert events(ws, "watch.run")[0]["data"]["exit_code"] == -signal.SIGTERM  # we ended the NaN run


def test_divergence_read_from_a_metrics_file_escalates_when_no_remedy_is_allowed(ws: Workspace):
    argv = job(
        ws,
        """
        import json, time
        with open("metrics.jsonl", "a") as f:
            for step, loss in enumerate([2.0, 1.0, 0.8, 0.9, 50.0]):
                f.write(json.dumps({"step": step, "loss": loss}) + "\\n"); f.flush()
        time.sleep(60)
    """,
    )
    result, _ = watch(ws, argv, metrics_file="metrics.jsonl")
    alert = assert_escalated(ws, result, "divergence")
    assert "more than 10x its best 0.8" in alert["diagnosis"] and "lower-lr is not allowed" in alert["diagnosis"]


@pytest.mark.parametrize("value", ["nan", "inf", "-inf"])
def test_a_nan_loss_written_by_json_dumps_to_the_metrics_file_is_a_nan_failure(ws: Workspace, value: str):
    """Issue 26, item 2: ``json.dumps`` writes a NaN loss as the bare token ``NaN`` (``Infinity``, ``-Infinity``); the
    lines were skipped as bad and the run, which exits 0, counted as a success."""
    argv = job(
        ws,
        f"""
        import json
        with open("metrics.jsonl", "a") as f:
            f.write(json.dumps({{"step": 1, "loss": 0.9}}) + "\\n")
            f.write(json.dumps({{"step": 2, "loss": float("{value}")}}) + "\\n")
        """,
    )
    result, _ = watch(ws, argv, metrics_file="metrics.jsonl")
    alert = assert_escalated(ws, result, "nan_loss")
    assert f"loss={float(value)} at step 2" in alert["diagnosis"]
    [run] = events(ws, "watch.run")
    assert run["data"]["failure"] == "nan_loss" and run["data"]["bad_metrics_lines"] == 0
    assert ws.task_store("t").load().status != "completed"


def test_a_missing_module_is_escalated_with_its_name_and_nothing_is_installed(ws: Workspace, tmp_path: Path):
    spy = tmp_path / "bin"
    spy.mkdir()
    for name in ("pip", "pip3", "uv", "sh", "bash", "curl"):  # anything watch might call to "fix" it leaves a trace
        (spy / name).write_text(f"#!/bin/sh\necho {name} >> {tmp_path / 'called'}\n")
        (spy / name).chmod(0o755)
    argv = job(
        ws,
        """
        print("step 0 loss 1.0", flush=True)
        raise ModuleNotFoundError("No module named 'evil; touch PWNED'")
    """,
    )
    path = f"{spy}{os.pathsep}{os.environ['PATH']}"
    result, _ = watch(ws, argv, env={"PATH": path}, allow=["wait-retry:3"], retry_wait_s=0)
    alert = assert_escalated(ws, result, "missing_module")
    assert result.runs == 1 and "[module: 'evil']" in alert["diagnosis"] and "no automatic remedy" in alert["diagnosis"]
    assert not (tmp_path / "called").exists() and not (ws.root / "PWNED").exists()


@pytest.fixture
def small_fs(ws: Workspace):
    """A 256 KiB tmpfs mounted at <ws>/out when this machine lets us mount; else the test is skipped."""
    out = ws.root / "out"
    out.mkdir()
    if (
        os.geteuid() != 0
        or subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(out)], capture_output=True
        ).returncode
        != 0
    ):
        pytest.skip("mounting a tmpfs needs root (the RLIMIT_FSIZE test covers a full disk without it)")
    try:
        yield out
    finally:
        subprocess.run(["umount", "-l", str(out)], capture_output=True)


def test_a_full_filesystem_is_freed_by_clearing_the_declared_cache(ws: Workspace, small_fs: Path, tmp_path: Path):
    cache = small_fs / "cache"
    cache.mkdir()
    (cache / "shard.bin").write_bytes(b"x" * 200 * 1024)
    (cache / "sub").mkdir()
    keep = (
        tmp_path / "keep.txt"
    )  # outside the workspace, reached through a link in the cache: the link goes, never the file
    keep.write_text("precious")
    (cache / "link").symlink_to(keep)
    argv = job(
        ws,
        """
        with open("out/result.bin", "wb") as f:
            f.write(b"r" * 120 * 1024)
        print("saved", flush=True)
    """,
    )
    result, _ = watch(ws, argv, allow=["clear-cache:1"], cache_dir="out/cache")
    assert result.exit_code == EXIT_OK and result.failures == ["disk_full"] and result.remedies == ["clear-cache"]
    assert (
        list(cache.iterdir()) == []
        and keep.read_text() == "precious"
        and (small_fs / "result.bin").stat().st_size == 120 * 1024
    )


def test_a_full_disk_under_the_watch_log_is_classified_not_a_crash(ws: Workspace):
    """Reviewer: the log's own write hit ENOSPC and watch died (exit 1, no watch.run, no alert)."""
    logs = ws.task_paths("t").root / "watch"
    logs.mkdir()
    if (
        os.geteuid() != 0
        or subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(logs)], capture_output=True
        ).returncode
    ):
        pytest.skip("mounting a tmpfs needs root")
    try:
        argv = job(
            ws,
            """
            for k in range(3000):
                print("step", k, "x" * 60, flush=True)
            raise OSError(28, "No space left on device")
        """,
        )
        result, _ = watch(ws, argv)
    finally:
        subprocess.run(["umount", "-l", str(logs)], capture_output=True)
    alert = assert_escalated(ws, result, "disk_full")
    assert "No space left on device" in alert["diagnosis"]


def test_a_file_size_quota_is_a_full_disk_and_escalates_without_the_remedy(ws: Workspace):
    argv = job(
        ws,
        """
        with open("big.bin", "wb") as f:
            for _ in range(4):
                f.write(b"x" * 1024 * 1024); f.flush()
    """,
    )
    result, _ = watch(ws, argv, file_size_limit_mb=1)
    alert = assert_escalated(ws, result, "disk_full")
    assert "File too large" in alert["diagnosis"] and "clear-cache is not allowed" in alert["diagnosis"]
    assert (ws.root / "big.bin").stat().st_size <= 1024 * 1024


def test_the_log_is_masked_capped_and_the_heartbeat_shows_progress(ws: Workspace):
    argv = job(
        ws,
        """
        import os
        print("token", os.environ["MY_API_TOKEN"], flush=True)
        for i in range(200):
            print(f"step {i} loss {1 / (i + 1):.4f} " + "pad" * 20)
    """,
    )
    secret = "sk-live-0123456789abcdef"
    out = io.StringIO()
    result = Watch(
        ws.root,
        "t",
        argv,
        {"heartbeat_s": 0.01, "log_max_mb": 0.004, "total_steps": 400},
        stream=out,
        env={**os.environ, "MY_API_TOKEN": secret},
    ).run()
    assert result.exit_code == EXIT_OK
    log = Path(result.logs[0]).read_text()
    assert secret not in log and "token ***" in log and "log capped at 4194 bytes" in log and len(log) < 4400
    status = ws.task_paths("t").latest_status.read_text()
    assert "[watch] t | run 1/10 | step 199/400 | loss 0.005" in out.getvalue()
    assert "iteration 1 of 100" in status  # the success is a round of the task, whose status line follows the run's
    assert secret not in ws.task_paths("t").events.read_text()


def test_a_secret_in_the_command_line_reaches_no_file(ws: Workspace):
    secret = "hf_0123456789abcdefSECRET"
    argv = job(ws, "import sys; sys.exit('Connection refused')\n") + ["--token", secret]
    out = io.StringIO()
    result = Watch(
        ws.root,
        "t",
        argv,
        {"heartbeat_s": 3600, "allow": ["wait-retry:1"], "retry_wait_s": 0},
        stream=out,
        env={**os.environ, "HF_TOKEN": secret},
    ).run()
    assert result.remedies == ["wait-retry"] and result.outcome == "escalated"
    for path in ws.task_paths("t").root.rglob("*"):
        assert not path.is_file() or secret.encode() not in path.read_bytes(), path


def test_a_job_failing_the_same_way_after_each_retry_is_escalated_without_blaming_the_agent(ws: Workspace):
    argv = job(ws, "raise ConnectionRefusedError(111, 'Connection refused')\n")
    result, _ = watch(ws, argv, allow=["wait-retry:20"], retry_wait_s=0, max_runs=20)
    alert = assert_escalated(ws, result, "connection")
    assert result.runs == 3 and set(result.failures) == {"connection"} and "3 runs in a row" in alert["diagnosis"]
    assert events(ws, "spiral.whisper") == [] and events(ws, "tool_call") == []


def test_max_runs_is_a_limit(ws: Workspace):
    argv = job(ws, "raise SystemExit('Connection refused')\n")
    result, _ = watch(ws, argv, allow=["wait-retry:5"], retry_wait_s=0, max_runs=2)
    assert (result.exit_code, result.outcome, result.runs) == (EXIT_LIMIT, "limit", 2)
    assert not ws.task_paths("t").alerts.exists()


def test_the_cli_passes_argv_and_declared_variables_and_refuses_bad_flags(ws: Workspace):
    (ws.root / "job.py").write_text("import os, sys; print('bs', os.environ['BS'], sys.argv[1:])\n")
    run = run_cli(
        "watch",
        "--task-id",
        "t",
        "--batch-var",
        "BS",
        "--batch-size",
        "8",
        "--heartbeat-s",
        "60",
        "--json",
        "--",
        *PY,
        "job.py",
        "--bs",
        "{BS}",
        "a b",
        cwd=ws.root,
    )
    result = json.loads(run.stdout)
    assert run.returncode == 0 and result["outcome"] == "succeeded"
    assert "bs 8 ['--bs', '8', 'a b']" in Path(result["logs"][0]).read_text()
    bad = run_cli("watch", "--task-id", "t", "--allow", "halve-batch", "--", "true", cwd=ws.root, check=False)
    assert bad.returncode == 2 and "--batch-var and --batch-size" in bad.stderr
    none = run_cli("watch", "--task-id", "t", cwd=ws.root, check=False)
    assert none.returncode == 2 and "watch.command" in none.stderr
    missing = run_cli("watch", "--task-id", "t", "--", "./no-such-trainer", cwd=ws.root, check=False)
    assert missing.returncode == 2 and "'./no-such-trainer' could not be started" in missing.stderr
    pattern = run_cli("watch", "--task-id", "t", "--progress-pattern", "(", "--", "true", cwd=ws.root, check=False)
    assert pattern.returncode == 2 and "bad regular expression" in pattern.stderr  # refused before any run


def test_a_program_that_does_not_exist_finishes_the_watch_it_started_with_a_clear_error(ws: Workspace):
    """Issue 26, item 9: the watch recorded ``watch.started`` and never ``watch.finished``."""
    missing = run_cli("watch", "--task-id", "t", "--", "./no-such-trainer", "--epochs", "3", cwd=ws.root, check=False)
    assert missing.returncode == 2 and "'./no-such-trainer' could not be started" in missing.stderr
    assert "Traceback" not in missing.stderr
    kinds = [e["kind"] for e in read_jsonl(ws.task_paths("t").events) if e["kind"].startswith("watch.")]
    assert kinds == ["watch.started", "watch.finished"]
    finished = events(ws, "watch.finished")[0]
    assert finished["data"]["outcome"] == "failed" and finished["data"]["exit_code"] == 2
    assert "'./no-such-trainer' could not be started" in finished["message"]
    assert ws.task_store("t").load().status == "running" and not ws.supervisor("t").paused


def alive(pid: int) -> bool:
    """A zombie (exited, not yet reaped by whoever adopted it) counts as gone."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_watch_refuses_a_completed_or_unknown_task_before_running_anything(ws: Workspace):
    argv = job(ws, "open('ran', 'w').write('yes')\n")
    with pytest.raises(LoopError, match="no task 'nope'"):
        Watch(ws.root, "nope", argv)
    ws.update_state(task_id="t", task="train", result_summary="done", verification_summary="ok", status="completed")
    with pytest.raises(LoopError, match="is completed"):
        watch(ws, argv)
    assert not (ws.root / "ran").exists()


@pytest.mark.slow  # a real watch process receiving a real SIGTERM
def test_sigterm_kills_the_jobs_whole_group_and_exits_143(ws: Workspace, tmp_path: Path):
    pidfile = tmp_path / "grandchild.pid"
    job(
        ws,
        f"""
        import subprocess, sys, time
        child = subprocess.Popen([sys.executable, "-I", "-S", "-c", "import time; time.sleep(60)"])
        open({str(pidfile)!r}, "w").write(str(child.pid))
        print("step 1 loss 1.0", flush=True)
        time.sleep(60)
    """,
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "strict_loop", "watch", "--task-id", "t", "--heartbeat-s", "60", "--", *PY, "job.py"],
        cwd=ws.root,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 20
    while not (pidfile.exists() and pidfile.read_text()) and time.monotonic() < deadline:
        time.sleep(0.02)
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=20)
    assert proc.returncode == 143 and "interrupted" in out, err
    assert not alive(int(pidfile.read_text()))
    assert events(ws, "watch.finished")[-1]["data"]["outcome"] == "interrupted"


@pytest.mark.slow  # about a second or more of waiting on processes: the fast tier stays under 30 s
def test_repairs_that_worked_then_a_missing_module_blame_neither_the_agent_nor_another_failure(ws: Workspace):
    """Issue 18: OOM repaired, NaN repaired, then a missing module, all on one task."""
    oom = job(ws, OOM_JOB)
    assert (
        watch(ws, oom, memory_limit_mb=64, allow=["halve-batch:2"], batch_var="BATCH_SIZE", batch_size=64)[0].exit_code
        == 0
    )
    nan = job(
        ws, "import os\nprint('step 1 loss', 'nan' if float(os.environ['LR']) > 0.06 else 0.4, flush=True)\n", "nan.py"
    )
    assert watch(ws, nan, allow=["lower-lr:1"], lr_var="LR", lr=0.1)[0].exit_code == 0
    assert ws.check_stop(task_id="t").verdict != "limit_reached"  # repairs that worked are progress
    missing = job(ws, "import torchvision_extras\n", "missing.py")
    result, _ = watch(
        ws, missing, allow=["halve-batch:2", "lower-lr:1"], batch_var="BATCH_SIZE", batch_size=64, lr_var="LR", lr=0.1
    )
    alert = assert_escalated(ws, result, "missing_module")
    said = [alert["diagnosis"], ws.detect_spiral(task_id="t").diagnosis]
    for text in said:
        assert "torchvision_extras" in text and "out of memory" not in text.lower() and "batch" not in text.lower()
        assert "nan" not in text.lower().replace("no automatic", "")
    assert events(ws, "spiral.whisper") == [] and events(ws, "tool_call") == []


def test_bad_metrics_lines_are_skipped_and_counted_and_memory_stays_bounded(ws: Workspace):
    """Issue 19, item 5: 200,000 '[' on one line killed watch (RecursionError); an unterminated line grew memory."""
    argv = job(
        ws,
        """
        import json
        with open("metrics.jsonl", "a") as f:
            f.write("[" * 200_000 + "\\n")
            f.write('{"step": 1, "loss": 1.0}\\n')
            f.write("x" * 3_000_000)  # an unterminated line, larger than any read
            f.write('\\n{"step": 2, "loss": 0.5}\\n')
            f.flush()
        print("done", flush=True)
        """,
    )
    result, _ = watch(ws, argv, metrics_file="metrics.jsonl")
    assert result.exit_code == EXIT_OK
    [run] = events(ws, "watch.run")
    assert run["data"]["bad_metrics_lines"] == 2 and "step 2" in run["data"]["summary"]


@pytest.mark.slow  # starts a server process or waits seconds on one
def test_the_timeout_covers_a_wait_retry_wait_and_reports_the_limit(ws: Workspace):
    argv = job(ws, "raise SystemExit('Connection refused')\n")
    started = time.monotonic()
    result, _ = watch(ws, argv, allow=["wait-retry:5"], retry_wait_s=30, timeout_s=1.5, max_runs=5)
    assert time.monotonic() - started < 10  # not the 30 s wait
    assert (result.exit_code, result.outcome, result.runs) == (EXIT_LIMIT, "limit", 1)
    assert "--timeout 1.5s reached during the wait-retry wait" in result.reason
