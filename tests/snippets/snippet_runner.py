"""Helpers for running reader snippets the way a reader runs them.

A snippet's text runs in a fresh interpreter (``python -c``, like pasting it into a notebook
cell). Stand-ins live in ``fakes/``: a ``google.colab`` package, JAX and PyTorch/XLA that report
a TPU, an ``nvidia-smi`` that answers like a T4, and a page with Colab's Connect button. Only what
needs Colab, Kaggle, a GPU or a TPU is faked; everything else is the real library.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SNIPPETS = REPO / "snippets"
FAKES = Path(__file__).resolve().parent / "fakes"

# Framework start-up chatter that would drown the snippets' own output in failure messages.
QUIET = {"TF_CPP_MIN_LOG_LEVEL": "2", "PYTHONWARNINGS": "ignore"}


def snippet_env(fakes: Iterable[str] = (), env: Mapping[str, str] | None = None) -> dict[str, str]:
    """The test process's environment without PYTHONPATH, plus the chosen fakes and overrides."""
    full = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    full.update(QUIET)
    paths = [str(FAKES / name) for name in fakes]
    if paths:
        full["PYTHONPATH"] = os.pathsep.join(paths)
    full.update(env or {})
    return full


def python_command(name: str, python: str = sys.executable) -> list[str]:
    """``python -c <snippet text>``: like pasting the file into a notebook cell."""
    return [python, "-c", (SNIPPETS / name).read_text(encoding="utf-8")]


RunSnippet = Callable[..., "subprocess.CompletedProcess[str]"]
