"""The buying guide's predictions: what trains on each GPU, traced once and committed.

`benchlib fit` predicts the largest batch of each of its models, in fp32 and fp16 (mixed
precision), on every GPU in the specs; tracing them takes minutes, so `benchlib tables` writes
them to ``benchlib/tables/buying_guide.json`` and the buying guide's blocks read that file
(`benchlib.site.buying_guide`). Beside them: each GPU's usable memory as fit counts it, the
allowances every prediction makes, the models as readers know them, and the largest batch
predicted for each batch a source reports it trained with (the records whose workload declares
a ``trained batch`` check, `benchlib.workloads.PredictionCheck`), in that source's setup.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import asdict
from pathlib import Path
from typing import Any

from benchlib.catalog.gpus import find_gpu, gpu_spec_name, load_accelerators
from benchlib.core.cache import cache_folder
from benchlib.core.paths import reported_dir
from benchlib.models.trainable import MODELS
from benchlib.predict.memory import (
    ALLOCATOR_OVERHEAD,
    CUDA_CONTEXT_BYTES,
    CUDA_CONTEXT_SOURCE,
    Predictor,
    gpu_memory,
    smi_share,
)
from benchlib.results.store import read_results
from benchlib.tables import Table, code_digests, digest_json, file_digests, register
from benchlib.workloads import TRAINED_BATCH, checks_of

NAME = "buying_guide"
MATRIX_MODELS: tuple[str, ...] = tuple(MODELS)
MATRIX_DTYPES: tuple[str, ...] = ("fp32", "fp16")
# The matrix trains as most training does: Adam, with the optimizer's foreach kernels a GPU runs.
MATRIX_OPTIMIZER = "adam"
PACKAGES = ("torch", "torchvision")


def gpu_names() -> list[str]:
    """Every GPU in the specs with a memory size, smallest memory first."""
    gpus = [a for a in load_accelerators() if a.kind == "gpu" and a.memory_gb is not None]
    return [a.name for a in sorted(gpus, key=lambda a: (gpu_memory(a).usable_bytes, a.name))]


def predictions(
    models: Iterable[str] = MATRIX_MODELS,
    dtypes: Iterable[str] = MATRIX_DTYPES,
    gpus: Iterable[str] | None = None,
    size: str = "full",
    cache: Path | None = None,
    optimizer: str = MATRIX_OPTIMIZER,
    on_step: Callable[[str], None] = lambda step: None,
) -> list[dict[str, Any]]:
    """Predicted largest batch of each model and dtype on each GPU: one row each.

    Larger memories go first, so their traces bound the smaller ones (see ``solve_max_batch``).
    """
    devices = [gpu_memory(find_gpu(name)) for name in (gpus or gpu_names())]
    rows = []
    for model in models:
        for dtype in dtypes:
            on_step(f"{model} {dtype} ({optimizer})")
            predictor = Predictor(model, dtype=dtype, optimizer=optimizer, size=size, foreach=True, cache_dir=cache)
            for device in sorted(devices, key=lambda d: -d.tensor_budget):
                rows.append(
                    {
                        "model": model,
                        "dtype": dtype,
                        "optimizer": optimizer,
                        "gpu": device.name,
                        "usable_bytes": device.usable_bytes,
                        "max_batch": predictor.predict(device, verify=False).max_batch,
                    }
                )
    return rows


def _reported_files(folder: Path | None = None) -> list[Path]:
    folder = folder or reported_dir()
    return sorted(folder.glob("*.json")) if folder.is_dir() else []


def trained_batches(folder: Path | None = None) -> dict[tuple[str, str], set[tuple[str, str]]]:
    """(model, optimizer) -> {(GPU in the specs, dtype)} for every reported batch a source trained
    with whose workload declares a ``trained batch`` check, and the files they are in."""
    wanted: dict[tuple[str, str], set[tuple[str, str]]] = {}
    for path in _reported_files(folder):
        for record in read_results(path).measurements:
            checks = checks_of(record.workload, record.framework, record.metric.name, record.device, record.params)
            for check in (c for c in checks if c.predicts == TRAINED_BATCH):
                gpu = gpu_spec_name(record.device_name) if record.device_name else None
                if gpu is not None and record.dtype and "model" in record.params:
                    optimizer = str(check.options.get("optimizer", MATRIX_OPTIMIZER))
                    wanted.setdefault((str(record.params["model"]), optimizer), set()).add((gpu, record.dtype))
    return wanted


def _files_with_trained_batches(folder: Path | None = None) -> list[Path]:
    found = []
    for path in _reported_files(folder):
        records = read_results(path).measurements
        shapes = ((r.workload, r.framework, r.metric.name, r.device, r.params) for r in records)
        if any(c.predicts == TRAINED_BATCH for shape in shapes for c in checks_of(*shape)):
            found.append(path)
    return found


def _memory(name: str) -> dict[str, Any]:
    memory = asdict(gpu_memory(find_gpu(name)))
    return {key: memory[key] for key in ("usable_bytes", "basis", "status", "source", "as_of")}


def compute(on_step: Callable[[str], None]) -> dict[str, Any]:
    cache = cache_folder("fit")
    matrix = predictions(cache=cache, on_step=on_step)
    reported = []
    for (model, optimizer), cases in trained_batches().items():
        for dtype in sorted({dtype for _, dtype in cases}):
            gpus = sorted({gpu for gpu, d in cases if d == dtype})
            reported += predictions((model,), (dtype,), gpus, cache=cache, optimizer=optimizer, on_step=on_step)
    return {
        "allowances": {
            "cuda_context_bytes": CUDA_CONTEXT_BYTES,
            "cuda_context_source": CUDA_CONTEXT_SOURCE,
            "allocator_overhead": ALLOCATOR_OVERHEAD,
            "smi_share": smi_share(),
        },
        "models": _models(),
        "dtypes": list(MATRIX_DTYPES),
        "memory": {name: _memory(name) for name in gpu_names()},
        "predictions": matrix,
        "trained_batches": reported,
    }


def steps() -> int:
    return len(MATRIX_MODELS) * len(MATRIX_DTYPES) + sum(
        len({dtype for _, dtype in cases}) for cases in trained_batches().values()
    )


def _models() -> list[dict[str, Any]]:
    """The models as the page names them."""
    return [
        {
            "name": m.name,
            "title": m.title,
            "short": m.short,
            "description": m.description,
            "input_shape": list(m.input_shape()),
        }
        for m in (MODELS[name] for name in MATRIX_MODELS)
    ]


def inputs() -> dict[str, str]:
    """The models, each GPU's memory as fit counts it (not the rest of the specs: a new price changes
    none of this), the reported files with batches a source trained with, and the code that predicts."""
    folder = reported_dir()
    return {
        "models": digest_json(_models()),
        "GPU memory": digest_json({name: _memory(name) for name in gpu_names()}),
        **file_digests(_files_with_trained_batches(folder), folder, "reported"),
        **code_digests(__name__),
    }


def summary(table: dict[str, Any]) -> str:
    gpus = len({row["gpu"] for row in table["predictions"]})
    return (
        f"{len(table['models'])} models x {len(table['dtypes'])} dtypes x {gpus} GPUs, "
        f"and {len(table['trained_batches'])} reported batches"
    )


TABLE = register(
    Table(
        name=NAME,
        description="the buying guide: fit's largest batch of each of its models on every GPU in the specs, "
        "and against the batches sources trained with",
        compute=compute,
        inputs=inputs,
        steps=steps,
        packages=PACKAGES,
        summary=summary,
    )
)
