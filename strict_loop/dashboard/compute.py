"""Know your compute before planning a run: GPUs, CPU, memory, disk free in the workspace, the container runtime and
whether it reaches a GPU.

Why each probe has a short timeout and never raises: a machine without GPUs or Docker is an answer, not an error, and
a hung ``nvidia-smi`` or Docker daemon must not hang the page or the MCP resource.
"""

from __future__ import annotations

import importlib
import os
import platform
import shutil
import subprocess
from pathlib import Path
from typing import Optional

from pydantic import BaseModel, Field

from strict_loop.dashboard.texts import shorten

PROBE_TIMEOUT_S = 5.0
PROC = Path("/proc")
"""Linux's process and memory tables (read directly); where there is none (macOS), psutil answers."""
NVIDIA_QUERY = "name,memory.total,memory.used,utilization.gpu"


class Gpu(BaseModel):
    vendor: str
    name: str
    memory_total_mb: Optional[float] = None
    memory_used_mb: Optional[float] = None
    utilization_pct: Optional[float] = None


class ContainerRuntime(BaseModel):
    name: str = Field(..., description="docker or podman")
    path: str
    daemon: bool = Field(False, description="whether its daemon answered")
    gpu: bool = Field(False, description="whether it reports a GPU runtime (nvidia) or CDI devices")
    detail: str = ""


class ComputeReport(BaseModel):
    """What this machine can run; a missing GPU or runtime is an empty list, with the reason in ``notes``."""

    gpus: list[Gpu] = Field(default_factory=list)
    cpu_count: int = 0
    cpu_model: str = ""
    memory_total_mb: Optional[float] = None
    memory_available_mb: Optional[float] = None
    disk_path: str = ""
    disk_free_gb: Optional[float] = None
    disk_total_gb: Optional[float] = None
    containers: list[ContainerRuntime] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list)


def _run(cmd: list[str], timeout: float = PROBE_TIMEOUT_S) -> tuple[Optional[str], str]:
    """(stdout, problem): stdout None when the command failed, timed out or is missing."""
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return None, f"{cmd[0]} did not answer within {timeout:g} s"
    except OSError as exc:
        return None, f"{cmd[0]} could not run ({exc.strerror or exc})"
    if proc.returncode != 0:
        return None, f"{cmd[0]} exited {proc.returncode}: {shorten((proc.stderr or proc.stdout).strip(), 200)}"
    return proc.stdout, ""


def _number(text: str) -> Optional[float]:
    try:
        return float(text.strip().split()[0])
    except (ValueError, IndexError):
        return None


def nvidia(report: ComputeReport) -> None:
    exe = shutil.which("nvidia-smi")
    if exe is None:
        return
    out, problem = _run([exe, f"--query-gpu={NVIDIA_QUERY}", "--format=csv,noheader,nounits"])
    if out is None:
        report.notes.append(problem)
        return
    for line in out.strip().splitlines():
        cells = [c.strip() for c in line.split(",")]
        if len(cells) >= 4:
            mem, used, use = (_number(c) for c in cells[1:4])
            report.gpus.append(
                Gpu(vendor="nvidia", name=cells[0], memory_total_mb=mem, memory_used_mb=used, utilization_pct=use)
            )


def rocm(report: ComputeReport) -> None:
    exe = shutil.which("rocm-smi")
    if exe is None:
        return
    out, problem = _run([exe, "--showproductname", "--showmeminfo", "vram", "--showuse", "--csv"])
    if out is None:
        report.notes.append(problem)
        return
    lines = [line for line in out.strip().splitlines() if line.strip()]
    header = [h.strip().lower() for h in lines[0].split(",")] if lines else []
    for line in lines[1:]:
        cells = dict(zip(header, (c.strip() for c in line.split(",")), strict=False))
        name = next(
            (v for k, v in cells.items() if "card series" in k or "product name" in k), cells.get("device", "gpu")
        )
        total = next((_number(v) for k, v in cells.items() if "total memory" in k), None)
        used = next((_number(v) for k, v in cells.items() if "total used memory" in k), None)
        use = next((_number(v) for k, v in cells.items() if "gpu use" in k), None)
        report.gpus.append(
            Gpu(
                vendor="amd",
                name=name,
                memory_total_mb=total and total / 2**20,
                memory_used_mb=used and used / 2**20,
                utilization_pct=use,
            )
        )


