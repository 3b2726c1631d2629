"""Restart loops as each orchestrator prints them: a service restarted three times, with an edit before each, whose
own log shows the same error after each restart (its pids, times, ids and deploy ids aside) is a restart loop, with
the exit code the harness sends and without it (Codex)."""

from __future__ import annotations

import pytest
from spiral_claims import check_claims, play, window_of

from strict_loop.monitor import fingerprint as fp
from strict_loop.monitor import readback

RESTARTS = {  # what each restart prints, {k} and {pid} what differs from one to the next
    "express + curl -i": (
        "kill $(lsof -t -i:3000); (npm run dev > /tmp/api.log 2>&1 &); sleep 2; curl -si localhost:3000/api/orders",
        (
            "orders-api listening on :3000 (pid {pid})\n"
            "HTTP/1.1 401 Unauthorized\n"
            "X-Request-Id: req_{pid}abc{k}\n"
            'ETag: W/"54-e0efD3AfA{k}bdB{pid}0ece3F+E84"\n'
            "Date: Tue, 04 Jun 2024 14:2{k}:55 GMT\n"
            "\n"
            '{{"error":"invalid_token","message":"invalid signature","requestId":"req_{pid}abc{k}"}}'
        ),
    ),
    "systemctl": (
        "sudo systemctl restart api && sleep 2 && journalctl -u api -n 4 --no-pager",
        (
            "May 21 09:1{k}:0{k} web1 systemd[1]: Started api.service.\n"
            "May 21 09:1{k}:0{k} web1 api[{pid}]: Error: ENOENT: no such file or directory, open '"
            "/etc/api/config.yml'\n"
            "May 21 09:1{k}:0{k} web1 systemd[1]: api.service: Main process exited, code=exited, s"
            "tatus=1/FAILURE\n"
            "May 21 09:1{k}:0{k} web1 systemd[1]: api.service: Failed with result 'exit-code'."
        ),
    ),
    "pm2": (
        "pm2 restart api && sleep 3 && pm2 logs api --lines 3 --nostream",
        (
            "[PM2] Applying action restartProcessId on app [api](ids: [ 0 ])\n"
            "[PM2] [api](0) ✓\n"
            "0|api  | 2024-05-21T09:1{k}:02: Error: connect ECONNREFUSED 127.0.0.1:6379\n"
            "0|api  |     at TCPConnectWrap.afterConnect [as oncomplete] (node:net:1555:16)"
        ),
    ),
    "docker": (
        "docker restart api && sleep 3 && docker logs --tail 3 api",
        (
            "api\n"
            '2024-05-21 09:1{k}:03,11{k} ERROR [main] Could not open database: FATAL: database "sh'
            'op" does not exist\n'
            "2024-05-21 09:1{k}:03,12{k} INFO  [main] Shutting down"
        ),
    ),
    "fly": (
        "fly deploy && fly logs --no-tail | tail -3",
        (
            "==> Building image\n"
            "--> Pushing image done\n"
            "image: registry.fly.io/shop:deployment-01HYB3K9Q8J5W2X7N4M6PRTV{k}A\n"
            "2024-05-21T09:1{k}:03Z app[e286{k}5ea] ams [info]Error: listen EADDRINUSE: address al"
            "ready in use 0.0.0.0:8080\n"
            "2024-05-21T09:1{k}:04Z app[e286{k}5ea] ams [info] INFO Main child exited normally wit"
            "h code: 1"
        ),
    ),
    "heroku": (
        "heroku restart -a shop && sleep 5 && heroku logs -n 3 -a shop",
        (
            "Restarting dynos on ⬢ shop... done\n"
            "2024-05-21T09:1{k}:03.0{k}Z app[web.1]: Error R10 (Boot timeout) -> Web process faile"
            "d to bind to $PORT within 60 seconds of launch\n"
            "2024-05-21T09:1{k}:03.1{k}Z heroku[web.1]: State changed from starting to crashed"
        ),
    ),
    "supervisor": (
        "sudo supervisorctl restart worker && sleep 2 && tail -3 /var/log/worker.err.log",
        (
            "worker: stopped\n"
            "worker: started\n"
            "Traceback (most recent call last):\n"
            '  File "/srv/worker/main.py", line 8, in <module>\n'
            "redis.exceptions.ConnectionError: Error 111 connecting to localhost:6379. Connection refused."
        ),
    ),
    "uvicorn": (
        "pkill -f uvicorn; uvicorn app.main:app --port 8000 > /tmp/u.log 2>&1 & sleep 2; tail -3 /tmp/u.log",
        (
            "INFO:     Started server process [{pid}]\n"
            "INFO:     Waiting for application startup.\n"
            "ERROR:    Application startup failed. Exiting."
        ),
    ),
    "rails": (
        "kill $(cat tmp/pids/server.pid); bin/rails s -d && sleep 3 && tail -2 log/development.log",
        (
            "=> Booting Puma\n"
            "=> Rails 7.1.3 application starting in development\n"
            "ActiveRecord::ConnectionNotEstablished (could not connect to server: No such file or "
            "directory)"
        ),
    ),
    "gradle": (
        "pkill -f bootRun; ./gradlew bootRun > boot.log 2>&1 & sleep 20; tail -3 boot.log",
        (
            "2024-05-21T09:1{k}:03.{pid}  INFO {pid} --- [main] o.s.b.w.embedded.tomcat.TomcatWebS"
            "erver  : Tomcat initialized with port 8080 (http)\n"
            "***************************\n"
            "APPLICATION FAILED TO START\n"
            "***************************\n"
            "Description:\n"
            "Web server failed to start. Port 8080 was already in use."
        ),
    ),
    "compose": (
        "docker compose up -d --force-recreate api && sleep 4 && docker compose logs --tail 2 api",
        (
            "[+] Running 1/1\n"
            " ✔ Container shop-api-1  Started  0.{k}s\n"
            'api-1  | {{"level":"error","ts":"2024-05-21T09:1{k}:0{k}Z","msg":"migrate: dirty data'
            'base version 12. Fix and force version."}}\n'
            "api-1 exited with code 1"
        ),
    ),
    "sidekiq (logfmt ids)": (
        "docker compose restart worker && sleep 6 && docker compose logs --tail=2 worker",
        (
            "[+] Restarting 1/1\n ✔ Container ledger-worker-1  Started  1.{k}s\n"
            "worker-1  | 2024-05-14T09:2{k}:47.530Z pid=1 tid=2n{k}q INFO: Booting Sidekiq 7.2.4\n"
            "worker-1  | WRONGPASS invalid username-password pair or user is disabled. (RedisClient::CommandError)"
        ),
    ),
}


