"""Runs a suite of workloads and writes one results file, atomically, after every workload.

A workload that fails (a framework missing, out of memory, an exception) becomes a record with
that status and a message naming the workload; the others go on and nothing finished is lost.
With ``isolate=True`` each workload runs in its own child process, so one that kills its
interpreter (segfault, OOM killer) is recorded as an error too. A run killed from outside
(SIGKILL, a Colab disconnect) leaves a valid, incomplete file that `resume_run` finishes; a
``budget_s`` keeps the run from starting work that would not end in time (`benchlib.measure.budget`).
"""

from __future__ import annotations

import errno
import importlib
import importlib.util
import json
import sys
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from benchlib.backends import DeviceUnavailable, FrameworkMissing
from benchlib.core.quiet import drop_noise, quiet_warnings
from benchlib.measure.budget import STARTUP, STARTUP_GUESS_S, Estimate, TimeBudget, expected_duration, past_durations
from benchlib.measure.conditions import ConditionsSampler, run_disturbed, run_gpu_index
from benchlib.measure.telemetry import TelemetrySampler
from benchlib.results.plausibility import PEAK_TOLERANCE, mark_invalid, problems
from benchlib.results.schema import FAILED_STATUSES, Crash, Machine, MeasurementRecord, ResultsFile, RunPlan, SkipReason
from benchlib.results.store import (
    ResultsError,
    iter_result_paths,
    new_results,
    read_results,
    remove_stale_temp_files,
    results_path,
    write_results,
)
from benchlib.workloads import (
    SIZES,
    WORKLOAD_MODULES_ENV,
    RunContext,
    Workload,
    get,
    import_workload_modules,
    in_suite,
    runnable,
)

__all__ = [
    "PEAK_TOLERANCE",
    "SUITES",
    "NothingToResume",
    "ResumeError",
    "RunOptions",
    "RunOutcome",
    "SaveError",
    "resume_run",
    "run_suite",
]

SUITES = SIZES  # defined once, with the workloads


class ResumeError(ValueError):
    """A run can't be resumed; the message says which file and why."""


class NothingToResume(ResumeError):
    """The run is already complete: resuming it has nothing to do, which is not a failure."""

    def __init__(self, path: Path) -> None:
        self.path = path
        super().__init__(f"nothing left to run; {path} is complete")


class SaveError(RuntimeError):
    """The results file could not be written (a full disk, a read-only folder); the run stopped.

    The file on disk is the last one written whole, so it is valid and ``saved`` lists what it
    holds: the finished workloads, or None when nothing could be written at all.
    """

    def __init__(self, path: Path, saved: list[str] | None, cause: OSError) -> None:
        self.path = path
        self.saved = saved
        reason = cause.strerror or str(cause)
        fix = "free some space" if cause.errno in (errno.ENOSPC, errno.EDQUOT) else "make the folder writable"
        if saved is None:
            message = f"cannot write {path}: {reason}. Nothing was saved; {fix} or choose another --out folder, then run again."
        else:
            held = (
                f"the {len(saved)} finished workload(s) {', '.join(saved)}"
                if saved
                else "the run's plan, no workload yet"
            )
            message = (
                f"cannot write {path}: {reason}. The file is intact and holds {held}; {fix}, "
                f"then finish the run with `benchlib run --resume {path}`."
            )
        super().__init__(message)


@dataclass
class RunOutcome:
    path: Path
    results: ResultsFile
    wall_s: float
    per_workload_s: dict[str, float] = field(default_factory=dict)
    # Wall time minus the workload's own time: child start-up, imports and the result's trip back.
    overhead_s: dict[str, float] = field(default_factory=dict)

    @property
    def failed(self) -> list[MeasurementRecord]:
        return [m for m in self.results.measurements if m.status in FAILED_STATUSES]

    @property
    def skipped_for_budget(self) -> list[str]:
        return [m.workload for m in self.results.measurements if m.skip_reason == "budget"]


