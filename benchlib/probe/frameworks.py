"""What the frameworks see: torch devices, TPUs, and the versions of the software stack.

Frameworks are imported here, inside functions, and only when installed: importing TensorFlow or
JAX costs seconds, so versions come from package metadata and only torch is imported (its CUDA and
cuDNN versions are not in the metadata).
"""

from __future__ import annotations

import glob
import importlib.metadata
import importlib.util
import os
import platform
from collections.abc import Callable, Mapping

from benchlib.results.schema import Software, TorchDevices, TPUInfo

# Variables set on TPU runtimes: Colab/Kaggle TPU VMs (ISTPUVM, TPU_PROCESS_ADDRESSES), Cloud TPU
# VMs and older Kaggle images (TPU_ACCELERATOR_TYPE), and legacy TPU Node runtimes (COLAB_TPU_ADDR).
TPU_ENV = ("TPU_ACCELERATOR_TYPE", "ISTPUVM", "TPU_PROCESS_ADDRESSES", "COLAB_TPU_ADDR", "TPU_NAME")
# TPU VMs expose chips as /dev/accel* (v2-v4) or VFIO groups (v5e and later).
TPU_DEVICE_GLOBS = ("/dev/accel*", "/dev/vfio/[0-9]*")
# Distributions that provide `import tensorflow`, in the order they are usually found.
TENSORFLOW_DISTRIBUTIONS = ("tensorflow", "tensorflow-cpu", "tensorflow-tpu", "tf-nightly")


def installed(module: str) -> bool:
    """True if ``module`` can be imported, checked without importing it."""
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def distribution_version(*names: str) -> str | None:
    """The installed version of the first of ``names`` that is installed, from package metadata."""
    for name in names:
        try:
            return importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            continue
    return None


def probe_torch() -> TorchDevices | None:
    """The devices torch sees; None when torch is not installed.

    Reading CUDA device names initialises CUDA in this process, after which fork()ed children
    cannot use CUDA: callers that fork workers which touch the GPU should use the spawn start method.
    """
    if not installed("torch"):
        return None
    import torch

    cuda = torch.cuda.is_available()
    count = torch.cuda.device_count() if cuda else 0
    mps_backend = getattr(torch.backends, "mps", None)
    return TorchDevices(
        cuda_available=cuda,
        cuda_device_count=count,
        hip_version=getattr(torch.version, "hip", None),
        mps_available=bool(mps_backend is not None and mps_backend.is_available()),
        device_names=[torch.cuda.get_device_name(i) for i in range(count)],
    )


def tpu_signal(
    environ: Mapping[str, str] | None = None, glob_paths: Callable[[str], list[str]] | None = None
) -> tuple[str, str] | None:
    """The cheapest evidence of a TPU, as ``("env", "ISTPUVM=1")`` or ``("device", "/dev/accel0")``."""
    environ = os.environ if environ is None else environ
    glob_paths = glob.glob if glob_paths is None else glob_paths
    for name in TPU_ENV:
        if environ.get(name):
            return "env", f"{name}={environ[name]}"
    for pattern in TPU_DEVICE_GLOBS:
        found = sorted(glob_paths(pattern))
        if found:
            return "device", found[0]
    return None


def _tpu_from_jax() -> TPUInfo | None:
    import jax

    tpus = [device for device in jax.devices() if device.platform == "tpu"]
    return TPUInfo(backend="jax", kind=tpus[0].device_kind, count=len(tpus)) if tpus else None


def _tpu_from_tensorflow(kind: str | None) -> TPUInfo | None:
    from benchlib.backends.tf_backend import import_tf

    tf = import_tf()

    tpus = tf.config.list_physical_devices("TPU")
    return TPUInfo(backend="tensorflow", kind=kind, count=len(tpus)) if tpus else None


def _tpu_from_torch_xla(kind: str | None) -> TPUInfo | None:
    import torch_xla.runtime as xr

    if xr.device_type() != "TPU":
        return None
    return TPUInfo(backend="torch_xla", kind=kind, count=xr.global_runtime_device_count())


def ask_frameworks_for_tpu(kind_hint: str | None) -> TPUInfo | None:
    """Ask the first installed of JAX, TensorFlow, torch_xla; a framework that fails gives no answer."""
    askers: tuple[tuple[str, Callable[[], TPUInfo | None]], ...] = (
        ("jax", _tpu_from_jax),
        ("tensorflow", lambda: _tpu_from_tensorflow(kind_hint)),
        ("torch_xla", lambda: _tpu_from_torch_xla(kind_hint)),
    )
    for module, ask in askers:
        if not installed(module):
            continue
        try:
            return ask()
        except Exception:  # noqa: BLE001 - a runtime that cannot start its TPU backend means "no TPU here"
            return None
    return None


def probe_tpu(
    environ: Mapping[str, str] | None = None,
    glob_paths: Callable[[str], list[str]] | None = None,
    ask_frameworks: Callable[[str | None], TPUInfo | None] = ask_frameworks_for_tpu,
) -> TPUInfo | None:
    """The TPU, if cheap signals say one is likely and a framework confirms it; else None.

    When only environment variables say so (no framework installed, or it failed), the answer is
    ``backend="env"`` with the accelerator type if the environment names it.
    """
    environ = os.environ if environ is None else environ
    signal = tpu_signal(environ, glob_paths)
    if signal is None:
        return None
    kind_hint = environ.get("TPU_ACCELERATOR_TYPE") or None
    confirmed = ask_frameworks(kind_hint)
    if confirmed is not None:
        return confirmed
    if signal[0] == "env":
        return TPUInfo(backend="env", kind=kind_hint)
    return None  # device files alone also match other accelerators (Intel NPUs use /dev/accel)


def format_cudnn_version(encoded: int) -> str:
    """cuDNN 9 encodes 9.1.0 as 90100; cuDNN 8 and earlier encoded 8.9.2 as 8902."""
    if encoded >= 10000:
        return f"{encoded // 10000}.{encoded % 10000 // 100}.{encoded % 100}"
    return f"{encoded // 1000}.{encoded % 1000 // 100}.{encoded % 100}"


def probe_software() -> Software:
    """Versions of Python, benchlib and the frameworks that are installed."""
    from benchlib.core.version import __version__ as benchlib_version

    torch_version = torch_cuda = cudnn = None
    if installed("torch"):
        import torch

        torch_version = torch.__version__
        torch_cuda = torch.version.cuda
        try:
            encoded = torch.backends.cudnn.version()
        except (RuntimeError, OSError):
            encoded = None  # a CPU build, or a cuDNN library that fails to load
        cudnn = format_cudnn_version(encoded) if encoded else None
    return Software(
        python=platform.python_version(),
        benchlib=benchlib_version,
        numpy=distribution_version("numpy"),
        torch=torch_version,
        torch_cuda=torch_cuda,
        cudnn=cudnn,
        tensorflow=distribution_version(*TENSORFLOW_DISTRIBUTIONS),
        jax=distribution_version("jax"),
        fastai=distribution_version("fastai"),
    )
