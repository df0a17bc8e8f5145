"""The "Can I run it?" table: every shipped language model on the GPUs readers get, predicted once and committed.

The site build only reads, so `benchlib tables` writes this table to
``benchlib/tables/can_i_run_it.json`` (with the versions, date and allowances it used) and the site
reads that file. Its cells and speeds are the committed formulas evaluated (`benchlib.tables.llm_formulas`,
read through :mod:`benchlib.predict.formula_file`), as `benchlib fit` and `benchlib predict` and the
picker evaluate them, so the static tables and the picker give one answer:

* each cell: the longest context at batch 1 (inference) or the largest batch of
  `TRAINING_SEQ_LEN`-token samples (training), on the column's GPUs (two split the layers in order);
* decode tokens/s per engine (eager ``generate()`` and a served engine) at batch 1 with a full
  context, the served engine's aggregate decode at the largest concurrency whose KV caches fit
  (capped at `SERVING_BATCH_CAP`), and each training task's tokens/s at the cell's own batch, timed
  with the engines' rules (the same `CountedCall.time` as `benchlib predict`).

What the formulas don't hold is traced here: the GGUF tab (llama.cpp's buffers and its decode step),
the QLoRA snippet's setup, and the comparison with published measurements
(:mod:`benchlib.predict.published_memory`), which checks the traces themselves.
``tests/test_tables_can_i_run_it.py`` re-predicts cells both ways to check the file is current.

A step's ops are the same in fp16 and bf16 (the same shapes and bytes; only the peak the
arithmetic runs at differs), so each call is taken in bf16 and relabelled fp16 for the GPUs
without bf16 (T4, P100).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from functools import cached_property
from pathlib import Path
from typing import Any

from benchlib.catalog.gpus import AcceleratorSpec, find_gpu
from benchlib.catalog.language_models import LanguageModel, resolve_model, shipped_models
from benchlib.core.cache import cache_folder
from benchlib.core.package_data import table_file
from benchlib.predict.engines import ENGINES, EngineTime, engine_numbers
from benchlib.predict.formula_file import Formulas, ModelFormulas
from benchlib.predict.hosts import PROSE_FIELDS as HOST_PROSE_FIELDS
from benchlib.predict.hosts import Host, default_host
from benchlib.predict.llama_cpp import METHOD as LLAMA_CPP_METHOD
from benchlib.predict.llama_cpp import fit_llama_cpp
from benchlib.predict.llm_memory import LLMPredictor, Setup, make_setup
from benchlib.predict.llm_options import llama_cpp_weights
from benchlib.predict.llm_speed import METHOD, CountedCall, InferenceCalls, count_inference, default_dtype
from benchlib.predict.memory import (
    ALLOCATOR_OVERHEAD,
    CUDA_CONTEXT_BYTES,
    CUDA_CONTEXT_SOURCE,
    DeviceMemory,
    gpu_memory,
    memory_limit,
)
from benchlib.predict.published_memory import (
    PUBLISHED,
    PublishedRow,
    compare,
    median_abs_error,
    published_rows,
)
from benchlib.predict.roofline import engine_figures, gpu_rates
from benchlib.tables import Table, code_digests, data_digests, digest_json, register, table_digests

NAME = "can_i_run_it"
# The table whose formulas the cells are evaluated from: `benchlib tables` computes it first.
FORMULAS = "llm_formulas"
TABLE_FILE = table_file(f"{NAME}.json")
# What the traces depend on besides benchlib.
PACKAGES = ("torch", "transformers", "peft")
TRAINING_SEQ_LEN = 1024
# The engines the inference tab shows: what `model.generate()` gives, and what a served engine gives;
# and the engine of the GGUF tab.
EAGER, SERVED, LLAMA_CPP = "transformers", "vllm", "llama.cpp"
TABLE_ENGINES = (EAGER, SERVED, LLAMA_CPP)
# A served engine's batch for the cost of generating: the largest concurrency whose KV caches fit,
# but no more than this many sequences (a busy server; more adds latency for every reader).
SERVING_BATCH_CAP = 64
# A budget no model here exceeds: llama.cpp's buffers with every layer on the GPU.
UNLIMITED = 1 << 50
# Columns where the served engine is not predicted, and why (the page's legend says so).
NO_SERVED_ENGINE = {
    "t4x2": "vLLM splits a model over two GPUs with tensor parallelism, which is not modelled",
    "p100": "vLLM needs compute capability 7.0 or newer; the P100 (Pascal) is 6.0",
}
VLLM_REQUIREMENTS = "https://docs.vllm.ai/en/v0.14.0/getting_started/installation/gpu/"


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
    # Where the format leaves a mixture of experts' experts out, why its cells are not predicted.
    experts_left_out: str | None = None
    engine: str = "transformers"  # whose memory the cells are: transformers' (PyTorch) or llama.cpp's buffers

    def predicts(self, model: LanguageModel) -> bool:
        """False where this task's format isn't predicted for ``model`` (`experts_left_out`)."""
        return not (self.experts_left_out and model.experts)


# transformers' GPTQ replaces nn.Linear layers, and its MoE layers keep every expert in one fused tensor.
GPTQ_EXPERTS_LEFT_OUT = (
    "a GPTQ checkpoint's 4-bit experts are not modelled: transformers' GPTQ support replaces "
    "nn.Linear layers, its mixture-of-experts layers hold every expert in one fused tensor, and "
    'Qwen\'s speed benchmark lists Qwen3-30B-A3B GPTQ-Int4 as "MoE Kernel Unsupported" in '
    "transformers. The GGUF tab has these models in 4-bit"
)
GPTQ_EXPERTS_SOURCE = (
    "https://github.com/QwenLM/Qwen3/blob/c7f51a1a1ce3d4bb750bc545cd2673fff4c5a8f9/docs/source/"
    "getting_started/speed_benchmark.md"
)


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
    # The 4-bit files people run: a GPTQ checkpoint in transformers or vLLM, and a GGUF file in llama.cpp or Ollama.
    Task(
        "inference-gptq-int4",
        "Inference, GPTQ int4: longest context at batch 1",
        make_setup("inference", seq_len=TRAINING_SEQ_LEN, weights="gptq-int4"),
        experts_left_out=GPTQ_EXPERTS_LEFT_OUT,
    ),
    # llama.cpp (Ollama, LM Studio): the file readers download, Q4_K_M, or the model's own MXFP4 (gpt-oss).
    Task(
        "inference-gguf-q4_k_m",
        "llama.cpp, GGUF Q4_K_M (gpt-oss: its own MXFP4): longest context at batch 1",
        make_setup("inference", seq_len=TRAINING_SEQ_LEN, weights="gguf-q4_k_m", dtype="fp16", kv_cache="fp16"),
        engine=LLAMA_CPP,
    ),
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
# The bf16 inference task; its cells carry the decode speeds of generate() and a served engine.
INFERENCE = TASKS[0]
# The GGUF task; its cells carry llama.cpp's decode speed (the GPTQ tab gives memory only).
GGUF = TASKS[2]
TRAINING_TASKS = tuple(t for t in TASKS if t.setup.mode != "inference")

# snippets/qlora_finetune.py's model and setup on a T4, which computes in fp16 (a test checks the snippet still says so).
SNIPPET_MODEL = "qwen2.5-0.5b"
SNIPPET_SETUP = make_setup("qlora", dtype="fp16", batch=4, seq_len=512, lora_rank=16, grad_checkpointing=True)
SNIPPET_GPU = "T4"


def config_digest(model: LanguageModel) -> str:
    """A short hash of what shapes the model: it changes when a shipped config does."""
    return digest_json(model.fingerprint())


def published_digest() -> str:
    """A short hash of the published peaks' values, not their prose (`benchlib.tables.DATA_PROSE`)."""
    return data_digests(PUBLISHED.name)[f"data/{PUBLISHED.name}"]


