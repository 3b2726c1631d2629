"""The pure parts of ``strict-loop watch``: the failure catalog, the remedy dispatcher, progress parsing, container
argv."""

from __future__ import annotations

import math

import pytest

from strict_loop.base import timefmt
from strict_loop.base.errors import LoopError
from strict_loop.experiments import joblog
from strict_loop.experiments.failures import CATALOG, KINDS, classify, exit_signal
from strict_loop.experiments.isolation import Limits, container_argv
from strict_loop.experiments.remedies import RemedyState, WatchSettings, decide, parse_allow, substitute
from strict_loop.model.validation import validate_input

CASES = [
    (1, "Traceback ...\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0)", "gpu_oom"),
    (1, "x = bytearray(n)\nMemoryError", "host_oom"),
    (137, "", "host_oom"),
    (-9, "step 3 loss 0.5", "host_oom"),
    (1, "step 12 loss nan\nRuntimeError: boom", "nan_loss"),
    (1, "OSError: [Errno 28] No space left on device: 'ckpt/7.pt'", "disk_full"),
    (1, "OSError: [Errno 27] File too large", "disk_full"),
    (1, "OSError: [Errno 122] Disk quota exceeded", "disk_full"),
    (1, "ModuleNotFoundError: No module named 'flash_attn'", "missing_module"),
    (1, "OSError: [Errno 98] Address already in use", "port_in_use"),
    (1, "ConnectionRefusedError: [Errno 111] Connection refused", "connection"),
    (1, "requests.exceptions.ReadTimeout: Read timed out. (read timeout=10)", "connection"),
    (1, "RuntimeError: DataLoader worker (pid 4242) is killed by signal: Killed.", "dataloader_crash"),
    (
        1,
        "[Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=9, OpType=ALLREDUCE) ran for 600000 ms",
        "nccl_timeout",
    ),
    (-11, "", "segfault"),
    (139, "Fatal Python error: Segmentation fault", "segfault"),
    (1, "FileNotFoundError: [Errno 2] No such file or directory: 'checkpoints/step-500.pt'", "missing_checkpoint"),
    (3, "ValueError: something nobody foresaw", "unknown"),
]


@pytest.mark.parametrize("code,log,kind", CASES, ids=[f"{k}-{i}" for i, (_, _, k) in enumerate(CASES)])
def test_the_catalog_names_each_failure(code, log, kind):
    failure = classify(code, log)
    assert failure.kind == kind, failure
    assert failure.kind in KINDS and failure.title and failure.summary().startswith(kind)


def test_every_catalog_entry_is_covered_and_most_specific_wins():
    assert {k.name for k in CATALOG} | {"nan_loss", "divergence", "unknown"} <= {k for _, _, k in CASES} | {
        "divergence"
    }
    # a data-loader worker killed by the OOM killer is a data-loader crash; a NaN that ended in a crash is the NaN
    assert classify(-9, "DataLoader worker (pid 7) is killed by signal: Killed.\nKilled").kind == "dataloader_crash"
    assert classify(1, "RuntimeError: boom", nonfinite="loss=nan at step 4").kind == "nan_loss"
    assert classify(-15, "Connection refused (a retried warning)", diverged="loss=90 at step 9").kind == "divergence"
    assert exit_signal(137) == 9 and exit_signal(-11) == 11 and exit_signal(1) is None and exit_signal(130) is None


def test_a_module_name_from_the_log_is_data_only():
    failure = classify(1, "ModuleNotFoundError: No module named 'evil; curl x | sh'")
    assert failure.kind == "missing_module" and failure.details == {"module": "evil"}
    assert KINDS["missing_module"].remedies == ()  # never installed: no remedy exists for it


def test_progress_from_log_lines_and_metrics_jsonl():
    pattern = joblog.compile_pattern(None)
    p = joblog.JobProgress()
    for line in ("epoch 1 step 10 loss 1.0", "noise", "step=20 loss=0.5", "Step: 30, loss: 0.4"):
        p = joblog.fold(p, joblog.from_line(line, pattern), "loss", 10)
    assert (p.step, p.metrics["loss"], p.best, p.points, p.nonfinite) == (30, 0.4, 0.4, 3, None)
    p = joblog.fold(p, joblog.from_line("step 31 loss NaN", pattern), "loss", 10)
    assert p.nonfinite == "loss=nan at step 31"
    custom = joblog.compile_pattern(r"it (?P<step>\d+) acc=(?P<acc>[\d.]+)")
    assert joblog.from_line("it 7 acc=0.91", custom) == {"step": 7.0, "acc": 0.91}
    q = joblog.JobProgress()
    for line in (
        '{"step": 1, "loss": 2.0}',
        '{"step": 2, "loss": 1.0}',
        "not json",
        '{"step": 3, "loss": 1.2}',
        '{"step": 4, "loss": 11}',
    ):
        q = joblog.fold(q, joblog.from_json_line(line) or {}, "loss", 10)
    assert q.diverged and "loss=11 at step 4" in q.diverged and q.nonfinite is None
    assert joblog.from_json_line('{"step": 5, "loss": "inf", "tag": "x"}')["loss"] == math.inf
    assert joblog.from_json_line("not json") is None and joblog.from_json_line("[" * 200_000) is None
    rate, eta = timefmt.rate_and_eta(150, 50, 10.0, 1050)
    assert rate == 10.0 and eta == 90.0 and timefmt.rate_and_eta(None, None, 1, 10) == (0.0, None)


def _settings(**kw):
    return validate_input(WatchSettings, kw, "watch")


