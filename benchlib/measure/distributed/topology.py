"""How the devices of a data-parallel run are linked: NVLink, PCIe (and how far apart), or nothing.

Gradients cross this link every step, so it decides how well two GPUs scale. NVIDIA GPUs are
asked through NVML: ``nvmlDeviceGetP2PStatus`` (NVLink index) for each pair, falling back to
``nvmlDeviceGetNvLinkState`` where the driver can't answer per pair, and
``nvmlDeviceGetTopologyCommonAncestor`` for how far apart on PCIe a pair without NVLink sits.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from itertools import combinations
from typing import Any, Literal

Kind = Literal["nvlink", "pcie", "ici", "none", "unknown"]


@dataclass(frozen=True)
class Interconnect:
    kind: Kind
    detail: str


# nvmlGpuTopologyLevel_t: the closest common ancestor of two GPUs on the PCIe tree.
PCIE_LEVELS: dict[int, str] = {
    0: "on the same board",
    10: "behind one PCIe switch",
    20: "behind several PCIe switches",
    30: "through the CPU's PCIe host bridge",
    40: "across host bridges within one NUMA node",
    50: "across CPU sockets",
}


def _nvlinked(nvml: Any, a: Any, b: Any) -> bool:
    try:
        return nvml.nvmlDeviceGetP2PStatus(a, b, nvml.NVML_P2P_CAPS_INDEX_NVLINK) == nvml.NVML_P2P_STATUS_OK
    except nvml.NVMLError:
        pass  # an older driver: any active link on both GPUs (NVSwitch systems link every pair)
    return _has_active_nvlink(nvml, a) and _has_active_nvlink(nvml, b)


def _has_active_nvlink(nvml: Any, handle: Any) -> bool:
    for link in range(nvml.NVML_NVLINK_MAX_LINKS):
        try:
            if nvml.nvmlDeviceGetNvLinkState(handle, link) == nvml.NVML_FEATURE_ENABLED:
                return True
        except nvml.NVMLError:
            # NotSupported on GPUs without NVLink (the T4); InvalidArgument past the last link.
            return False
    return False


def interconnect_from_nvml(nvml: Any, indices: list[int]) -> Interconnect:
    """Classify the links between the GPUs at NVML ``indices``; the slowest pair decides."""
    handles = {i: nvml.nvmlDeviceGetHandleByIndex(i) for i in indices}
    pairs = list(combinations(indices, 2))
    linked = [(i, j) for i, j in pairs if _nvlinked(nvml, handles[i], handles[j])]
    if len(linked) == len(pairs):
        return Interconnect("nvlink", f"NVLink between every pair of GPUs {indices}")
    worst = max(
        nvml.nvmlDeviceGetTopologyCommonAncestor(handles[i], handles[j]) for i, j in pairs if (i, j) not in linked
    )
    where = PCIE_LEVELS.get(worst, f"NVML topology level {worst}")
    detail = f"PCIe, {where} (GPUs {indices})"
    if linked:
        detail += f"; NVLink only between {', '.join(f'{i}-{j}' for i, j in linked)}"
    return Interconnect("pcie", detail)


def visible_gpu_indices(count: int) -> list[int]:
    """The NVML indices of the first ``count`` GPUs the workers will use.

    CUDA_VISIBLE_DEVICES written as indices is honoured; UUIDs or MIG names fall back to 0..count-1.
    """
    visible = os.environ.get("CUDA_VISIBLE_DEVICES", "").strip()
    if visible:
        entries = [e.strip() for e in visible.split(",") if e.strip()]
        if all(e.isdigit() for e in entries) and len(entries) >= count:
            return [int(e) for e in entries[:count]]
    return list(range(count))


def detect_interconnect(device: str, count: int) -> Interconnect:
    """The link between ``count`` devices of kind ``device`` (cpu, cuda or tpu) on this machine."""
    if device == "cpu":
        return Interconnect("none", "CPU processes on one host exchange gradients through memory")
    if device == "tpu":
        return Interconnect("ici", "TPU chips of one slice are linked by Google's inter-chip interconnect (not probed)")
    if count < 2:
        return Interconnect("none", "one device: nothing to exchange")
    try:
        import pynvml
    except ImportError:
        return Interconnect("unknown", "nvidia-ml-py is not installed")
    try:
        pynvml.nvmlInit()
    except pynvml.NVMLError as exc:
        return Interconnect("unknown", f"NVML unavailable: {exc}")
    try:
        return interconnect_from_nvml(pynvml, visible_gpu_indices(count))
    except pynvml.NVMLError as exc:
        return Interconnect("unknown", f"NVML could not tell: {exc}")
    finally:
        try:
            pynvml.nvmlShutdown()
        except pynvml.NVMLError:
            pass  # nothing left to report from a library that half-failed