@pytest.mark.parametrize("blind", [False, True], ids=["exit code", "no exit code"])
@pytest.mark.parametrize("name", sorted(RESTARTS))
def test_the_same_error_after_each_restart_is_a_restart_loop(name, blind):
    command, output = RESTARTS[name]
    turns = []
    for k, pid in enumerate((4242, 5117, 6203)):
        turns.append({"tool": "Edit", "args": {"file_path": "src/cfg", "old_string": f"a{k}", "new_string": f"b{k}"}})
        run = {"tool": "Bash", "args": {"command": command}, "output": output.format(k=k, pid=pid)}
        turns.append(run if blind else {**run, "exit_code": 0})
    verdict, steps = play(turns)
    assert verdict.fired_at == 5 and steps[0][2][0].kind == "restart_loop"
    assert "restarts" in check_claims(verdict, turns)


_API_LOGS = (  # the same refused connection, logged in other words once the agent added retries to the code
    'api-1  | {{"level":"ERROR","msg":"db connect failed","err":"dial tcp [::1]:5432: connect: connection refused"}}',
    'api-1  | {{"level":"WARN","msg":"db not ready","attempt":"{k}/5","err":"dial tcp [::1]:5432: connect: connection '
    'refused"}}',
)
_CONNECTED = 'api-1  | {{"level":"INFO","msg":"listening","addr":":8080","db":"connected","attempt":"{k}/5"}}'


