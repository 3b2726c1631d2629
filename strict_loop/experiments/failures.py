"""The catalog of experiment failures and the classifier over it: pure, table-driven, no I/O.

Why a table: what a training job dies of is a short, well-known list (seed 001 had ten), and each
entry needs the same three things: how to recognise it (exit status, signal, a line of the log or
the metrics), what it means, and which remedies of the fixed dispatcher (``remedies``) may help.
Nothing here executes anything: a module name read from the log is returned as data, never installed.
"""

from __future__ import annotations

import re
import signal
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Optional

UNKNOWN = "unknown"


@dataclass(frozen=True)
class FailureKind:
    """One catalog entry. ``patterns`` are searched in the log's tail (case-insensitive, multi-line);
    ``signals`` match a job killed by that signal (or a shell's ``128 + signal`` exit status)."""

    name: str
    title: str
    patterns: tuple[str, ...] = ()
    signals: tuple[int, ...] = ()
    exit_codes: tuple[int, ...] = ()
    remedies: tuple[str, ...] = ()
    advice: str = ""


CATALOG: tuple[FailureKind, ...] = (
    # Most specific first: a data-loader worker killed by the OOM killer is a data-loader crash, an NCCL
    # watchdog timeout is not a network timeout, a CUDA OOM is not a host OOM.
    FailureKind(
        "gpu_oom",
        "GPU out of memory",
        (
            r"CUDA out of memory",
            r"torch\.(cuda\.)?OutOfMemoryError",
            r"CUBLAS_STATUS_ALLOC_FAILED",
            r"HIP out of memory",
            r"RESOURCE_EXHAUSTED: Out of memory",
            r"out of memory on device",
        ),
        remedies=("halve-batch",),
        advice="a smaller batch (or gradient accumulation), mixed precision, or a bigger GPU",
    ),
    FailureKind(
        "dataloader_crash",
        "data-loader worker crash",
        (
            r"DataLoader worker \(pid[^)]*\) (is killed|exited unexpectedly)",
            r"DataLoader worker exited unexpectedly",
            r"bus error.*shared memory|insufficient shared memory",
        ),
        remedies=("wait-retry",),
        advice="fewer workers, a larger /dev/shm (--shm-size), or workers=0 to see the real error",
    ),
    FailureKind(
        "nccl_timeout",
        "NCCL / collective timeout",
        (
            r"Watchdog caught collective operation timeout",
            r"NCCL[^\n]*(timeout|timed out)",
            r"ProcessGroupNCCL[^\n]*[Tt]imeout",
            r"collective operation timeout",
            r"NCCL error",
        ),
        remedies=("resume", "wait-retry"),
        advice="a rank died or stalled: check every rank's log; resume from the checkpoint",
    ),
    FailureKind(
        "host_oom",
        "host out of memory",
        (
            r"\bMemoryError\b",
            r"Cannot allocate memory",
            r"std::bad_alloc",
            r"^Killed$",
            r"Out of memory: Killed process",
        ),
        signals=(signal.SIGKILL,),
        remedies=("halve-batch",),
        advice="a smaller batch, fewer data-loader workers, or memory-mapped data; exit 137 / SIGKILL is usually the "
        "OOM killer",
    ),
    FailureKind(
        "disk_full",
        "disk full or quota exceeded",
        (
            r"No space left on device",
            r"\bENOSPC\b",
            r"Errno 28\b",
            r"Disk quota exceeded",
            r"\bEDQUOT\b",
            r"Errno 122\b",
            r"File too large",
            r"\bEFBIG\b",
            r"Errno 27\b",
        ),
        signals=(getattr(signal, "SIGXFSZ", 25),),
        remedies=("clear-cache",),
        advice="free space (old checkpoints, caches), keep fewer checkpoints, or write elsewhere",
    ),
    FailureKind(
        "missing_module",
        "missing Python module",
        (r"ModuleNotFoundError: No module named", r"ImportError: No module named"),
        advice="install it yourself after checking the name (never installed automatically: the name comes from the "
        "log)",
    ),
    FailureKind(
        "port_in_use",
        "port already in use",
        (r"Address already in use", r"\bEADDRINUSE\b", r"Errno 98\b"),
        remedies=("wait-retry",),
        advice="another run holds the port (MASTER_PORT, a server): wait for it or pick another port",
    ),
    FailureKind(
        "connection",
        "connection refused or timed out",
        (
            r"Connection refused",
            r"\bECONNREFUSED\b",
            r"Errno 111\b",
            r"Connection reset by peer",
            r"\bETIMEDOUT\b",
            r"Connection timed out",
            r"Read timed out",
            r"Temporary failure in name resolution",
            r"Max retries exceeded",
        ),
        remedies=("wait-retry",),
        advice="a service or the network was away: retry later; check the endpoint",
    ),
    FailureKind(
        "segfault",
        "segmentation fault",
        (r"Segmentation fault", r"\bSIGSEGV\b", r"Fatal Python error: Segmentation fault"),
        signals=(signal.SIGSEGV,),
        remedies=("resume", "wait-retry"),
        advice="a native extension crashed: retry once; if it repeats, check library versions and drivers",
    ),
    FailureKind(
        "missing_checkpoint",
        "missing checkpoint",
        (
            r"FileNotFoundError[^\n]*(checkpoint|ckpt|\.pt\b|\.pth\b|\.safetensors|\.bin\b)",
            r"[Nn]o checkpoint found",
            r"[Cc]heckpoint[^\n]*(not found|does not exist)",
        ),
        advice="the run expected a checkpoint that is not there: check the path, or start from scratch",
    ),
)
"""The catalog; ``nan_loss`` and ``divergence`` below are recognised from the metrics as well as the log."""

