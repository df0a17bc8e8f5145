"""A two-column rich table of a `Machine`, for ``benchlib probe``."""

from __future__ import annotations

from rich.markup import escape
from rich.table import Table

from benchlib.core.units import format_bytes
from benchlib.probe.machine import PLATFORM_NAMES
from benchlib.results.schema import GPUInfo, Machine, Software, TorchDevices, TPUInfo


def _both(n: int | None) -> str:
    """Binary and decimal side by side, since drivers print MiB and vendors print GB."""
    if n is None:
        return "unknown"
    return f"{format_bytes(n)} ({format_bytes(n, binary=False)})"


def _or_unknown(value: object) -> str:
    return "unknown" if value is None else str(value)


def _gpu_row(gpu: GPUInfo) -> str:
    parts = [gpu.name, f"{_both(gpu.memory_total_bytes)} total", f"{_both(gpu.memory_free_bytes)} free"]
    if gpu.compute_capability:
        parts.append(f"sm {gpu.compute_capability}")
    if gpu.power_limit_w is not None:
        parts.append(f"{gpu.power_limit_w:g} W limit")
    if gpu.sm_clock_max_mhz is not None:
        parts.append(f"SM ≤{gpu.sm_clock_max_mhz} MHz")
    if gpu.mem_clock_max_mhz is not None:
        parts.append(f"mem ≤{gpu.mem_clock_max_mhz} MHz")
    driver = f"driver {gpu.driver}" if gpu.driver else None
    if driver and gpu.cuda_driver:
        driver += f" (CUDA {gpu.cuda_driver})"
    parts.extend(p for p in (driver, f"via {gpu.source}") if p)
    return " · ".join(parts)


def _torch_row(devices: TorchDevices) -> str:
    if devices.cuda_available:
        backend = f"ROCm {devices.hip_version}" if devices.hip_version else "CUDA"
        names = ", ".join(devices.device_names)
        return f"{backend}: {devices.cuda_device_count} device(s) — {names}"
    return "MPS available" if devices.mps_available else "CPU only"


def _tpu_row(tpu: TPUInfo) -> str:
    count = f"{tpu.count}× " if tpu.count else ""
    return f"{count}{tpu.kind or 'TPU (kind unknown)'} (via {tpu.backend})"


def _software_row(software: Software) -> str:
    versions = software.model_dump(exclude_none=True)
    return ", ".join(f"{name} {version}" for name, version in versions.items())


def machine_table(machine: Machine) -> Table:
    """Platform, host, accelerators and software, one labelled row each."""
    table = Table(title=f"{escape(machine.label)}  [dim]({escape(machine.id)})[/dim]", show_header=False)
    table.add_column("what", style="bold")
    table.add_column("value", overflow="fold")

    def row(what: str, value: str) -> None:
        # Values come from the machine (CPU strings, GPU names); brackets in them are not markup.
        table.add_row(escape(what), escape(value))

    platform = machine.platform
    where = PLATFORM_NAMES[platform.name] + (f" ({platform.variant})" if platform.variant else "")
    row("platform", f"{where} — {platform.signal or 'no platform signal'}")

    host = machine.host
    if host is not None:
        cpu = host.cpu
        row("CPU", _or_unknown(cpu.model))
        row("cores", f"{_or_unknown(cpu.logical_cores)} logical, {_or_unknown(cpu.physical_cores)} physical")
        row("CPU flags", ", ".join(cpu.flags) or "none of note")
        row("memory", f"{_both(host.memory_total_bytes)} total, {_both(host.memory_available_bytes)} available")
        row("disk", f"{_both(host.disk_free_bytes)} free of {_both(host.disk_total_bytes)} at {host.disk_path}")
        row("/dev/shm", _both(host.shm_total_bytes))
        row("OS", f"{_or_unknown(host.os)}, kernel {_or_unknown(host.kernel)}")
        row("container", {True: "yes", False: "no sign of one", None: "unknown"}[host.container])

    accelerators = machine.accelerators
    if accelerators is not None:
        if not accelerators.nvidia:
            row("NVIDIA GPUs", "none found")
        for gpu in accelerators.nvidia:
            row(f"GPU {gpu.index}", _gpu_row(gpu))
        row("torch sees", _torch_row(accelerators.torch) if accelerators.torch else "torch not installed")
        row("TPU", _tpu_row(accelerators.tpu) if accelerators.tpu else "none")

    if machine.software is not None:
        row("software", _software_row(machine.software))
    if machine.probed_at is not None:
        row("probed at", machine.probed_at.isoformat(timespec="seconds"))
    return table
