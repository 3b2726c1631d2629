"""Progress is an outcome, not an attempt: each class of the monitor-v3 patterns, the spiral and its look-alike, with
what the monitor says checked against the turns (``spiral_claims``)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from spiral_claims import check_claims, play, window_of

from strict_loop.model.monitoring import MonitorState
from strict_loop.model.settings import MonitorSettings
from strict_loop.model.turns import Turn
from strict_loop.monitor import fingerprint as fp
from strict_loop.monitor import missing, readback
from strict_loop.monitor.calls import shellwork
from strict_loop.monitor.ladder import observe

TS2339 = (
    "> app@1.0.0 test\n> tsc --noEmit && jest\n\nsrc/routes/user.ts({n},17): error TS2339: Property 'user' does "
    "not exist on type 'Request<ParamsDictionary, any, any, ParsedQs, Record<string, any>>'.\n"
)


def npm_test(output: str, code: int = 2) -> dict:
    return {"tool": "Bash", "args": {"command": "npm test"}, "output": output, "exit_code": code}


def write(path: str, k: int) -> dict:
    return {
        "tool": "Write",
        "args": {
            "file_path": path,
            "content": f"declare namespace Express {{ interface Request {{ user{k}: User }} }}\n",
        },
        "output": f"File created successfully at: {path}",
    }


def cline_write(path: str, k: int, problem: str, where: str = "src/routes/api.ts") -> dict:
    return {
        "tool": "write_to_file",
        "args": {"path": path, "content": f"export type Result = Ok{k} | Err;\n"},
        "output": f"The content was successfully saved to {path}.\n\nNew problems detected after saving the file:\n"
        f"{where}\n"
        f"- [ts Error] Line {40 + k}: {problem}",
    }


def edit_thrash(variant: str) -> list[dict]:
    if variant == "npm":
        return [t for k in range(4) for t in (write("src/types/express.d.ts", k), npm_test(TS2339.format(n=12 + k)))]
    if variant == "cline":
        problem = "Type 'Result' is not assignable to type 'Response<Result>'."
        return [
            cline_write(path, k, problem) for k, path in enumerate(["src/models/result.ts", "src/routes/api.ts"] * 2)
        ]
    pytest_out = (
        "E       assert parse('1,2') == [1, 2]\nFAILED tests/test_parse.py::test_pairs - assert [1] == [1, 2]\n1 "
        "failed in 0.{k}3s"
    )
    return [
        t
        for k in range(4)
        for t in (
            {
                "tool": "str_replace_editor",
                "args": {
                    "command": "str_replace",
                    "path": "/repo/parse.py",
                    "old_str": f"v{k}",
                    "new_str": f"v{k + 1}",
                },
                "output": "The file /repo/parse.py has been edited.",
            },
            {
                "tool": "bash",
                "args": {"command": "python -m pytest -q tests/test_parse.py"},
                "output": pytest_out.format(k=k),
                "exit_code": 1,
            },
        )
    ]


@pytest.mark.parametrize("variant", ["npm", "cline", "pytest"])
def test_edit_thrash_with_the_same_failure_fires_and_names_the_edits_and_the_failure(variant):
    turns = edit_thrash(variant)
    verdict, steps = play(turns)
    assert verdict.fired_at is not None and steps[0][2][0].kind == "same_failure"
    first, _ = play(turns[: verdict.fired_at + 1])
    claims = check_claims(first, turns[: verdict.fired_at + 1])
    assert "same failure" in claims and "edited" in claims
    assert "edit" in first.whisper and "find out why it fails" in first.whisper


def test_thrash_whose_failure_changes_is_quiet():
    errors = [
        "Property 'user' does not exist on type 'Request'",
        "Cannot find name 'User'",
        "Cannot find module './user'",
        "Type 'string' is not assignable to type 'number'",
        "Expected 2 arguments, but got 1",
    ]
    turns = [
        t
        for k, e in enumerate(errors)
        for t in (write("src/types/express.d.ts", k), npm_test(f"src/routes/user.ts(3,1): error TS{2300 + k}: {e}."))
    ]
    assert play(turns)[0].fired_at is None
    assert [f.prog for f in window_of(turns) if f.verdict][1:] == ["different failure"] * 4


@pytest.mark.parametrize("runner", ["pytest", "jest"])
def test_tdd_with_falling_failure_counts_is_quiet(runner):
    turns = []
    for k, failing in enumerate((6, 6, 4, 4, 3, 1, 0)):
        turns.append(write("src/parser.ts", k))
        out = (
            f"FAILED tests/test_p.py::test_a\n{failing} failed, {9 - failing} passed in 0.{k}s"
            if runner == "pytest"
            else f"FAIL src/p.test.ts\nTests: {failing} failed, {9 - failing} passed, 9 total"
        )
        turns.append(
            {
                "tool": "Bash",
                "args": {"command": "npx jest" if runner == "jest" else "pytest -q"},
                "output": out,
                "exit_code": 1 if failing else 0,
            }
        )
    assert play(turns)[0].fired_at is None


def test_a_refactor_whose_score_rises_is_quiet():
    turns = []
    for k in range(10):
        turns.append(write(f"src/module_{k % 3}.py", k))
        turns.append(
            {
                "tool": "Bash",
                "args": {"command": "python eval.py"},
                "output": f"cases: 40\nscore: {0.40 + 0.05 * k:.2f}",
            }
        )
    assert play(turns)[0].fired_at is None


def polls(n: int, every_s: float | None) -> list[dict]:
    start = datetime(2026, 1, 5, 9, 0, tzinfo=timezone.utc)
    out = [
        {
            "tool": "Bash",
            "args": {"command": "python train.py", "run_in_background": True},
            "output": "Command running in background with ID: 7c1",
        }
    ]
    for k in range(n):
        turn = {
            "tool": "BashOutput",
            "args": {"bash_id": "7c1"},
            "output": "<status>running</status>\n"
            f"<timestamp>{(start + timedelta(seconds=3 * k)).isoformat()}</timestamp>",
        }
        if every_s is not None:
            turn["ts"] = (start + timedelta(seconds=every_s * k)).isoformat()
        out.append(turn)
    return out


def test_long_polls_of_a_live_job_whisper_late_with_wait_advice():
    settings = MonitorSettings()
    turns = polls(settings.thresholds.poll_whisper + 5, every_s=3)
    verdict, steps = play(turns)
    assert verdict.fired_at == settings.thresholds.poll_whisper  # the first turn started the job
    assert [a for _, a, _ in steps] == ["whisper"] and steps[0][2][0].kind == "stalled_poll"
    assert "wait" in verdict.whisper and "alive" in verdict.whisper
    assert "polled" in check_claims(play(turns[: verdict.fired_at + 1])[0], turns)


@pytest.mark.parametrize("every_s, pauses", [(3, False), (60, True), (None, True)])
def test_polls_pause_only_after_a_long_stretch_in_turns_and_in_time(every_s, pauses):
    t = MonitorSettings().thresholds
    _, steps = play(polls(t.poll_pause + 5, every_s))
    assert (
        "pause" in [a for _, a, _ in steps]
    ) is pauses  # 45 polls 3 s apart: a long build, never paused for being long
    if pauses:
        assert min(i for i, a, _ in steps if a != "whisper") >= t.poll_pause
    assert not play(polls(t.poll_pause - 1, 600))[1][1:]  # a long time, but not yet many polls: one whisper at most


def test_a_status_read_after_sleeps_of_any_length_is_one_poll():
    """``sleep 60 && kubectl get pods``, then ``sleep 120 && ...``: one poll, waited on longer each time, of a pod that
    stays Pending (its age aside); a look at something else between is no change of what is polled."""
    t = MonitorSettings().thresholds
    pods = "NAME   READY   STATUS    RESTARTS   AGE\nsearch-api-7b8d44c9f6-h5njd   0/1   Pending   0   {age}"
    turns = []
    for k in range(t.poll_whisper):
        command = f"sleep {60 + 30 * (k % 4)} && kubectl -n search get pods -l app=search-api"
        turns.append(
            {
                "tool": "Bash",
                "args": {"command": command},
                "output": pods.format(age=f"{4 + 2 * k}m12s"),
                "exit_code": 0,
            }
        )
        if k == 3:
            turns.append(
                {
                    "tool": "Bash",
                    "args": {"command": "kubectl get nodes"},
                    "output": "NAME  STATUS\nn1  Ready",
                    "exit_code": 0,
                }
            )
    verdict, steps = play(turns)
    assert verdict.fired_at == len(turns) - 1 and steps[0][2][0].kind == "stalled_poll"
    assert "polled" in check_claims(verdict, turns)
    turns[-1]["output"] = pods.format(age="24m12s").replace("0/1   Pending", "1/1   Running")
    assert play(turns)[0].fired_at is None


def _dig(sleep: int, command: str, output: str) -> dict:
    return {
        "tool": "run_shell_command",
        "args": {"command": f"sleep {sleep}; {command}"},
        "output": output,
        "exit_code": 0,
    }


_A = "dig +short A cloud.example.net @dns1.registrar-servers.com"
_SOA = "dig +short SOA example.net @dns1.registrar-servers.com"
_SERIAL = "dns1.registrar-servers.com. hostmaster.registrar-servers.com. 2024021101 43200 3600 604800 3601"


def _dns_waits(last: str) -> list[dict]:
    """Waiting for a DNS change that never reached the nameservers: each look after a wait, in other words, shows what
    showed before (the old address, the old serial)."""
    return [
        {"tool": "user_prompt", "actor": "person", "output": "pointed cloud.example.net at the new vps. get a cert"},
        {"tool": "run_shell_command", "args": {"command": _A}, "output": "203.0.113.7", "exit_code": 0},
        {"tool": "run_shell_command", "args": {"command": _SOA}, "output": _SERIAL, "exit_code": 0},
        _dig(900, _A, "203.0.113.7"),
        _dig(900, f"{_A}; {_A.replace('@dns1.registrar-servers.com', '@1.1.1.1')}", "203.0.113.7\n203.0.113.7"),
        _dig(1200, f"{_SOA}; {_A}", f"{_SERIAL}\n{last}"),
    ]


def test_looks_after_long_waits_that_show_nothing_new_whisper_whatever_command_looks():
    """Three looks after waits of 50 minutes in all, by three commands, each showing only what showed before: waiting
    will not bring the change (it never reached the nameservers); the whisper says how long the agent waited."""
    turns = _dns_waits("203.0.113.7")
    verdict, steps = play(turns)
    assert verdict.fired_at == 5 and [a for _, a, _ in steps] == ["whisper"]
    assert "the agent waited 50 min over 3 looks" in steps[0][2][0].evidence
    assert "waited" in check_claims(verdict, turns)


def test_a_wait_after_sourcing_what_it_looks_with_is_a_look_all_the_same():
    """``source .env && sleep 60; cast rpc ...``: the environment set up before the wait changes nothing of it."""
    from strict_loop.monitor import polls

    command = (
        "source .env && export RPC=$SEPOLIA && sleep 120; cast rpc eth_getTransactionReceipt 0x91d4 --rpc-url $RPC"
    )
    assert polls.waits(command) and polls.slept(command) == 120.0
    assert not polls.waits("source .env && cast rpc eth_getTransactionReceipt 0x91d4")
    turns = [
        {**t, "args": {"command": "cd ~/infra && . ./env.sh && " + t["args"]["command"]}} if "args" in t else t
        for t in _dns_waits("")
    ]
    assert play([*turns[:-1], _dig(1200, f"{_SOA}; {_A}", f"{_SERIAL}\n203.0.113.7")])[0].fired_at == 5


def _reindex(asked: list[str]) -> list[dict]:
    """A background reindex read back after each sleep, its output silent since batch 61/118, the person speaking
    between the looks."""
    stalled = "<status>running</status>\n\n<stdout>\n</stdout>"
    turns = [
        {
            "tool": "Bash",
            "args": {"command": "uv run kb reindex --all", "run_in_background": True},
            "output": "Command running in background with ID: bash_1",
            "exit_code": 0,
        },
        {"tool": "BashOutput", "args": {"bash_id": "bash_1"}, "output": "embedding: 52%| 61/118 [03:01<02:50]"},
    ]
    for k, words in enumerate([*asked, None, None]):
        turns += [{"tool": "Bash", "args": {"command": f"sleep {90 + 30 * k}"}, "output": "", "exit_code": 0}]
        turns += [{"tool": "BashOutput", "args": {"bash_id": "bash_1"}, "output": stalled}]
        if words:
            turns.append({"tool": "user_prompt", "actor": "person", "output": words})
    return turns


def test_looks_that_bring_nothing_while_the_person_asks_whether_it_is_stuck_whisper():
    """The person asking twice how it stands ("is it stuck??") while the agent's looks at a silent job bring nothing
    new: they see the stall too, long before ten looks or half an hour of sleeps."""
    turns = _reindex(["how long", "is it stuck??"])
    verdict, steps = play(turns)
    assert verdict.fired_at is not None and steps[0][2][0].kind == "stalled_poll"
    assert "while the person asked 2 times how it stands" in steps[0][2][0].evidence
    seen = turns[: verdict.fired_at + 1]
    assert "asked" in check_claims(play(seen)[0], seen)
    assert play(_reindex(["how long", "also add the arxiv folder to the index next"]))[0].fired_at is None


def test_a_look_after_a_wait_that_shows_the_change_is_no_stall():
    assert play(_dns_waits("198.51.100.23"))[0].fired_at is None  # the new address: the change arrived


def _batch(k: int, reason: str) -> list[dict]:
    """An AWS Batch job submitted again, then its state read back after a wait: FAILED, and why."""
    job = f"a81f2c44-6e0b-4d7a-9c35-1f8e0b2d6a9{k}"
    described = (
        f'{{\n    "jobName": "attribution-2024-04-r{k}",\n    "jobId": "{job}",\n    "status": "FAILED",\n'
        f'    "statusReason": "{reason}",\n    "stoppedAt": 171464331{k}060\n}}'
    )
    submit = (
        f"aws batch submit-job --job-name attribution-2024-04-r{k} --job-queue q --job-definition attribution:{14 + k}"
    )
    return [
        {"tool": "Bash", "args": {"command": submit}, "output": job, "exit_code": 0},
        {
            "tool": "Bash",
            "args": {"command": f"sleep 590; aws batch describe-jobs --jobs {job}"},
            "output": described,
            "exit_code": 0,
        },
    ]


@pytest.mark.parametrize(
    ("reasons", "fires"),
    [
        (["OutOfMemoryError: Container killed due to memory usage"] * 3, True),
        (
            [
                "OutOfMemoryError: Container killed due to memory usage",
                "Essential container in task exited: ModuleNotFoundError: No module named 'pyarrow'",
                "CannotPullContainerError: pull image manifest has been retried 5 time(s)",
            ],
            False,
        ),
    ],
    ids=["the same reason each time", "a new reason each time"],
)
def test_a_job_resubmitted_and_failing_for_the_same_reason_each_time_is_a_restart_loop(reasons, fires):
    turns: list[dict] = [{"tool": "user_prompt", "actor": "person", "output": "rerun the april attribution job"}]
    for k, reason in enumerate(reasons):
        turns += _batch(k, reason)
    verdict, steps = play(turns)
    if not fires:
        assert verdict.fired_at is None, verdict.signals
        return
    assert verdict.fired_at == 6 and steps[0][2][0].kind == "restart_loop"
    assert "OutOfMemoryError" in steps[0][2][0].evidence
    assert "restarts" in check_claims(verdict, turns)


@pytest.mark.parametrize(
    ("command", "output", "failure"),
    [
        (
            "aws batch describe-jobs --jobs a81f",
            '{\n  "status": "FAILED",\n  "statusReason": "OutOfMemoryError: Container killed due to memory usage"\n}',
            "the job failed: OutOfMemoryError: Container killed due to memory usage",
        ),
        (
            "gcloud ai custom-jobs describe 6218 --region=us-central1",
            "state: JOB_STATE_FAILED\nerror:\n  message: 'The replica workerpool0-0 exited with a non-zero status.'\n"
            "google.api_core.exceptions.Forbidden: 403 GET https://storage.googleapis.com/b/acme-ml-models/o/x",
            "the job failed: google.api_core.exceptions.Forbidden: 403 GET https://storage.googleapis.com/b/acme-ml-models/o/x",
        ),
        (
            "aws stepfunctions describe-execution --execution-arn x --query [status,error,cause] --output text",
            "FAILED\tGlue.EntityNotFoundException\tEntity Not Found (Service: AWSGlue)\nStartTransform",
            "the job failed: Glue.EntityNotFoundException Entity Not Found (Service: AWSGlue)",
        ),
        ("aws batch describe-jobs --jobs a81f", '{\n  "status": "RUNNING"\n}', None),
        ("aws stepfunctions describe-execution --execution-arn x", "SUCCEEDED\t2024-11-29T08:31:05", None),
        (
            "cat docs/runbook.md",
            "status: FAILED\nreason: the job can fail when the quota is low",
            None,
        ),  # no status read
    ],
)
def test_a_job_run_elsewhere_read_back_failed_is_known_by_its_reason(command, output, failure):
    assert readback.failed_job(command, output) == failure


def test_long_waits_sent_to_the_background_and_read_back_moving_are_patience():
    """A wait sent to the background says only that it started; what it read comes back through ``BashOutput`` and
    moves (a simulation's time): no run of looks, however long the sleeps."""
    turns: list[dict] = [{"tool": "user_prompt", "actor": "person", "output": "watch my LES job till it finishes"}]
    for k, hours in enumerate((4, 6, 10)):
        command = f"sleep {hours * 3600} && tail -n 3 /scratch/les/log.pimpleFoam"
        started = f"Command running in background with ID: bash_{k}"
        turns.append({"tool": "Bash", "args": {"command": command, "run_in_background": True}, "output": started})
        done = f"<status>completed</status>\n\n<exit_code>0</exit_code>\n\n<stdout>\nTime = 0.3{k}1\n</stdout>"
        turns.append({"tool": "BashOutput", "args": {"bash_id": f"bash_{k}"}, "output": done})
    assert play(turns)[0].fired_at is None


def test_short_waits_between_looks_that_show_nothing_new_are_patience():
    turns = _dns_waits("203.0.113.7")
    for t in turns[3:]:
        t["args"]["command"] = t["args"]["command"].replace("sleep 900", "sleep 60").replace("sleep 1200", "sleep 90")
    assert play(turns)[0].fired_at is None  # 3.5 minutes of waiting: too soon to say it will not come


POLLS = {  # a status read again and again while the job runs, {k} what moves from one read to the next
    "gh": (
        "gh run view 9123 --json status,conclusion",
        '{{"conclusion":"","status":"in_progress"}}',
    ),
    "gh-list": (
        "sleep 30 && gh run list --limit 1",
        (
            "STATUS  TITLE        WORKFLOW  BRANCH  EVENT  ID          ELAPSED  AGE\n"
            "*       fix: retry   CI        main    push   912345678  {k}m2s    about {k} minutes ago"
        ),
    ),
    "cfn": (
        "aws cloudformation describe-stacks --stack-name shop --query 'Stacks[0].StackStatus' --output text",
        "UPDATE_IN_PROGRESS",
    ),
    "gcloud": (
        "sleep 20; gcloud builds describe 4f1c --format='value(status)'",
        "WORKING",
    ),
    "compose": (
        "sleep 10 && docker compose ps db",
        (
            "NAME      IMAGE         COMMAND                  SERVICE   CREATED         STATU"
            "S                            PORTS\n"
            'shop-db-1 postgres:16   "docker-entrypoint.s…"   db        {k} minutes ago   Up '
            "{k} minutes (health: starting)   5432/tcp"
        ),
    ),
    "k8s": (
        "sleep 15 && kubectl get pods -l app=api",
        (
            "NAME                   READY   STATUS              RESTARTS   AGE\n"
            "api-7b8d44c9f6-h5njd   0/1     ContainerCreating   0          {k}m1{k}s"
        ),
    ),
    "argo": (
        "sleep 20 && argocd app get shop | grep -E 'Sync Status|Health Status'",
        ("Sync Status:        Synced to main (4f1c2ab)\nHealth Status:      Progressing"),
    ),
    "vercel": (
        "sleep 15 && vercel inspect shop-abc123.vercel.app | grep -i state",
        "    state      BUILDING",
    ),
    "fly": (
        "sleep 10; fly status",
        (
            "Machines\n"
            "PROCESS ID              VERSION REGION  STATE   ROLE    CHECKS                  "
            "LAST UPDATED\n"
            "app     e2860ea{k}a       42      ams     started         0/1 passing, 1 critica"
            "l  2024-05-21T09:1{k}:03Z"
        ),
    ),
}


@pytest.mark.parametrize("tool", sorted(POLLS))
def test_a_job_polled_through_any_tool_while_it_runs_is_a_stalled_poll_not_identical_calls(tool):
    """CI runs, CloudFormation stacks, Cloud Build, Compose health checks, pods, Argo CD, Vercel, Fly: a status that
    says the job still runs (or a read after a sleep) is waiting; ten of them with nothing new whisper wait advice."""
    t = MonitorSettings().thresholds
    command, output = POLLS[tool]
    turns = [
        {"tool": "Bash", "args": {"command": command}, "output": output.format(k=k), "exit_code": 0}
        for k in range(t.poll_whisper)
    ]
    verdict, steps = play(turns)
    assert verdict.fired_at == t.poll_whisper - 1 and steps[0][2][0].kind == "stalled_poll", verdict.signals


def test_polls_whose_output_moves_are_quiet():
    turns = polls(30, 3)
    for k, t in enumerate(turns[1:]):
        t["output"] = t["output"].replace("running</status>", f"running</status>\n<stdout>epoch {k // 3}</stdout>")
    assert play(turns)[0].fired_at is None


_GO_FAILED = {
    "client": "--- FAIL: TestClient_GetOrder (0.00s)\nFAIL\nFAIL\tgithub.com/t/orders/pkg/client\t0.019s\n"
    "ok  \tgithub.com/t/orders/internal/store\t0.413s",
    "spec": "--- FAIL: TestOpenAPIConformance (0.01s)\nFAIL\nFAIL\tgithub.com/t/orders/internal/contract\t0.061s\n"
    "ok  \tgithub.com/t/orders/internal/store\t0.416s\nok  \tgithub.com/t/orders/pkg/client\t0.020s",
}


def _flip(old: str, new: str, fails: str) -> dict:
    """Codex: a tag flipped by ``sed -i`` and the tests run in one command; no exit code, Go's per-package lines."""
    command = f'sed -i \'s/`json:"{old}"`/`json:"{new}"`/\' internal/api/dto.go && go test ./... 2>&1 | tail -12'
    return {"tool": "Bash", "args": {"command": command}, "output": _GO_FAILED[fails]}


def test_a_tag_flipped_back_and_forth_by_sed_is_going_back_and_forth_and_each_run_fails():
    """Each run fails (a package's FAIL line, though another package's ok ends the output) and the second flip back
    is the oscillation: the edit is a command's own ``sed -i``, undone by the swapped substitution."""
    turns = [
        {"tool": "user_prompt", "actor": "person", "output": "add created_at to GET /v1/orders/{id}, tests green"},
        _flip("created_at", "createdAt", "spec"),
        _flip("createdAt", "created_at", "client"),
    ]
    assert [f.verdict for f in window_of(turns)][1:] == ["fail", "fail"]
    assert play(turns)[0].fired_at is None  # one flip back: a correction
    turns.append(_flip("created_at", "createdAt", "spec"))
    verdict, steps = play(turns)
    assert verdict.fired_at == 3
    signals = {s.kind: s for s in steps[0][2]}  # the failures come back in a cycle too
    assert "internal/api/dto.go was put back" in signals["file_oscillation"].evidence
    assert "reverted" in check_claims(verdict, turns)


def test_a_command_holding_backticks_is_quoted_whole_in_what_the_person_reads():
    assert fp.code("go test ./...") == "`go test ./...`"
    assert fp.code("sed -i 's/`a`/`b`/' x.go") == "`` sed -i 's/`a`/`b`/' x.go ``"  # CommonMark: a longer fence
    assert fp.code("echo ``x``") == "``` echo ``x`` ```"
    turns = [_flip("created_at", "createdAt", "spec"), _flip("createdAt", "created_at", "client")]
    turns += [_flip("created_at", "createdAt", "spec")]
    verdict, _ = play(turns)
    assert "`` Bash sed -i 's/`json:" in verdict.diagnosis and "varied" in check_claims(verdict, turns)


def replace(old: str, new: str) -> dict:
    return {"tool": "Edit", "args": {"file_path": "src/git.ts", "old_string": old, "new_string": new}, "output": "ok"}


def test_oscillation_fires_on_the_second_revert_not_the_first():
    run = npm_test("ok", 0)
    turns = [replace("export class Git", "class Git"), run, replace("class Git", "export class Git"), run]
    assert play(turns)[0].fired_at is None  # one revert: a correction
    turns += [replace("export class Git", "class Git")]
    verdict, steps = play(turns)
    assert verdict.fired_at == len(turns) - 1 and steps[0][2][0].kind == "file_oscillation"
    assert "reverted" in check_claims(verdict, turns)
    assert "undoing and redoing" in verdict.whisper


def _cgo(old: str, new: str) -> dict:
    """A setting flipped by ``sed -i`` alone (no output: a write by the shell, whatever runs after it)."""
    command = f"sed -i 's/CGO_ENABLED={old}/CGO_ENABLED={new}/' .goreleaser.yaml"
    return {"tool": "Bash", "args": {"command": command}, "output": ""}


def test_a_setting_flipped_by_sed_alone_between_builds_is_going_back_and_forth():
    build = {"tool": "Bash", "args": {"command": "goreleaser release --snapshot --clean"}}
    cross = {**build, "output": "gcc: error: unrecognized command-line option '-arch'"}
    stub = {**build, "output": "Error: open store: Binary was compiled with 'CGO_ENABLED=0', this is a stub"}
    turns = [_cgo("1", "0"), stub, _cgo("0", "1"), cross, _cgo("1", "0")]
    verdict, steps = play(turns)
    assert verdict.fired_at == 4 and "file_oscillation" in {s.kind for s in steps[0][2]}
    assert ".goreleaser.yaml was put back" in verdict.diagnosis and "reverted" in check_claims(verdict, turns)


def test_an_edit_put_back_once_to_compare_then_applied_again_is_no_oscillation():
    """The agent takes its change out to see how its script fares without it (the run prints what it never had), then
    puts it back: a comparison. Taking it out once more is going back and forth."""

    def show(output: str) -> dict:  # a script of the agent's that exits 1 when the method is off: no error line
        return {"tool": "Bash", "args": {"command": "python show_method.py"}, "output": output, "exit_code": 1}

    with_it = show("unicode method: <class 'str'> POST\nbytes method: <class 'str'> POST\nheaders: str\nbody: 12 bytes")
    without = show("unicode method: <class 'str'> POST\nbytes method: <class 'bytes'> b'POST'\nheaders: bytes\nbody: 0")
    turns = [replace("upper()", "native(upper())"), with_it, replace("native(upper())", "upper()"), without]
    turns += [replace("upper()", "native(upper())")]
    assert "file_oscillation" not in {s.kind for _, _, signals in play(turns)[1] for s in signals}
    turns += [with_it, replace("native(upper())", "upper()")]
    assert play(turns)[0].fired_at == len(turns) - 1
    passed = {**with_it, "output": "unicode method: POST\nbytes method: POST\nall good", "exit_code": 0}
    back = [replace("upper()", "native(upper())"), passed, replace("native(upper())", "upper()"), without]
    back += [replace("upper()", "native(upper())")]  # the check passed with it: taking it out was no comparison
    assert play(back)[0].fired_at == len(back) - 1


def patch(old: list[str], new: list[str]) -> dict:
    """Codex's ``apply_patch``, its patch in ``command`` as its hooks send it, one hunk per pin changed."""
    hunks = "".join(f"@@\n-{a}\n+{b}\n" for a, b in zip(old, new, strict=True))
    text = f"*** Begin Patch\n*** Update File: requirements.txt\n{hunks}*** End Patch"
    return {
        "tool": "apply_patch",
        "args": {"command": text},
        "output": "Success. Updated the following files:\nM requirements.txt",
    }


def test_a_codex_patch_that_puts_the_pins_back_undoes_its_own_edit():
    """Pins flipped between two sets by ``apply_patch`` (the same two resolver conflicts after each): the patch that
    swaps a hunk's sides back undoes the earlier patch, as a file tool's edit does."""
    older, newer = ["pydantic==1.10.13", "langchain==0.2.16"], ["pydantic==2.9.2", "langchain==0.3.7"]
    install = {
        "tool": "Bash",
        "args": {"command": "pip install -r requirements.txt"},
        "output": "ERROR: Cannot install",
    }
    turns = [patch(older, newer), install, patch(newer, older), install, patch(older, newer), install]
    window = window_of(turns)
    assert window[0].edit is not None and window[2].edit == window[0].undo and window[4].edit == window[0].edit
    verdict, steps = play(turns)
    assert any(s.kind == "file_oscillation" for s in steps[0][2]) and verdict.fired_at == 4
    assert shellwork.edit_pair({"command": "cat <<'EOF' > notes.md\n- one\n+ two\nEOF"}) is None  # a shell's, no patch


def person(text: str) -> dict:
    return {"tool": "user_prompt", "actor": "person", "output": text}


def test_a_person_saying_the_agent_keeps_reading_the_same_files_is_heard_though_it_edited_nothing():
    """Reads and searches only, then "you've opened TerrainMaterial.ts three times now": the looking is the loop the
    person names, so it counts as attempts for a complaint of going in circles (never for a plain report)."""
    read = {
        "tool": "Bash",
        "args": {"command": "nl -ba src/world/TerrainMaterial.ts"},
        "output": "1\timport * as THREE",
    }
    search = {"tool": "Bash", "args": {"command": "rg -n uFogDensity src"}, "output": "src/a.ts:10: uFogDensity"}
    turns = [person("the fog slider does nothing, fix it"), read, search, read, search]
    quiet = [*turns, person("the slider still does nothing")]  # a plain report after looks only: not yet
    assert play(quiet)[0].fired_at is None
    turns += [person("you've opened TerrainMaterial.ts three times now. what's the bug? just fix it")]
    verdict, steps = play(turns)
    assert verdict.fired_at == 5 and steps[0][2][0].kind == "person_reports"
    assert "person reports" in check_claims(verdict, turns)


def test_a_person_repeating_the_same_complaint_is_a_failed_check():
    complaints = ["the export is still truncated", "still truncated after your change", "doesn't work, still truncated"]
    turns = [t for k, c in enumerate(complaints) for t in (write("src/export.py", k), person(c))]
    window = window_of(turns)
    assert [f.verdict for f in window if f.actor == "person"] == ["fail"] * 3 and not any(f.prog for f in window)
    assert [f.reports for f in window if f.actor == "person"] == [1, 1, 1]
    verdict, steps = play(turns)
    # two reports with an attempt between them fire, quoting the person
    assert verdict.fired_at == 3 and steps[0][2][0].kind == "person_reports"
    assert "“the export is still truncated”; “still truncated after your change”" in steps[0][2][0].evidence
    assert "person reports" in check_claims(verdict, turns)


@pytest.mark.parametrize(
    "text",
    [
        "make sure there are no build errors",
        "why does the build fail?",
        "We are still testing the BFF layer with the collections",
        "Please add a test for the export",
        "works now, thanks",
    ],
)
def test_a_request_a_question_or_an_instruction_naming_a_failure_is_not_a_report(text):
    turns = [t for k in range(3) for t in (write("src/export.py", k), person(text))]
    assert not any(f.reports for f in window_of(turns))
    assert play(turns)[0].fired_at is None


def test_a_harness_repeating_the_persons_words_counts_them_once():
    said = "still truncated, the export stops at 1000 rows"
    turns = [
        write("src/export.py", 0),
        person(said),
        {"tool": "replace_in_file", "args": {"path": "src/export.py", "diff": "-a\n+b"},
         "output": f"The user denied this operation.\n<feedback>{said}</feedback>"},
    ]  # fmt: skip
    window = window_of(turns)
    assert window[1].reports == 1 and window[2].reports == 0


def test_going_in_circles_after_an_attempt_fires_at_once_and_a_first_report_alone_does_not():
    first = [write("src/a.py", 0), person("the page is blank, TypeError: x is undefined")]
    assert play(first)[0].fired_at is None  # a new symptom is direction, not a failed check that repeats
    verdict, steps = play(first + [write("src/a.py", 1), person("we are going in circles here")])
    assert verdict.fired_at == 3 and steps[0][2][0].kind == "person_reports"


def test_a_person_pasting_the_agents_error_counts_with_the_agents_checks():
    err = "ModuleNotFoundError: No module named 'yaml'"
    turns = [
        write("app.py", 0),
        {"tool": "Bash", "args": {"command": "pytest -q"}, "output": f"E   {err}", "exit_code": 1},
        write("app.py", 1),
        person(f"same error:\n{err}"),
        write("app.py", 2),
        {"tool": "Bash", "args": {"command": "pytest -q"}, "output": f"E   {err}", "exit_code": 1},
    ]
    verdict, steps = play(turns)
    assert verdict.fired_at == 5 and steps[0][2][0].kind == "same_failure"
    assert "Missing module yaml" in verdict.diagnosis


def test_a_code_frame_under_an_error_is_source_quoted_not_the_error():
    """Babel, Next.js and rustc quote the source under an error (``> 121 |   setTimeout(...)``): a line there that
    looks like an error (``setTimeout``, ``// error handling``) is code; the failure is the message above it."""
    frame = "\n".join(
        [
            "Runtime TypeError",
            "Cannot read properties of undefined (reading 'length')",
            "  120 |   // error handling is below",
            "> 121 |     setTimeout(() => fetchProjects(), 100)",
            "      |     ^",
            "  122 |   }",
        ]
    )
    turns = [{"tool": "Bash", "args": {"command": "npm run build"}, "output": frame, "exit_code": 1}]
    assert window_of(turns)[0].ftext == "Cannot read properties of undefined (reading 'length')"


def test_npm_s_own_lines_around_a_failure_are_never_its_cause():
    """npm 10 says ``npm error`` where npm 6 said ``npm ERR!``: its log path, code and command lines wrap every
    failure, so two installs failing for other reasons are two failures."""

    def install(cause: str, stamp: str) -> dict:
        log = f"npm error A complete log of this run can be found in: /h/.npm/_logs/{stamp}-debug-0.log"
        out = f"npm error {cause}\n{log}"
        return {"tool": "Bash", "args": {"command": "npm install"}, "output": out, "exit_code": 1}

    window = window_of(
        [install("Cannot read properties of null (reading 'matches')", "07_04"), install("ERESOLVE", "07_05")]
    )
    assert [f.etext for f in window] == [
        "npm error Cannot read properties of null (reading 'matches')",
        "npm error ERESOLVE",
    ]


def test_a_coloured_failure_reads_as_the_same_failure_in_plain_words():
    """Tools colour their errors for a terminal (terraform, cargo, jest): the colour codes are no words, so a coloured
    ``Error:`` is read, named and compared as the plain one, and the diagnosis carries none of them."""
    red = (
        "\x1b[31m\u2502\x1b[0m \x1b[0m\x1b[1m\x1b[31mError: \x1b[0m\x1b[0m\x1b[1mNo value for required variable\x1b[0m"
    )
    plan = {"tool": "Bash", "args": {"command": "make check"}, "output": red, "exit_code": 1}
    turns = [plan, write("vars.tf", 0), plan, write("vars.tf", 1), plan]
    verdict, _ = play(turns)
    assert verdict.signals[0].kind == "same_failure" and "Error: No value for required variable" in verdict.diagnosis
    assert "\x1b" not in verdict.diagnosis and "[31m" not in verdict.diagnosis


def test_a_persons_new_request_is_not_a_complaint():
    asks = ["now add a --json flag", "and a --quiet flag too", "also document both in the README"]
    turns = [t for k, a in enumerate(asks) for t in (person(a), write("cli.py", k), npm_test("ok", 0))]
    assert play(turns)[0].fired_at is None and not any(f.verdict == "fail" for f in window_of(turns))


def test_lost_content_is_never_the_same():
    lost = {"tool": "edit_file", "args": {"diff": ""}, "output": "[no content rendered by SpecStory]"}
    empty_read = {"tool": "read_file", "args": {"target_file": "src/a.ts"}, "output": ""}
    for turn in (lost, empty_read):
        assert play([turn] * 8)[0].fired_at is None
        assert all(f.unknown for f in window_of([turn] * 3))


def test_a_one_line_failure_is_named_by_its_line_and_a_missing_module_is_named():
    turns = [
        {
            "tool": "Bash",
            "args": {"command": "python -m mypy src"},
            "output": "/usr/bin/python: No module named mypy",
            "exit_code": 1,
        }
    ] * 5
    window = window_of(turns)
    assert "No module named mypy" in window[0].brief and "(no output)" not in window[0].brief
    assert window[0].missing == "module mypy"
    verdict, _ = play(turns)
    assert "Missing module mypy" in verdict.diagnosis and "missing" in check_claims(verdict, turns)


def test_old_monitor_json_still_loads_and_the_state_stays_bounded():
    old = {
        "turns": 3,
        "window": [
            {"i": 2, "tool": "bash", "kind": "write", "sig": "a", "asig": "b", "out": "c", "prog": "new file content"}
        ],
        "level": 1,
        "whispers": [{"turn": 2, "level": 1, "text": "x", "signal": "identical_calls"}],
        "last_signals": [{"kind": "repeated_error", "turns": [1, 2], "evidence": "e"}],
    }
    state = MonitorState.model_validate(old)
    assert state.window[0].verdict is None and state.window[0].polls == 0 and state.last_signals[0].escalate
    settings = MonitorSettings()
    for turn in polls(300, 3)[1:] + edit_thrash("npm") * 40:
        state, _, _ = observe(state, Turn.model_validate(turn), settings)
    assert len(state.window) <= 50 and len(state.model_dump_json()) < 120_000


def test_a_person_turn_is_recorded_with_its_actor_and_counts_as_a_failed_check(ws_dir):
    from strict_loop import Workspace

    ws = Workspace(ws_dir)
    ws.init_state(task_id="t", goal="g", global_stop_condition="c")
    for k in range(3):
        ws.append_event(task_id="t", kind="tool_call", message="edit", data=write("src/export.py", k))
        ws.append_event(task_id="t", kind="tool_call", message="person", data=person("the export is still truncated"))
    import json

    lines = ws.task_paths("t").events.read_text().splitlines()
    recorded = [json.loads(line) for line in lines if '"tool_call"' in line]
    assert recorded[-1]["data"]["actor"] == "person" and recorded[-2]["data"].get("actor", "agent") == "agent"
    v = ws.detect_spiral(task_id="t")
    assert v.detected and v.signals[0].kind == "person_reports" and "the export is still truncated" in v.diagnosis


def _sh(command: str, output: str, code: int) -> dict:
    return {"tool": "Bash", "args": {"command": command}, "output": output, "exit_code": code}


def test_zsh_s_errors_from_the_wrong_folder_are_one_folder_missing_again_whatever_the_command():
    """macOS's zsh says ``cd: no such file or directory: docs/puml`` (lower case) and, for a glob that matched
    nothing, ``no matches found: docs/puml/*.png``: from the wrong folder these are one folder missing, again."""
    turns = [
        _sh("cd docs/puml && ls -la *.png", "(eval):cd:1: no such file or directory: docs/puml", 1),
        _sh("ls -la docs/puml/*.png", "(eval):1: no matches found: docs/puml/*.png", 1),
        _sh("find . -name '*.png' -newer x.puml", "./statusline-architecture.png", 0),
        _sh("ls -la docs/puml/", "ls: docs/puml/: No such file or directory", 1),
    ]
    assert [f.missing for f in window_of(turns)] == ["file docs/puml", "file docs/puml/*.png", None, "file docs/puml/"]
    verdict, _ = play(turns)
    assert verdict.fired_at == 3 and "file docs/puml was missing 3 times" in verdict.diagnosis
    assert "(pwd, which, ls)" in verdict.whisper and "missing again" in check_claims(verdict, turns)
    assert play([turns[2]] * 2 + [turns[0], turns[2], turns[3]])[0].fired_at is None  # twice is not again and again


def test_a_header_with_digits_in_its_name_missing_through_cleans_and_reinstalls_is_missing_again():
    """A compiler's ``fatal error: Adafruit_BME280.h: No such file or directory`` after a package install and a clean
    rebuild: its fingerprint folds the digits, its name keeps them, and it is the same file missing each time."""
    build = "cd fw && pio run -e esp32dev 2>&1"
    missing = (
        "Compiling .pio/build/esp32dev/src/sensors.cpp.o\nsrc/sensors.cpp:3:10: fatal error: Adafruit_BME280.h: No "
        "such file or directory\n\n*** [.pio/build/esp32dev/src/sensors.cpp.o] Error 1\n"
        "========================= [FAILED] Took 3.{} seconds ========================="
    )
    turns = [
        _sh(build, missing.format(41), 1),
        _sh("cd fw && pio pkg install", "Library Manager: Installing adafruit/Adafruit BME280 Library @ ^2.2.4", 0),
        _sh(build, missing.format(12), 1),
        _sh("cd fw && pio run -t clean && rm -rf .pio/libdeps && pio run -e esp32dev 2>&1", missing.format(87), 1),
    ]
    assert [f.missing for f in window_of(turns)] == ["file Adafruit_BME280.h", None] + ["file Adafruit_BME280.h"] * 2
    verdict, _ = play(turns)
    assert verdict.fired_at == 3 and "file Adafruit_BME280.h was missing 3 times" in verdict.diagnosis
    assert "missing again" in check_claims(verdict, turns)


CMAKE_NO_CONFIG = "\n".join(
    [
        "-- Found Threads: TRUE",
        "CMake Error at CMakeLists.txt:14 (find_package):",
        '  Could not find a package configuration file provided by "Protobuf" with any',
        "  of the following names:",
        "",
        "    ProtobufConfig.cmake",
        "    protobuf-config.cmake",
        "",
        '  Add the installation prefix of "Protobuf" to CMAKE_PREFIX_PATH or set',
        '  "Protobuf_DIR" to a directory containing one of the above files.',
        "",
        "",
        "-- Configuring incomplete, errors occurred!",
    ]
)


def _vitest(failing: str, count: int) -> str:
    return (
        f" \u00d7 {failing}  (12 tests | {count} failed) 21ms\n \u2713 src/utils/money.test.ts  (9 tests) 6ms\n\n"
        " Test Files  2 failed | 10 passed (12)\n"
        f"      Tests  {count} failed | {124 - count} passed (124)\n   Duration  3.84s (transform 412ms, setup 0ms)"
    )


def test_vitest_tallies_are_no_cause_so_other_failures_under_them_are_no_cycle():
    """Vitest closes every failing run with ``Tests  N failed | M passed``: with its count masked, it read as one
    error coming back between other failures (an error cycle after three runs of an upgrade making progress)."""
    turns = [
        _sh("npx vitest run 2>&1 | tail -8", _vitest("src/utils/scadenze.test.ts", 5), 1),
        _sh(
            "npx vitest run src/utils/date.test.ts",
            "SyntaxError: The requested module 'date-fns/locale' does not provide an export named 'default'",
            1,
        ),
        _sh(
            "sed -i 's#locale/it#locale#' src/utils/date.ts && npx vitest run 2>&1 | tail -8",
            _vitest("src/components/Cal.test.tsx", 14),
            1,
        ),
    ]
    window = window_of(turns)
    assert not any("Tests" in (f.etext or "") for f in window), [f.etext for f in window]
    assert play(turns)[0].fired_at is None


def test_a_package_a_configure_cannot_find_through_varied_prefixes_is_missing_again():
    """CMake's find_package failing the same way under another prefix path, another ``Protobuf_DIR``, another
    generator: the package is the error (not CMake's closing "Configuring incomplete"), and it is missing again."""
    configure = "rm -rf build && cmake -S . -B build -DCMAKE_BUILD_TYPE=Release"
    turns = [
        _sh(f"{configure} 2>&1 | tail -22", CMAKE_NO_CONFIG, 1),
        _sh("sudo apt-get install -y libprotobuf-dev", "libprotobuf-dev is already the newest version.", 0),
        _sh(f"{configure} -DCMAKE_PREFIX_PATH=/usr/lib/x86_64-linux-gnu/cmake 2>&1 | tail -22", CMAKE_NO_CONFIG, 1),
        _sh(f"{configure} -DProtobuf_DIR=/usr/lib/x86_64-linux-gnu/cmake/protobuf 2>&1 | tail -22", CMAKE_NO_CONFIG, 1),
    ]
    window = window_of(turns)
    assert window[0].etext.startswith("Could not find a package configuration file provided by")
    assert [f.missing for f in window] == ["package Protobuf", None, "package Protobuf", "package Protobuf"]
    verdict, _ = play(turns)
    assert verdict.fired_at == 3 and "package Protobuf was missing 3 times" in verdict.diagnosis
    assert "missing again" in check_claims(verdict, turns)


@pytest.mark.parametrize(
    ("said", "named"),
    [
        ("Package 'libfoo', required by 'virtual:world', not found", "package libfoo"),  # pkg-config
        ("No package 'gtk+-3.0' found", "package gtk+-3.0"),
        ("E: Unable to locate package libssl1.1", "package libssl1.1"),  # apt
        ("ERROR: No matching distribution found for torch==2.9.0", "package torch"),  # pip
        ("error: no matching package named `serde_jsn` found", "package serde_jsn"),  # cargo
        ("no required module provides package github.com/acme/x/pb; to add it:", "package github.com/acme/x/pb"),
        ("libfoo-dev is already the newest version (1.2-3).", None),
        ("Package foo is already the newest version", None),
    ],
)
def test_a_package_not_found_is_named_as_its_toolchain_says_it(said, named):
    assert missing.missing(said) == named


@pytest.mark.parametrize(
    ("line", "named"),
    [
        ("panic: open data/in.csv: no such file or directory", "file data/in.csv"),  # Go, Rust: lower case
        ("stat /srv/app/x.db: no such file or directory", "file /srv/app/x.db"),
        ("cat: a.txt: No such file or directory", "file a.txt"),
        ("(eval):cd:1: no such file or directory: docs/puml", "file docs/puml"),  # zsh's cd
        ("(eval):1: no matches found: docs/puml/*.png", "file docs/puml/*.png"),  # zsh's glob
        ("ls: cannot access '/exports': No such file or directory", "file /exports"),  # GNU ls, the path quoted
        ("find: '/exports': No such file or directory", "file /exports"),
        ("stat: cannot statx '~/data/exports': No such file or directory", "file ~/data/exports"),
        ("tail: cannot open '/var/log/app/x.log' for reading: No such file or directory", "file /var/log/app/x.log"),
        ("no such file or directory (os error 2)", None),  # says nothing of which
    ],
)
def test_what_was_missing_is_read_from_each_runtimes_words(line, named):
    assert window_of([_sh("x", line, 1)])[0].missing == named


def test_late_words_count_for_the_newest_turn_only_and_only_when_they_talk_of_going_wrong():
    """``ladder.heard_late``: the words before a turn read after it was judged (Claude Code's batched transcript)."""
    from strict_loop.monitor.ladder import heard_late

    state = MonitorState()
    for turn in (_sh("ls", "a.txt", 0), _sh("cat a.txt", "x", 0)):
        state, _, _ = observe(state, Turn.model_validate(turn), MonitorSettings())
    circles = "Same error again, I keep going in circles."
    assert heard_late(state, 0, circles) is state  # no longer the newest turn: left as judged
    assert heard_late(state, 1, "Let me read the file.") is state  # nothing of going wrong
    heard = heard_late(state, 1, circles)
    assert heard.window[-1].talk and not state.window[-1].talk  # a new state; the judged one is not changed
    assert heard.window[:-1] == state.window[:-1] and heard.turns == state.turns


def _plan(directory: str) -> dict:
    """``terraform plan`` run from a folder that lacks the variable: no check, the same error every time."""
    err = '\u2502 Error: No value for required variable\n\u2502 The root module input variable "image" is not set'
    return {"tool": "Bash", "args": {"command": f"cd {directory} && terraform plan"}, "output": err, "exit_code": 1}


def test_a_command_failing_the_same_way_after_each_of_four_different_edits_is_the_same_failure():
    """No check (a plan, a deploy, a script) either: the same error line after each of several different edits, the
    command varied or not, says the edits do not reach the cause; one repeat more than a check needs."""
    tried = [_plan("infra"), write("infra/vars.tf", 0), _plan("infra"), write("infra/terraform.tfvars", 1)]
    tried += [_plan("./infra"), write("infra/auto.tfvars", 2)]
    three, _ = play([*tried, _plan("infra")][:5])
    assert three.fired_at is None  # three runs: ordinary debugging of a reproduction
    turns = [*tried, _plan("infra")]
    verdict, _ = play(turns)
    assert verdict.fired_at == 6 and verdict.signals[0].kind == "same_failure", verdict.signals
    assert "4 times (" in verdict.diagnosis and "No value for required variable" in verdict.diagnosis
    assert "3 edit(s) to infra/vars.tf, infra/terraform.tfvars, infra/auto.tfvars" in verdict.diagnosis
    assert "same failure" in check_claims(verdict, turns)
    passed = {**_plan("infra"), "output": "No changes.", "exit_code": 0}
    assert play([*tried[:4], passed, *tried[4:], _plan("infra")])[0].fired_at is None  # it succeeded between


def _status_fixes(k: int) -> list[dict]:
    return [write(f"src/status/line{k}.js", k), {**npm_test("ok", 0), "args": {"command": "node src/status/line.js"}}]


def test_a_hint_where_to_look_between_two_reports_does_not_start_a_new_task():
    """ "Use the code search - the statusbar is built in scripts/" between two "I still see the old badge on the
    statusbar" is direction on the same problem; a request about something else ends the run."""
    hint = "use the code search to find it. The statusbar is built from the scripts folder of the main repo"
    reports = [
        "I still see the old badge on the statusbar",
        "you still haven't managed to fix the statusbar: the badge is there",
    ]
    earlier = write("src/status/line.js", 9)  # the attempt the first report is about (a resumed session's state)
    turns = [earlier, person(reports[0]), *_status_fixes(0), person(hint), *_status_fixes(1), person(reports[1])]
    verdict, _ = play(turns)
    assert verdict.fired_at == len(turns) - 1 and verdict.signals[0].kind == "person_reports", verdict.signals
    assert "I still see the old badge on the statusbar" in verdict.diagnosis and "haven't managed" in verdict.diagnosis
    other = "now add a dark theme to the settings page"
    assert play([*turns[:4], person(other), *turns[5:]])[0].fired_at is None
    assert play(turns[1:])[0].fired_at is None  # said before any attempt, the first report is no repeat


def _compose_paste(cause: str) -> dict:
    log = [
        "docker compose up --build",
        " => [api 14/21] RUN npm run build",
        f"postgres-1  | psql:/docker-entrypoint-initdb.d/1-schema.sql:17: ERROR:  {cause}",
        "dependency failed to start: container shop-postgres-1 exited (3)",
    ]
    return person("\n".join(log))


def test_a_pasted_failure_is_read_by_its_cause_not_by_the_wrapper_line_every_paste_shows():
    """Compose ends every failed start with "dependency failed to start": the person pasting it after each fix
    reports the same failure only when the cause under it is the same."""
    changed = [_compose_paste('syntax error at or near "user"'), write("db/schema.sql", 0)]
    changed += [_compose_paste('relation "users" does not exist'), write("db/schema.sql", 1)]
    changed += [_compose_paste('column "nickname" of relation "users" does not exist')]
    assert play(changed)[0].fired_at is None
    assert [f.ftext for f in window_of(changed) if f.actor == "person"][-1].startswith("postgres-1 | psql")
    same = [_compose_paste('syntax error at or near "user"'), write("db/schema.sql", 0)]
    same += [_compose_paste('syntax error at or near "user"'), write("db/schema.sql", 1)]
    same += [_compose_paste('syntax error at or near "user"')]
    verdict, _ = play(same)
    assert verdict.fired_at is not None and verdict.signals[0].kind in ("person_reports", "same_failure")


def test_a_pasted_exception_is_its_cause_whatever_line_around_it_changes():
    """The same TypeError pasted after each deploy, under a log line with a new request id each time: the exception
    raised is the cause, never a wrapper around another (the request line is what changes)."""

    def paste(at: str, request: str) -> dict:
        trace = (
            "TypeError: Cannot read properties of undefined (reading 'map')\n    at buildWidgets (dashboard.js:47:31)"
        )
        return person(f"still happening:\n\n2024-06-03T{at}Z ERROR [dashboard] request {request} failed\n{trace}")

    turns = [paste("07:41:19.882", "a1c9f0"), write("src/routes/dashboard.ts", 0), paste("09:02:44.107", "7be24d")]
    window = window_of(turns)
    assert window[0].fsig == window[2].fsig and window[2].ftext.startswith("TypeError: Cannot read")


def _mocha(failing: int, title: str) -> str:
    summary = f"  {40 - failing} passing (95ms)\n  {failing} failing"
    return f'"""\n{summary}\n\n  1) {title}:\n     AssertionError: expected false'


def test_a_persons_paste_with_fewer_failures_is_progress_not_a_repeat():
    """The person pasting the suite's summary after each fix: fewer failing tests than before is the work moving, even
    in the words "still errors"; the same count of the same test again is a repeat."""
    fixes = [write("tests/unit/a.test.ts", k) for k in range(3)]
    falling = [person(f"still errors:\n{_mocha(3, 'HoldingService history')}"), fixes[0]]
    falling += [person(f"still errors:\n{_mocha(2, 'HoldingService history')}"), fixes[1]]
    falling += [person(f"still errors:\n{_mocha(1, 'HoldingService history')}")]
    assert play(falling)[0].fired_at is None
    assert [f.prog for f in window_of(falling) if f.actor == "person"][1:] == ["fewer failures"] * 2
    same = [person(f"still errors:\n{_mocha(3, 'HoldingService history')}"), fixes[0]]
    same += [person(f"still errors:\n{_mocha(3, 'HoldingService history')}"), fixes[1]]
    same += [person(f"still errors:\n{_mocha(3, 'HoldingService history')}")]
    verdict, _ = play(same)
    assert verdict.fired_at is not None and verdict.signals[0].kind in ("person_reports", "same_failure")


def test_feedback_a_harness_hands_back_with_fewer_failures_is_progress_too():
    """Cline puts the person's reply to a claimed completion in the tool's result: the same reading holds there."""

    def done(failing: int) -> dict:
        said = f"<feedback>\nstill errors:\n{_mocha(failing, 'HoldingService history')}\n</feedback>"
        return {"tool": "attempt_completion", "args": {"result": "All tests fixed."}, "output": said}

    def other_suite() -> dict:
        said = (
            f"<feedback>\nthe controller tests still have errors:\n{_mocha(4, 'CategoryController list')}\n</feedback>"
        )
        return {**done(0), "output": said}

    fixes = [write("tests/unit/a.test.ts", k) for k in range(3)]
    assert play([done(3), fixes[0], done(1), fixes[1], other_suite()])[0].fired_at is None  # counted from the progress
    assert play([done(3), fixes[0], done(3), fixes[1], done(3)])[0].fired_at is not None


def _shell(command: str, output: str = "added 120 packages", code: int = 0) -> dict:
    return {"tool": "Bash", "args": {"command": command}, "output": output, "exit_code": code}


def test_running_what_the_person_said_not_to_run_is_their_no_again():
    """ "Don't run npm install, we use pnpm": each run of it afterwards (its flags or folder varied) counts as the
    person's no said again; the second fires, naming what ran. A later request about something else leaves it standing;
    one that names it ("ok, run npm install now") lifts it."""
    told = person("don't run `npm install` here, we use pnpm")
    turns = [told, _shell("npm install"), write("package.json", 0), _shell("cd web && npm install --force")]
    verdict, _ = play(turns)
    assert verdict.fired_at == 3 and verdict.signals[0].kind == "person_reports", verdict.signals
    assert "ran `Bash cd web && npm install --force` after being told not to" in verdict.diagnosis
    assert "person reports" in check_claims(verdict, turns)
    standing = [told, person("now add a dark theme to the settings page"), *turns[1:]]
    assert play(standing)[0].fired_at == 4
    lifted = [told, person("ok, npm install is fine this once: run it and add the dark theme"), *turns[1:]]
    assert play(lifted)[0].fired_at is None
    assert play([person("use pnpm here"), *turns[1:]])[0].fired_at is None  # nothing was said not to run
    reads = [person("don't use sed -i on generated files"), _shell("sed -n '1,40p' gen.py"), write("a.py", 0)]
    assert play([*reads, _shell("sed -n '40,80p' gen.py")])[0].fired_at is None  # the ban named -i: reading is fine


def test_a_new_task_that_names_what_it_is_about_still_ends_the_run_of_reports():
    """A request bridges two reports only when it names what both are about; a new task named in the next report
    alone is new direction."""
    fixes = [write("src/form.tsx", k) for k in range(3)]
    turns = [person("the submit button still does nothing"), fixes[0], _shell("npm test", "ok")]
    turns += [person("Leave that for now. Add a logout link to the nav"), fixes[1], _shell("npm test", "ok")]
    turns += [person("the logout link is still missing from the nav")]
    assert play(turns)[0].fired_at is None


def test_a_reproduction_that_prints_something_new_each_run_is_being_worked_on():
    """The same error line after each edit, while each run prints new lines (what the agent's prints show): debugging,
    not a command failing the same way."""

    def repro(k: int) -> dict:
        seen = "\n".join(f"debug {k}.{n}: state {k * 10 + n}" for n in range(4))
        out = f"{seen}\nAssertionError: [1, 2] != [2, 1]"
        return {"tool": "Bash", "args": {"command": "python3 repro.py"}, "output": out, "exit_code": 1}

    turns = [t for k in range(5) for t in (repro(k), write("repro.py", k))][:-1]
    assert [f.prog for f in window_of(turns)][2::2] == ["new output"] * 4
    assert play(turns)[0].fired_at is None


def test_a_ban_said_beside_a_refusal_stands_like_one_said_in_a_message():
    refused = {
        "tool": "Bash",
        "args": {"command": "sudo apt install jq"},
        "output": "The user doesn't want to proceed with this tool use. The tool use was rejected. The user said:\n"
        "don't use sudo, install it in the venv",
        "error": True,
    }
    turns = [refused, write("setup.sh", 0), _shell("sudo apt-get install -y jq")]
    assert window_of(turns)[-1].defied == "sudo" and play(turns)[0].fired_at is None  # said no once so far
    turns += [write("setup.sh", 1), _shell("sudo pip install jq")]
    verdict, _ = play(turns)
    assert verdict.fired_at == 4 and "ran `Bash sudo pip install jq` after being told not to" in verdict.diagnosis


def test_a_persons_count_is_held_against_theirs_not_against_the_agents_check():
    turns = [_shell("npm test", "3 failed, 10 passed", 1), write("a.ts", 0)]
    turns += [person("still broken, the console shows 1 error")]
    assert window_of(turns)[-1].prog != "fewer failures"


def test_a_persons_still_fails_after_a_new_request_is_not_the_old_tasks_failure():
    """ "Still broken" in the person's own words takes the failure reported last, but only in the same task: after a new
    request it is that task's own, so the old failure's count does not go on."""
    login = [person("the login is still broken"), write("src/login.ts", 0), person("still broken")]
    newer = [person("Park that. Add a dark mode toggle to the settings page"), write("src/theme.ts", 0)]
    turns = [*login, write("src/login.ts", 1), *newer, person("the toggle still does nothing")]
    old, new = window_of(login)[-1], window_of(turns)[-1]
    assert new.fsig != old.fsig
    assert "same_failure" not in {s.kind for s in play(turns)[0].signals}


def test_a_variable_lost_between_shells_is_the_same_folder_missing_through_ls_find_and_ls_again():
    """``$DATA_ROOT`` set in one call and gone in the next: ``ls``, ``find`` and ``ls`` again all miss ``'/exports'``
    (GNU tools quote the path), one folder missing again whichever command looked."""
    turns = [
        _sh("ls -lt $DATA_ROOT/exports | head", "ls: cannot access '/exports': No such file or directory", 2),
        _sh("set -a && source .env && set +a", "", 0),
        _sh("ls -lt $DATA_ROOT/exports | grep acme", "ls: cannot access '/exports': No such file or directory", 1),
        _sh("export $(grep -v '^#' .env | xargs)", "", 0),
        _sh("find $DATA_ROOT/exports -name '*acme*'", "find: '/exports': No such file or directory", 1),
    ]
    verdict, _ = play(turns)
    assert verdict.fired_at == 4 and "file /exports was missing 3 times" in verdict.diagnosis
    assert "missing again" in check_claims(verdict, turns)


def _logs(name: str) -> dict:
    return _sh(
        f"docker logs --tail 200 {name} 2>&1 | tail -40", f"Error response from daemon: No such container: {name}", 1
    )


def test_guessing_a_name_the_same_step_refuses_each_time_is_one_error_repeated():
    """``docker logs api``, ``docker logs reports-api``, ``docker logs platform_api_1``...: each refused with the
    name it was given echoed back. The error is one (``No such container: <a>``) whatever name was tried, so four
    guesses fire; four containers whose logs came back (the names right) are no loop, nor is one refused name."""
    guesses = [_logs(n) for n in ("api", "reports-api", "platform_api_1", "platform-api-1")]
    listed = _sh("docker ps --format '{{.Names}}'", "stage2-api-1\nstage2-db-1", 0)
    verdict, _ = play([guesses[0], guesses[1], listed, guesses[2], guesses[3]])
    assert verdict.fired_at == 4 and verdict.signals[0].kind == "repeated_error"
    assert window_of(guesses)[-1].etpl == "error: Error response from daemon: No such container: <a>"
    found = [_sh(f"docker logs --tail 5 {n}", f"{n} | listening on :8080", 0) for n in ("api", "web", "db", "q")]
    assert play(found)[0].fired_at is None
    assert play([guesses[0], listed, found[0], found[1], found[2]])[0].fired_at is None


@pytest.mark.parametrize(
    ("fingerprint", "given", "template"),
    [
        ("error: No such container: platform_api_<n>", ["platform_api_1"], "error: No such container: <a>"),
        ("error: No such container: api", ["api"], "error: No such container: <a>"),
        ("error: rapid reload failed for api-gateway", ["api"], "error: rapid reload failed for api-gateway"),
        ("error: cannot open <q>", ["/tmp/x"], "error: cannot open <q>"),  # quoted: masked as before
        ("error: no such service: reports", [], "error: no such service: reports"),
    ],
)
def test_an_error_is_templated_without_the_words_its_command_was_given(fingerprint, given, template):
    """The name a command was given and its error echoes back is masked whole (with its digits folded as the
    fingerprint folds them), never inside another word: the template is the same whichever name was tried."""
    assert fp.error_template(fingerprint, given) == template


def _turbo(cause: str) -> str:
    """A failing `turbo run build`: the package's own error lines, then turbo's summary (the same every time)."""
    return (
        f"@nw/ui:build: {cause}\n@nw/ui:build: ERROR: command finished with error: command (/w/packages/ui) pnpm run "
        "build exited (1)\n\n Tasks:    0 successful, 1 total\nCached:    0 cached, 1 total\n  Time:    3.9s\n"
        "Failed:    @nw/ui#build"
    )


def test_turbos_summary_is_no_cause_so_other_failures_under_it_are_no_cycle():
    """Turbo closes every failing run with ``Failed:    @nw/ui#build``: read as the cause, two different failures
    under it (a module moved away, then another) and one between read as an error cycle while a package split moved
    on; the cause is the package's own error line."""
    turns = [
        _sh(
            "pnpm turbo run build", _turbo("src/Dialog.tsx(3,26): error TS2307: Cannot find module '../forms/Text'"), 1
        ),
        _sh(
            "pnpm turbo run build",
            "x Invalid package dependency graph: Cyclic dependency detected: @nw/forms, @nw/ui",
            1,
        ),
        _sh("pnpm turbo run build", _turbo("src/Text.tsx(3,30): error TS2307: Cannot find module './FormContext'"), 1),
    ]
    window = window_of(turns)
    assert "src/Dialog.tsx(3,26): error TS2307" in (window[0].etext or ""), [f.etext for f in window]
    assert not any("@nw/ui#build" in (f.etext or "") for f in window)
    assert play(turns)[0].fired_at is None


def _refund_run(flags: str, request: str) -> dict:
    """A Codex run (no exit code) of a test whose Stripe call fails with a request id drawn anew each time."""
    error = f"stripe._error.InvalidRequestError: Request req_{request}: No such payment_intent: 'pi_3OkDq2Ltx9AbCdEf0k'"
    output = f"F{' ' * 40}[100%]\nE   {error}\nFAILED tests/test_refunds.py::test_partial_refund - {error}\n1 failed"
    return {"tool": "Bash", "args": {"command": f".venv/bin/pytest tests/test_refunds.py {flags}"}, "output": output}


def test_the_same_failure_under_varied_flags_is_one_though_each_request_id_and_the_persons_word_differ():
    """A random request id (``req_Vn9sG3hM1dQe5c``) is no part of an error; and the person's "same error for 10 min"
    between two runs names no error, so the run after it has not failed otherwise than the run before it did."""
    ids = ["Vn9sG3hM1dQe5c", "Js3eK7qB4xWn8g", "Ew4pN9sL6bXc1y", "Lk2vA8eR5tNq3w", "Hd6xW1pF9bKs4m"]
    turns = [_refund_run(flags, rid) for flags, rid in zip(["-q", "-x", "-vv", "-p no:randomly"], ids, strict=False)]
    turns.insert(2, {"tool": "user_prompt", "actor": "person", "output": "same error for 10 min. what are you doing"})
    window = window_of(turns)
    runs = [f for f in window if f.actor == "agent"]
    assert len({f.err for f in runs}) == 1, [f.err for f in runs]
    assert window[3].prog is None, window[3].prog
    verdict, _ = play(turns)
    assert verdict.fired_at is not None and verdict.signals[0].kind == "repeated_error", verdict


def test_a_name_with_one_number_in_it_stays_in_the_error():
    """Only ids drawn at random fold: ``base64Encode`` and ``sha256Digest`` missing are two errors."""
    turns = [
        _sh("npm run build", f"src/a.ts(3,9): error TS2304: Cannot find name '{name}'.", 2)
        for name in ("base64Encode", "sha256Digest")
    ]
    window = window_of(turns)
    assert window[0].err != window[1].err


def test_still_broken_while_each_run_fails_otherwise_is_no_repeat_and_now_this_starts_another_failure():
    """The dev server fails with a missing module, another missing module, a busy port, then a schema error, the
    person saying "still broken", "nope now this. EADDRINUSE" and "still broken?? it worked before the upgrade": each
    failure is new, so the person's words are no problem said again, and "now this" is what the last run printed."""
    dev = "pnpm --filter web dev"
    turns = [
        {"tool": "user_prompt", "actor": "person", "output": "bumped to pnpm 9 and now web wont start"},
        _sh(dev, "Module not found: Can't resolve '@acme/ui'", 1),
        {"tool": "Edit", "args": {"file_path": "apps/web/package.json", "old_string": "a", "new_string": "b"}},
        _sh(dev, "Module not found: Can't resolve 'server-only'", 1),
        {"tool": "user_prompt", "actor": "person", "output": "still broken"},
        {"tool": "Edit", "args": {"file_path": "apps/web/package.json", "old_string": "b", "new_string": "c"}},
        _sh(dev, "Error: listen EADDRINUSE: address already in use :::3000", 1),
        {"tool": "user_prompt", "actor": "person", "output": "nope now this. EADDRINUSE"},
        _sh(f"kill 71844 && {dev}", "Error: Invalid environment variables: DATABASE_URL Required", 1),
        {"tool": "user_prompt", "actor": "person", "output": "still broken?? it worked before the upgrade"},
    ]
    window = window_of(turns)
    assert window[7].fsig != window[4].fsig and "EADDRINUSE" in (window[7].ftext or ""), window[7]
    assert play(turns)[0].fired_at is None


def test_a_registrys_denial_wrapped_by_each_client_is_one_error_through_docker_and_crane():
    """``docker push`` prints the registry's ``denied: permission_denied: The token provided ...``; crane wraps the same
    answer in ``Error: POST https://...: DENIED: ...``: one cause, pushed four ways, is one error repeated."""
    denied = "permission_denied: The token provided does not match expected scopes."
    docker = (
        "docker push ghcr.io/acme/api:1.8.0",
        f"The push refers to repository [ghcr.io/acme/api]\ndenied: {denied}",
    )
    crane = (
        "crane push /tmp/api.tar ghcr.io/acme/api:1.8.0",
        f"Error: POST https://ghcr.io/v2/acme/api/blobs/uploads/: DENIED: {denied}",
    )
    login = _sh("gh auth token | docker login ghcr.io -u me --password-stdin", "Login Succeeded", 0)
    turns = [_sh(*docker, 1), login, _sh(*crane, 1), login, _sh(*docker, 1), _sh(*crane, 1)]
    verdict, _ = play(turns)
    assert verdict.fired_at == 5 and verdict.signals[0].kind == "repeated_error", verdict
