"""Stand-in for JAX on a TPU VM such as Kaggle's TPU v5e-8, for running snippets in tests.

It reports TPU devices and computes with NumPy on the CPU; ``FAKE_TPU_CHIPS`` sets the chip
count (1 for Colab's v5e-1).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import numpy as _np

from . import numpy  # noqa: F401  (jax.numpy is a submodule, as in JAX)

__version__ = "0.0+fake-tpu"


class Device:
    platform = "tpu"
    device_kind = "TPU v5 lite"

    def __init__(self, index: int) -> None:
        self.id = index

    def __str__(self) -> str:
        return f"TPU_{self.id}(process=0,(0,0,0,0))"

    __repr__ = __str__


_DEVICES = [Device(i) for i in range(int(os.environ.get("FAKE_TPU_CHIPS", "8")))]


class Array:
    def __init__(self, data: _np.ndarray) -> None:
        self.data = data

    def __matmul__(self, other: Array) -> Array:
        out = self.data.astype(_np.float32) @ other.data.astype(_np.float32)
        return Array(out.astype(self.data.dtype))

    def block_until_ready(self) -> Array:
        return self

    def devices(self) -> set[Device]:
        return {_DEVICES[0]}


def devices(backend: str | None = None) -> list[Device]:
    return list(_DEVICES)


def default_backend() -> str:
    return "tpu"


def jit(fun: Callable[..., Any]) -> Callable[..., Any]:
    return fun
