"""The part of ``jax.numpy`` the TPU snippets use, backed by NumPy."""

from __future__ import annotations

import ml_dtypes
import numpy as _np

bfloat16 = ml_dtypes.bfloat16
float32 = _np.float32


def ones(shape: tuple[int, ...], dtype: object = _np.float32) -> object:
    from jax import Array

    return Array(_np.ones(shape, dtype=dtype))
