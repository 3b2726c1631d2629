"""``strict-loop demo``: a complete first loop, run for real in a scratch workspace.

It computes the hailstone (Collatz) sequence from a start number, strictly one
number per round: announce, do, verify, record, check the stop rules, broadcast.
The stop rule is machine-checkable (a command that reads the file), so the
loop ends because the check passes, not because anyone says it is done.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path
from typing import Optional, TextIO

from strict_loop.loop.workspace import Workspace
from strict_loop.storage import workspaces

STOP_COMMAND = (
    "python3 -c \"import sys; v=open('sequence.txt').read().split(); sys.exit(0 if v and v[-1]=='1' else 1)\""
)


def run(start: int = 6, workspace: Optional[Path] = None, out: Optional[TextIO] = None) -> Path:
    """The demo loop. The machine's records of it are removed at the end, however it ends: the trust of its scratch
    contract, and its folder's entry in the per-user index of workspaces (unless a loop of the person's was there
    before), so that the person's page does not show a demo forever. The folder itself stays, to be looked at."""
    out = out or sys.stdout  # the stdout of the call, not of the import
    root = Path(workspace) if workspace else Path(tempfile.mkdtemp(prefix="strict-loop-demo-"))
    root.mkdir(parents=True, exist_ok=True)
    ws = Workspace(root)
    indexed = workspaces.workspace_id(ws.root) in workspaces.known()
    try:
        return _loop(ws, root, start, out)
    finally:
        ws.trust_store.forget(root, "hailstone")
        if not indexed:
            workspaces.forget(ws.root)


def _loop(ws: Workspace, root: Path, start: int, out: TextIO) -> Path:
    seq_file = root / "sequence.txt"
    seq_file.write_text(f"{start}\n")
    ws.init_state(
        task_id="hailstone",
        goal=f"Write the hailstone sequence from {start} to sequence.txt, one number per round",
        global_stop_condition="The last number in sequence.txt is 1",
        success_evidence=["sequence.txt ends with 1"],
        stop_checks={"commands": [STOP_COMMAND]},
        operating_mode="unattended",
        limits={"max_iterations": 200},
        next_task=f"append the number after {start}",
        force=True,
    )
    print(f"workspace: {root}", file=out)
    while True:
        values = [int(v) for v in seq_file.read_text().split()]
        n = values[-1]
        nxt = n // 2 if n % 2 == 0 else 3 * n + 1
        ws.append_event(task_id="hailstone", kind="round.started", message=f"append the number after {n}")
        with seq_file.open("a") as fh:
            fh.write(f"{nxt}\n")
        written = int(seq_file.read_text().split()[-1])
        verified = written == nxt and (written * 2 == n or (n % 2 == 1 and written == 3 * n + 1))
        result = ws.update_state(  # two calls a round: the answer carries the stop verdict and the status line
            task_id="hailstone",
            task=f"append the number after {n}",
            local_done_condition=f"sequence.txt ends with {nxt}",
            result_summary=f"{n} -> {nxt}",
            verification_summary=f"re-read sequence.txt: last value {written}, rule holds: {verified}",
            progress="made" if verified else "none",
            evidence=["sequence.txt"],
            next_task=f"append the number after {nxt}" if nxt != 1 else "",  # a completed loop has no next task
            status="completed" if nxt == 1 else "running",  # refused unless the stop check really passes
            context_snapshot=f"sequence so far: {' '.join(map(str, values + [nxt]))}",
        )
        print(result.status_line, file=out)
        if result.stop is not None and result.stop.should_stop:
            status = ws.report_status(task_id="hailstone").text
            print(*status.splitlines()[1:], sep="\n", file=out)
            print(f"files: {ws.task_paths('hailstone').root}", file=out)
            return root
