"""Measured: the largest batch that completes a full training step without running out of memory.

The search doubles the batch until a trial runs out of memory, then bisects between the last
batch that fitted and the first that did not. Every trial runs in a child process that never
touched a GPU before (``benchlib.measure.isolation``: a forkserver on Linux, ``spawn`` elsewhere; CUDA
can't be used after a plain ``fork``), so an out-of-memory error, a fragmented allocator or a
process killed by the kernel takes only that trial with it.

In the child a trial builds the model, creates the optimizer state, runs ``steps`` full steps
and reports its peak memory:

* CUDA: ``torch.cuda.max_memory_allocated()``; ``--memory-limit`` becomes
  ``torch.cuda.set_per_process_memory_fraction``.
* MPS: ``torch.mps.driver_allocated_memory()`` after the steps (the pool it keeps, which is at
  least the peak of live tensors); the limit becomes ``torch.mps.set_per_process_memory_fraction``.
* CPU: how far the process's peak resident memory (``VmHWM``, reset through
  ``/proc/self/clear_refs``) rose above its resident memory just before the model was built, so
  the interpreter and libraries don't count (a GPU's memory holds none of them either). Before
  that, the child runs one small step and frees it, so code pages, thread pools and caches that
  load on first use are in the baseline. ``--memory-limit`` caps that same growth: a watchdog
  thread kills the child (SIGKILL, read as out of memory) once resident memory passes it, and a
  peak over the cap that the watchdog sampled too late still fails the trial. We tried a
  ``RLIMIT_AS`` cap first: a forked child reuses address space its parent had already mapped,
  so a trial could grow its resident memory well past the cap without new address space.
"""

from __future__ import annotations

import ctypes
import gc
import json
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

# What a trial runs is what its records state, so the request is defined with them (and `benchlib
# max-batch` still imports both names from here).
from benchlib.results.searches import DEFAULT_STEPS as DEFAULT_STEPS
from benchlib.results.searches import TrialRequest

TrialStatus = Literal["ok", "oom", "error"]
DEFAULT_BATCH_LIMIT = 4096
# The suite a search's results file names: it measures one batch limit, not a suite of workloads.
SEARCH_SUITE = "max-batch"
PAGE_FIELDS = ("VmHWM", "VmRSS")
PAGE_SIZE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
WATCH_INTERVAL_S = 0.002
# The warm-up step's batch: 2, because batch norm can't train on one value per channel.
WARM_BATCH = 2
# How the child says its memory cap stopped it (the parent quotes the line).
CAP_MESSAGE = "benchlib: resident memory grew"
# Imported once by the forkserver (on Linux) so each trial does not pay for them.
PRELOAD = ("torch", "torchvision")


@dataclass
class TrialOutcome:
    """What a trial reported (or how its process died)."""

    batch: int
    status: TrialStatus
    peak_bytes: int | None = None
    message: str | None = None
    seconds: float = 0.0
    peak_measure: str | None = None
    device_name: str | None = None
    details: dict[str, Any] = field(default_factory=dict)


# ----------------------------------------------------------------------------- the search


@dataclass
class SearchResult:
    """Every trial in the order it ran, and what they add up to."""

    trials: list[TrialOutcome]
    max_batch: int
    first_oom: int | None
    stopped_by: Literal["oom", "limit", "error"]

    def at(self, batch: int) -> TrialOutcome | None:
        return next((t for t in reversed(self.trials) if t.batch == batch), None)


def _recording(
    trial: Callable[[int], TrialOutcome], trials: list[TrialOutcome], on_trial: Callable[[TrialOutcome], None]
) -> Callable[[int], TrialOutcome]:
    """``trial``, appending each outcome to ``trials`` and telling ``on_trial``."""

    def run(batch: int) -> TrialOutcome:
        outcome = trial(batch)
        trials.append(outcome)
        on_trial(outcome)
        return outcome

    return run


