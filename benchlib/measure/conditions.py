"""What else the machine does while a workload runs: load, CPU steal, other processes' CPU and GPU use.

The runner takes a `Snapshot` just before and just after each workload, never during it, so
watching costs the measurement nothing, and `compare` turns the two into the `Conditions`
stored in the results file. A workload is *disturbed* when other work took more of the machine
than the thresholds below allow; its run is then marked disturbed, in the file and in the
output, and is never used as the score's reference.

"Other processes" are everything outside this run's own process tree (this process, its
children, and the children they have already reaped), so a workload's own threads, data
loader workers and isolated child process never count against it.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import psutil

# The thresholds, and what a run's disturbed marks add up to, live with the other marks a record can
# get, where the site can read them too; the runner and the command line import the two below from here.
from benchlib.results.plausibility import GPU_OTHERS_MAX_SM_PERCENT, OTHERS_MAX_CPU_SHARE, STEAL_MAX_SHARE
from benchlib.results.plausibility import disturbed_line as disturbed_line
from benchlib.results.plausibility import run_disturbed as run_disturbed
from benchlib.results.schema import Conditions, GPUOthers

# The kernel counts CPU time in 10 ms ticks, per CPU and per process; a few ticks of rounding
# between the machine's and this run's counters is not another process.
CLOCK_SLACK_S = 0.05

# psutil.cpu_times() fields that are not time spent running something (guest is already in user).
_NOT_BUSY = frozenset({"idle", "iowait", "steal", "guest", "guest_nice"})
_COUNTED_TWICE = frozenset({"guest", "guest_nice"})
# Only POSIX reports the CPU time of finished child processes (os.times' children_*), which is
# where an isolated workload's time goes once its process ends; elsewhere it would look like others'.
_OWN_TIME_KNOWN = os.name == "posix"


@dataclass(frozen=True)
class Snapshot:
    """The machine's counters at one moment; `compare` two of them for the interval between."""

    at: float
    unix_us: int
    load_1m: float | None
    cpu_s: dict[str, float] | None
    own_cpu_s: float | None
    own_pids: frozenset[int]
    gpu_processes: tuple[tuple[int, int | None], ...] | None = None  # (pid, used memory bytes)


def _own_tree() -> tuple[float | None, frozenset[int]]:
    """CPU seconds used so far by this process and every descendant, finished ones included."""
    me = psutil.Process()
    times = os.times()
    total = times.user + times.system + times.children_user + times.children_system
    pids = {me.pid}
    for child in me.children(recursive=True):
        try:
            t = child.cpu_times()
        except psutil.Error:  # ended while we looked; its time moves to its parent's children_*
            continue
        total += t.user + t.system + getattr(t, "children_user", 0.0) + getattr(t, "children_system", 0.0)
        pids.add(child.pid)
    return (total if _OWN_TIME_KNOWN else None), frozenset(pids)


def _load_1m() -> float | None:
    try:
        return os.getloadavg()[0]
    except (AttributeError, OSError):  # Windows has none
        return None


def _cpu_seconds() -> dict[str, float] | None:
    try:
        return dict(psutil.cpu_times()._asdict())
    except (OSError, psutil.Error):
        return None


def run_gpu_index() -> int | None:
    """NVML's index of the GPU a CUDA run uses (its first visible device); None when only a UUID names it."""
    first = os.environ.get("CUDA_VISIBLE_DEVICES", "0").split(",")[0].strip()
    return int(first) if first.isdigit() else None


