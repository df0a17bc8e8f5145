"""The parent side: run each engine on one device and on N, read the workers' reports, write results.

The torch engine is started with torchrun (``python -m torch.distributed.run``, the same entry
point as the ``torchrun`` command, from this interpreter); TensorFlow and JAX drive all devices
from one process, which is how they are meant to be used. Either way each run is a child
process: a crash, a hang (killed after the size's time limit) or a missing accelerator becomes
a record that names the engine and the world size, and the results file is rewritten after
every run, so nothing measured before is lost.

Records written per engine:

- ``dp-train``: samples/s over all devices, one record for 1 device and one for N; the
  per-device rate, world size, backend and interconnect are in ``params``.
- ``dp-scaling``: N-device throughput / (N × 1-device throughput), both measured in this launch;
  above 1.1 the plausibility checks mark it invalid (the value is kept).
- ``allreduce``: torch only, bus bandwidth of ``all_reduce`` per message size (nccl-tests' busbw).
"""

from __future__ import annotations

import math
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from benchlib.backends import FrameworkMissing, require
from benchlib.core.timing import Measurement
from benchlib.measure.distributed.report import (
    SIZES,
    WorkerReport,
    WorkerSkipped,
    algbw_gbps,
    busbw_gbps,
    read_report,
    scaling_efficiency,
)
from benchlib.measure.distributed.topology import Interconnect, detect_interconnect
from benchlib.measure.runner import RunOutcome, check
from benchlib.results.schema import Crash, Machine, MeasurementRecord, Metric, SkipReason
from benchlib.results.store import new_results, results_path, write_results
from benchlib.workloads._record import stats_of
from benchlib.workloads.dp_scaling import EFFICIENCY
from benchlib.workloads.dp_scaling import NAME as SCALING

TRAIN = "dp-train"
ALLREDUCE = "allreduce"
THROUGHPUT = Metric(name="throughput", unit="samples/s", higher_is_better=True)
BUS_BANDWIDTH = Metric(name="bus bandwidth", unit="GB/s", higher_is_better=True)
MODEL = "fashion-mnist-cnn"
DEVICES = ("auto", "cpu", "cuda", "tpu")
BACKENDS = ("auto", "nccl", "gloo")
CRASH_TAIL_LINES = 20
# torch 2.14's gloo aborts a process at teardown in about 1 CPU run in 10 (measured before the
# worker's closing barrier); one fresh launch keeps that from costing the measurement.
TORCH_RETRIES = 1


class WorkerFailed(RuntimeError):
    """A worker process crashed, hung or wrote no report; the message names which and why."""

    def __init__(self, message: str, crash: Crash | None = None) -> None:
        super().__init__(message)
        self.crash = crash


@dataclass(frozen=True)
class Engine:
    name: str
    framework: str
    module: str
    devices: tuple[str, ...]
    install_hint: str

    def command(self, world: int, size: str, device: str, threads: int | None, backend: str, out: Path) -> list[str]:
        worker = ["--size", size, "--device", device, "--devices", str(world), "--out", str(out)]
        if threads:
            worker += ["--threads", str(threads)]
        if self.name == "torch":
            # --standalone: a rendezvous on a free local port, so parallel launches don't collide.
            # No --max-restarts: a group torchrun restarts reads the dead group's gloo addresses from
            # the same store and fails to connect; `run_worker` launches afresh instead.
            return [
                sys.executable,
                "-m",
                "torch.distributed.run",
                "--standalone",
                "--nnodes=1",
                f"--nproc-per-node={world}",
                "-m",
                self.module,
                *worker,
                "--backend",
                backend,
            ]
        return [sys.executable, "-m", self.module, *worker]


ENGINES: dict[str, Engine] = {
    e.name: e
    for e in (
        Engine(
            "torch",
            "torch",
            "benchlib.measure.distributed.torch_worker",
            ("cuda", "cpu"),
            "pip install 'benchlib[torch]'",
        ),
        Engine(
            "tf",
            "tensorflow",
            "benchlib.measure.distributed.tf_worker",
            ("tpu", "cuda", "cpu"),
            "pip install 'benchlib[tf]'",
        ),
        Engine("jax", "jax", "benchlib.measure.distributed.jax_worker", ("tpu", "cuda", "cpu"), "pip install jax"),
    )
}


