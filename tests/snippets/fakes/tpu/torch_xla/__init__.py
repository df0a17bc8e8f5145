"""Stand-in for PyTorch/XLA on a TPU VM, for running snippets in tests.

It names the runtime "TPU" but computes with ordinary CPU tensors; each ``sync()`` is appended
to the file named by ``FAKE_XLA_LOG`` so tests can check the snippet synchronised.
"""

from __future__ import annotations

import os

import torch

__version__ = "0.0+fake-tpu"


def device() -> torch.device:
    return torch.device("cpu")


def sync() -> None:
    log = os.environ.get("FAKE_XLA_LOG")
    if log:
        with open(log, "a", encoding="utf-8") as f:
            f.write("sync\n")
