"""The "Can I run it?" table: every shipped language model on the GPUs readers get, predicted once and committed.

Predicting the whole table takes minutes, too long for every site build, so `benchlib tables`
writes it to ``benchlib/tables/can_i_run_it.json`` (with the versions, date and allowances it used) and the
site reads that file. The comparison with published measurements (:mod:`benchlib.predict.published_memory`)
goes in the same file, and so do the inference task's decode speeds, predicted by
:mod:`benchlib.predict.speed`, with the error that method reached on Lambda's ResNet-50 rows
(:mod:`benchlib.derive.published_speed`). ``tests/test_llm_table.py`` re-predicts cells to check
the file is current.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict, dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

from benchlib.catalog.gpus import AcceleratorSpec, find_gpu
from benchlib.catalog.language_models import LanguageModel, resolve_model, shipped_models
from benchlib.core.cache import cache_folder
from benchlib.core.package_data import table_file
from benchlib.core.paths import reported_dir
from benchlib.derive import published_speed as speed_published
from benchlib.derive.published_speed import compared_files
from benchlib.predict.engines import ENGINES
from benchlib.predict.llm_memory import LLMPredictor, Setup, make_setup
from benchlib.predict.llm_speed import METHOD, CountedCall, count_inference, default_dtype
from benchlib.predict.memory import (
    ALLOCATOR_OVERHEAD,
    CUDA_CONTEXT_BYTES,
    CUDA_CONTEXT_SOURCE,
    DeviceMemory,
    gpu_memory,
)
from benchlib.predict.published_memory import PUBLISHED, compare, median_abs_error, published_rows
from benchlib.predict.roofline import MEMORY_EFFICIENCY, gpu_rates
from benchlib.tables import Table, data_digests, digest_bytes, digest_json, file_digests, register

NAME = "can_i_run_it"
TABLE_FILE = table_file(f"{NAME}.json")
# What the traces depend on besides benchlib.
PACKAGES = ("torch", "transformers", "peft")
TRAINING_SEQ_LEN = 1024


@dataclass(frozen=True)
class Column:
    """A GPU a reader gets: ``count`` of them (two T4s on Kaggle)."""

    key: str
    label: str
    gpu: str
    count: int = 1

    @cached_property
    def spec(self) -> AcceleratorSpec:
        """The GPU's specs, looked up once."""
        return find_gpu(self.gpu)


@dataclass(frozen=True)
class Task:
    """One way of using a model, answered by its largest context (inference) or batch (training)."""

    key: str
    title: str
    setup: Setup


COLUMNS: tuple[Column, ...] = (
    Column("t4", "T4", "T4"),
    Column("t4x2", "T4 ×2", "T4", 2),
    Column("p100", "P100", "P100 PCIe 16GB"),
    Column("l4", "L4", "L4"),
    Column("a100-40", "A100 40GB", "A100 40GB SXM"),
    Column("a100-80", "A100 80GB", "A100 80GB SXM"),
    Column("h100", "H100", "H100 SXM"),
    Column("rtx-pro-6000", "RTX PRO 6000", "RTX PRO 6000 Blackwell"),
    Column("rtx-4090", "RTX 4090", "GeForce RTX 4090"),
    Column("rtx-5090", "RTX 5090", "GeForce RTX 5090"),
)
# Training with gradient checkpointing, as recipes for small GPUs do. On GPUs without bf16 (T4,
# P100) readers compute in fp16 instead: the same bytes, so one prediction serves every column.
TASKS: tuple[Task, ...] = (
    Task("inference", "Inference: longest context at batch 1", make_setup("inference", seq_len=TRAINING_SEQ_LEN)),
    Task(
        "qlora",
        f"QLoRA: largest batch of {TRAINING_SEQ_LEN:,}-token samples",
        make_setup("qlora", seq_len=TRAINING_SEQ_LEN, grad_checkpointing=True),
    ),
    Task(
        "lora",
        f"LoRA: largest batch of {TRAINING_SEQ_LEN:,}-token samples",
        make_setup("lora", seq_len=TRAINING_SEQ_LEN, grad_checkpointing=True),
    ),
    Task(
        "train",
        f"Full fine-tuning: largest batch of {TRAINING_SEQ_LEN:,}-token samples",
        make_setup("train", dtype="bf16", seq_len=TRAINING_SEQ_LEN, grad_checkpointing=True),
    ),
)
INFERENCE = TASKS[0]

