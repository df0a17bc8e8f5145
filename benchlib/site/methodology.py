"""Blocks for the Methodology page: the numbers it states, read from the code that does the measuring.

The page's prose is in ``docs/benchmarks/methodology.md``; these blocks print only what comes from
`benchlib.core.timing`, the plausibility checks and the workload registry (its suites and sizes), so the
page cannot drift from what benchlib does.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import Any

from benchlib.core.timing import NOISE_THRESHOLD, Timer
from benchlib.core.version import METHODOLOGY_VERSION, __version__
from benchlib.results.plausibility import PEAK_TOLERANCE
from benchlib.site.render import render
from benchlib.workloads import SIZES, all_workloads

# How the suite table names a device that has params of its own.
DEVICE_NAMES = {"cpu": "a CPU", "cuda": "a CUDA GPU", "mps": "Apple MPS"}


def _percent(fraction: float) -> str:
    return f"{fraction:.0%}"


def _text(value: Any, unit: str = "") -> str:
    shown = ", ".join(str(v) for v in value) if isinstance(value, list) else str(value)
    return f"{shown} {unit}".strip()


def _seconds_unit(name: str) -> str:
    return "s" if name.endswith("_s") else ""


def versions() -> str:
    """The benchlib and methodology versions this site was built with."""
    return render("versions.html", benchlib=__version__, methodology=METHODOLOGY_VERSION)


def check_thresholds() -> str:
    """The thresholds of the sanity checks that flag or reject a measurement."""
    return render("check_thresholds.html", noise=_percent(NOISE_THRESHOLD), peak_margin=_percent(PEAK_TOLERANCE - 1))


def timer_table() -> str:
    """`Timer.measure`'s defaults; workloads override some per suite."""
    settings = [
        {
            "name": name,
            "default": _percent(p.default) if name == "noise_threshold" else _text(p.default, _seconds_unit(name)),
        }
        for name, p in inspect.signature(Timer.measure).parameters.items()
        if p.default is not inspect.Parameter.empty
    ]
    return render("timer_table.html", settings=settings)


def workloads_table() -> str:
    """Every registered workload: what it reports, and in which suites."""
    return render("workloads_table.html", workloads=all_workloads().values(), suites=SIZES)


def params_list(params: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(name, value) pairs as the page shows them; a nested mapping (the timer's) gives its own pairs."""
    pairs = []
    for key, value in params.items():
        if isinstance(value, Mapping):
            pairs.extend((k, _text(v, _seconds_unit(k))) for k, v in value.items())
        else:
            pairs.append((key, _text(value)))
    return pairs


def suite_params_table() -> str:
    """Each workload's parameters per suite, timer overrides included; under a suite's row, the
    parameters that differ on a device that runs its own (``Workload.device_sizes``)."""
    rows = []
    for w in all_workloads().values():
        for suite in SIZES:
            if suite not in w.suites:
                continue
            rows.append({"workload": w.name, "suite": suite, "on": None, "params": params_list(w.params(suite))})
            for device in w.device_sizes:
                if changed := w.device_params(suite, device):
                    on = DEVICE_NAMES.get(device, device)
                    rows.append({"workload": w.name, "suite": suite, "on": on, "params": params_list(changed)})
    return render("suite_params_table.html", rows=rows)


def params_line(params: Mapping[str, Any]) -> str:
    """A set of parameters in one line, as the suite table shows them (a workload's full-size shape)."""
    return render("params_line.html", params=params_list(params))