def _bisect(run: Callable[[int], TrialOutcome], trials: list[TrialOutcome], fits: int, fails: int) -> SearchResult:
    """Bisect between a batch that fits (0 for none) and a larger one that ran out of memory."""
    while fails - fits > 1:
        batch = (fits + fails) // 2
        outcome = run(batch)
        if outcome.status == "error":
            return SearchResult(trials, fits, fails, "error")
        if outcome.status == "ok":
            fits = batch
        else:
            fails = batch
    return SearchResult(trials, fits, fails, "oom")


def search_max_batch(
    trial: Callable[[int], TrialOutcome],
    *,
    start: int = 1,
    limit: int = DEFAULT_BATCH_LIMIT,
    on_trial: Callable[[TrialOutcome], None] = lambda t: None,
) -> SearchResult:
    """Exponential growth from ``start`` until out of memory (or ``limit``), then bisection.

    A trial that fails for another reason ends the search: it says nothing about memory.
    """
    if not 1 <= start <= limit:
        raise ValueError(f"the search needs 1 <= start <= limit, got start={start}, limit={limit}")
    trials: list[TrialOutcome] = []
    run = _recording(trial, trials, on_trial)

    fits, fails = 0, None
    batch = start
    while fails is None:
        outcome = run(batch)
        if outcome.status == "error":
            return SearchResult(trials, fits, None, "error")
        if outcome.status == "oom":
            fails = batch
        elif batch >= limit:
            return SearchResult(trials, batch, None, "limit")
        else:
            fits, batch = batch, min(2 * batch, limit)
    return _bisect(run, trials, fits, fails)


# The first step away from a guess, as a share of it; each further step is twice the last.
FIRST_STEP = 1 / 16


def search_from_guess(
    trial: Callable[[int], TrialOutcome],
    guess: int,
    *,
    limit: int = DEFAULT_BATCH_LIMIT,
    on_trial: Callable[[TrialOutcome], None] = lambda t: None,
) -> SearchResult:
    """The same answer as `search_max_batch`, in fewer trials when ``guess`` (a prediction) is close.

    The first trial is at ``guess``; the search then steps up (or down), by a sixteenth of the
    batch and then twice as far each time, until one batch fits and a larger one runs out of
    memory, and bisects between them.
    """
    if limit < 1:
        raise ValueError(f"the search needs a batch limit of at least 1, got {limit}")
    trials: list[TrialOutcome] = []
    run = _recording(trial, trials, on_trial)

    fits, fails = 0, None
    batch, step = min(max(guess, 1), limit), FIRST_STEP
    while fails is None or (fits == 0 and fails > 1):
        outcome = run(batch)
        if outcome.status == "error":
            return SearchResult(trials, fits, fails, "error")
        if outcome.status == "ok":
            fits = batch
            if fails is None and batch >= limit:
                return SearchResult(trials, batch, None, "limit")
            if fails is None:
                batch, step = min(max(batch + 1, int(batch * (1 + step))), limit), 2 * step
            continue
        fails = batch
        if fits == 0:
            batch, step = max(1, min(batch - 1, int(batch / (1 + step)))), 2 * step
    return _bisect(run, trials, fits, fails)


# ----------------------------------------------------------------------------- in the child


def _proc_status() -> dict[str, int]:
    """Peak resident, resident and virtual size of this process, in bytes (Linux)."""
    out = {}
    with open("/proc/self/status", encoding="ascii") as fh:
        for line in fh:
            key, _, value = line.partition(":")
            if key in PAGE_FIELDS:
                out[key] = int(value.split()[0]) * 1024
    return out


def _reset_peak_rss() -> bool:
    """Reset VmHWM to the current RSS; False where the kernel doesn't allow it."""
    try:
        with open("/proc/self/clear_refs", "w", encoding="ascii") as fh:
            fh.write("5")
        return True
    except OSError:
        return False


# glibc mallopt() parameters (malloc.h): M_TRIM_THRESHOLD, M_MMAP_THRESHOLD, M_ARENA_MAX.
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD, _M_ARENA_MAX = -1, -3, -8
_MMAP_THRESHOLD_BYTES = 64 * 1024