def machine(report: ComputeReport, workspace: Path) -> None:
    report.cpu_count = os.cpu_count() or 0
    report.cpu_model = platform.processor() or platform.machine()
    if not _proc_memory(report):
        _psutil_memory(report)
    try:
        usage = shutil.disk_usage(workspace)
        report.disk_path = str(workspace)
        report.disk_free_gb = round(usage.free / 1e9, 2)
        report.disk_total_gb = round(usage.total / 1e9, 2)
    except OSError as exc:
        report.notes.append(f"disk of {workspace} unknown ({exc.strerror or exc})")


def _proc_memory(report: ComputeReport) -> bool:
    """Memory and CPU model from Linux's /proc; False where there is none (macOS)."""
    try:
        info = (PROC / "meminfo").read_text()
        for line in (PROC / "cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                report.cpu_model = line.split(":", 1)[1].strip()
                break
    except OSError:
        return False
    fields = {line.split(":")[0]: _number(line.split(":")[1]) for line in info.splitlines() if ":" in line}
    report.memory_total_mb = round((fields.get("MemTotal") or 0) / 1024, 1) or None
    report.memory_available_mb = round((fields.get("MemAvailable") or 0) / 1024, 1) or None
    return True


def _psutil_memory(report: ComputeReport) -> None:
    """Memory from psutil (macOS, where most people run the harnesses, has no /proc); the CPU's name from sysctl."""
    try:
        mem = importlib.import_module("psutil").virtual_memory()  # by name: psutil ships no type hints
        report.memory_total_mb = round(mem.total / 2**20, 1) or None
        report.memory_available_mb = round(mem.available / 2**20, 1) or None
    except Exception as exc:  # noqa: BLE001 (psutil missing or failing: memory unknown, said why)
        report.notes.append(f"memory unknown (no /proc here, and psutil could not tell: {type(exc).__name__})")
    if platform.system() == "Darwin":
        out, _ = _run(["sysctl", "-n", "machdep.cpu.brand_string"], timeout=2.0)
        report.cpu_model = (out or "").strip() or report.cpu_model


def containers(report: ComputeReport, timeout: float) -> None:
    for name in ("docker", "podman"):
        exe = shutil.which(name)
        if exe is None:
            continue
        rt = ContainerRuntime(name=name, path=exe)
        out, problem = _run([exe, "info", "--format", "{{json .Runtimes}} {{json .CDISpecDirs}}"], timeout)
        rt.daemon = out is not None
        rt.detail = problem
        rt.gpu = bool(out) and "nvidia" in (out or "").lower()
        report.containers.append(rt)
    if not report.containers:
        report.notes.append("no container runtime (docker, podman) on PATH")


def report(workspace: Path | str = ".", timeout: float = PROBE_TIMEOUT_S) -> ComputeReport:
    """The whole report; each probe runs at most ``timeout`` seconds."""
    out = ComputeReport()
    nvidia(out)
    rocm(out)
    if not out.gpus:
        out.notes.append("no GPU found (neither nvidia-smi nor rocm-smi answered with one)")
    machine(out, Path(workspace).resolve())
    containers(out, timeout)
    return out


def text(rep: ComputeReport) -> str:
    """The report as a person reads it in a terminal."""
    lines = [f"CPU: {rep.cpu_count} x {rep.cpu_model}"]
    if rep.memory_total_mb:
        lines.append(f"memory: {rep.memory_available_mb or 0:.0f} MB available of {rep.memory_total_mb:.0f} MB")
    lines += [
        f"GPU: {g.vendor} {g.name}, {g.memory_used_mb or 0:.0f}/{g.memory_total_mb or 0:.0f} MB, "
        f"{g.utilization_pct if g.utilization_pct is not None else '?'}% busy"
        for g in rep.gpus
    ] or ["GPU: none"]
    if rep.disk_free_gb is not None:
        lines.append(f"disk: {rep.disk_free_gb:.1f} GB free of {rep.disk_total_gb:.1f} GB in {rep.disk_path}")
    lines += [
        f"container runtime: {c.name} ({c.path}), daemon {'answers' if c.daemon else 'does not answer'}"
        f"{', reaches a GPU' if c.gpu else ''}"
        for c in rep.containers
    ] or ["container runtime: none"]
    return "\n".join(lines + [f"note: {n}" for n in rep.notes])