# snippets/qlora_finetune.py's model and setup on a T4, which computes in fp16 (a test checks the snippet still says so).
SNIPPET_MODEL = "qwen2.5-0.5b"
SNIPPET_SETUP = make_setup("qlora", dtype="fp16", batch=4, seq_len=512, lora_rank=16, grad_checkpointing=True)
SNIPPET_GPU = "T4"


def config_digest(model: LanguageModel) -> str:
    """A short hash of what shapes the model: it changes when a shipped config does."""
    return digest_json(model.fingerprint())


def published_digest() -> str:
    return digest_bytes(PUBLISHED.read_bytes())


def speed_digest() -> str:
    """A short hash of every figure the columns' speed predictions use: it changes with the specs or the constants."""
    return digest_json([asdict(gpu_rates(c.spec)) for c in COLUMNS])


def decode_rates(model: LanguageModel, task: Task, fits: dict[str, int]) -> dict[str, float | None]:
    """Predicted decode tokens/s of ``model`` in ``task``'s setup on each column where it fits that
    setup's context, None elsewhere, as `benchlib predict` gives them for eager ``generate()``. The
    ops of a decode step don't depend on the GPU, so they are counted once per dtype and timed on
    each column. Two GPUs run their layers one after the other (``device_map="auto"``), so a pair
    decodes at one GPU's rate."""
    engine = ENGINES["transformers"]
    counted: dict[str, CountedCall | None] = {}
    rates: dict[str, float | None] = {}
    for column in COLUMNS:
        if fits[column.key] < task.setup.seq_len:
            rates[column.key] = None
            continue
        gpu = gpu_rates(column.spec)
        dtype = default_dtype(gpu)
        if dtype not in counted:
            setup = make_setup("inference", dtype=dtype, batch=task.setup.batch, seq_len=task.setup.seq_len)
            counted[dtype] = count_inference(model, setup).decode
        call = counted[dtype]
        rates[column.key] = task.setup.batch / call.time(gpu, engine).seconds if call is not None else None
    return rates


def _resnet50_check() -> dict[str, Any]:
    """How far the same speed model was from Lambda's ResNet-50 rows: what the table's legend cites."""
    rows, _ = speed_published.compare()
    held_out = [r for r in rows if r.half == "held out"]
    return {
        "rows": len(rows),
        "median_abs_error": speed_published.median_abs_error(rows),
        "held_out_median_abs_error": speed_published.median_abs_error(held_out) if held_out else None,
    }


def column_memory(column: Column) -> DeviceMemory:
    """The memory a column offers. Two GPUs: inference splits the layers across both
    (``device_map="auto"``), so their memory adds up, each with its own CUDA context; training
    runs data-parallel, one copy per GPU, so a cell gives the batch on each."""
    one = gpu_memory(column.spec)
    if column.count == 1:
        return one
    return DeviceMemory(
        name=f"{column.count} x {one.name}",
        usable_bytes=column.count * one.usable_bytes,
        basis=one.basis,
        status=one.status,
        context_bytes=column.count * one.context_bytes,
        overhead=one.overhead,
        total_bytes=column.count * (one.total_bytes or 0),
        source=one.source,
        as_of=one.as_of,
    )