def _glibc() -> Any:
    try:
        libc = ctypes.CDLL("libc.so.6")
        libc.mallopt, libc.malloc_trim  # noqa: B018  (both exist only in glibc)
        return libc
    except (OSError, AttributeError):
        return None


def _follow_live_memory() -> bool:
    """Make resident memory follow live allocations, so its peak measures the trial.

    By default glibc keeps freed heap memory and raises its mmap threshold as large blocks are
    freed (up to 32 MiB), so resident memory stays high after tensors die and the peak counts
    memory no tensor holds any more. A fixed threshold maps and unmaps large blocks as they come
    and go, and one arena keeps per-thread heaps from holding freed memory of their own.
    """
    libc = _glibc()
    if libc is None:
        return False
    return all(
        libc.mallopt(param, value) == 1
        for param, value in (
            (_M_MMAP_THRESHOLD, _MMAP_THRESHOLD_BYTES),
            (_M_TRIM_THRESHOLD, _MMAP_THRESHOLD_BYTES),
            (_M_ARENA_MAX, 1),
        )
    )


def _release_freed_heap() -> None:
    # Hand freed heap pages back, so the baseline holds only what is still in use.
    libc = _glibc()
    if libc is not None:
        libc.malloc_trim(0)


class CapExceeded(MemoryError):
    """The trial's resident memory went over ``--memory-limit`` (a MemoryError: out of memory)."""


def _resident_bytes() -> int:
    with open("/proc/self/statm", encoding="ascii") as fh:
        return int(fh.read().split()[1]) * PAGE_SIZE


class _Watchdog:
    """Stops the process when resident memory grows past the cap, as a full device would.

    Sampling can miss a short spike, so the verdict is the kernel's exact peak (VmHWM) after the
    step; the watchdog only keeps a runaway trial from taking the machine's memory first. It ends
    the process with SIGKILL, which the parent reads as out of memory, like the kernel's
    out-of-memory killer.
    """

    def __init__(self, baseline: int, limit: int) -> None:
        self.baseline, self.limit = baseline, limit
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._watch, name="benchlib-memory-cap", daemon=True)

    def _watch(self) -> None:
        while not self.done.wait(WATCH_INTERVAL_S):
            grown = _resident_bytes() - self.baseline
            if grown > self.limit:
                print(
                    f"{CAP_MESSAGE} by {grown} bytes, over the {self.limit}-byte --memory-limit; stopping the trial",
                    file=sys.stderr,
                    flush=True,
                )
                os.kill(os.getpid(), signal.SIGKILL)

    def __enter__(self) -> _Watchdog:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.done.set()
        self.thread.join()


def _cpu_trial(req: TrialRequest, attempt: Callable[[], None]) -> tuple[int, str, dict[str, Any]]:
    follows = _follow_live_memory()
    warm = _training_step(replace(req, batch=WARM_BATCH))
    warm.prime()
    warm.run()
    del warm
    gc.collect()
    _release_freed_heap()
    baseline = _proc_status()["VmRSS"]
    reset = _reset_peak_rss()
    if req.memory_limit:
        with _Watchdog(baseline, req.memory_limit):
            attempt()
    else:
        attempt()
    peak = _proc_status()["VmHWM"] - baseline
    if reset:
        measure = "peak resident memory (VmHWM) above the resident memory before the model was built"
    else:
        measure = "peak resident memory of the process (VmHWM, not resettable here) above the resident memory before the model was built"
    if not follows:
        measure += "; the C library's malloc could not be set to return freed memory, so it may count freed memory too"
    if req.memory_limit and reset and peak > req.memory_limit:
        raise CapExceeded(f"peak resident memory grew by {peak} bytes, over the {req.memory_limit}-byte --memory-limit")
    return peak, measure, {"baseline_rss_bytes": baseline}


