"""Predicted against reported training throughput: the buying guide's speed check, computed once and committed.

`benchlib.derive.published_speed.compare` predicts every reported throughput a workload declares
a ``training throughput`` check for (Lambda's ResNet-50 rows) and lists the figures left out with
their reason; `unrun_gpus` predicts the GPUs Lambda never ran. Counting ResNet-50's ops at each of
Lambda's batch sizes takes about a minute, so `benchlib tables` writes the result to
``benchlib/tables/speed_check.json``, with the GPUs' rates and the constants the prediction used,
and the buying guide reads it (`benchlib.site.speed_check`). `speed_check(folder)` computes the
same for another reported folder.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

from benchlib.catalog.gpus import UnknownGPU, find_gpu, load_accelerators
from benchlib.core.paths import reported_dir
from benchlib.derive.published_speed import UNRUN_BATCH, compare, fit_memory_efficiency, unrun_gpus
from benchlib.predict.roofline import COMPUTE_EFFICIENCY, DEFAULT_COMPUTE_EFFICIENCY, MEMORY_EFFICIENCY, gpu_rates
from benchlib.tables import Table, code_digests, digest_json, register, reported_digests

NAME = "speed_check"
PACKAGES = ("torch", "torchvision")


def _rates(gpus: list[str]) -> dict[str, dict[str, Any]]:
    """What a page says of each GPU's prediction: its generation and its unverified figures."""
    return {
        gpu: {"generation": r.generation, "unverified": list(r.unverified)}
        for gpu in gpus
        for r in [gpu_rates(find_gpu(gpu))]
    }


def speed_check(folder: Path | None = None, on_step: Callable[[str], None] = lambda step: None) -> dict[str, Any]:
    """The comparison for the reported files in ``folder``, and the GPUs it never ran, predicted.

    A prediction is shown only with its measured error: where nothing could be compared, no GPU is predicted.
    """
    folder = folder or reported_dir()
    on_step("the reported rows")
    rows, not_compared = compare(folder=folder) if folder.is_dir() else ([], [])
    on_step("the GPUs the reported rows don't have")
    unrun = unrun_gpus(folder=folder) if rows else []
    on_step("the memory efficiency the calibration half picks")
    return {
        "rows": [{**asdict(r), "error": r.error} for r in rows],
        "not_compared": [asdict(n) for n in not_compared],
        "unrun": [{"gpu": gpu, "precision": precision, "value": value} for gpu, precision, value in unrun],
        "unrun_batch": UNRUN_BATCH,
        "gpus": _rates(list(dict.fromkeys([*(r.gpu for r in rows), *(gpu for gpu, _, _ in unrun)]))),
        "compute_efficiency": COMPUTE_EFFICIENCY,
        "default_compute_efficiency": DEFAULT_COMPUTE_EFFICIENCY,
        "memory_efficiency": MEMORY_EFFICIENCY,
        "fitted_memory_efficiency": fit_memory_efficiency(folder) if rows else None,
    }


def rates_digest() -> str:
    """Every GPU's rates as the prediction sees them (or why it has none): changes with the specs or the constants."""
    rates = {}
    for spec in load_accelerators():
        if spec.kind == "gpu":
            try:
                rates[spec.name] = asdict(gpu_rates(spec))
            except UnknownGPU as exc:
                rates[spec.name] = str(exc)
    return digest_json(rates)


def inputs() -> dict[str, str]:
    """Every GPU's rates (not the rest of the specs: a new price changes none of this), the reported
    files and the code that predicts."""
    return {"GPU rates": rates_digest(), **reported_digests(), **code_digests(__name__)}


def summary(table: dict[str, Any]) -> str:
    return f"{len(table['rows'])} reported rows compared, {len(table['unrun'])} predictions for GPUs never run"


TABLE = register(
    Table(
        name=NAME,
        description="the buying guide's speed check: predicted against reported training throughput, "
        "and the GPUs no source ran",
        compute=lambda on_step: speed_check(on_step=on_step),
        inputs=inputs,
        steps=lambda: 3,
        packages=PACKAGES,
        summary=summary,
    )
)