def predict_table(
    cache_dir: Path | None, on_step: Callable[[str], None] = lambda step: None, models: list[str] | None = None
) -> dict[str, Any]:
    """Every cell of the table and the published comparison, with what they were predicted with."""
    columns = [(c, gpu_memory(c.spec), column_memory(c)) for c in COLUMNS]
    rows = []
    for shipped in shipped_models().values():
        if not shipped.on_page or (models and shipped.name not in models):
            continue
        model = resolve_model(shipped.name)
        cells: dict[str, dict[str, int]] = {}
        peaks: dict[str, dict[str, int]] = {}
        for task in TASKS:
            on_step(f"{shipped.title}: {task.key}")
            predictor = LLMPredictor(model, task.setup, cache_dir)
            cells[task.key] = {
                c.key: predictor.predict(pair if task.key == "inference" else one, verify=False).largest
                for c, one, pair in columns
            }
            size = task.setup.seq_len if task.key == "inference" else 1
            peaks[task.key] = predictor.breakdown(size)
        decode = decode_rates(model, INFERENCE, cells[INFERENCE.key])
        rows.append(
            {
                "model": shipped.name,
                "config_digest": config_digest(model),
                "title": shipped.title,
                "hf_id": shipped.hf_id,
                "source": shipped.source,
                "release": shipped.release,
                "max_positions": model.max_positions(),
                "cells": cells,
                "peaks_at_one": peaks,
                "decode_tokens_per_s": decode,
            }
        )
    on_step("the QLoRA snippet, published measurements and Lambda's ResNet-50 rows")
    snippet = LLMPredictor(resolve_model(SNIPPET_MODEL), SNIPPET_SETUP, cache_dir).predict(
        gpu_memory(find_gpu(SNIPPET_GPU))
    )
    comparisons = [compare(row, overhead=ALLOCATOR_OVERHEAD, cache_dir=cache_dir) for row in published_rows()]
    compared = [c for c in comparisons if c.error is not None]
    return {
        "allowances": {
            "cuda_context_bytes": CUDA_CONTEXT_BYTES,
            "cuda_context_source": CUDA_CONTEXT_SOURCE,
            "allocator_overhead": ALLOCATOR_OVERHEAD,
        },
        "columns": [
            {
                **asdict(c),
                "usable_bytes": one.usable_bytes,
                "basis": one.basis,
                "status": one.status,
                "source": one.source,
                "as_of": one.as_of,
            }
            for c, one, _ in columns
        ],
        "tasks": [
            {"key": t.key, "title": t.title, "setup": asdict(t.setup), "describe": t.setup.describe()} for t in TASKS
        ],
        "rows": rows,
        "speed": {
            "task": INFERENCE.key,
            "batch": INFERENCE.setup.batch,
            "seq_len": INFERENCE.setup.seq_len,
            "dtypes": {c.key: default_dtype(gpu_rates(c.spec)) for c in COLUMNS},
            "method": METHOD,
            "memory_efficiency": MEMORY_EFFICIENCY,
            "rates_digest": speed_digest(),
            "resnet50": _resnet50_check(),
        },
        "snippet": {
            "model": SNIPPET_MODEL,
            "title": shipped_models()[SNIPPET_MODEL].title,
            "gpu": SNIPPET_GPU,
            "describe": SNIPPET_SETUP.describe(),
            "batch": SNIPPET_SETUP.batch,
            "seq_len": SNIPPET_SETUP.seq_len,
            "tensor_peak_bytes": snippet.tensor_peak_bytes,
            "peak_bytes": snippet.peak_bytes,
        },
        "published": [
            {
                **c.published.row,
                "source_title": c.published.source["title"],
                "url": c.published.source["url"],
                "as_of": c.published.source["as_of"],
                "measure": c.published.source["measure"],
                "code": c.published.source["code"],
                "gpu": c.published.source["gpu"],
                "plain_transformers": c.published.plain_transformers,
                "measured_bytes": c.published.measured_bytes,
                "predicted_bytes": c.predicted_bytes,
                "error": c.error,
                "left_out": c.reason,
            }
            for c in comparisons
        ],
        "published_digest": published_digest(),
        "median_abs_error": median_abs_error(compared),
        "median_abs_error_plain": median_abs_error([c for c in compared if c.published.plain_transformers]),
    }


def read_table(path: Path = TABLE_FILE) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


def predicted_models() -> list[str]:
    return [m.name for m in shipped_models().values() if m.on_page]


def inputs() -> dict[str, str]:
    """What the table was predicted from: the shipped configs, the published peaks, the columns'
    memory and speed figures, and Lambda's rows (and their GPUs' rates) behind the speed check it
    cites. Not the rest of the specs: a new price changes none of it.

    The configs are the ones in ``language_models.yaml``, and transformers fills in the rest (its
    version counts too), so the file's digest stands for them: no transformers import is needed to
    check the table. Each row still records its config's digest.
    """
    from benchlib.tables.speed_check import rates_digest

    folder = reported_dir()
    return {
        **data_digests("language_models.yaml", "published_llm_memory.yaml"),
        "column memory": digest_json([asdict(column_memory(c)) for c in COLUMNS]),
        "speed rates": speed_digest(),
        "GPU rates": rates_digest(),
        **file_digests(compared_files(folder), folder, "reported"),
    }


def summary(table: dict[str, Any]) -> str:
    return (
        f"{len(table['rows'])} models x {len(TASKS)} tasks; published peaks predicted with "
        f"a median error of {table['median_abs_error']:.1%}"
    )


TABLE = register(
    Table(
        name=NAME,
        description='the "Can I run it?" page: every shipped language model on the GPUs readers get, '
        "and the comparison with published peak memories",
        compute=lambda on_step: predict_table(cache_folder("fit-llm"), on_step),
        inputs=inputs,
        steps=lambda: len(predicted_models()) * len(TASKS) + 1,
        packages=PACKAGES,
        summary=summary,
    )
)
