"""The torch backend: CPU, CUDA (and ROCm, which torch exposes as CUDA) and MPS."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from benchlib.backends import DeviceUnavailable, require

if TYPE_CHECKING:
    import torch

DEVICES = ("auto", "cpu", "cuda", "mps")
DTYPES = ("fp32", "tf32", "fp16", "bf16")


def import_torch() -> Any:
    require("torch", "install it with `pip install 'benchlib[torch]'`")
    import torch

    return torch


def resolve_device(requested: str) -> str:
    """Map ``auto|cpu|cuda|mps`` to a device torch can use, or raise DeviceUnavailable."""
    torch = import_torch()
    if requested not in DEVICES:
        raise DeviceUnavailable(f"unknown device {requested!r}; choose one of {', '.join(DEVICES)}")
    cuda = torch.cuda.is_available()
    mps = getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available()
    if requested == "auto":
        return "cuda" if cuda else "mps" if mps else "cpu"
    if requested == "cuda" and not cuda:
        raise DeviceUnavailable("--device cuda was asked for, but torch sees no CUDA device")
    if requested == "mps" and not mps:
        raise DeviceUnavailable("--device mps was asked for, but torch sees no MPS device")
    return requested


def device_name(device: str, cpu_name: str | None = None) -> str:
    """The name the device reports; for the CPU, the probed model name when given."""
    torch = import_torch()
    if device == "cuda":
        return str(torch.cuda.get_device_name(0))
    if device == "mps":
        return "Apple MPS"
    return cpu_name or "CPU"


def sync_function(device: str) -> tuple[Callable[[], None], str]:
    """The function that waits for queued work on ``device``, and its name for the record."""
    torch = import_torch()
    if device == "cuda":
        return torch.cuda.synchronize, "torch.cuda.synchronize"
    if device == "mps":
        return torch.mps.synchronize, "torch.mps.synchronize"
    return (lambda: None), "none (cpu is synchronous)"


def supported_dtypes(device: str) -> list[str]:
    """The dtypes a matmul can run in on this device; tf32 only where tensor cores provide it."""
    torch = import_torch()
    if device == "cuda":
        major, _ = torch.cuda.get_device_capability(0)
        out = ["fp32", "fp16"]
        if major >= 8:
            out[1:1] = ["tf32"]
            out.append("bf16")
        return out
    if device == "mps":
        return ["fp32", "fp16"]
    return ["fp32", "bf16"]


def accelerator_dtype(device: str, preferred: Sequence[str], workload: str) -> str:
    """fp32 on the CPU; elsewhere the first of ``preferred`` the device supports (ValueError naming ``workload``)."""
    if device == "cpu":
        return "fp32"
    supported = supported_dtypes(device)
    for dtype in preferred:
        if dtype in supported:
            return dtype
    raise ValueError(f"{workload}: none of accelerator_dtypes {list(preferred)} runs on {device} (it has {supported})")


def torch_dtype(name: str) -> torch.dtype:
    torch = import_torch()
    return {"fp32": torch.float32, "tf32": torch.float32, "fp16": torch.float16, "bf16": torch.bfloat16}[name]


def set_tf32(enabled: bool) -> None:
    torch = import_torch()
    torch.backends.cuda.matmul.allow_tf32 = enabled
    torch.backends.cudnn.allow_tf32 = enabled


def is_oom(exc: BaseException) -> bool:
    """True for CUDA and MPS out-of-memory errors."""
    torch = import_torch()
    if isinstance(exc, getattr(torch.cuda, "OutOfMemoryError", ())):
        return True
    text = str(exc)
    return "out of memory" in text.lower() or "MPS backend out of memory" in text


def empty_cache(device: str) -> None:
    torch = import_torch()
    if device == "cuda":
        torch.cuda.empty_cache()
    elif device == "mps":
        torch.mps.empty_cache()


def threads() -> int:
    return int(import_torch().get_num_threads())
