"""The command line that runs an experiment in a container with hard limits: generated as argv, never as shell text.

Why: ``strict-loop watch`` bounds a job with rlimits, which a job can still get around (a child that
raises nothing can still fill the disk it may write, open the network, fork without end). A container
bounds it from outside: memory (no swap), processes, network, a read-only image and read-only inputs,
one writable output folder. ``watch`` runs whatever argv it is given, so the two compose:
``strict-loop watch --task-id T -- docker run ... IMAGE python train.py``. references/experiments.md says what
each limit protects.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Optional

from strict_loop.base.errors import LoopError

Engine = Literal["docker", "podman"]


@dataclass(frozen=True)
class Mount:
    """A bind mount: ``host`` (absolute after resolving) at ``target`` in the container."""

    host: str
    target: str
    writable: bool = False

    def arg(self) -> str:
        for what, value in (("host", self.host), ("target", self.target)):
            if "," in value or "\n" in value or not value.startswith("/"):
                raise LoopError(
                    f"isolation.mount.{what}",
                    f"{value[:80]!r} must be an absolute path without ',' or newline",
                    "rename the folder, or mount its parent",
                )
        return f"type=bind,source={self.host},target={self.target}" + ("" if self.writable else ",readonly")


@dataclass(frozen=True)
class Limits:
    """What the job may use; every field has a safe default except the GPUs (none unless asked)."""

    memory_mb: int = 16384
    cpus: Optional[float] = None
    pids: int = 1024
    gpus: Optional[str] = None
    """'all', a count ('2') or devices ('device=0,1'); None: no GPU."""
    shm_mb: int = 2048
    tmp_mb: int = 1024
    network: bool = False
    env: dict[str, str] = field(default_factory=dict)
    """Variables passed by name with their value (e.g. the declared BATCH_SIZE)."""


def container_argv(
    image: str,
    command: Sequence[str],
    *,
    inputs: Sequence[tuple[Path | str, str]] = (),
    output: tuple[Path | str, str],
    limits: Limits = Limits(),
    engine: Engine = "docker",
    workdir: Optional[str] = None,
    user: Optional[str] = None,
) -> list[str]:
    """``docker|podman run`` argv for ``command`` in ``image``: read-only root, read-only ``inputs``
    (host, container path), one writable ``output``, no network unless asked, capped memory/pids/shm."""
    if not image or image.startswith("-"):
        raise LoopError(
            "isolation.image",
            f"{image[:80]!r} is not an image name",
            "give an image, e.g. pytorch/pytorch:2.4.0-cuda12.1-cudnn9-runtime",
        )
    if not command:
        raise LoopError("isolation.command", "no command given", "give the job's argv, e.g. ['python', 'train.py']")
    mounts = [Mount(str(Path(h).resolve()), t) for h, t in inputs] + [
        Mount(str(Path(output[0]).resolve()), output[1], writable=True)
    ]
    argv = [
        engine,
        "run",
        "--rm",
        "--init",
        "--read-only",
        "--tmpfs",
        f"/tmp:rw,nosuid,nodev,size={limits.tmp_mb}m",
        "--memory",
        f"{limits.memory_mb}m",
        "--memory-swap",
        f"{limits.memory_mb}m",
        "--pids-limit",
        str(limits.pids),
        "--shm-size",
        f"{limits.shm_mb}m",
        "--cap-drop",
        "ALL",
        "--security-opt",
        "no-new-privileges",
    ]
    if not limits.network:
        argv += ["--network", "none"]
    if limits.cpus is not None:
        argv += ["--cpus", f"{limits.cpus:g}"]
    if limits.gpus is not None:
        # podman reaches NVIDIA GPUs through CDI device names; docker through the NVIDIA runtime's --gpus
        argv += ["--device", f"nvidia.com/gpu={limits.gpus}"] if engine == "podman" else ["--gpus", limits.gpus]
    if user is not None:
        argv += ["--user", user]
    for m in mounts:
        argv += ["--mount", m.arg()]
    for name, value in limits.env.items():
        argv += ["--env", f"{name}={value}"]
    argv += ["--workdir", workdir or output[1], image, *command]
    return argv
