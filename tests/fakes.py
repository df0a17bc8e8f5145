"""Stand-ins the tests put in place of real things: a workload that only returns a record, a
framework that is not installed, and a quick suite of tiny workloads."""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from pathlib import Path

import pytest
from site_samples import MS, measurement

from benchlib.results.schema import MeasurementRecord
from benchlib.workloads import Workload

# The environment of a `benchlib run --suite quick` (in any child process) whose quick suite is
# three tiny workloads (tests/benchlib_quick_stand_in.py): for a test whose assertions are about
# the files and messages of a run, not about what the suite measured.
# The stand-in quick suite (benchlib_quick_stand_in.STAND_INS: importing it here would change this process's registry).
QUICK_STAND_INS = ("tiny-1", "tiny-2", "tiny-3")
QUICK_STAND_IN = {"PYTHONPATH": str(Path(__file__).parent), "BENCHLIB_WORKLOAD_MODULES": "benchlib_quick_stand_in"}


def python_workload(name: str, expected_s: dict[str, float], on_run: Callable[[str], object] | None = None) -> Workload:
    """A workload in no suite that returns one 1 ms record (calling ``on_run(name)`` first), with no framework to import."""

    def run(ctx, params) -> list[MeasurementRecord]:
        if on_run is not None:
            on_run(name)
        return [measurement(name, MS, 1.0, framework="python", device=ctx.device)]

    return Workload(
        name=name,
        framework="python",
        description=name,
        metric=MS,
        sizes={"quick": {}},
        run=run,
        suites=(),
        expected_s=expected_s,
    )


def not_installed(monkeypatch: pytest.MonkeyPatch, module: str) -> None:
    """``importlib.util.find_spec`` finds no ``module``, as where it is not installed."""
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda n, *a: None if n == module else real(n, *a))