def _rebuild_rounds(last: str) -> list[dict]:
    """Three rounds of an edit, a rebuild that passes and restarts the service, and its log read apart."""
    turns: list[dict] = []
    for k in range(3):
        log = "\n".join(
            [_API_LOGS[min(k, 1)].format(k=n) for n in range(1, k + 3)] if k < 2 else [last.format(k=n) for n in (3, 4)]
        )
        turns += [
            {"tool": "Edit", "args": {"file_path": "cmd/api/main.go", "old_string": f"try{k}", "new_string": f"r{k}"}},
            {
                "tool": "Bash",
                "args": {"command": "docker compose up -d --build api"},
                "output": f"[+] Building 1{k}.4s (14/14) FINISHED\n => exporting to image  0.{k}s\n"
                f"[+] Running 2/2\n ✔ Container shop-db-1   Healthy  0.{k}s\n ✔ Container shop-api-1  Started  0.4s",
                "exit_code": 0,
            },
            {
                "tool": "Bash",
                "args": {"command": f"sleep {k + 2} && docker compose logs api --tail 5"},
                "output": log,
                "exit_code": 0,
            },
        ]
    return turns


@pytest.mark.parametrize("last", [_API_LOGS[1], _API_LOGS[1] + "\n...\n}}"], ids=["whole", "cut by the harness"])
def test_a_rebuild_that_passes_and_the_same_refused_connection_logged_in_new_words_after_each_is_a_restart_loop(last):
    turns = _rebuild_rounds(last)
    verdict, steps = play(turns)
    assert verdict.fired_at == 8 and steps[0][2][0].kind == "restart_loop"
    assert "restarts" in check_claims(verdict, turns)


def test_a_rebuild_after_which_the_service_connects_is_no_restart_loop():
    assert play(_rebuild_rounds(_CONNECTED))[0].fired_at is None


def _checks(lint: str, pending: bool = False) -> str:
    """``gh pr checks`` through a pipe (Cursor's terminal: its prompt line first, no exit code)."""
    state = "pending\t0" if pending else f"{lint}\t4{len(lint)}s"
    return (
        "dev@box:~/src/cache$ gh pr checks 482\n"
        + ("Some checks are still pending\n" if pending else "Some checks were not successful\n")
        + f"CodeQL\tpass\t2m05s\thttps://github.com/acme/cache/runs/1\nlint\t{state}\thttps://github.com/acme/cache/"
        "runs/2\nbuild\tpass\t1m12s\thttps://github.com/acme/cache/runs/3"
    )


def _ci_reruns(last: str) -> list[dict]:
    """The failing CI job run again three times, its checks read after each: pending first, then its result."""
    turns: list[dict] = [
        {"tool": "run_terminal_cmd", "args": {"command": "gh pr checks 482"}, "output": _checks("fail")}
    ]
    for k in range(3):
        turns += [
            {
                "tool": "run_terminal_cmd",
                "args": {"command": f"gh run rerun 912345678{k} --failed"},
                "output": f"dev@box:~/src/cache$ gh run rerun 912345678{k} --failed\n"
                f"✓ Requested rerun of run 912345678{k}",
            },
            {"tool": "run_terminal_cmd", "args": {"command": "gh pr checks 482"}, "output": _checks("", pending=True)},
            {
                "tool": "run_terminal_cmd",
                "args": {"command": f"sleep {60 + k} && gh pr checks 482"},
                "output": _checks(last if k == 2 else "fail"),
            },
        ]
    return turns


def test_a_ci_job_run_again_and_failing_the_same_way_each_time_is_a_restart_loop():
    turns = _ci_reruns("fail")
    verdict, steps = play(turns)
    assert verdict.fired_at is not None and verdict.fired_at <= 9
    assert any(s.kind == "restart_loop" for step in steps for s in step[2])
    window = window_of(turns)  # a pending run's "0 failing" is no count: the failing check was running again
    assert "fewer failures" not in [f.prog for f in window if "still pending" in turns[f.i]["output"]]


def test_a_ci_job_that_passes_on_its_third_run_is_no_restart_loop():
    assert not any(s.kind == "restart_loop" for step in play(_ci_reruns("pass"))[1] for s in step[2])