def select_workloads(suite: str, only: Sequence[str] | None = None) -> list[Workload]:
    """The suite's workloads, or exactly those named in ``only`` (UnknownWorkload if one isn't known)."""
    if suite not in SUITES:
        raise ValueError(f"unknown suite {suite!r}; choose one of {', '.join(SUITES)}")
    import_workload_modules()
    if only:
        return [runnable(name) for name in dict.fromkeys(only)]
    return in_suite(suite)


def check(record: MeasurementRecord, requested_device: str, machine: Machine | None = None) -> MeasurementRecord:
    """Fail loudly instead of publishing an impossible number.

    A run that asked for an accelerator but ran on the CPU is an error (ai-benchmark once
    published a 'V100' score from a silent CPU fallback); a value the plausibility checks reject
    (more than 10 % above the device's known peak, a zero time, ...) is invalid.
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
        record = record.model_copy(update={"efficiency": record.value / record.peak})
    reasons = problems(record, machine)
    return mark_invalid(record, reasons) if reasons else record


def failure_record(
    workload: Workload,
    device: str,
    status: str,
    message: str,
    *,
    skip_reason: SkipReason | None = None,
    crash: Crash | None = None,
) -> MeasurementRecord:
    return MeasurementRecord(
        workload=workload.name,
        framework=workload.framework,
        device=device,
        metric=workload.metric,
        status=status,
        message=message,
        skip_reason=skip_reason,
        crash=crash,
    )


def run_workload(workload: Workload, ctx: RunContext, requested_device: str) -> list[MeasurementRecord]:
    """Run one workload and return its records; never raises for a workload's own failure."""
    from benchlib.backends import tf_backend, torch_backend

    params = workload.params(ctx.size, ctx.device)
    try:
        with TelemetrySampler() as sampler:
            records = workload.run(ctx, params)
    except FrameworkMissing as exc:
        return [failure_record(workload, ctx.device, "skipped", str(exc), skip_reason="framework-missing")]
    except DeviceUnavailable as exc:
        return [failure_record(workload, ctx.device, "skipped", str(exc), skip_reason="device-unavailable")]
    except Exception as exc:  # one workload's crash must not end the run
        if workload.framework == "torch" and torch_backend.is_oom(exc):
            torch_backend.empty_cache(ctx.device)
            return [failure_record(workload, ctx.device, "oom", f"{workload.name}: out of memory: {exc}")]
        if workload.framework == "tensorflow" and tf_backend.is_oom(exc):
            return [failure_record(workload, ctx.device, "oom", f"{workload.name}: out of memory: {exc}")]
        where = traceback.extract_tb(exc.__traceback__)[-1]
        return [
            failure_record(
                workload,
                ctx.device,
                "error",
                f"{workload.name} raised {type(exc).__name__}: {exc} ({Path(where.filename).name}:{where.lineno})",
            )
        ]
    # Every record names the workload that made it, so its successes and failures file together.
    stamp: dict[str, Any] = {"workload": workload.name, "framework": workload.framework}
    if telemetry := sampler.result():
        stamp["telemetry"] = telemetry
    return [check(r.model_copy(update=stamp), requested_device, ctx.machine) for r in records]


def _timed_json(workload: Workload, ctx: RunContext, requested_device: str) -> str:
    started = time.perf_counter()
    records = run_workload(workload, ctx, requested_device)
    work_s = time.perf_counter() - started
    return json.dumps({"work_s": work_s, "records": [r.model_dump(mode="json", exclude_none=True) for r in records]})


# Imported in a child before the clock starts, so that duration_s doesn't count the import.
_FRAMEWORK_MODULES = {
    "torch": "torch",
    "tensorflow": "tensorflow",
    "tf": "tensorflow",
    "jax": "jax",
    "fastai": "fastai",
}
# Frameworks whose import is known to leave the GPU untouched, so the forkserver may import them
# once for all children (a process that has initialised CUDA can't fork a child that uses it).
# The others are imported in each child.
_FORK_SAFE = ("torch",)


def _framework_module(workload: Workload) -> str | None:
    module = _FRAMEWORK_MODULES.get(workload.framework)
    return module if module and importlib.util.find_spec(module) is not None else None


