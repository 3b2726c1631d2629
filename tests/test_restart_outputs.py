"""Restart loops as each orchestrator prints them: a service restarted three times, with an edit before each, whose
own log shows the same error after each restart (its pids, times, ids and deploy ids aside) is a restart loop, with
the exit code the harness sends and without it (Codex)."""

from __future__ import annotations

import pytest
from spiral_claims import check_claims, play

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