def speed_digest() -> str:
    """A short hash of every figure the columns' speed predictions use: it changes with the specs or the constants."""
    return digest_json([engine_figures(gpu_rates(c.spec)) for c in COLUMNS])


def engine_digest() -> str:
    """A short hash of the constants of the engines the table uses and of the hosts they run on, less
    their prose: the speeds change when they do. (The titles the table copies are written in
    engines.py and hosts.py, whose code digests cover them.)"""
    return digest_json(
        {
            "engines": {name: engine_numbers(ENGINES[name]) for name in TABLE_ENGINES},
            "hosts": {c.key: _host_numbers(default_host(c.spec)) for c in COLUMNS},
        }
    )


def _host_numbers(host: Host) -> dict[str, Any]:
    return {k: v for k, v in asdict(host).items() if k not in HOST_PROSE_FIELDS}


def _as_dtype(call: CountedCall, dtype: str) -> CountedCall:
    """``call`` (counted in bf16) as it runs in ``dtype``: the same ops, at that dtype's peak."""
    if dtype == "bf16":
        return call
    ops = tuple(tuple(replace(op, dtype=dtype) if op.dtype == "bf16" else op for op in depth) for depth in call.ops)
    return replace(call, ops=ops)


class _Calls:
    """One model's calls: the formulas' at any batch (in bf16, relabelled per column), and the GGUF
    file's decode step, counted once."""

    def __init__(self, model: LanguageModel, formulas: dict[str, ModelFormulas]) -> None:
        self.model, self.formulas = model, formulas
        self._gguf: tuple[CountedCall | None] | None = None

    def decode(self, batch: int, dtype: str) -> CountedCall | None:
        calls = self.formulas[INFERENCE.key].calls(batch, INFERENCE.setup.seq_len)
        assert isinstance(calls, InferenceCalls)
        return _as_dtype(calls.decode, dtype) if calls.decode is not None else None

    def decode_gguf(self) -> CountedCall | None:
        """One decode step of the GGUF task's file, as llama.cpp runs it (f16 compute on every card)."""
        if self._gguf is None:
            setup = replace(GGUF.setup, weights=llama_cpp_weights(self.model, None))
            self._gguf = (count_inference(self.model, setup).decode,)
        return self._gguf[0]

    def train(self, task: Task, batch: int, dtype: str) -> CountedCall:
        call = self.formulas[task.key].calls(batch, task.setup.seq_len)
        assert isinstance(call, CountedCall)
        return _as_dtype(call, dtype)


