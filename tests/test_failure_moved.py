"""A failure that moved on is not the same failure said again: the person's "still red" while the agent's checks fail
at another place each time, and pods that keep crashing while their logs name a new cause after each fix."""

from __future__ import annotations

import pytest
from spiral_claims import check_claims, play


def _person(text: str) -> dict:
    return {"tool": "user_prompt", "actor": "person", "output": text}


def _build(error: str) -> dict:
    return {"tool": "Bash", "args": {"command": "npm run build"}, "output": f"> tsc -p .\n\n{error}", "exit_code": 1}


def _edit(path: str, k: int) -> dict:
    return {
        "tool": "Edit",
        "args": {"file_path": path, "old_string": f"a{k}", "new_string": f"b{k}"},
        "output": f"The file {path} has been updated.",
    }


_ERRORS = [
    "src/api.ts(3,1): error TS2304: Cannot find name 'fetchJson'.",
    "src/store.ts(9,5): error TS2322: Type 'string' is not assignable to type 'number'.",
    "src/view.ts(1,10): error TS2305: Module './model' has no exported member 'Row'.",
]


def _still_red(errors: list[str]) -> list[dict]:
    return [
        _person("the build is red since the merge, get it green pls"),
        _build(errors[0]),
        _edit("src/api.ts", 1),
        _build(errors[1]),
        _person("still red 🙄"),
        _edit("src/store.ts", 2),
        _build(errors[2]),
        _person("still red lol"),
        _edit("src/view.ts", 3),
    ]


def test_still_red_while_the_build_fails_somewhere_new_each_time_is_no_repeat():
    verdict, _ = play(_still_red(_ERRORS))
    assert verdict.fired_at is None, verdict.signals


def test_still_red_while_the_build_fails_the_same_way_is_the_person_saying_it_again():
    turns = _still_red([_ERRORS[0], _ERRORS[1], _ERRORS[1]])
    verdict, _ = play(turns)
    assert verdict.fired_at == 7
    assert "“still red lol”" in " ".join(s.evidence for s in verdict.signals)
    assert "person reports" in check_claims(verdict, turns)


def _pods(logs: str = "") -> dict:
    table = (
        "NAME                       READY   STATUS             RESTARTS      AGE\n"
        "worker-7c4d9b8f6c-fk2wd    0/1     CrashLoopBackOff   2 (14s ago)   32s"
    )
    command = "kubectl get pods -l app=worker" + (" && kubectl logs deploy/worker --previous --tail=2" if logs else "")
    return {"tool": "Bash", "args": {"command": command}, "output": table + logs, "exit_code": 0}


def _log(cause: str) -> str:
    return (
        f'\ntime=2024-06-14T08:04:31Z level=INFO msg="worker starting"\ntime=2024-06-14T08:04:31Z level=ERROR {cause}'
    )


def _helm(k: int) -> dict:
    command = f"helm upgrade --install worker ./chart -n notif{' --wait=false' * (k % 2)}"
    return {
        "tool": "Bash",
        "args": {"command": command},
        "output": 'Release "worker" has been upgraded.',
        "exit_code": 0,
    }


_REDIS = 'msg="required env REDIS_URL not set"'
_READ_ONLY = 'msg="open /var/cache/templates.gob: read-only file system"'


@pytest.mark.parametrize(("second", "fires"), [(_REDIS, True), (_READ_ONLY, False)], ids=["same cause", "new cause"])
def test_pods_crashing_after_each_fix_are_one_failure_only_while_their_logs_name_one_cause(second, fires):
    """Pods crash after each fix and the person says it still crashloops: the same failure while the logs name the
    same cause; a report of another failure once the logs named a new one (each fix cured the cause before it)."""
    logs = {"tool": "Bash", "args": {"command": "kubectl logs deploy/worker --previous"}, "exit_code": 0}
    turns = [
        _person("deploy the worker chart to staging, ns notif"),
        _helm(0),
        _pods(),
        {**logs, "output": _log(_REDIS).lstrip()},
        _edit("chart/templates/deployment.yaml", 1),
        _helm(1),
        _pods(_log(second)),
        _edit("chart/templates/deployment.yaml", 2),
        _helm(2),
        _person("still crashing on my side, k9s shows it red"),
    ]
    verdict, _ = play(turns)
    if not fires:
        assert verdict.fired_at is None, verdict.signals
        return
    assert verdict.fired_at == 9 and verdict.signals[0].kind == "same_failure"
    assert verdict.signals[0].turns == [2, 6, 9] and "worker: keeps crashing" in verdict.signals[0].evidence