NAN_LOSS = FailureKind(
    "nan_loss",
    "NaN/Inf loss",
    (
        r"\bloss\b[\s:=]+[-+]?(nan|inf)\b",
        r"\bloss\b[^\n]{0,40}?[=:]\s*[-+]?(nan|inf)\b",
        r"\bnan loss\b",
        r"Loss is (nan|inf)",
        r"non-finite loss",
        r"anomaly detected[^\n]*nan",
    ),
    remedies=("lower-lr", "resume"),
    advice="a lower learning rate, gradient clipping, or checking the data for bad values",
)
DIVERGENCE = FailureKind(
    "divergence",
    "loss divergence",
    remedies=("lower-lr", "resume"),
    advice="the loss grew far above its best: a lower learning rate, warm-up or gradient clipping",
)
UNKNOWN_KIND = FailureKind(UNKNOWN, "unknown failure", advice="read the log: this failure is not in the catalog")
KINDS: dict[str, FailureKind] = {k.name: k for k in (*CATALOG, NAN_LOSS, DIVERGENCE, UNKNOWN_KIND)}

_MODULE = re.compile(r"No module named '?([A-Za-z0-9_.\-]{1,200})'?")


@dataclass(frozen=True)
class Failure:
    """What a failed run died of: the kind, the log line (or fact) that showed it, and data such as a module name."""

    kind: str
    evidence: str
    exit_code: Optional[int] = None
    signal: Optional[int] = None
    details: dict[str, str] = field(default_factory=dict)

    @property
    def title(self) -> str:
        return KINDS[self.kind].title

    def summary(self) -> str:
        """One line, the same for the same failure (so the spiral detector sees a job failing the same way)."""
        extra = "".join(f" [{k}: {v!r}]" for k, v in sorted(self.details.items()))
        return f"{self.kind}: {self.title}{extra} ({self.evidence[:300]})"


def exit_signal(returncode: Optional[int]) -> Optional[int]:
    """The signal that ended the job: Popen's negative return code, or a shell's 128 + N for the usual fatal ones."""
    if returncode is None:
        return None
    if returncode < 0:
        return -returncode
    if returncode - 128 in (
        signal.SIGKILL,
        signal.SIGSEGV,
        signal.SIGABRT,
        getattr(signal, "SIGXFSZ", 25),
        signal.SIGBUS,
    ):
        return returncode - 128
    return None


def classify(
    returncode: Optional[int], log_tail: str, *, nonfinite: Optional[str] = None, diverged: Optional[str] = None
) -> Failure:
    """Name the failure of a run that ended with ``returncode`` (nonzero), given the end of its log and what the
    metrics showed (``nonfinite``: the metric that became NaN/Inf; ``diverged``: a description of the divergence).

    The metrics come first (a NaN or a diverged loss often ends in an unrelated crash, or in our killing the run);
    then the catalog, in order, each entry by its last matching log line (the error sits at the end); then the
    signal. Unknown otherwise."""
    sig = exit_signal(returncode)
    if nonfinite:
        return Failure("nan_loss", nonfinite, returncode, sig)
    if diverged:
        return Failure("divergence", diverged, returncode, sig)
    text = log_tail[-65536:]
    for kind in (*CATALOG[:3], NAN_LOSS, *CATALOG[3:]):
        line = _last_match(kind, text)
        if line is not None:
            return Failure(kind.name, line, returncode, sig, _details(kind.name, line))
    for kind in CATALOG:
        if sig is not None and sig in kind.signals:
            return Failure(kind.name, f"killed by signal {sig} ({signal.Signals(sig).name})", returncode, sig)
    last = next((ln.strip() for ln in reversed(text.splitlines()) if ln.strip()), "")
    return Failure(
        UNKNOWN, f"exit status {returncode}" + (f"; last line: {last[:300]}" if last else ""), returncode, sig
    )


def _last_match(kind: FailureKind, text: str) -> Optional[str]:
    best: Optional[tuple[int, str]] = None
    for pattern in kind.patterns:
        for m in re.finditer(pattern, text, re.IGNORECASE | re.MULTILINE):
            if best is None or m.start() > best[0]:
                start, end = text.rfind("\n", 0, m.start()) + 1, text.find("\n", m.end())
                best = (m.start(), text[start : end if end >= 0 else len(text)].strip()[:500])
    return best[1] if best else None


def _details(kind: str, line: str) -> dict[str, str]:
    """Data a person needs (shown, never acted on): the missing module's name."""
    if kind == "missing_module":
        m = _MODULE.search(line)
        if m:
            return {"module": m.group(1)}
    return {}


class Repeats:
    """How many runs in a row failed with the same summary and the same declared variables (``watch`` asks a person
    after a few: a retry that changes nothing)."""

    def __init__(self) -> None:
        self.key: Optional[tuple[str, tuple[tuple[str, str], ...]]] = None
        self.count = 0

    def again(self, failure: Failure, variables: Mapping[str, str]) -> int:
        key = (failure.summary(), tuple(sorted(variables.items())))
        self.count = self.count + 1 if key == self.key else 1
        self.key = key
        return self.count
