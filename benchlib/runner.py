"""Runs a suite of workloads and writes one results file, atomically, after every workload.

A workload that fails (a framework missing, out of memory, an exception) becomes a record with
that status and a message naming the workload; the others go on and nothing finished is lost.
"""

from __future__ import annotations

import time
import traceback
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

import benchlib
from benchlib.backends import DeviceUnavailable, FrameworkMissing
from benchlib.results.schema import Machine, MeasurementRecord, ResultsFile
from benchlib.results.store import write_results
from benchlib.telemetry import TelemetrySampler
from benchlib.workloads import RunContext, Workload, get, in_suite

SUITES = ("quick", "standard", "full")
PEAK_TOLERANCE = 1.10
FAILED = ("error", "oom", "invalid")


@dataclass
class RunOutcome:
    path: Path
    results: ResultsFile
    wall_s: float
    per_workload_s: dict[str, float] = field(default_factory=dict)

    @property
    def failed(self) -> list[MeasurementRecord]:
        return [m for m in self.results.measurements if m.status in FAILED]


def select_workloads(suite: str, only: Sequence[str] | None = None) -> list[Workload]:
    """The suite's workloads, or exactly those named in ``only`` (UnknownWorkload if one isn't known)."""
    if suite not in SUITES:
        raise ValueError(f"unknown suite {suite!r}; choose one of {', '.join(SUITES)}")
    if only:
        return [get(name) for name in only]
    return in_suite(suite)


def new_run_id(now: datetime) -> str:
    return f"{now:%Y%m%dT%H%M%SZ}-{uuid.uuid4().hex[:6]}"


def check(record: MeasurementRecord, requested_device: str) -> MeasurementRecord:
    """Fail loudly instead of publishing an impossible number.

    A value above the device's known peak by more than 10 % is invalid, and a run that asked
    for an accelerator but ran on the CPU is an error (ai-benchmark once published a 'V100'
    score from a silent CPU fallback).
    """
    if record.status != "ok":
        return record
    if requested_device not in ("auto", record.device):
        return record.model_copy(
            update={
                "status": "error",
                "message": f"asked for {requested_device} but the work ran on {record.device}; not a {requested_device} number",
            }
        )
    if record.peak and record.value is not None:
        efficiency = record.value / record.peak
        if efficiency > PEAK_TOLERANCE:
            return record.model_copy(
                update={
                    "status": "invalid",
                    "efficiency": efficiency,
                    "message": f"{record.value:.4g} {record.metric.unit} is {efficiency:.0%} of the known peak "
                    f"{record.peak:.4g}; a timing or sync error is more likely than a real result",
                }
            )
        return record.model_copy(update={"efficiency": efficiency})
    return record


def failure_record(workload: Workload, device: str, status: str, message: str) -> MeasurementRecord:
    return MeasurementRecord(
        workload=workload.name, framework=workload.framework, device=device, metric=workload.metric,
        status=status, message=message,
    )


def run_workload(workload: Workload, ctx: RunContext, requested_device: str) -> list[MeasurementRecord]:
    """Run one workload and return its records; never raises for a workload's own failure."""
    from benchlib.backends import torch_backend

    params = workload.params(ctx.size)
    try:
        with TelemetrySampler() as sampler:
            records = workload.run(ctx, params)
    except FrameworkMissing as exc:
        return [failure_record(workload, ctx.device, "skipped", str(exc))]
    except DeviceUnavailable as exc:
        return [failure_record(workload, ctx.device, "skipped", str(exc))]
    except Exception as exc:  # one workload's crash must not end the run
        if workload.framework == "torch" and torch_backend.is_oom(exc):
            torch_backend.empty_cache(ctx.device)
            return [failure_record(workload, ctx.device, "oom", f"{workload.name}: out of memory: {exc}")]
        where = traceback.extract_tb(exc.__traceback__)[-1]
        return [
            failure_record(
                workload, ctx.device, "error",
                f"{workload.name} raised {type(exc).__name__}: {exc} ({Path(where.filename).name}:{where.lineno})",
            )
        ]
    telemetry = sampler.result()
    return [check(r.model_copy(update={"telemetry": telemetry}) if telemetry else r, requested_device) for r in records]


def resolve_device(requested: str) -> str:
    """The concrete device for ``requested``; DeviceUnavailable if it isn't on this machine.

    Without torch, ``auto`` means the CPU and workloads needing torch are skipped by name.
    """
    from benchlib.backends import torch_backend

    try:
        return torch_backend.resolve_device(requested)
    except FrameworkMissing:
        return "cpu" if requested == "auto" else requested


def run_suite(
    workloads: Sequence[Workload],
    *,
    suite: str,
    device: str,
    machine: Machine,
    out_dir: Path,
    on_start: Callable[[Workload], None] = lambda w: None,
    on_done: Callable[[Workload, list[MeasurementRecord]], None] = lambda w, r: None,
) -> RunOutcome:
    """Run ``workloads`` on ``device`` and write ``out_dir/<machine id>/<run id>.json`` after each one."""
    resolved = resolve_device(device)
    started = time.perf_counter()
    now = datetime.now(timezone.utc)
    results = ResultsFile(
        run_id=new_run_id(now), created=now, benchlib_version=benchlib.__version__,
        methodology_version=benchlib.METHODOLOGY_VERSION, suite=suite, machine=machine,
    )
    path = Path(out_dir) / machine.id / f"{results.run_id}.json"
    write_results(results, path)
    per_workload: dict[str, float] = {}
    for workload in workloads:
        on_start(workload)
        t0 = time.perf_counter()
        records = run_workload(workload, RunContext(device=resolved, machine=machine, size=suite), device)
        elapsed = time.perf_counter() - t0
        per_workload[workload.name] = elapsed
        records = [r.model_copy(update={"duration_s": elapsed}) if r.duration_s is None else r for r in records]
        results.measurements.extend(records)
        write_results(results, path)
        on_done(workload, records)
    results.complete = True
    write_results(results, path)
    return RunOutcome(path=path, results=results, wall_s=time.perf_counter() - started, per_workload_s=per_workload)