def test_the_prompt_line_a_terminal_capture_echoes_is_no_output():
    """Cursor's terminal output starts with its prompt and the command, wrapped where the terminal wrapped it: a
    ``--failed`` flag or an ``error`` in the command is no error printed, and the same output after another command
    line is the same output."""
    runs = [
        ("gh run rerun 9123456780 --failed", "me@mac cache % gh run rerun 9123456780 --fai\nled\n✓ Requested rerun"),
        ("pytest -q 2>&1 | grep -c error", "me@mac:~/app me$ pytest -q 2>&1 | grep -c error\n0"),
        ("sleep 5 && pytest -q 2>&1 | grep -c error", "me@mac:~/app me$ sleep 5 && pytest -q 2>&1 | grep -c error\n0"),
    ]
    turns = [{"tool": "run_terminal_cmd", "args": {"command": c}, "output": o} for c, o in runs]
    window = window_of(turns)
    assert [f.failed for f in window] == [False, False, False]
    assert window[0].restart and window[0].logerr is None
    assert window[1].out == window[2].out


def _pods(state: str, k: int) -> str:
    return (
        "NAME                           READY   STATUS    RESTARTS      AGE\n"
        f"orders-api-6b8d4f7c9-4tq2m     1/1     Running   0             3d2h\n"
        f"orders-api-7d9f8c6b{k}-x2kq{k}     0/1     {state}   {k + 3} (1{k}s ago)   {k + 1}m1{k}s\n"
    )


def _reapplies(last: str) -> list[dict]:
    """A manifest changed and applied three times, the pods read after each: a crash loop each time, or not."""
    turns: list[dict] = []
    for k, state in enumerate(("CrashLoopBackOff", "Error", last)):
        turns += [
            {"tool": "Edit", "args": {"file_path": "k8s/deploy.yaml", "old_string": f"m{k}", "new_string": f"n{k}"}},
            {
                "tool": "Bash",
                "args": {"command": "kubectl apply -f k8s/deploy.yaml"},
                "output": "deployment.apps/orders-api configured",
            },
            {
                "tool": "Bash",
                "args": {"command": f"sleep {20 + k} && kubectl -n shop get pods -l app=orders-api"},
                "output": _pods(state, k),
            },
        ]
    return turns


@pytest.mark.parametrize("blind", [False, True], ids=["exit code", "no exit code"])
def test_pods_read_in_a_crash_loop_after_each_change_fail_the_same_way(blind):
    turns = _reapplies("CrashLoopBackOff")
    if not blind:
        turns = [{**t, "exit_code": 0} if t["tool"] == "Bash" else t for t in turns]
    verdict, _ = play(turns)
    assert verdict.fired_at == 8 and "orders-api: keeps crashing" in verdict.diagnosis
    check_claims(verdict, turns)
    assert play(_reapplies("Running  "))[0].fired_at is None


def _watched(states: tuple[str, ...]) -> list[dict]:
    """The pods read again and again after a rollout, a description read between: nothing edited or restarted."""
    turns: list[dict] = [{"tool": "Bash", "args": {"command": "kubectl -n shop rollout restart deploy/orders-api"}}]
    turns[0]["output"] = "deployment.apps/orders-api restarted"
    for k, state in enumerate(states):
        wait = "sleep 30 && " if k % 2 else ""
        get = {"tool": "Bash", "args": {"command": f"{wait}kubectl -n shop get pods -l app=orders-api"}}
        turns.append({**get, "output": _pods(state, k)})
        if k == 1:
            describe = {"tool": "Bash", "args": {"command": "kubectl -n shop describe pod orders-api-7d9f8c6b1-x2kq1"}}
            turns.append({**describe, "output": "Events:\n  Warning  Failed  12s  kubelet  Error: ImagePullBackOff"})
    return turns


def test_pods_read_failing_again_and_again_with_nothing_changed_are_a_loop_that_waiting_cannot_end():
    turns = _watched(("ImagePullBackOff",) * 4)
    verdict, steps = play(turns)
    assert verdict.fired_at == 5 and steps[0][2][0].kind == "restart_loop"
    assert "orders-api: cannot pull its image" in verdict.diagnosis and "watched" in check_claims(verdict, turns)
    assert play(_watched(("ContainerCreating", "ContainerCreating", "Running  ", "Running  ")))[0].fired_at is None


