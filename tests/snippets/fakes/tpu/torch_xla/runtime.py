"""The part of ``torch_xla.runtime`` the TPU snippets use."""

from __future__ import annotations

import os


def device_type() -> str:
    return "TPU"


def global_runtime_device_count() -> int:
    return int(os.environ.get("FAKE_TPU_CHIPS", "8"))
