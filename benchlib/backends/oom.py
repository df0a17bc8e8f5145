"""Is this exception an out-of-memory error, on any device and framework benchlib runs?"""

from __future__ import annotations

import sys

# What torch's CPU allocator and the C++ runtime say when an allocation is refused (for example
# under a RLIMIT_AS cap): "DefaultCPUAllocator: can't allocate memory", "std::bad_alloc".
_CPU_MARKERS = ("can't allocate memory", "cannot allocate memory", "bad_alloc")


def is_oom_error(exc: BaseException) -> bool:
    """True for CUDA, MPS and CPU out-of-memory errors and TensorFlow's ResourceExhaustedError.

    Frameworks are only consulted when already imported: an error can't come from one that
    isn't loaded, and the check must not import TensorFlow to find out.
    """
    if isinstance(exc, MemoryError):
        return True
    text = str(exc).lower()
    if any(marker in text for marker in _CPU_MARKERS):
        return True
    if "torch" in sys.modules:
        from benchlib.backends import torch_backend

        if torch_backend.is_oom(exc):
            return True
    from benchlib.backends import tf_backend

    return tf_backend.is_oom(exc)