def test_a_status_question_between_the_reads_of_failing_pods_is_no_new_request():
    turns = _watched(("CrashLoopBackOff",) * 4)
    turns.insert(3, {"tool": "user_prompt", "actor": "person", "output": "is it done?? its been 25 min"})
    verdict, steps = play(turns)
    assert verdict.fired_at == 6 and steps[0][2][0].kind == "restart_loop"


def test_a_status_read_shows_what_fails_by_its_workload():
    compose = (
        "NAME         IMAGE        COMMAND                SERVICE   CREATED         STATUS                   PORTS\n"
        'shop-api-1   shop-api     "/app/api"             api       2 minutes ago   Restarting (1) 12 seconds ago\n'
        'shop-db-1    postgres:16  "docker-entrypoint.s…" db        2 minutes ago   Up 2 minutes (healthy)   5432/tcp\n'
        'shop-job-1   shop-job     "/app/job"             job       2 minutes ago   Exited (0) 1 minute ago\n'
    )
    assert readback.failing_status("docker compose ps -a", compose) == "shop-api: keeps crashing"
    pulled = _pods("ImagePullBackOff", 1).replace("Running   0  ", "ErrImagePull 0")
    assert readback.failing_status("kubectl -n shop get pods", pulled) == "orders-api: cannot pull its image"
    assert readback.failing_status("kubectl -n shop get pods", _pods("Running  ", 1)) is None
    assert readback.failing_status("cat pods.txt", _pods("Error", 1)) is None  # a file shown is no status read


def test_a_workload_is_as_its_newest_pod_shows_it():
    """During a rollout the old ReplicaSet's pods are still listed, crashing as before the fix: the workload's state
    is its newest pod's, and a new pod starting or running says the last change's outcome is not known yet."""
    rows = (
        "NAME                            READY   STATUS             RESTARTS      AGE\n"
        "payments-api-5c9f7d8b66-2mhtk   0/1     {new}   {restarts}   44s\n"
        "payments-api-6d4b9c7f5-gq2lx    0/1     CrashLoopBackOff   13 (2m ago)   39m\n"
        "payments-api-6d4b9c7f5-r7nvk    0/1     CrashLoopBackOff   13 (2m ago)   1h2m\n"
    )
    read = "sleep 45; kubectl --context staging -n payments get pods -l app.kubernetes.io/instance=payments-api"
    assert readback.failing_status(read, rows.format(new="Running", restarts=0)) is None
    assert readback.failing_status(read, rows.format(new="ContainerCreating", restarts=0)) is None
    crashing = rows.format(new="CrashLoopBackOff", restarts="2 (14s ago)")
    assert readback.failing_status(read, crashing) == "payments-api: keeps crashing"
    turns: list[dict] = []
    for k, new in enumerate(("CrashLoopBackOff", "CrashLoopBackOff", "Running")):
        edit = {"file_path": "deploy/helm/values.yaml", "old_string": f"a: {k}", "new_string": f"a: {k + 1}"}
        turns += [
            {"tool": "Edit", "args": edit, "output": "The file deploy/helm/values.yaml has been updated."},
            {"tool": "Bash", "args": {"command": read}, "output": rows.format(new=new, restarts=f"{k} (9s ago)")},
        ]
    assert play(turns)[0].fired_at is None  # a third change whose new pod runs is no third crash


def test_a_log_tail_keeps_its_values_but_not_a_processs_ids():
    """What two tails after two restarts are compared by: a thread's or request's id (logfmt ``tid=2n9``) is new with
    each process and folded; a status, an error code or a level is the log's news and stays."""
    same = ("pid=1 tid=2n9 req=a8f3k2 INFO: Booting", "pid=1 tid=2q8 req=x71b0c INFO: Booting")
    assert readback.log_lines(same[0]) == readback.log_lines(same[1])
    for a, b in (("status=500 GET /", "status=502 GET /"), ("code=E42 failed", "code=E43 failed")):
        assert readback.log_lines(a) != readback.log_lines(b)
    assert readback.log_lines("level=error msg=x") != readback.log_lines("level=warn msg=x")


