"""benchlib: honest deep-learning hardware benchmarks for the GPU Field Guide.

``benchlib.probe()`` describes this machine and ``benchlib.load_results(paths)`` loads results
into pandas. Frameworks are imported only inside the functions that need them, so
``import benchlib`` stays fast and works where none is installed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"
METHODOLOGY_VERSION = "1"

from benchlib import probe as probe  # noqa: E402  (callable: benchlib.probe() describes this machine)

if TYPE_CHECKING:
    import pandas as pd


def load_results(paths: Any) -> pd.DataFrame:
    """Load results files (or folders of them) into a tidy DataFrame, one row per measurement."""
    from benchlib.results.load import load_results as _load

    return _load(paths)