def accelerator_count(machine: Machine, device: str) -> int:
    """How many devices of this kind the probe found (CPU: none, the caller picks a process count)."""
    acc = machine.accelerators
    if acc is None:
        return 0
    if device == "cuda":
        return len(acc.nvidia) or (acc.torch.cuda_device_count if acc.torch else 0)
    if device == "tpu":
        return (acc.tpu.count or 0) if acc.tpu else 0
    return 0


def machine_device(machine: Machine) -> str:
    """The accelerator ``auto`` means on this machine: a TPU, else NVIDIA GPUs, else the CPU."""
    if machine.accelerators and machine.accelerators.tpu:
        return "tpu"
    if accelerator_count(machine, "cuda"):
        return "cuda"
    return "cpu"


def default_devices(machine: Machine, device: str) -> int:
    """Every accelerator of the kind; two processes on a CPU, the smallest case that scales."""
    return accelerator_count(machine, device) if device != "cpu" else 2


def usable_cpus() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def root_cause(log: str) -> str:
    """The last exception line in a worker's output (torchrun repeats the worker's), else the last line."""
    lines = [line.strip() for line in log.splitlines() if line.strip()]
    for line in reversed(lines):
        if re.match(r"^([A-Za-z_][\w.]*)?(Error|Exception|Interrupt|Exit)\b.*:", line):
            return line[:400]
    return lines[-1][:400] if lines else "no output"


def _crash(code: int, output: str) -> Crash:
    lines = [line for line in output.splitlines() if line.strip()]
    name = signal.Signals(-code).name if code < 0 and -code in signal.valid_signals() else None
    return Crash(exit_code=code, signal=name, stderr_tail=lines[-CRASH_TAIL_LINES:])


def _stop(proc: subprocess.Popen[bytes]) -> None:
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


def run_worker(
    cmd: list[str], out: Path, env: dict[str, str], timeout_s: float, what: str, retries: int = 0
) -> WorkerReport | WorkerSkipped:
    """Run one worker command to completion and read its report; WorkerFailed otherwise. A command
    that exits with an error is run afresh up to ``retries`` times (a hung or killed one is not):
    a real bug fails every time, a transient crash (gloo's teardown, see `TORCH_RETRIES`) does not."""
    for attempt in range(retries + 1):
        out.unlink(missing_ok=True)  # a report from a crashed attempt is not this attempt's
        try:
            return _run_worker_once(cmd, out, env, timeout_s, what)
        except WorkerFailed as exc:
            code = exc.crash.exit_code if exc.crash else 0
            if attempt == retries or code in (0, -signal.SIGKILL):
                raise
    raise AssertionError("unreachable: the last attempt returns or raises")


def _run_worker_once(
    cmd: list[str], out: Path, env: dict[str, str], timeout_s: float, what: str
) -> WorkerReport | WorkerSkipped:
    log_path = out.with_suffix(".log")
    with open(log_path, "w", encoding="utf-8") as log:
        # A session of its own, so a hung run can be stopped with every process it started.
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
        try:
            code = proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            _stop(proc)
            output = log_path.read_text(encoding="utf-8", errors="replace")
            raise WorkerFailed(
                f"{what}: no result after {timeout_s:.0f} s, stopped (a hung collective?)",
                _crash(-signal.SIGKILL, output),
            ) from None
        except BaseException:
            _stop(proc)  # Ctrl-C reaches only this process: its workers are in their own session
            raise
    output = log_path.read_text(encoding="utf-8", errors="replace")
    if code != 0:
        raise WorkerFailed(f"{what}: exited with code {code}: {root_cause(output)}", _crash(code, output))
    if not out.exists():
        raise WorkerFailed(f"{what}: exited cleanly but wrote no report", _crash(code, output))
    return read_report(out)


def _describe(engine: Engine, world: int) -> str:
    unit = ("process", "processes") if engine.name == "torch" else ("device", "devices")
    return f"{engine.name} engine, {world} {unit[world != 1]}"