def preload_modules(workloads: Sequence[Workload]) -> list[str]:
    """What the forkserver imports once for these workloads' children: their modules, and torch.

    Workload modules import frameworks lazily and touch no device at import, so this is safe.
    """
    modules = dict.fromkeys(w.run.__module__ for w in workloads if w.run.__module__ != "__main__")
    frameworks = dict.fromkeys(m for m in map(_framework_module, workloads) if m in _FORK_SAFE)
    # triton (pulled in by torchvision and fastai) aborts the process with an LLVM option clash
    # if TensorFlow was imported first; importing it up front keeps the order safe in every child.
    first = ["triton"] if importlib.util.find_spec("triton") is not None else []
    return [*first, "benchlib.measure.runner", *modules, *frameworks]


def _workload_in_child(name: str, ctx: RunContext, requested_device: str, modules: list[str]) -> str:
    """The isolated child's entry point: find the workload by name, run it, return JSON."""
    for module in modules:
        importlib.import_module(module)
    workload = get(name)
    framework = _framework_module(workload)
    if framework:
        importlib.import_module(framework)
    return _timed_json(workload, ctx, requested_device)


def _storable(workload: Workload, device: str, payload: str) -> tuple[list[MeasurementRecord], float]:
    """Records from a workload's JSON, each one proven to fit the results format.

    Going through JSON in both the isolated and the in-process path means a record that can't
    be written (NaN turns into null) becomes an error record here, not an unreadable file.
    """
    data = json.loads(payload)
    records = []
    for raw in data["records"]:
        try:
            records.append(MeasurementRecord.model_validate(raw))
        except ValidationError as exc:
            fields = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
            records.append(
                failure_record(
                    workload, device, "error", f"{workload.name} returned a record that can't be stored: {fields}"
                )
            )
    return records, float(data["work_s"])


def resolve_device(requested: str) -> str:
    """The concrete device for ``requested``; DeviceUnavailable if it isn't on this machine.

    Without torch, ``auto`` means the CPU and workloads needing torch are skipped by name.
    """
    from benchlib.backends import torch_backend

    if requested == "cpu":
        return "cpu"  # always there; no need to import a framework to say so
    try:
        return torch_backend.resolve_device(requested)
    except FrameworkMissing:
        return "cpu" if requested == "auto" else requested


def _finished(results: ResultsFile) -> set[str]:
    # A workload is finished once its wall time is recorded: that happens in the same write as its records.
    return set(results.plan.wall_s) if results.plan else set()


def unfinished(results: ResultsFile) -> list[str]:
    """The planned workloads that haven't finished, in plan order (skipped for the budget included)."""
    done = _finished(results)
    return [name for name in results.plan.workloads if name not in done] if results.plan else []


def _is_complete(results: ResultsFile) -> bool:
    return results.plan is not None and set(results.plan.workloads) <= _finished(results)


def _finished_in_order(results: ResultsFile) -> list[str]:
    done = _finished(results)
    return [name for name in results.plan.workloads if name in done] if results.plan else []


def _write_stderr(workload: Workload, output: str) -> None:
    sys.stderr.write(output)


@dataclass(frozen=True)
class RunOptions:
    """How a run goes, started or resumed: its time budget, whether each workload runs in its own
    process, and what is called as a workload starts, finishes and prints."""

    budget_s: float | None = None
    isolate: bool = False
    on_start: Callable[[Workload], None] = lambda w: None
    on_done: Callable[[Workload, list[MeasurementRecord]], None] = lambda w, r: None
    on_output: Callable[[Workload, str], None] = _write_stderr


def _save(results: ResultsFile, path: Path, saved: list[str] | None) -> list[str]:
    """Write ``results`` and return the finished workloads now on disk.

    If the disk or folder refuses the write: SaveError, saying what the file still holds (``saved``).
    """
    try:
        write_results(results, path)
    except OSError as exc:
        raise SaveError(path, saved, exc) from exc
    return _finished_in_order(results)