def _work(time: EngineTime, tokens: float) -> dict[str, float]:
    """What one token of a cell's speed computes and moves: the bound test holds each cell to its GPU's rates."""
    return {"flops_per_token": time.flops / tokens, "bytes_per_token": time.bytes / tokens}


def speeds(calls: _Calls, cells: dict[str, dict[str, int | None]]) -> dict[str, Any]:
    """A row's predicted speeds on every column, None where the model doesn't fit (or an engine doesn't run).

    * ``decode_tokens_per_s``: per engine, at batch 1 with a full context of the inference task,
      as `benchlib predict --engine` gives them; llama.cpp's for the GGUF task's file. Two GPUs run
      their layers one after the other (``device_map="auto"``, llama.cpp's ``--split-mode layer``),
      so a pair decodes at one GPU's rate.
    * ``serving``: the served engine at the largest concurrency whose KV caches fit beside the
      weights (`ModelFormulas.concurrency`), capped at `SERVING_BATCH_CAP`: sequences and aggregate tokens/s.
    * ``training_tokens_per_s``: each training task at the cell's largest batch (none on a pair:
      a step through two GPUs in turn, and what passes between them, is not modelled).
    * ``work``: for each of those, the FLOPs and bytes per token, which a test holds against the
      GPU's reached rates.
    """
    seq_len = INFERENCE.setup.seq_len
    decode: dict[str, dict[str, float | None]] = {name: {} for name in TABLE_ENGINES}
    serving: dict[str, dict[str, Any] | None] = {}
    training: dict[str, dict[str, float | None]] = {t.key: {} for t in TRAINING_TASKS}
    work: dict[str, Any] = {"decode": {name: {} for name in TABLE_ENGINES}, "serving": {}, "training": {}}
    for task in TRAINING_TASKS:
        work["training"][task.key] = {}
    for column in COLUMNS:
        rates = gpu_rates(column.spec)
        dtype = default_dtype(rates)
        # Eager engines launch their kernels from the host readers find the GPU in (`default_host`).
        launch_s = default_host(column.spec).launch_s
        engines = {name: ENGINES[name].on_host(launch_s) for name in TABLE_ENGINES}
        fits = (cells[INFERENCE.key][column.key] or 0) >= seq_len
        one = calls.decode(1, dtype) if fits else None
        gguf_fits = (cells[GGUF.key][column.key] or 0) >= seq_len
        gguf = calls.decode_gguf() if gguf_fits else None
        for name in TABLE_ENGINES:
            call = gguf if name == LLAMA_CPP else one
            runs = call is not None and not (name == SERVED and column.key in NO_SERVED_ENGINE)
            time = call.time(rates, engines[name]) if runs and call else None
            decode[name][column.key] = 1 / time.seconds if time else None
            work["decode"][name][column.key] = _work(time, 1) if time else None
        serving[column.key] = work["serving"][column.key] = None
        if decode[SERVED][column.key] is not None:
            # The inference task's setup: fp16 and bf16 take the same bytes, so one trace serves every column.
            concurrency = calls.formulas[INFERENCE.key].concurrency(column.spec).sequences
            batch = max(1, min(concurrency, SERVING_BATCH_CAP))
            many = calls.decode(batch, dtype)
            assert many is not None
            time = many.time(rates, engines[SERVED])
            serving[column.key] = {"max_concurrency": concurrency, "batch": batch, "tokens_per_s": batch / time.seconds}
            work["serving"][column.key] = _work(time, batch)
        for task in TRAINING_TASKS:
            batch = cells[task.key][column.key] or 0
            runs = batch > 0 and column.count == 1
            step = calls.train(task, batch, dtype).time(rates, engines[EAGER]) if runs else None
            tokens = batch * task.setup.seq_len
            training[task.key][column.key] = tokens / step.seconds if step else None
            work["training"][task.key][column.key] = _work(step, tokens) if step else None
    return {"decode_tokens_per_s": decode, "serving": serving, "training_tokens_per_s": training, "work": work}