def train_record(
    report: WorkerReport, interconnect: Interconnect, cpu_name: str | None, size: str
) -> MeasurementRecord:
    timing = Measurement(
        times=tuple(report.sample_times_s),
        number_per_sample=report.steps_per_sample,
        warmup_s=report.warmup_s,
        sync=report.sync,
        threads=report.threads_per_process,
    )
    global_batch = report.per_device_batch * report.world_size
    total = global_batch / timing.median
    status, message = "ok", None
    if not report.replicas_in_sync:
        status, message = "invalid", "the replicas ended with different weights: gradients were not averaged"
    elif not (math.isfinite(report.loss_first) and math.isfinite(report.loss_last)):
        status, message = "invalid", f"the loss is not finite ({report.loss_first} -> {report.loss_last})"
    return MeasurementRecord(
        workload=TRAIN,
        framework=report.framework,
        device=report.device,
        device_name=report.device_names[0] if report.device_names else cpu_name,
        dtype="fp32",
        params={
            "engine": report.engine,
            "size": size,
            "world_size": report.world_size,
            "launcher": report.launcher,
            "backend": report.backend,
            "interconnect": interconnect.kind,
            "interconnect_detail": interconnect.detail,
            "model": MODEL,
            "data": "synthetic, held on the device",
            "per_device_batch": report.per_device_batch,
            "global_batch": global_batch,
            "per_device_samples_per_s": total / report.world_size,
            "threads_per_process": report.threads_per_process,
            "framework_version": report.framework_version,
            "loss_first": report.loss_first,
            "loss_last": report.loss_last,
        },
        metric=THROUGHPUT,
        value=total,
        stats=stats_of(timing),
        status=status,
        message=message,
    )


def scaling_record(baseline: MeasurementRecord, scaled: MeasurementRecord) -> MeasurementRecord:
    """Efficiency of ``scaled`` (N devices) against ``baseline`` (one), both 'ok' records of one launch."""
    world = int(scaled.params["world_size"])
    assert baseline.value is not None and scaled.value is not None
    keep = (
        "engine",
        "size",
        "world_size",
        "launcher",
        "backend",
        "interconnect",
        "interconnect_detail",
        "model",
        "per_device_batch",
        "threads_per_process",
        "framework_version",
    )
    return MeasurementRecord(
        workload=SCALING,
        framework=scaled.framework,
        device=scaled.device,
        device_name=scaled.device_name,
        dtype=scaled.dtype,
        params={k: scaled.params[k] for k in keep}
        | {
            "baseline_samples_per_s": baseline.value,
            "samples_per_s": scaled.value,
            "speedup": scaled.value / baseline.value,
        },
        metric=EFFICIENCY,
        value=scaling_efficiency(baseline.value, scaled.value, world),
    )


def allreduce_records(
    report: WorkerReport, interconnect: Interconnect, device_name: str | None
) -> list[MeasurementRecord]:
    return [
        MeasurementRecord(
            workload=ALLREDUCE,
            framework=report.framework,
            device=report.device,
            device_name=device_name,
            dtype="fp32",
            params={
                "op": "all_reduce",
                "bytes": t.bytes,
                "world_size": report.world_size,
                "backend": report.backend,
                "interconnect": interconnect.kind,
                "interconnect_detail": interconnect.detail,
                "iterations": t.iterations,
                "seconds_per_op": t.seconds,
                "algbw_gbps": algbw_gbps(t.bytes, t.seconds),
            },
            metric=BUS_BANDWIDTH,
            value=busbw_gbps(t.bytes, t.seconds, report.world_size),
        )
        for t in report.allreduce
    ]


def _skipped(
    engine: Engine, device: str, reason: SkipReason, message: str, size: str, world: int | None = None
) -> MeasurementRecord:
    params: dict[str, object] = {"engine": engine.name, "size": size}
    if world is not None:
        params["world_size"] = world
    return MeasurementRecord(
        workload=TRAIN,
        framework=engine.framework,
        device=device,
        metric=THROUGHPUT,
        status="skipped",
        skip_reason=reason,
        message=message,
        params=params,
    )


def resolve(engine: Engine, requested: str, machine: Machine) -> str:
    """The device this engine will use, or FrameworkMissing/ValueError saying why it can't run."""
    require(engine.framework, engine.install_hint)
    device = machine_device(machine) if requested == "auto" else requested
    if device not in engine.devices:
        raise ValueError(
            f"the {engine.name} engine does not run on {device}; "
            f"use one of: {', '.join(e.name for e in ENGINES.values() if device in e.devices)}"
        )
    return device


def torch_backend(requested: str, device: str) -> str:
    if requested == "auto":
        return "nccl" if device == "cuda" else "gloo"
    if requested == "nccl" and device != "cuda":
        raise ValueError("the nccl backend needs CUDA GPUs; use gloo on the CPU")
    return requested


@dataclass
class ScalingRun:
    """What ``run_scaling`` is asked to do; the CLI fills it from its flags."""

    engines: Sequence[str] = ("torch",)
    devices: int | None = None
    size: str = "quick"
    device: str = "auto"
    backend: str = "auto"
    timeout_s: float | None = None