def _execute(
    results: ResultsFile,
    path: Path,
    pending: Sequence[Workload],
    *,
    machine: Machine,
    options: RunOptions,
) -> RunOutcome:
    from benchlib.measure.isolation import run_isolated

    assert results.plan is not None
    plan = results.plan
    # The caller has just written (or read) the file: what it holds now.
    saved = _finished_in_order(results)
    resolved = resolve_device(plan.device)
    history = past_durations(path.parent, plan.size)
    quick = past_durations(path.parent, "quick", start_up=False) if plan.size != "quick" else {}
    startup_guess = Estimate(STARTUP_GUESS_S if options.isolate else 0.0, "a guess until one is timed")
    extra_modules = import_workload_modules()
    # Snapshots before and after each workload, never during one: watching must not slow it.
    sampler = ConditionsSampler(gpu_index=run_gpu_index() if resolved == "cuda" else None)
    budget = TimeBudget(options.budget_s)
    per_workload: dict[str, float] = {}
    overhead: dict[str, float] = {}
    unwritten = False
    for workload in pending:
        startup = budget.expected(STARTUP, startup_guess).seconds
        estimate = expected_duration(workload, plan.size, history, startup, quick)
        if not budget.fits(estimate):
            skip = failure_record(
                workload, resolved, "skipped", f"{workload.name}: {budget.why_not(estimate)}", skip_reason="budget"
            )
            results.measurements = [
                m for m in results.measurements if m.workload != workload.name or m.skip_reason != "budget"
            ]
            results.measurements.append(skip)
            unwritten = True
            options.on_done(workload, [skip])
            continue
        options.on_start(workload)
        ctx = RunContext(device=resolved, machine=machine, size=plan.size)
        before = sampler.snapshot()
        t0 = time.perf_counter()
        child_pids: tuple[int, ...] = ()
        if options.isolate:
            child = run_isolated(
                _workload_in_child,
                workload.name,
                ctx,
                plan.device,
                extra_modules,
                preload=preload_modules(pending),
            )
            child_pids = (child.pid,) if child.pid is not None else ()
            # Framework start-up chatter stays in the crash record's tail, not on the screen.
            shown = drop_noise(child.output)
            if shown.strip():
                options.on_output(workload, shown)
            if child.result is None:
                message = f"{workload.name}: {child.describe_crash()}"
                records, work_s = (
                    [failure_record(workload, resolved, "error", message, crash=child.crash())],
                    child.wall_s,
                )
            else:
                records, work_s = _storable(workload, resolved, child.result)
        else:
            records, work_s = _storable(workload, resolved, _timed_json(workload, ctx, plan.device))
        wall = time.perf_counter() - t0
        plan.conditions[workload.name] = sampler.after(before, child_pids)
        per_workload[workload.name] = wall
        if options.isolate:
            overhead[workload.name] = max(wall - work_s, 0.0)
            budget.took(STARTUP, overhead[workload.name])
        records = [r.model_copy(update={"duration_s": work_s}) if r.duration_s is None else r for r in records]
        results.measurements = [
            m for m in results.measurements if m.workload != workload.name or m.skip_reason != "budget"
        ]
        results.measurements.extend(records)
        plan.wall_s[workload.name] = wall
        results.disturbed = run_disturbed(results)
        results.complete = _is_complete(results)
        saved = _save(results, path, saved)
        unwritten = False
        options.on_done(workload, records)
    if unwritten or results.complete != _is_complete(results):
        results.complete = _is_complete(results)
        _save(results, path, saved)
    return RunOutcome(
        path=path,
        results=results,
        wall_s=time.perf_counter() - budget.started,
        per_workload_s=per_workload,
        overhead_s=overhead,
    )


def _check_isolatable(workloads: Sequence[Workload]) -> None:
    import_workload_modules()
    for w in workloads:
        try:
            registered = get(w.name)
        except KeyError:
            registered = None
        if registered is not w:
            raise ValueError(
                f"workload {w.name!r} is not in the registry, so an isolated child can't find it; register it "
                f"in a module listed in ${WORKLOAD_MODULES_ENV}, or run with isolate=False"
            )


