"""NVIDIA GPUs through NVML, or through ``nvidia-smi`` when the NVML bindings are missing or fail.

No GPU, no driver and no ``nvidia-smi`` is a normal answer: an empty list.
"""

from __future__ import annotations

import csv
import shutil
import subprocess
import warnings
from collections.abc import Callable
from typing import Any, TypeVar

from benchlib.core.units import MIB
from benchlib.results.schema import GPUInfo

NVIDIA_SMI = "nvidia-smi"
SMI_FIELDS = (
    "index",
    "name",
    "uuid",
    "memory.total",
    "memory.free",
    "driver_version",
    "compute_cap",
    "power.limit",
    "clocks.max.sm",
    "clocks.max.mem",
)
SMI_TIMEOUT_S = 15
# How nvidia-smi says a field has no value on this GPU.
_SMI_MISSING = {"", "n/a", "[n/a]", "[not supported]", "[unknown error]", "[insufficient permissions]"}

T = TypeVar("T")


class NvidiaSmiParseError(ValueError):
    """nvidia-smi printed something this module cannot read."""


def _text(value: str | bytes) -> str:
    # nvidia-ml-py before 11.515 returned bytes; newer versions return str.
    return value.decode() if isinstance(value, bytes) else value


def _cuda_version(encoded: int) -> str:
    """NVML encodes CUDA 12.2 as 12020."""
    return f"{encoded // 1000}.{encoded % 1000 // 10}"


def _gpus_from_nvml(nvml: Any) -> list[GPUInfo]:
    def optional(read: Callable[..., T], *args: Any) -> T | None:
        # A field a GPU does not support (power limit on some boards) must not lose the others.
        try:
            return read(*args)
        except nvml.NVMLError:
            return None

    driver = optional(nvml.nvmlSystemGetDriverVersion)
    cuda = optional(nvml.nvmlSystemGetCudaDriverVersion)
    gpus = []
    for index in range(nvml.nvmlDeviceGetCount()):
        handle = nvml.nvmlDeviceGetHandleByIndex(index)
        memory = optional(nvml.nvmlDeviceGetMemoryInfo, handle)
        capability = optional(nvml.nvmlDeviceGetCudaComputeCapability, handle)
        # The management limit is what nvidia-smi calls power.limit, so both sources agree.
        power_mw = optional(nvml.nvmlDeviceGetPowerManagementLimit, handle)
        uuid = optional(nvml.nvmlDeviceGetUUID, handle)
        gpus.append(
            GPUInfo(
                index=index,
                name=_text(nvml.nvmlDeviceGetName(handle)),
                uuid=_text(uuid) if uuid is not None else None,
                memory_total_bytes=int(memory.total) if memory is not None else None,
                memory_free_bytes=int(memory.free) if memory is not None else None,
                driver=_text(driver) if driver is not None else None,
                cuda_driver=_cuda_version(cuda) if cuda else None,
                compute_capability=f"{capability[0]}.{capability[1]}" if capability else None,
                power_limit_w=power_mw / 1000 if power_mw is not None else None,
                sm_clock_max_mhz=optional(nvml.nvmlDeviceGetMaxClockInfo, handle, nvml.NVML_CLOCK_SM),
                mem_clock_max_mhz=optional(nvml.nvmlDeviceGetMaxClockInfo, handle, nvml.NVML_CLOCK_MEM),
                source="nvml",
            )
        )
    return gpus


def probe_nvml() -> list[GPUInfo] | None:
    """GPUs as NVML reports them; None when NVML cannot be used here (no bindings or no driver)."""
    try:
        import pynvml
    except ImportError:
        return None
    try:
        pynvml.nvmlInit()
    except pynvml.NVMLError:
        return None
    try:
        return _gpus_from_nvml(pynvml)
    except pynvml.NVMLError:
        return None
    finally:
        try:
            pynvml.nvmlShutdown()
        except pynvml.NVMLError:
            pass  # shutting down a library that half-failed has nothing left to report


def _smi_value(line_no: int, field: str, raw: str, convert: Callable[[str], T]) -> T | None:
    if raw.strip().lower() in _SMI_MISSING:
        return None
    try:
        return convert(raw.strip())
    except ValueError as error:
        raise NvidiaSmiParseError(f"nvidia-smi line {line_no}: field {field!r} has {raw.strip()!r}") from error


def parse_nvidia_smi_csv(text: str) -> list[GPUInfo]:
    """Parse ``--query-gpu`` output in :data:`SMI_FIELDS` order with ``csv,noheader,nounits``."""
    gpus = []
    for line_no, row in enumerate(csv.reader(text.splitlines(), skipinitialspace=True), start=1):
        if not row:
            continue
        if len(row) != len(SMI_FIELDS):
            raise NvidiaSmiParseError(
                f"nvidia-smi line {line_no}: expected {len(SMI_FIELDS)} fields ({', '.join(SMI_FIELDS)}), "
                f"got {len(row)}: {','.join(row)!r}"
            )
        raw = dict(zip(SMI_FIELDS, row))

        def value(field: str, convert: Callable[[str], T]) -> T | None:
            return _smi_value(line_no, field, raw[field], convert)  # noqa: B023 (called in this iteration only)

        index = value("index", int)
        name = value("name", str)
        if index is None or name is None:
            raise NvidiaSmiParseError(f"nvidia-smi line {line_no}: a GPU needs an index and a name, got {row!r}")
        total_mib = value("memory.total", float)
        free_mib = value("memory.free", float)
        gpus.append(
            GPUInfo(
                index=index,
                name=name,
                uuid=value("uuid", str),
                memory_total_bytes=round(total_mib * MIB) if total_mib is not None else None,
                memory_free_bytes=round(free_mib * MIB) if free_mib is not None else None,
                driver=value("driver_version", str),
                compute_capability=value("compute_cap", str),
                power_limit_w=value("power.limit", float),
                sm_clock_max_mhz=value("clocks.max.sm", lambda s: round(float(s))),
                mem_clock_max_mhz=value("clocks.max.mem", lambda s: round(float(s))),
                source="nvidia-smi",
            )
        )
    return gpus


def probe_nvidia_smi() -> list[GPUInfo]:
    """GPUs as ``nvidia-smi`` reports them; empty when it is absent, fails, or prints nonsense."""
    executable = shutil.which(NVIDIA_SMI)
    if executable is None:
        return []
    command = [executable, f"--query-gpu={','.join(SMI_FIELDS)}", "--format=csv,noheader,nounits"]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=SMI_TIMEOUT_S, check=False)
    except (OSError, subprocess.SubprocessError):
        return []
    if done.returncode != 0:
        # e.g. "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver".
        return []
    try:
        return parse_nvidia_smi_csv(done.stdout)
    except NvidiaSmiParseError as error:
        warnings.warn(f"ignoring nvidia-smi output: {error}", RuntimeWarning, stacklevel=2)
        return []


def probe_nvidia() -> list[GPUInfo]:
    """NVIDIA GPUs from NVML, else from nvidia-smi, else none."""
    gpus = probe_nvml()
    return gpus if gpus is not None else probe_nvidia_smi()