def run_scaling(
    plan: ScalingRun,
    *,
    machine: Machine,
    out_dir: Path,
    on_start: Callable[[str], None] = lambda what: None,
    on_done: Callable[[str, list[MeasurementRecord]], None] = lambda what, records: None,
) -> RunOutcome:
    """Measure each engine on one device and on N in this launch; write ``out_dir/<machine id>/<run id>.json``."""
    if plan.size not in SIZES:
        raise ValueError(f"unknown size {plan.size!r}; choose one of {', '.join(SIZES)}")
    unknown = [name for name in plan.engines if name not in ENGINES]
    if unknown:
        raise ValueError(f"unknown engine {unknown[0]!r}; choose from {', '.join(ENGINES)}")
    size = SIZES[plan.size]
    started = time.perf_counter()
    results = new_results(machine, plan.size)
    path = results_path(out_dir, results)
    write_results(results, path)
    cpu_name = machine.host.cpu.model if machine.host else None
    per_engine: dict[str, float] = {}

    def add(what: str, records: list[MeasurementRecord]) -> None:
        results.measurements.extend(records)
        write_results(results, path)
        on_done(what, records)

    for name in plan.engines:
        engine = ENGINES[name]
        t0 = time.perf_counter()
        try:
            device = resolve(engine, plan.device, machine)
            backend = torch_backend(plan.backend, device) if engine.name == "torch" else engine.name
        except (FrameworkMissing, ValueError) as exc:
            reason: SkipReason = "framework-missing" if isinstance(exc, FrameworkMissing) else "device-unavailable"
            add(engine.name, [_skipped(engine, plan.device, reason, f"{engine.name} engine: {exc}", plan.size)])
            continue
        world = plan.devices or default_devices(machine, device)
        found = accelerator_count(machine, device)
        if world < 1 or (device != "cpu" and found and world > found):
            asked = f"asked for {world} {device} device(s), " if world else ""
            message = f"{engine.name} engine: {asked}the probe found {found}; pass the number of devices to use"
            add(engine.name, [_skipped(engine, device, "device-unavailable", message, plan.size)])
            continue
        interconnect = detect_interconnect(device, world)
        # Each process gets the same share of the cores in both runs, so one "device" is the same
        # amount of CPU whether it runs alone or beside the others.
        threads = max(1, usable_cpus() // world) if engine.name == "torch" else None
        env = dict(os.environ, PYTHONUNBUFFERED="1", TF_CPP_MIN_LOG_LEVEL="2")
        if threads:
            env["OMP_NUM_THREADS"] = str(threads)
        measured: dict[int, MeasurementRecord] = {}
        for n in sorted({1, world}):
            what = _describe(engine, n)
            on_start(what)
            with tempfile.TemporaryDirectory(prefix="benchlib-dp-") as tmp:
                out = Path(tmp) / "report.json"
                cmd = engine.command(n, plan.size, device, threads, backend, out)
                try:
                    report = run_worker(
                        cmd,
                        out,
                        env,
                        plan.timeout_s or size.timeout_s,
                        what,
                        retries=TORCH_RETRIES if engine.name == "torch" else 0,
                    )
                except WorkerFailed as exc:
                    add(
                        what,
                        [
                            MeasurementRecord(
                                workload=TRAIN,
                                framework=engine.framework,
                                device=device,
                                metric=THROUGHPUT,
                                status="error",
                                message=str(exc),
                                crash=exc.crash,
                                params={"engine": engine.name, "size": plan.size, "world_size": n},
                            )
                        ],
                    )
                    continue
            if isinstance(report, WorkerSkipped):
                # What stopped one device (no TPU, no JAX GPU backend) stops N as well.
                add(what, [_skipped(engine, device, "device-unavailable", f"{what}: {report.message}", plan.size, n)])
                break
            record = check(train_record(report, interconnect, cpu_name, plan.size), plan.device, machine)
            records = [record] + [
                check(r, plan.device, machine) for r in allreduce_records(report, interconnect, record.device_name)
            ]
            if record.status == "ok":
                measured[n] = record
            add(what, records)
        if world > 1 and {1, world} <= measured.keys():
            add(f"{engine.name} scaling", [check(scaling_record(measured[1], measured[world]), plan.device, machine)])
        per_engine[engine.name] = time.perf_counter() - t0
    results.complete = True
    write_results(results, path)
    return RunOutcome(path=path, results=results, wall_s=time.perf_counter() - started, per_workload_s=per_engine)