def _cuda_trial(req: TrialRequest, attempt: Callable[[], None]) -> tuple[int, str, dict[str, Any]]:
    import torch

    total = torch.cuda.get_device_properties(0).total_memory
    if req.memory_limit:
        torch.cuda.set_per_process_memory_fraction(min(1.0, req.memory_limit / total))
    torch.cuda.reset_peak_memory_stats()
    attempt()
    torch.cuda.synchronize()
    details = {"max_memory_reserved_bytes": torch.cuda.max_memory_reserved(), "total_memory_bytes": total}
    return torch.cuda.max_memory_allocated(), "torch.cuda.max_memory_allocated", details


def _mps_trial(req: TrialRequest, attempt: Callable[[], None]) -> tuple[int, str, dict[str, Any]]:
    import torch

    if req.memory_limit:
        torch.mps.set_per_process_memory_fraction(min(1.0, req.memory_limit / torch.mps.recommended_max_memory()))
    attempt()
    torch.mps.synchronize()
    return torch.mps.driver_allocated_memory(), "torch.mps.driver_allocated_memory after the steps", {}


def _request(text: str) -> TrialRequest:
    fields = json.loads(text)
    if fields.get("input_shape") is not None:
        fields["input_shape"] = tuple(fields["input_shape"])
    return TrialRequest(**fields)


def _training_step(req: TrialRequest) -> Any:
    """The step ``req`` asks for, built on its device."""
    if req.language_model:
        from benchlib.catalog.language_models import resolve_model
        from benchlib.models.llm_step import LanguageModelStep

        assert req.seq_len is not None
        return LanguageModelStep(resolve_model(req.model), req.batch, req.seq_len, dtype=req.dtype, device=req.device)
    from benchlib.models.step import TrainingStep
    from benchlib.models.trainable import get_model

    return TrainingStep(
        get_model(req.model),
        req.batch,
        size=req.size,
        dtype=req.dtype,
        optimizer=req.optimizer,
        device=req.device,
        input_shape=req.input_shape,
    )


def run_trial(request: str) -> str:
    """Child-process entry point: run one trial described by ``request`` (JSON); returns JSON."""
    from benchlib.backends.oom import is_oom_error

    req = _request(request)
    started = time.perf_counter()
    outcome = TrialOutcome(batch=req.batch, status="ok")
    try:
        from benchlib.backends import torch_backend

        outcome.device_name = torch_backend.device_name(req.device)

        def attempt() -> None:
            step = _training_step(req)
            step.prime()
            for _ in range(req.steps):
                step.run()

        measure = {"cpu": _cpu_trial, "cuda": _cuda_trial, "mps": _mps_trial}[req.device]
        outcome.peak_bytes, outcome.peak_measure, outcome.details = measure(req, attempt)
    except BaseException as exc:  # the child reports every failure; the parent decides what it means
        outcome.status = "oom" if is_oom_error(exc) else "error"
        outcome.message = f"{type(exc).__name__}: {str(exc).strip().splitlines()[0] if str(exc).strip() else ''}"
    outcome.seconds = time.perf_counter() - started
    return json.dumps(asdict(outcome))


# ----------------------------------------------------------------------------- in the parent


def isolated_trial(req: TrialRequest) -> TrialOutcome:
    """Run ``req`` in a fresh child process; a child killed by SIGKILL counts as out of memory."""
    from benchlib.measure.isolation import run_isolated

    done = run_isolated(run_trial, json.dumps(asdict(req)), preload=PRELOAD)
    if done.result is not None:
        return TrialOutcome(**json.loads(done.result))
    crash = done.crash()
    # Our watchdog, the kernel's out-of-memory killer and a container's memory cap all end a
    # process with SIGKILL.
    status: TrialStatus = "oom" if crash is not None and crash.signal == "SIGKILL" else "error"
    capped = [line for line in done.output.splitlines() if line.startswith(CAP_MESSAGE)]
    message = capped[-1].removeprefix("benchlib: ") if capped else done.describe_crash()
    return TrialOutcome(batch=req.batch, status=status, message=message, seconds=done.wall_s)


def trial_runner(base: TrialRequest) -> Callable[[int], TrialOutcome]:
    """A function of the batch size that runs ``base`` at that size in a child process."""

    def trial(batch: int) -> TrialOutcome:
        return isolated_trial(replace(base, batch=batch))

    return trial