def _llama_cpp_cells(
    model: LanguageModel, task: Task, columns: list[tuple[Column, DeviceMemory]], cache_dir: Path | None
) -> tuple[dict[str, int | None], dict[str, int]]:
    """The GGUF task in llama.cpp: each column's longest context with every layer on the GPU(s), and
    its buffers at the task's prompt length (`benchlib.predict.llama_cpp`)."""
    setup = replace(task.setup, weights=llama_cpp_weights(model, None))
    weights = LLMPredictor(model, setup, cache_dir).breakdown(1)["weights"]
    cells = {c.key: fit_llama_cpp(model, setup, one, weights, c.count).largest_context for c, one in columns}
    # The buffers with every layer on the GPU, whichever column they fit.
    at_prompt = fit_llama_cpp(model, setup, memory_limit(UNLIMITED), weights)
    assert at_prompt.fits
    peak = {
        "weights": at_prompt.model_buffer,
        "kv_cache": at_prompt.kv_cache,
        "compute_buffer": at_prompt.compute_buffer,
        "cuda_context": at_prompt.cuda_context,
        "total": at_prompt.gpu_bytes,
    }
    return cells, peak


def _published_of(models: list[str] | None) -> list[PublishedRow]:
    """The published measurements of these shipped models (all of them for None)."""
    if not models:
        return list(published_rows())
    shipped = shipped_models()
    ids = {hf_id.lower() for name in models for hf_id in (shipped[name].hf_id, *shipped[name].aliases)}
    return [row for row in published_rows() if row.row["model"].lower() in ids]


def formulas_to_evaluate() -> Formulas:
    """The formulas table the cells are evaluated from (the committed file, or where this run of
    `benchlib tables --out` wrote it); `TableStale` (naming the command) where it is missing or
    stale, since cells from old formulas would be old answers."""
    from benchlib.tables import TableStale, all_tables, read_from, refresh_command, stale_reasons

    path = read_from(FORMULAS)
    reasons = stale_reasons(all_tables()[FORMULAS], path)
    if reasons:
        raise TableStale(
            f"{NAME} is evaluated from {path}, which is not current ({'; '.join(reasons)}); "
            f"run `{refresh_command(FORMULAS)}` first, or `benchlib tables` for both"
        )
    return Formulas.read(path)


def _model_formulas(formulas: Formulas, model: LanguageModel) -> dict[str, ModelFormulas]:
    """The formulas of each of the model's tasks that are not llama.cpp's (which the table traces)."""
    found = {}
    for task in TASKS:
        if task.engine == LLAMA_CPP or not task.predicts(model):
            continue
        mf = formulas.find(model.name, task.setup)
        if mf is None:
            raise ValueError(f"{formulas.path} holds no formulas for {model.name} as {task.key}")
        found[task.key] = mf
    return found


