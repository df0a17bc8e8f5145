"""benchlib: honest deep-learning hardware benchmarks for the GPU Field Guide.

The public entry points are imported lazily so that ``import benchlib`` stays fast and works
where no framework is installed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"
METHODOLOGY_VERSION = "1"

if TYPE_CHECKING:
    import pandas as pd

    from benchlib.results.schema import Machine


def probe(results_dir: str | None = None) -> "Machine":
    """Describe this machine: platform, host, accelerators and software."""
    from benchlib.probe import probe_machine

    return probe_machine(results_dir=results_dir)


def load_results(paths: Any) -> "pd.DataFrame":
    """Load results files (or folders of them) into a tidy DataFrame, one row per measurement."""
    from benchlib.results.load import load_results as _load

    return _load(paths)