def _params(base: TrialRequest) -> dict[str, Any]:
    from benchlib.models.trainable import get_model

    if base.language_model:
        return {
            "model": base.model,
            "seq_len": base.seq_len,
            "optimizer": "adamw",
            "steps": base.steps,
            "memory_limit_bytes": base.memory_limit,
        }
    return {
        "model": base.model,
        "size": base.size,
        "input_shape": list(base.input_shape or get_model(base.model).input_shape(base.size)),
        "optimizer": base.optimizer,
        "steps": base.steps,
        "memory_limit_bytes": base.memory_limit,
    }


SEARCHES = {
    "doubling": "doubling from the start batch, then bisection",
    "guess": "from the start batch (fit's prediction), up or down in growing steps until one fits and a larger one "
    "doesn't, then bisection",
}


def search_records(
    trials: list[TrialOutcome],
    base: TrialRequest,
    result: SearchResult | None,
    *,
    start: int,
    limit: int,
    search: str = "doubling",
    telemetry: Any = None,
) -> list[Any]:
    """One ``peak_memory`` record per trial (out-of-memory ones included), then the ``max_batch``
    answer once the search is over (``result``). A language model's records belong to
    ``llm_max_batch``, whose params name a `benchlib fit` model rather than a built-in one."""
    from benchlib.results.schema import MeasurementRecord
    from benchlib.workloads import llm_max_batch, max_batch
    from benchlib.workloads.max_batch import MAX_BATCH, PEAK_MEMORY

    name = llm_max_batch.NAME if base.language_model else max_batch.NAME
    common = {"workload": name, "framework": "torch", "device": base.device, "dtype": base.dtype}
    records = [
        MeasurementRecord(
            **common,
            device_name=t.device_name,
            metric=PEAK_MEMORY,
            params={**_params(base), "batch": t.batch, "trial": i, "peak_measure": t.peak_measure, **t.details},
            value=t.peak_bytes if t.status == "ok" else None,
            status=t.status,
            message=t.message,
            duration_s=t.seconds,
        )
        for i, t in enumerate(trials, start=1)
    ]
    if result is None:
        return records
    best = result.at(result.max_batch)
    message = None
    if result.stopped_by == "limit":
        message = f"no out-of-memory error up to the batch limit {limit}; the real maximum may be higher"
    elif result.stopped_by == "error":
        message = "the search stopped at a trial that failed for a reason other than memory: " + (
            result.trials[-1].message or ""
        )
    elif result.max_batch == 0:
        message = "even a batch of 1 ran out of memory"
    status = "ok" if result.max_batch >= 1 else ("error" if result.stopped_by == "error" else "oom")
    records.append(
        MeasurementRecord(
            **common,
            device_name=best.device_name if best else None,
            metric=MAX_BATCH,
            params={
                **_params(base),
                "search": SEARCHES[search],
                "start_batch": start,
                "batch_limit": limit,
                "first_oom_batch": result.first_oom,
                "stopped_by": result.stopped_by,
                "peak_memory_bytes": best.peak_bytes if best else None,
                "peak_measure": best.peak_measure if best else None,
                "trials": len(result.trials),
            },
            value=result.max_batch if status == "ok" else None,
            status=status,
            message=message,
            duration_s=sum(t.seconds for t in result.trials),
            telemetry=telemetry,
        )
    )
    return records


def write_search(
    path: Path,
    header: Any,
    base: TrialRequest,
    trials: list[TrialOutcome],
    *,
    start: int,
    limit: int,
    result: SearchResult | None = None,
    search: str = "doubling",
    telemetry: Any = None,
) -> Any:
    """Write the search so far to ``path`` (atomically) under ``header`` (`new_results` with the suite
    ``max-batch``): every trial, and the answer once there is a ``result``."""
    from benchlib.results.store import write_results

    records = search_records(trials, base, result, start=start, limit=limit, search=search, telemetry=telemetry)
    results = header.model_copy(update={"complete": result is not None, "measurements": records})
    write_results(results, path)
    return results