_SASL = (  # the same refused credentials, logged by the client's network layer or as the listener's exception
    "2024-07-09T10:2{k}:24.552Z ERROR 7 --- [sync] o.a.k.clients.NetworkClient : [Consumer clientId=sync-1] Connection "
    "to node -{k} (b-{k}.kafka.example.com:9096) failed authentication due to: Authentication failed during "
    "authentication due to invalid credentials with SASL mechanism SCRAM-SHA-512",
    "2024-07-09T10:3{k}:12.651Z ERROR 7 --- [sync] o.s.k.l.KafkaMessageListenerContainer : Authentication/"
    "Authorization Exception, retrying in 10000 ms\norg.apache.kafka.common.errors.SaslAuthenticationException: "
    "Authentication failed during authentication due to invalid credentials with SASL mechanism SCRAM-SHA-512",
)


def test_the_same_refused_credentials_logged_in_two_forms_after_each_restart_are_a_restart_loop():
    turns = []
    restart = "docker restart sync && sleep 30 && docker logs --tail 4 sync"
    for k in range(3):
        patch = f"*** Begin Patch\n*** Update File: app.yml\n@@\n-a{k}\n+b{k}\n*** End Patch"
        turns.append({"tool": "apply_patch", "args": {"command": patch}, "output": "Success. Updated: M app.yml"})
        turns.append({"tool": "Bash", "args": {"command": restart}, "output": _SASL[k % 2].format(k=k)})
    verdict, steps = play(turns)
    assert verdict.fired_at == 5 and steps[0][2][0].kind == "restart_loop"
    assert "restarts" in check_claims(verdict, turns)


def test_the_port_held_when_a_start_fails_and_when_the_log_says_so_after_a_kill_is_one_outcome():
    """A dev server whose start fails on a port something respawns into: the start's own failure (exit 1) and the
    same refusal read from its log after each kill are one outcome, so the third restart closes the loop."""
    held = "INFO:     Will watch for changes in these directories: ['/r']\nERROR:    [Errno 48] Address already in use"
    start, log = "uv run uvicorn app.main:app --port 8787 --reload", "/tmp/dev.log"
    turns = [
        {"tool": "Bash", "args": {"command": start}, "output": f"Exit code 1\n{held}", "exit_code": 1},
        {
            "tool": "Bash",
            "args": {"command": f"kill 412; sleep 1; nohup {start} > /tmp/dev.log 2>&1 &\nsleep 3; cat /tmp/dev.log"},
            "output": held,
            "exit_code": 0,
        },
        {
            "tool": "Bash",
            "args": {"command": "lsof -nP -iTCP:8787 -sTCP:LISTEN"},
            "output": "Python 9931 rk 7u IPv4 TCP 127.0.0.1:8787 (LISTEN)",
            "exit_code": 0,
        },
        {
            "tool": "Bash",
            "args": {
                "command": f"pkill -f uvicorn; sleep 2; nohup {start} > /tmp/dev.log 2>&1 &\nsleep 3; tail -2 {log}"
            },
            "output": held,
            "exit_code": 0,
        },
    ]
    verdict, steps = play(turns)
    assert verdict.fired_at == 3 and steps[-1][2][0].kind == "restart_loop"
    assert "restarts" in check_claims(verdict, turns)
    moved = {**turns[3], "output": "INFO:     Uvicorn running on http://127.0.0.1:8787 (Press CTRL+C to quit)"}
    assert play([*turns[:3], moved])[0].fired_at is None


@pytest.mark.parametrize(
    ("line", "name"),
    [
        ("WRONGPASS invalid username-password pair or user is disabled.", "authentication failed"),
        ('psql: error: FATAL:  password authentication failed for user "app"', "authentication failed"),
        ("git@github.com: Permission denied (publickey).", "authentication failed"),
        (
            "An error occurred (InvalidClientTokenId) when calling the GetCallerIdentity operation",
            "authentication failed",
        ),
        ("HTTP/1.1 401 Unauthorized", "authentication failed"),
        ("open /var/lib/app/data.db: permission denied", "permission denied"),
        ("Login page shows 'Invalid password' hint text", None),
    ],
)
def test_credentials_refused_are_one_failure_class_however_each_side_words_it(line, name):
    found = fp.classify([line])
    assert (found.name if found else None) == name


