"""Plausibility checks: values no real run can produce are marked invalid, never published.

The runner applies them to new measurements, and `read_results` applies them to every file it
reads (contributed, imported, committed), so a number that breaks physics or the machine's own
description can't reach a chart. A marked record keeps its value: nothing measured is thrown
away, it is only labelled.
"""

from __future__ import annotations

import math
import re

from benchlib.results.schema import Machine, MeasurementRecord, ResultsFile

PEAK_TOLERANCE = 1.10
# When a workload counts as disturbed (`benchlib.measure.conditions` applies these, `disturbed_line`
# reports them; the methodology page states them). The score aims at a 3 % spread on a quiet machine; other work taking more than
# that share of the CPU can slow a workload that uses every core by more than that.
OTHERS_MAX_CPU_SHARE = 0.03
# CPU time the hypervisor gave to other virtual machines is time the workload couldn't run: same bound.
STEAL_MAX_SHARE = 0.03
# Another process keeping the GPU's SMs busy more than this time-slices its kernels with ours.
GPU_OTHERS_MAX_SM_PERCENT = 3.0
SCALING_EFFICIENCY_MAX = 1.10
SCALING_EFFICIENCY = "scaling_efficiency"
TIME_UNITS = frozenset({"s", "ms", "us", "µs", "ns", "min", "h"})
_NVIDIA_WORDS = re.compile(r"\b(nvidia|geforce|tesla|quadro|titan|rtx|gtx)\b", re.IGNORECASE)
_CUDA_DEVICES = ("cuda",)


def known_peak(record: MeasurementRecord) -> float | None:
    """The record's own peak, else the spec sheet's for TFLOPS and GB/s on an accelerator.

    Looking the peak up means a contributed file can't pass an impossible number by leaving the
    peak out.
    """
    if record.peak:
        return record.peak
    if record.device == "cpu" or not record.device_name:
        return None
    from benchlib.catalog.gpus import PEAK_DTYPES, peak_bandwidth_gbps, peak_tflops

    unit = record.metric.unit
    if unit == "TFLOPS" and record.dtype in PEAK_DTYPES:
        return peak_tflops(record.device_name, record.dtype)
    if unit == "GB/s":
        # Every transfer a device does (copy, PCIe, host) is bounded by its memory bandwidth.
        return peak_bandwidth_gbps(record.device_name)
    return None


def names_nvidia_gpu(device_name: str) -> bool:
    if _NVIDIA_WORDS.search(device_name):
        return True
    from benchlib.catalog.gpus import find_accelerator

    spec = find_accelerator(device_name)
    return spec is not None and spec.kind == "gpu" and spec.vendor.casefold() == "nvidia"


def machine_has_no_gpu(machine: Machine) -> bool:
    """True only when the machine record positively says it has no CUDA (or ROCm) device."""
    acc = machine.accelerators
    if acc is None or acc.nvidia:
        return False
    torch = acc.torch
    return torch is None or (not torch.cuda_available and torch.cuda_device_count == 0 and not torch.device_names)


def problems(record: MeasurementRecord, machine: Machine | None = None) -> list[str]:
    """Why an 'ok' record can't be a real measurement; empty when it is plausible.

    Records that are not 'ok' carry no number to judge and pass unchanged.
    """
    if record.status != "ok" or record.value is None:
        return []
    out: list[str] = []
    value, unit, name = record.value, record.metric.unit, record.metric.name
    if not math.isfinite(value):
        return [f"value: {value} is not a finite number"]
    if value <= 0 and (unit in TIME_UNITS or record.metric.higher_is_better):
        kind = "time" if unit in TIME_UNITS else "rate or score"
        out.append(f"value: {value:g} {unit} is not a possible {kind}; it must be above zero")
    if record.stats is not None:
        s = record.stats
        bad = {k: v for k, v in (("median", s.median), ("mean", s.mean), ("min", s.min), ("max", s.max)) if not v > 0}
        if any(not t > 0 for t in s.times):
            bad["times"] = min(s.times)
        if not s.iqr >= 0:
            bad["iqr"] = s.iqr
        for field, v in bad.items():
            out.append(f"stats.{field}: {v:g} s is not a possible time")
    if record.duration_s is not None and not record.duration_s >= 0:
        out.append(f"duration_s: {record.duration_s:g} s is not a possible time")
    peak = known_peak(record)
    if peak and value / peak > PEAK_TOLERANCE:
        out.append(
            f"value: {value:.4g} {unit} is {value / peak:.0%} of the known peak {peak:.4g}; "
            "a timing or sync error is more likely than a real result"
        )
    if name == SCALING_EFFICIENCY and value > SCALING_EFFICIENCY_MAX:
        out.append(
            f"value: a scaling efficiency of {value:.3g} is above {SCALING_EFFICIENCY_MAX}; more devices can't be that much better than linear"
        )
    if record.device == "cpu" and record.device_name and names_nvidia_gpu(record.device_name):
        out.append(f"device: the record names the GPU {record.device_name!r} but says it ran on the CPU")
    if machine is not None and record.device in _CUDA_DEVICES and machine_has_no_gpu(machine):
        out.append(f"device: the record claims {record.device}, but machine {machine.id!r} has no GPU")
    return out


def mark_invalid(record: MeasurementRecord, reasons: list[str]) -> MeasurementRecord:
    return record.model_copy(update={"status": "invalid", "message": "implausible: " + "; ".join(reasons)})


def findings(results: ResultsFile) -> list[str]:
    """Every plausibility problem in the file, each naming its field as ``measurements.<i>.<field>``."""
    return [
        f"measurements.{i}.{problem}"
        for i, record in enumerate(results.measurements)
        for problem in problems(record, results.machine)
    ]


def mark(results: ResultsFile) -> ResultsFile:
    """The file with its implausible 'ok' records marked invalid (the same object if none are)."""
    marked = []
    changed = False
    for record in results.measurements:
        reasons = problems(record, results.machine)
        marked.append(mark_invalid(record, reasons) if reasons else record)
        changed = changed or bool(reasons)
    return results.model_copy(update={"measurements": marked}) if changed else results


def disturbed_workloads(results: ResultsFile) -> dict[str, list[str]]:
    """The run's disturbed workloads and why, in run order."""
    conditions = results.plan.conditions if results.plan else {}
    return {name: c.disturbed for name, c in conditions.items() if c.disturbed}


def run_disturbed(results: ResultsFile) -> bool | None:
    """The run-level flag: True if any workload was disturbed, False only if every finished one was seen quiet."""
    if disturbed_workloads(results):
        return True
    plan = results.plan
    return False if plan is not None and set(plan.wall_s) <= set(plan.conditions) else None


def disturbed_line(results: ResultsFile) -> str | None:
    """One line naming the disturbed workloads and why, for a run's output; None for a quiet run."""
    found = disturbed_workloads(results)
    if not found:
        return None
    detail = "; ".join(f"{name}: {', '.join(why)}" for name, why in found.items())
    return f"disturbed run: other work on this machine may have slowed {len(found)} workload(s) ({detail})"