def predict_table(
    cache_dir: Path | None,
    on_step: Callable[[str], None] = lambda step: None,
    models: list[str] | None = None,
    formulas: Formulas | None = None,
) -> dict[str, Any]:
    """Every cell of the table and the published comparison, with what they were predicted with;
    ``models`` limits both to those shipped models (a check of the writing that needn't trace all).
    The cells come from ``formulas`` (default: the committed table, which must be current)."""
    formulas = formulas or formulas_to_evaluate()
    columns = [(c, gpu_memory(c.spec)) for c in COLUMNS]
    rows = []
    for shipped in shipped_models().values():
        if not shipped.on_page or (models and shipped.name not in models):
            continue
        on_step(f"{shipped.title}: formulas")
        model = resolve_model(shipped.name)
        found = _model_formulas(formulas, model)
        cells: dict[str, dict[str, int | None]] = {}
        peaks: dict[str, dict[str, int]] = {}
        for task in TASKS:
            if task.engine == LLAMA_CPP:
                on_step(f"{shipped.title}: {task.key}")
                cells[task.key], peaks[task.key] = _llama_cpp_cells(model, task, columns, cache_dir)
            elif task.key not in found:
                cells[task.key] = {c.key: None for c, _ in columns}
            else:
                # Two GPUs split the layers in order (device_map="auto"), for every task: a cell is the fullest GPU's.
                mf = found[task.key]
                cells[task.key] = {c.key: mf.predict(one, gpus=c.count).largest for c, one in columns}
                peaks[task.key] = mf.at(1, task.setup.seq_len)
        on_step(f"{shipped.title}: speeds")
        predicted = speeds(_Calls(model, found), cells)
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
                "gguf_weights": llama_cpp_weights(model, None),
                **predicted,
            }
        )
    on_step("the QLoRA snippet and published measurements")
    snippet = LLMPredictor(resolve_model(SNIPPET_MODEL), SNIPPET_SETUP, cache_dir).predict(
        gpu_memory(find_gpu(SNIPPET_GPU))
    )
    comparisons = [compare(row, overhead=ALLOCATOR_OVERHEAD, cache_dir=cache_dir) for row in _published_of(models)]
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
                "host": default_host(c.spec).name,
                "host_title": default_host(c.spec).title,
                "usable_bytes": one.usable_bytes,
                "basis": one.basis,
                "status": one.status,
                "source": one.source,
                "as_of": one.as_of,
            }
            for c, one in columns
        ],
        "tasks": [
            {
                "key": t.key,
                "title": t.title,
                "setup": asdict(t.setup),
                "describe": t.setup.describe(),
                "experts_left_out": t.experts_left_out,
                "experts_left_out_source": GPTQ_EXPERTS_SOURCE if t.experts_left_out else None,
                "engine": t.engine,
            }
            for t in TASKS
        ],
        "rows": rows,
        "speed": {
            "task": INFERENCE.key,
            "batch": INFERENCE.setup.batch,
            "seq_len": INFERENCE.setup.seq_len,
            "dtypes": {c.key: default_dtype(gpu_rates(c.spec)) for c in COLUMNS},
            "method": METHOD,
            "rates_digest": speed_digest(),
            "engine_digest": engine_digest(),
            "engines": {
                name: {
                    "title": ENGINES[name].title,
                    "basis": ENGINES[name].basis,
                    "version": ENGINES[name].version,
                    "as_of": ENGINES[name].as_of,
                }
                for name in TABLE_ENGINES
            },
            "eager": EAGER,
            "served": SERVED,
            "llama_cpp": LLAMA_CPP,
            "gguf_task": GGUF.key,
            "llama_cpp_method": LLAMA_CPP_METHOD,
            "no_served_engine": NO_SERVED_ENGINE,
            "vllm_requirements": VLLM_REQUIREMENTS,
            "serving_batch_cap": SERVING_BATCH_CAP,
            "training_seq_len": TRAINING_SEQ_LEN,
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
    memory and speed figures, the engines' constants, the formulas (what they were computed from)
    and the code that predicts. Not the rest of
    the specs: a new price changes none of it (the pages work out costs from the prices when the
    site is built).

    The configs are the ones in ``language_models.yaml``, and transformers fills in the rest (its
    version counts too), so the file's values stand for them: no transformers import is needed to
    check the table. Each row still records its config's digest.
    """
    return {
        **data_digests("language_models.yaml", "published_llm_memory.yaml"),
        "column memory": digest_json([[asdict(gpu_memory(c.spec)), c.count] for c in COLUMNS]),
        "speed rates": speed_digest(),
        "engine constants": engine_digest(),
        **data_digests("reached_rates.yaml"),
        **table_digests(FORMULAS),
        **code_digests(__name__),
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
        steps=lambda: len(predicted_models()) * 3 + 1,
        packages=PACKAGES,
        reads=(FORMULAS,),
        summary=summary,
    )
)