class ConditionsSampler:
    """Takes the snapshots around each workload of one run; ``gpu_index`` is the GPU it uses, if any."""

    def __init__(self, gpu_index: int | None = None, nvml: Any = None) -> None:
        self._nvml = nvml
        self._handle: Any = None
        if gpu_index is not None:
            self._handle = self._open(gpu_index)

    def _open(self, index: int) -> Any:
        if self._nvml is None:
            try:
                import pynvml
            except ImportError:
                return None
            self._nvml = pynvml
        try:
            self._nvml.nvmlInit()
            return self._nvml.nvmlDeviceGetHandleByIndex(index)
        except Exception:  # no driver or no such GPU: GPU conditions are simply not recorded
            return None

    def _gpu_processes(self) -> tuple[tuple[int, int | None], ...] | None:
        if self._handle is None:
            return None
        try:
            found = self._nvml.nvmlDeviceGetComputeRunningProcesses(self._handle)
        except Exception:
            return None
        return tuple((int(p.pid), int(p.usedGpuMemory) if p.usedGpuMemory is not None else None) for p in found)

    def _others_sm_percent(self, since_us: int, ours: frozenset[int]) -> float | None:
        """The highest SM use NVML sampled for a process not ours since ``since_us``; None where it can't say."""
        if self._handle is None:
            return None
        nv = self._nvml
        try:
            samples = nv.nvmlDeviceGetProcessUtilization(self._handle, since_us)
        except Exception as exc:
            # NOT_FOUND: no process has a sample since then, so none of the others computed;
            # anything else (NOT_SUPPORTED on many boards) leaves the field unknown.
            not_found = getattr(nv, "NVML_ERROR_NOT_FOUND", None)
            return 0.0 if not_found is not None and getattr(exc, "value", None) == not_found else None
        others = [float(s.smUtil) for s in samples if int(s.pid) not in ours and int(s.timeStamp) >= since_us]
        return max(others, default=0.0)

    def snapshot(self) -> Snapshot:
        own_cpu_s, own_pids = _own_tree()
        return Snapshot(
            at=time.perf_counter(),
            unix_us=int(time.time() * 1e6),
            load_1m=_load_1m(),
            cpu_s=_cpu_seconds(),
            own_cpu_s=own_cpu_s,
            own_pids=own_pids,
            gpu_processes=self._gpu_processes(),
        )

    def after(self, before: Snapshot, run_pids: Iterable[int] = ()) -> Conditions:
        """Conditions since ``before``; ``run_pids`` are the run's processes that have ended since (an isolated child)."""
        after = self.snapshot()
        ours = before.own_pids | after.own_pids | frozenset(run_pids)
        return compare(before, after, run_pids=ours, gpu_sm_percent=self._others_sm_percent(before.unix_us, ours))


def compare(
    before: Snapshot, after: Snapshot, *, run_pids: frozenset[int] = frozenset(), gpu_sm_percent: float | None = None
) -> Conditions:
    """What other work took of the machine between two snapshots, and whether that disturbed the workload."""
    seconds = max(after.at - before.at, 0.0)
    others_s = others_share = steal_share = None
    reasons: list[str] = []
    if before.cpu_s is not None and after.cpu_s is not None:
        delta = {k: after.cpu_s[k] - before.cpu_s.get(k, 0.0) for k in after.cpu_s}
        all_cpu_s = sum(v for k, v in delta.items() if k not in _COUNTED_TWICE)
        if all_cpu_s > 0 and "steal" in delta:
            steal_share = max(delta["steal"], 0.0) / all_cpu_s
            if (delta["steal"] - CLOCK_SLACK_S) / all_cpu_s > STEAL_MAX_SHARE:
                reasons.append(
                    f"the hypervisor gave {steal_share:.0%} of the CPU time to other virtual machines (steal)"
                )
        if all_cpu_s > 0 and before.own_cpu_s is not None and after.own_cpu_s is not None:
            busy_s = sum(v for k, v in delta.items() if k not in _NOT_BUSY)
            others_s = max(busy_s - (after.own_cpu_s - before.own_cpu_s), 0.0)
            others_share = others_s / all_cpu_s
            if (others_s - CLOCK_SLACK_S) / all_cpu_s > OTHERS_MAX_CPU_SHARE:
                cpus = f" ({others_s / seconds:.2f} CPUs on average)" if seconds > 0 else ""
                reasons.append(f"other processes took {others_share:.0%} of the CPU{cpus}")
    gpu = None
    if before.gpu_processes is not None and after.gpu_processes is not None:
        ours = before.own_pids | after.own_pids | run_pids
        held_before = [memory for pid, memory in before.gpu_processes if pid not in ours]
        held_after = [memory for pid, memory in after.gpu_processes if pid not in ours]
        memory = [m for m in held_before + held_after if m is not None]
        gpu = GPUOthers(
            processes_before=len(held_before),
            processes_after=len(held_after),
            memory_bytes=max(memory) if memory else None,
            sm_percent=gpu_sm_percent,
        )
        if gpu_sm_percent is not None and gpu_sm_percent > GPU_OTHERS_MAX_SM_PERCENT:
            reasons.append(f"another process kept the GPU's SMs {gpu_sm_percent:.0f}% busy")
    return Conditions(
        seconds=seconds,
        logical_cpus=psutil.cpu_count(logical=True),
        load_avg_before=before.load_1m,
        load_avg_after=after.load_1m,
        others_cpu_s=others_s,
        others_cpu_share=others_share,
        steal_share=steal_share,
        gpu=gpu,
        disturbed=reasons,
    )
