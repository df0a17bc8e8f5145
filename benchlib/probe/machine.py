"""Put the probes together into a `Machine`, with a stable id and a readable label."""

from __future__ import annotations

import hashlib
import re
from datetime import datetime, timezone

from benchlib.core.units import GIB
from benchlib.probe.frameworks import probe_software, probe_torch, probe_tpu
from benchlib.probe.host import probe_host
from benchlib.probe.nvidia import probe_nvidia
from benchlib.probe.platform import detect_platform
from benchlib.results.schema import Accelerators, HostInfo, Machine, PlatformInfo

PLATFORM_NAMES = {
    "colab": "Colab",
    "kaggle": "Kaggle",
    "ai-studio": "AI Studio",
    "studio-lab": "Studio Lab",
    "lightning": "Lightning AI",
    "paperspace": "Paperspace",
    "hf-spaces": "HF Spaces",
    "local": "local",
}
_SLUG_MAX = 40


def slugify(text: str) -> str:
    """Lower-case letters, digits and single dashes: safe as a folder name everywhere."""
    slug = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    return slug[:_SLUG_MAX].rstrip("-")


def short_cpu_name(model: str) -> str:
    """'Intel(R) Xeon(R) CPU @ 2.20GHz' -> 'Intel Xeon @ 2.20GHz'."""
    cleaned = re.sub(r"\((R|TM|tm|r)\)", "", model)
    cleaned = re.sub(r"\bCPU\b", "", cleaned)
    return " ".join(cleaned.split())


def _counted(names: list[str]) -> str:
    """['Tesla T4', 'Tesla T4'] -> '2× Tesla T4'; different cards are joined with ' + '."""
    parts = []
    for name in dict.fromkeys(names):
        count = names.count(name)
        parts.append(f"{count}× {name}" if count > 1 else name)
    return " + ".join(parts)


def accelerator_names(accelerators: Accelerators) -> list[str]:
    """One name per accelerator: NVIDIA cards, else what torch sees (ROCm), else TPU chips."""
    if accelerators.nvidia:
        return [gpu.name for gpu in accelerators.nvidia]
    if accelerators.torch is not None and accelerators.torch.device_names:
        return list(accelerators.torch.device_names)
    tpu = accelerators.tpu
    if tpu is not None:
        # JAX says "TPU v5 lite"; the environment says only "v3-8".
        kind = tpu.kind if tpu.kind and "tpu" in tpu.kind.lower() else f"TPU {tpu.kind or ''}".strip()
        return [kind] * (tpu.count or 1)
    return []


def machine_id(platform: PlatformInfo, host: HostInfo, accelerators: Accelerators) -> str:
    """``<platform>-<accelerator or cpu>-<8 hex>``: the hash covers the hardware, so it stays put across runs.

    UUIDs, free memory and software versions are left out on purpose: two Colab sessions on a T4
    are the same kind of machine, and results from both belong together. The CPU's flags are in:
    two CPUs of one name (cloud hosts say only "AMD EPYC") with and without ``avx512_bf16``
    measured bf16 matmuls 300x apart, and shared an id until the flags joined the hash. Files
    written before keep the id they were written with.
    """
    names = accelerator_names(accelerators)
    cpu = host.cpu
    memory_gib = round(host.memory_total_bytes / GIB) if host.memory_total_bytes else None
    fingerprint = "|".join(
        str(part)
        for part in (
            platform.name,
            ",".join(sorted(names)),
            cpu.model,
            cpu.logical_cores,
            memory_gib,
            ",".join(sorted(cpu.flags)),
        )
    )
    digest = hashlib.sha256(fingerprint.encode()).hexdigest()[:8]
    if names:
        head = slugify(_counted(names).replace("×", "x"))
    elif cpu.model:
        head = slugify(short_cpu_name(cpu.model))
    else:
        head = "cpu"
    return f"{platform.name}-{head or 'cpu'}-{digest}"


def machine_label(platform: PlatformInfo, host: HostInfo, accelerators: Accelerators) -> str:
    """'Colab · Tesla T4', 'Kaggle · 2× Tesla T4', 'local · AMD EPYC 7B13 (CPU only)'."""
    where = PLATFORM_NAMES[platform.name]
    names = accelerator_names(accelerators)
    if names:
        return f"{where} · {_counted(names)}"
    cpu = short_cpu_name(host.cpu.model) if host.cpu.model else "unknown CPU"
    mps = accelerators.torch is not None and accelerators.torch.mps_available
    return f"{where} · {cpu} ({'MPS' if mps else 'CPU only'})"


def probe_machine(results_dir: str | None = None) -> Machine:
    """Describe this machine: platform, host, accelerators and software.

    ``results_dir`` is where results will be written; its disk's size and free space are recorded.
    """
    platform = detect_platform()
    host = probe_host(results_dir)
    accelerators = Accelerators(nvidia=probe_nvidia(), torch=probe_torch(), tpu=probe_tpu())
    return Machine(
        id=machine_id(platform, host, accelerators),
        label=machine_label(platform, host, accelerators),
        platform=platform,
        host=host,
        accelerators=accelerators,
        software=probe_software(),
        probed_at=datetime.now(timezone.utc),
    )
