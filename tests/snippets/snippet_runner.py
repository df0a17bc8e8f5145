"""Helpers for running reader snippets the way a reader runs them.

A snippet's text runs as ``python -c`` runs it, like pasting it into a notebook cell: in a fork of
a warm interpreter that imported its framework once (``warm_python.py``), or where that would
differ from a fresh interpreter, in a fresh one (`warm_family`). Stand-ins live in ``fakes/``: a ``google.colab`` package, JAX and PyTorch/XLA that report
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


# The framework families a warm interpreter serves (tests/snippets/warm_python.py): the modules it
# imports once, and how a snippet's text shows it belongs to the family.
WARM_FAMILIES = {"torch": ("torch",), "tensorflow": ("tensorflow",)}
_FAMILY_IMPORTS = {"tensorflow": ("import tensorflow", "import keras", "from tensorflow"), "torch": ("import torch",)}
# Stand-ins that only add modules no warm interpreter imports; any other replaces a framework.
WARM_SAFE_FAKES = {"colab"}
# Read while a framework is imported, so a warm interpreter would not see a snippet's own value.
IMPORT_TIME_ENV = ("PYTHONPATH", "CUDA_VISIBLE_DEVICES", "OMP_NUM_THREADS", "XLA_FLAGS", "TF_", "JAX_", "TORCH_")


def warm_family(name: str, fakes: Iterable[str] = (), env: Mapping[str, str] | None = None) -> str | None:
    """The family whose warm interpreter may run snippet ``name`` with these stand-ins and settings,
    or None where it needs a fresh one: no family's framework, a stand-in that replaces one, or a
    setting read at import. fastai patches torch when imported, so its snippets start fresh too."""
    text = (SNIPPETS / name).read_text(encoding="utf-8")
    if set(fakes) - WARM_SAFE_FAKES or any(k.startswith(IMPORT_TIME_ENV) for k in env or {}) or "fastai" in text:
        return None
    return next((family for family, imports in _FAMILY_IMPORTS.items() if any(i in text for i in imports)), None)


RunSnippet = Callable[..., "subprocess.CompletedProcess[str]"]
