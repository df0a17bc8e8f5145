"""Per-framework glue: device choice, synchronisation, OOM recognition and dtypes.

Each backend module imports its framework lazily, inside functions, so benchlib works where a
framework is missing.
"""

from __future__ import annotations

import importlib.util


class FrameworkMissing(RuntimeError):
    """The framework a workload needs is not installed; the workload is skipped, not failed."""


class DeviceUnavailable(RuntimeError):
    """The requested device is not available on this machine."""


def require(module: str, install_hint: str) -> None:
    """Raise FrameworkMissing unless ``module`` can be imported."""
    if importlib.util.find_spec(module) is None:
        raise FrameworkMissing(f"{module} is not installed; {install_hint}")