def _pino(host: str, pod: str, t: int, extra: str = "") -> str:
    """A Node service's pino log after a restart: its start, the settings it connects with, then the same refusal."""
    head = f'{{"level":30,"time":{t},"pid":1,"hostname":"api-{pod}"'
    lines = [
        f'{head},"msg":"api v2.3.0 starting (env=staging)"}}',
        f'{head},"msg":"connecting to postgres","host":"{host}","port":5432,"user":"orders"}}',
        *([f'{head},"msg":"{extra}"}}'] if extra else []),
        f'{head.replace("30", "50", 1)},"msg":"database connection failed","err":{{"message":"password authentication '
        'failed for user \\"orders\\"","code":"28P01"}}',
        f'{head.replace("30", "60", 1)},"msg":"fatal: exiting with code 1"}}',
    ]
    return "\n".join(lines)


def test_a_setting_the_restarted_thing_echoes_before_its_error_is_no_news_and_a_new_message_is():
    """The agent changes the host (or an SSL mode, a user) between restarts, and the service logs it as it starts:
    the same refusal after it is the same outcome. A message it did not log before, or a value in the error, is."""
    first = readback.log_lines(_pino("orders-db.staging.svc", "7f5b9d6c8-w7ssv", 1717412460000))
    moved = readback.log_lines(_pino("orders-db.staging.svc.cluster.local", "59c7d4f8b-dccjk", 1717412681136))
    assert moved == first
    debug = readback.log_lines(_pino("orders-db.staging.svc", "59c7d4f8b-dccjk", 1717412681136, "password length 0"))
    assert not set(first).issuperset(debug)
    other = _pino("orders-db.staging.svc", "59c7d4f8b-dccjk", 1717412681136).replace('"orders\\"', '"app\\"')
    assert not set(first).issuperset(readback.log_lines(other))


def test_restarts_with_a_setting_changed_before_each_and_the_same_refusal_after_are_a_restart_loop():
    """Codex (no exit codes): a rollout restart, a pod deleted, a host changed and restarted, the log read after each:
    the service refuses the same credentials every time."""
    hosts = ("orders-db.staging.svc", "orders-db.staging.svc", "orders-db.staging.svc.cluster.local")
    restarts = (
        "kubectl rollout restart deployment/api -n staging && sleep 45 && kubectl logs -l app=api -n staging",
        "kubectl delete pod -l app=api -n staging && sleep 30 && kubectl logs -l app=api -n staging",
        "kubectl set env deployment/api -n staging DB_HOST=orders-db.staging.svc.cluster.local && "
        "kubectl rollout restart deployment/api -n staging && sleep 45 && kubectl logs -l app=api -n staging",
    )
    pods = ("6c8d7f9b4-8vt2z", "7f5b9d6c8-mgdw8", "59c7d4f8b-dccjk")
    turns = [
        {"tool": "Bash", "args": {"command": command}, "output": _pino(host, pod, 1717412505282 + 60000 * k)}
        for k, (command, host, pod) in enumerate(zip(restarts, hosts, pods, strict=True))
    ]
    verdict, steps = play(turns)
    assert verdict.fired_at == 2 and steps[0][2][0].kind == "restart_loop"
    assert "restarts" in check_claims(verdict, turns)


def _helm_release(revision: int) -> str:
    return (
        'Release "orders" has been upgraded. Happy Helming!\nNAME: orders\nLAST DEPLOYED: Thu Apr 18 13:2'
        f"{revision}:15 2024\nNAMESPACE: staging\nSTATUS: deployed\nREVISION: {revision}\nTEST SUITE: None"
    )


