"""The TensorFlow backend: device choice, memory growth, sync by fetching, OOM recognition.

TensorFlow is imported lazily. The first `import_tf()` turns memory growth on for every GPU
before any TF op runs: by default TF reserves almost all GPU memory at its first op, which
starves torch workloads that run later in the same process.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from typing import Any

from benchlib.backends import DeviceUnavailable, require
from benchlib.core.quiet import native_stderr_filtered, quiet_environment

INSTALL_HINT = "install it with `pip install 'benchlib[tf]'`"
_configured = False


def import_tf() -> Any:
    """Import TensorFlow (FrameworkMissing if absent) with quiet logs and GPU memory growth on."""
    global _configured
    require("tensorflow", INSTALL_HINT)
    quiet_environment()
    # Keras 3 can run on torch or JAX; the tensorflow workloads must measure TF.
    os.environ.setdefault("KERAS_BACKEND", "tensorflow")
    if "tensorflow" not in sys.modules and importlib.util.find_spec("triton") is not None:
        # triton (loaded by torchvision, fastai and torch.compile) and TF each bundle LLVM; once
        # TF is loaded, importing triton aborts the process ("LLVM ERROR: inconsistency in
        # registered CommandLine options"). In the other order both load.
        import triton  # noqa: F401
    if _configured:
        import tensorflow as tf

        return tf
    # Loading TF and its first look for GPUs are what print absl's start-up lines and cuInit.
    with native_stderr_filtered():
        import tensorflow as tf

        tf.get_logger().setLevel("ERROR")
        for gpu in tf.config.list_physical_devices("GPU"):
            try:
                tf.config.experimental.set_memory_growth(gpu, True)
            except RuntimeError:
                # TF was initialised before benchlib saw it (a notebook ran a TF op first);
                # growth can no longer change, and the workloads still run.
                pass
    _configured = True
    return tf


def import_keras() -> Any:
    """Keras on the TensorFlow backend (Keras 3 in TF >= 2.16, tf.keras before)."""
    tf = import_tf()
    keras = tf.keras
    backend = keras.backend.backend()
    if backend != "tensorflow":
        raise DeviceUnavailable(
            f"Keras runs on the {backend} backend (KERAS_BACKEND={os.environ.get('KERAS_BACKEND')}); "
            "the tensorflow workloads need KERAS_BACKEND=tensorflow set before Keras is imported"
        )
    return keras


def resolve_device(device: str) -> tuple[str, str]:
    """Map the run's device (as resolved for torch) to a TF device string and the record's device.

    ``cuda`` and ``mps`` both mean TF's first GPU (tensorflow-metal shows Apple GPUs as GPU).
    A run that asked for an accelerator TF can't see is DeviceUnavailable, never a quiet CPU run.
    """
    tf = import_tf()
    if device == "cpu":
        return "/CPU:0", "cpu"
    if device in ("cuda", "mps"):
        if not tf.config.list_physical_devices("GPU"):
            raise DeviceUnavailable(
                f"torch sees a {device} device but TensorFlow {tf.__version__} sees no GPU "
                "(a CPU-only TF build, or CUDA libraries TF can't load)"
            )
        return "/GPU:0", device
    raise DeviceUnavailable(f"TensorFlow workloads can't run on {device!r}")


def device_name(tf_device: str, cpu_name: str | None = None) -> str:
    """The GPU's name as TF reports it, or the probed CPU model."""
    tf = import_tf()
    if tf_device.upper().startswith("/GPU"):
        gpus = tf.config.list_physical_devices("GPU")
        if gpus:
            details = tf.config.experimental.get_device_details(gpus[0])
            return str(details.get("device_name", gpus[0].name))
    return cpu_name or "CPU"


def compute_capability(tf_device: str) -> tuple[int, int] | None:
    """(major, minor) of the GPU TF uses, or None on the CPU or where TF doesn't say."""
    tf = import_tf()
    if not tf_device.upper().startswith("/GPU"):
        return None
    gpus = tf.config.list_physical_devices("GPU")
    if not gpus:
        return None
    cc = tf.config.experimental.get_device_details(gpus[0]).get("compute_capability")
    return (int(cc[0]), int(cc[1])) if cc else None


def mixed_precision_dtypes(tf_device: str) -> list[str]:
    """The mixed-precision dtypes worth running: fp16 on any GPU, bf16 on CPUs and GPUs of compute capability 8+."""
    cc = compute_capability(tf_device)
    if not tf_device.upper().startswith("/GPU"):
        return ["bf16"]
    return ["fp16", "bf16"] if cc and cc[0] >= 8 else ["fp16"]


def fetch(value: Any) -> Any:
    """Wait for TF's queued work by copying the result to the host.

    TF has no public device-wide synchronize; a value fetched with ``.numpy()`` can only exist
    once every op that produced it has finished.
    """
    if hasattr(value, "numpy"):
        return value.numpy()
    if isinstance(value, dict):
        return {k: fetch(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(fetch(v) for v in value)
    return value


SYNC_NAME = "fetch result with .numpy()"


def is_oom(exc: BaseException) -> bool:
    """True for TF's out-of-memory error; never imports TF to find out."""
    tf = sys.modules.get("tensorflow")
    if tf is not None and isinstance(exc, tf.errors.ResourceExhaustedError):
        return True
    return "OOM when allocating" in str(exc)


def set_mixed_precision(policy: str) -> None:
    """Set Keras' global dtype policy: ``float32``, ``mixed_float16`` or ``mixed_bfloat16``."""
    import_keras().mixed_precision.set_global_policy(policy)


def threads() -> int | None:
    """TF's intra-op thread count; 0 (TF decides) is reported as None."""
    n = int(import_tf().config.threading.get_intra_op_parallelism_threads())
    return n or None
