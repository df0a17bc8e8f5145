"""The host: CPU, memory, disk, shared memory, OS and container.

Every reading is optional: a sandbox that hides /proc, or a filesystem that refuses statvfs,
gives None for that field instead of stopping the probe.
"""

from __future__ import annotations

import os
import platform
import subprocess
from pathlib import Path

import psutil

from benchlib.results.schema import CPUInfo, HostInfo

# The CPU features that decide which kernels numpy, oneDNN and torch can use on this host.
IMPORTANT_FLAGS = (
    "avx",
    "avx2",
    "fma",
    "f16c",
    "avx_vnni",
    "avx512f",
    "avx512bw",
    "avx512_vnni",
    "avx512_bf16",
    "avx512_fp16",
    "amx_tile",
    "amx_bf16",
    "amx_int8",
    # Arm names, from the "Features" line.
    "asimd",
    "asimdhp",
    "sve",
    "sve2",
    "bf16",
    "i8mm",
)

CPUINFO_PATH = Path("/proc/cpuinfo")
SHM_PATH = "/dev/shm"
CGROUP_PATH = Path("/proc/1/cgroup")
CONTAINER_MARKERS = (Path("/.dockerenv"), Path("/run/.containerenv"))
_CGROUP_HINTS = ("docker", "kubepods", "containerd", "lxc", "podman", "libpod")


def _read_text(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


def parse_cpuinfo(text: str) -> tuple[str | None, list[str]]:
    """The CPU model and the important flags from /proc/cpuinfo text (first processor block)."""
    model: str | None = None
    flags: set[str] = set()
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if not sep:
            continue
        key = key.strip().lower()
        value = value.strip()
        # x86 says "model name"; Arm kernels use "Hardware", "Processor" or "cpu model".
        if model is None and key in ("model name", "hardware", "processor", "cpu model") and value:
            if not value.isdigit():  # on x86, "processor" is just the CPU's index
                model = value
        elif key in ("flags", "features") and not flags:
            flags = set(value.split())
    return model, [flag for flag in IMPORTANT_FLAGS if flag in flags]


def _macos_cpu_model() -> str | None:
    try:
        done = subprocess.run(
            ["sysctl", "-n", "machdep.cpu.brand_string"], capture_output=True, text=True, timeout=5, check=True
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() or None


def probe_cpu() -> CPUInfo:
    """CPU model, core counts and flags; model falls back to what the OS says when /proc is absent."""
    text = _read_text(CPUINFO_PATH)
    model, flags = parse_cpuinfo(text) if text is not None else (None, [])
    if model is None and platform.system() == "Darwin":
        model = _macos_cpu_model()
    if model is None:
        model = platform.processor() or None
    return CPUInfo(
        model=model,
        logical_cores=psutil.cpu_count(logical=True),
        physical_cores=psutil.cpu_count(logical=False),
        flags=flags,
    )


def _disk(path: str) -> tuple[int | None, int | None]:
    # A results folder the runner has not created yet lives on its nearest existing parent's disk.
    while not os.path.exists(path) and os.path.dirname(path) != path:
        path = os.path.dirname(path)
    try:
        usage = psutil.disk_usage(path)
    except OSError:
        return None, None
    return usage.total, usage.free


def _os_name() -> str | None:
    try:
        return platform.freedesktop_os_release().get("PRETTY_NAME") or None
    except OSError:
        # Not Linux, or no os-release file: "macOS-14.4-arm64", "Windows-10-...".
        return platform.platform(terse=True) or None


def in_container() -> bool | None:
    """True on a Docker/Podman marker file or a container cgroup; None when nothing can be read.

    False only means "no sign of one": under cgroup v2 a container's /proc/1/cgroup can read "0::/".
    """
    if any(marker.exists() for marker in CONTAINER_MARKERS):
        return True
    cgroup = _read_text(CGROUP_PATH)
    if cgroup is None:
        return None
    return any(hint in cgroup for hint in _CGROUP_HINTS)


def probe_host(results_dir: str | None = None) -> HostInfo:
    """Describe the host; disk figures are for ``results_dir`` (default: the working directory)."""
    disk_path = os.path.abspath(results_dir or os.getcwd())
    disk_total, disk_free = _disk(disk_path)
    shm_total = _disk(SHM_PATH)[0] if os.path.isdir(SHM_PATH) else None
    try:
        memory = psutil.virtual_memory()
        memory_total, memory_available = memory.total, memory.available
    except (OSError, RuntimeError):
        memory_total = memory_available = None
    return HostInfo(
        cpu=probe_cpu(),
        memory_total_bytes=memory_total,
        memory_available_bytes=memory_available,
        disk_path=disk_path,
        disk_total_bytes=disk_total,
        disk_free_bytes=disk_free,
        shm_total_bytes=shm_total,
        os=_os_name(),
        kernel=platform.release() or None,
        container=in_container(),
    )