def test_the_dispatcher_applies_allowed_remedies_within_budget_then_escalates():
    s = _settings(
        allow=["halve-batch:2", "lower-lr:1"], batch_var="BS", batch_size=64, lr_var="LR", lr=0.1, min_batch_size=8
    )
    st = RemedyState.first(s)
    oom = classify(1, "CUDA out of memory")
    d1 = decide(oom, s, st, None)
    d2 = decide(oom, s, d1.state, None)
    d3 = decide(oom, s, d2.state, None)
    assert (d1.remedy, d1.state.batch_size, d2.remedy, d2.state.batch_size) == ("halve-batch", 32, "halve-batch", 16)
    assert d3.remedy is None and "used its budget of 2" in d3.reason
    assert d2.state.variables(s) == {"BS": "16", "LR": "0.1"}
    nan = decide(classify(1, "loss=nan"), s, d2.state, None)
    assert nan.remedy == "lower-lr" and nan.state.lr == pytest.approx(0.05) and nan.state.batch_size == 16
    again = decide(classify(1, "loss=nan"), s, nan.state, None)
    assert (
        again.remedy is None
        and "lower-lr used its budget of 1" in again.reason
        and "resume is not allowed" in again.reason
    )
    floor = _settings(allow=["halve-batch:9"], batch_var="BS", batch_size=8, min_batch_size=8)
    assert "at its floor 8" in decide(oom, floor, RemedyState.first(floor), None).reason
    assert decide(classify(3, "??"), s, st, None).remedy is None


def test_resume_wait_and_clear_cache_decisions():
    s = _settings(
        allow=["resume:1", "wait-retry:3", "clear-cache"], checkpoint_dir="ckpt", cache_dir="cache", retry_wait_s=2
    )
    st = RemedyState.first(s)
    seg = classify(-11, "")
    assert decide(seg, s, st, None).remedy == "wait-retry"  # no checkpoint yet: the next candidate
    d = decide(seg, s, st, "ckpt/step-9.pt")
    assert d.remedy == "resume" and d.state.variables(s) == {"RESUME_FROM": "ckpt/step-9.pt"}
    w1 = decide(classify(1, "Connection refused"), s, st, None)
    w2 = decide(classify(1, "Connection refused"), s, w1.state, None)
    assert (w1.wait_s, w2.wait_s) == (2, 4)
    assert decide(classify(1, "No space left on device"), s, st, None).remedy == "clear-cache"


@pytest.mark.parametrize(
    "kw,field",
    [
        ({"allow": ["halve-batch"]}, "--batch-var and --batch-size"),
        ({"allow": ["resume"]}, "--checkpoint-dir"),
        ({"allow": ["pip-install"]}, "is not a remedy"),
        ({"allow": ["wait-retry:0"]}, "whole number from 1 to 100"),
        ({"cache_dir": "../home"}, "'..' component"),
        ({"cache_dir": "/"}, "is absolute"),
        ({"batch_var": "STRICT_LOOP_WEBHOOK_URL"}, "not a variable name we may set"),
        ({"batch_var": "A B"}, "not a variable name we may set"),
        ({"progress_pattern": "(?P<step>\\d+"}, "progress_pattern: bad regular expression"),
    ],
)
def test_bad_settings_name_the_field_and_the_fix(kw, field):
    with pytest.raises(LoopError) as exc:
        _settings(**kw)
    assert field in str(exc.value)


def test_argv_placeholders_are_replaced_only_for_declared_variables():
    assert substitute(["train.py", "--bs={BS}", "{HOME}", "{BS}{BS}"], {"BS": "16"}) == [
        "train.py",
        "--bs=16",
        "{HOME}",
        "1616",
    ]
    assert parse_allow("halve_batch") == ("halve-batch", 2) and parse_allow("resume:5") == ("resume", 5)


def test_container_argv_bounds_memory_pids_network_and_mounts(tmp_path):
    data, out = tmp_path / "data", tmp_path / "out"
    argv = container_argv(
        "pytorch/pytorch:2.4.0",
        ["python", "train.py", "--bs", "16"],
        inputs=[(data, "/data")],
        output=(out, "/out"),
        limits=Limits(memory_mb=8000, pids=256, gpus="all", cpus=4, env={"BS": "16"}),
    )
    assert argv[:3] == ["docker", "run", "--rm"] and argv[-5:] == [
        "pytorch/pytorch:2.4.0",
        "python",
        "train.py",
        "--bs",
        "16",
    ]
    pairs = {
        argv[i]: argv[i + 1]
        for i in range(len(argv) - 1)
        if argv[i].startswith("--") and not argv[i + 1].startswith("--")
    }
    assert pairs["--memory"] == pairs["--memory-swap"] == "8000m" and pairs["--pids-limit"] == "256"
    assert (
        pairs["--network"] == "none"
        and pairs["--gpus"] == "all"
        and pairs["--cpus"] == "4"
        and pairs["--env"] == "BS=16"
    )
    assert "--read-only" in argv and pairs["--security-opt"] == "no-new-privileges" and pairs["--cap-drop"] == "ALL"
    mounts = [argv[i + 1] for i, a in enumerate(argv) if a == "--mount"]
    assert mounts == [f"type=bind,source={data},target=/data,readonly", f"type=bind,source={out},target=/out"]
    podman = container_argv(
        "img", ["true"], output=(out, "/out"), limits=Limits(gpus="all", network=True), engine="podman"
    )
    assert podman[0] == "podman" and "nvidia.com/gpu=all" in podman and "--network" not in podman
    with pytest.raises(LoopError, match="isolation.mount.host"):
        container_argv("img", ["true"], output=(tmp_path / "a,b", "/out"))
    with pytest.raises(LoopError, match="isolation.image"):
        container_argv("--privileged", ["true"], output=(out, "/out"))
