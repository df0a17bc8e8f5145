"""benchlib: honest deep-learning hardware benchmarks for the GPU Field Guide.

``benchlib.probe()`` describes this machine and ``benchlib.load_results(paths)`` loads results
into pandas. Both load what they need on first use, so ``import benchlib`` (and any of its
stages, which import this package first) stays fast and works where no framework is installed.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from benchlib.core.version import METHODOLOGY_VERSION, __version__

__all__ = ["METHODOLOGY_VERSION", "__version__", "load_results", "probe"]

if TYPE_CHECKING:
    import pandas as pd

    from benchlib import probe as probe


def __getattr__(name: str) -> Any:
    """``benchlib.probe``: the probe stage, imported on first use; the module itself is callable."""
    if name == "probe":
        return importlib.import_module("benchlib.probe")
    raise AttributeError(f"module 'benchlib' has no attribute {name!r}")


def load_results(paths: Any) -> pd.DataFrame:
    """Load results files (or folders of them) into a tidy DataFrame, one row per measurement."""
    from benchlib.results.load import load_results as _load

    return _load(paths)
