"""Workloads: one small module each, registered by name, with parameters as data.

A workload module defines a `Workload` and calls `register(...)` at import time. Adding a
workload means adding one file to this package; `all_workloads()` imports every module here.

A workload's `run(ctx, params)` returns `MeasurementRecord`s. It never writes files: the runner
does that, and applies the sanity checks (peak, device) to what comes back.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from benchlib.results.schema import Machine, MeasurementRecord, Metric

SIZES = ("quick", "standard", "full")


class UnknownWorkload(KeyError):
    def __init__(self, name: str, known: Iterable[str]) -> None:
        self.name = name
        super().__init__(f"unknown workload {name!r}; known workloads: {', '.join(sorted(known))}")

    def __str__(self) -> str:
        return str(self.args[0])


@dataclass
class RunContext:
    """What a workload may know about the run: the device it must use and the machine it is on."""

    device: str
    machine: Machine
    size: str = "quick"
    time_scale: float = 1.0
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def cpu_name(self) -> str | None:
        return self.machine.host.cpu.model if self.machine.host else None


@dataclass(frozen=True)
class Workload:
    name: str
    framework: str
    description: str
    metric: Metric
    sizes: dict[str, dict[str, Any]]
    run: Callable[[RunContext, dict[str, Any]], list[MeasurementRecord]]
    devices: tuple[str, ...] = ("cpu", "cuda", "mps")
    suites: tuple[str, ...] = SIZES
    # Seconds one run of a size takes, for `benchlib run --budget` before this machine has run it.
    expected_s: dict[str, float] = field(default_factory=dict)

    def params(self, size: str) -> dict[str, Any]:
        """Parameters for a size; a size a workload doesn't define falls back to the next smaller one."""
        order = list(SIZES)
        for candidate in reversed(order[: order.index(size) + 1]):
            if candidate in self.sizes:
                return dict(self.sizes[candidate])
        raise KeyError(f"workload {self.name!r} has no parameters for size {size!r}")


_REGISTRY: dict[str, Workload] = {}
_loaded = False


def register(workload: Workload) -> Workload:
    if workload.name in _REGISTRY and _REGISTRY[workload.name] is not workload:
        raise ValueError(f"workload {workload.name!r} is registered twice")
    _REGISTRY[workload.name] = workload
    return workload


def _load_all() -> None:
    global _loaded
    if _loaded:
        return
    for module in pkgutil.iter_modules(__path__):
        if not module.name.startswith("_"):
            importlib.import_module(f"{__name__}.{module.name}")
    _loaded = True


def all_workloads() -> dict[str, Workload]:
    _load_all()
    return dict(sorted(_REGISTRY.items()))


def get(name: str) -> Workload:
    workloads = all_workloads()
    if name not in workloads:
        raise UnknownWorkload(name, workloads)
    return workloads[name]


def in_suite(suite: str) -> list[Workload]:
    return [w for w in all_workloads().values() if suite in w.suites]