def run_suite(
    workloads: Sequence[Workload],
    *,
    suite: str,
    device: str,
    machine: Machine,
    out_dir: Path,
    **options: Any,
) -> RunOutcome:
    """Run ``workloads`` on ``device`` and write ``out_dir/<machine id>/<run id>.json`` after each one.

    The file is written once before the first workload (so a kill at any point leaves a file that
    `resume_run` can finish) and then once per workload: one rename each, which keeps a run on a
    slow mount like Google Drive cheap. ``options`` are `RunOptions`' fields: ``isolate`` runs
    each workload in its own process.
    """
    run_options = RunOptions(**options)
    quiet_warnings()  # before a workload's framework imports tqdm.auto
    if run_options.isolate:
        _check_isolatable(workloads)
    resolve_device(device)
    plan = RunPlan(workloads=[w.name for w in workloads], size=suite, device=device, isolated=run_options.isolate)
    results = new_results(machine, suite, plan=plan)
    path = results_path(out_dir, results)
    results.complete = _is_complete(results)
    _save(results, path, None)
    return _execute(results, path, workloads, machine=machine, options=run_options)


def find_resumable(target: Path, machine_id: str) -> Path:
    """The results file ``target`` names, or the one unfinished run of this machine in folder ``target``.

    A folder whose runs of this machine are all complete raises NothingToResume (naming the newest),
    so that resuming a run that finished is a no-op rather than an error.
    """
    target = Path(target)
    if target.is_file():
        return target
    if not target.is_dir():
        raise ResumeError(f"{target}: no such results file or folder")
    found = []
    complete: list[tuple[float, Path]] = []
    for path in iter_result_paths(target):
        try:
            results = read_results(path, mark_implausible=False)
        except ResultsError:
            continue
        if results.plan is None or results.machine.id != machine_id:
            continue
        if results.complete:
            complete.append((results.created.timestamp(), path))
        else:
            found.append(path)
    if not found and complete:
        raise NothingToResume(max(complete)[1])
    if not found:
        raise ResumeError(
            f"{target} holds no unfinished run of this machine ({machine_id}); start one with `benchlib run`"
        )
    if len(found) > 1:
        listing = ", ".join(str(p) for p in found)
        raise ResumeError(
            f"{target} holds {len(found)} unfinished runs of this machine: {listing}; pass the one to resume"
        )
    return found[0]


def _software_differences(before: Machine, now: Machine) -> list[str]:
    old = before.software.model_dump() if before.software else {}
    new = now.software.model_dump() if now.software else {}
    return [f"{k} {old.get(k)} -> {new.get(k)}" for k in sorted(old.keys() | new.keys()) if old.get(k) != new.get(k)]


def resumable(path: Path, machine: Machine) -> ResultsFile:
    """The unfinished run in ``path``, if this machine may finish it; ResumeError says why not."""
    results = read_results(path)
    if results.provenance.kind != "measured" or results.plan is None:
        raise ResumeError(
            f"{path} is not a run benchlib can resume (it has no run plan: reported, or written by an older benchlib)"
        )
    if results.complete:
        raise NothingToResume(path)
    if results.machine.id != machine.id:
        raise ResumeError(
            f"{path} was measured on {results.machine.label} ({results.machine.id}), but this machine is "
            f"{machine.label} ({machine.id}); one run holds one machine's numbers, so start a new run here"
        )
    changed = _software_differences(results.machine, machine)
    if changed:
        raise ResumeError(
            f"{path}: the software changed since this run started ({', '.join(changed)}); start a new run"
        )
    return results


def resume_run(path: Path, *, machine: Machine, **options: Any) -> RunOutcome:
    """Finish a killed or budget-cut run: run only its unfinished workloads, in the same file.

    Finished workloads (including those that failed or were skipped for a missing framework)
    are kept as they are; those skipped for the budget and the one a kill interrupted run now.
    ``options`` are `RunOptions`' fields, as for `run_suite`.
    """
    run_options = RunOptions(**options)
    path = Path(path)
    results = resumable(path, machine)
    import_workload_modules()
    pending = [get(name) for name in unfinished(results)]
    if run_options.isolate:
        _check_isolatable(pending)
    try:
        remove_stale_temp_files(path)
    except OSError as exc:
        raise SaveError(path, _finished_in_order(results), exc) from exc
    results.plan.isolated = results.plan.isolated and run_options.isolate
    return _execute(results, path, pending, machine=machine, options=run_options)