def _fatal(k: int, prefix: str = "") -> str:
    return "\n".join(
        [
            f'{prefix}{{"level":"info","ts":"2024-04-18T13:2{k}:33.512Z","msg":"starting orders","commit":"a9{k}"}}',
            f'{prefix}{{"level":"fatal","ts":"2024-04-18T13:2{k}:33.514Z","msg":"config: required env DATABASE_URL is '
            'empty","caller":"config/load.go:48"}',
        ]
    )


def test_the_same_fatal_read_from_other_pods_with_and_without_their_prefix_after_each_helm_upgrade_is_a_loop():
    """Helm's release block is the upgrade's own report, and ``kubectl logs --prefix``'s ``[pod/x/c]`` says where a
    line came from: the same fatal line after each upgrade, read three ways, is a restart loop."""
    upgrade = "helm upgrade orders ./chart -n staging -f values-staging.yaml"
    turns: list[dict] = []
    reads = [
        (
            "kubectl -n staging logs deploy/orders --tail=2",
            lambda k: f"Found 2 pods, using pod/orders-7b4c-m2j5p\n{_fatal(k)}",
        ),
        (
            "kubectl -n staging logs -l app=orders --tail=2 --prefix",
            lambda k: _fatal(k, "[pod/orders-5f7d-qq8zr/orders] "),
        ),
    ]
    for k, (read, shown) in enumerate(reads):
        turns.append(
            {"tool": "Edit", "args": {"file_path": "chart/values.yaml", "old_string": f"a{k}", "new_string": "b"}}
        )
        turns.append({"tool": "Bash", "args": {"command": upgrade}, "output": _helm_release(14 + k), "exit_code": 0})
        turns.append({"tool": "Bash", "args": {"command": read}, "output": shown(k), "exit_code": 0})
    turns.append(
        {"tool": "Edit", "args": {"file_path": "chart/values.yaml", "old_string": "tag: 2.7.1", "new_string": "x"}}
    )
    both = f"{upgrade} && sleep 30 && kubectl -n staging logs deploy/orders --tail=2"
    turns.append(
        {"tool": "Bash", "args": {"command": both}, "output": f"{_helm_release(17)}\n{_fatal(7)}", "exit_code": 0}
    )
    verdict, steps = play(turns)
    assert verdict.fired_at == len(turns) - 1 and steps[-1][2][0].kind == "restart_loop"
    assert "restarts" in check_claims(verdict, turns)
    assert [fp.strict(line) for line in _fatal(1, "[pod/orders-5f7d-qq8zr/orders] ").splitlines()] == [
        fp.strict(line) for line in _fatal(1).splitlines()
    ]


def test_a_package_installed_before_each_restart_is_the_agents_attempt_not_news_in_the_log():
    """Codex: ``pip install X | tail -n 1; kill ...; ./run.sh & sleep 4; grep ... log`` three times, each install a
    package the service's own interpreter never sees: pip's ``Successfully installed`` is what the agent did, and the
    worker failing to boot on the same missing module after each restart is a restart loop."""
    boot = (
        "ModuleNotFoundError: No module named 'websockets'\n"
        "[2024-05-14 16:{k}:02 +0000] [{pid}] [ERROR] Reason: Worker failed to boot."
    )
    restart = "kill -TERM $(cat /tmp/app.pid); ./run.sh > /tmp/g.log 2>&1 & sleep 4; grep -E 'Error|Reason' /tmp/g.log"
    installs = ("", "pip install --force-reinstall websockets==12.0 2>&1 | tail -n 1; ", "pip install websockets; ")
    said = ("", "Successfully installed websockets-12.0\n", "Requirement already satisfied: websockets in /usr/lib\n")
    turns = [
        {"tool": "Bash", "args": {"command": pip + restart}, "output": out + boot.format(k=10 + k, pid=20800 + k)}
        for k, (pip, out) in enumerate(zip(installs, said, strict=True))
    ]
    verdict, steps = play(turns)
    assert verdict.fired_at == 2 and steps[0][2][0].kind == "restart_loop"
    assert "restarts" in check_claims(verdict, turns)
    assert readback.log_lines(said[1] + boot.format(k=11, pid=1)) == readback.log_lines(boot.format(k=12, pid=2))
