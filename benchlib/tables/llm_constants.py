"""What evaluates the language-model formulas outside Python: every GPU's memory budget, rates and host,
and the engines' constants, as `benchlib fit` and `benchlib predict` use them.

The formulas (``llm_formulas``) hold no GPU and no engine. The "Can I run it?" picker evaluates
them in the browser for any GPU the specs can time, so it needs the figures `benchlib.predict`
works out from the specs (`gpu_memory`, `gpu_rates`, `matmul_fraction`, `default_host`), the
engines' numbers and which setups each refuses (`Engine.check`, with its message), and the
constants the evaluation itself reads (`DTYPE_BYTES`, `TRAFFIC_KINDS`, `LARGEST_BATCH`...). The
site never imports `benchlib.predict`, so they are written here, beside the formulas, and a test
holds the page's script to them. Computing them takes a moment; the digest is of the figures
themselves, so the table is stale exactly when one of them would come out different.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import asdict, fields
from typing import Any

from benchlib.catalog.gpus import AcceleratorSpec, UnknownGPU, load_accelerators
from benchlib.catalog.reached_rates import reached_bandwidth
from benchlib.predict.count import OpCost
from benchlib.predict.engines import (
    DEQUANTIZE,
    DTYPE_BYTES,
    ENGINES,
    FUSED_QUANTIZED,
    PACKED,
    TRAFFIC_KINDS,
    EngineMismatch,
    matmul_fraction,
)
from benchlib.predict.formula import FIXED, GROWING
from benchlib.predict.hosts import NOTEBOOK_GPUS, default_host
from benchlib.predict.llama_cpp import CACHE_TYPES, KV_PAD, MICRO_BATCH
from benchlib.predict.llm_memory import LARGEST_BATCH
from benchlib.predict.llm_options import has_bf16
from benchlib.predict.memory import CUDA_CONTEXT_BYTES, gpu_memory
from benchlib.predict.roofline import GpuRates, UnknownSpeedGPU, gpu_rates
from benchlib.predict.weight_formats import compute_capability, dequantized_on, kv_bytes_per_value
from benchlib.tables import Table, digest_json, register
from benchlib.tables.can_i_run_it import COLUMNS, LLAMA_CPP, NO_SERVED_ENGINE, SERVED, VLLM_REQUIREMENTS
from benchlib.tables.llm_formulas import SETUPS

NAME = "llm_constants"
# The engines the formulas are timed with: eager transformers, a served engine, and llama.cpp for
# the GGUF files (whose memory is llama.cpp's buffers, `benchlib.predict.llama_cpp`).
FORMULA_ENGINES = ("transformers", SERVED, LLAMA_CPP)
# vLLM's requirements (`VLLM_REQUIREMENTS`): compute capability 7.0 or newer, as the table's P100 column says.
SERVED_CAPABILITY = (7, 0)
# What isn't modelled with several GPUs: a served engine's tensor parallelism (the table's pair of
# T4s says so), and a training step through GPUs that hold their layers in turn.
SEVERAL_GPUS_SERVED = NO_SERVED_ENGINE["t4x2"]
SEVERAL_GPUS_TRAINING = "a training step through GPUs that each hold some of the layers, in turn, is not modelled"


def _key(name: str) -> str:
    """A GPU's name as a page's control value: ``geforce-rtx-4090``."""
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


def _missing_peaks(rates: GpuRates) -> dict[str, str]:
    """`GpuRates.compute_tflops`'s message for each dtype an op may have that has no peak on this GPU."""
    missing = {}
    for dtype in ("fp32", "fp16", "bf16"):
        try:
            rates.compute_tflops(OpCost("matmul", "matmul", 1, 0, dtype))
        except UnknownSpeedGPU as exc:
            missing[dtype] = str(exc)
    return missing


def _no_speed(spec: AcceleratorSpec, dtype: str, peaks: dict[str, float]) -> str | None:
    """`predict_llm_speed`'s refusal where the GPU's compute dtype has no peak in the specs."""
    if dtype == "fp32" or dtype in peaks:
        return None
    others = [d for d in ("bf16", "fp16") if d in peaks and d != dtype]
    instead = f"try --dtype {others[0]}" if others else "try --dtype fp32"
    return (
        f"{spec.name}: the specs give no {dtype} peak (it may not support {dtype}); {instead}, "
        f"or add its {dtype} TFLOPS to benchlib/data/gpus.yaml with a source"
    )


def _no_served(spec: AcceleratorSpec) -> str | None:
    capability = compute_capability(spec.architecture.value)
    if capability is None or capability >= SERVED_CAPABILITY:
        return None
    major, minor = SERVED_CAPABILITY
    return (
        f"vLLM needs compute capability {major}.{minor} or newer; the {spec.name} "
        f"({spec.architecture.value.split()[0]}) is {capability[0]}.{capability[1]}"
    )


def _gpu(spec: AcceleratorSpec, order: int) -> dict[str, Any] | None:
    """One GPU's figures, or None where benchlib can't predict for it (no memory size or no bandwidth)."""
    try:
        memory = gpu_memory(spec)
        rates = gpu_rates(spec)
    except UnknownGPU:  # UnknownSpeedGPU too
        return None
    dtype = "bf16" if has_bf16(spec) else "fp16"
    fraction, _ = matmul_fraction(rates)
    reached = reached_bandwidth(spec.name)
    host = default_host(spec)
    return {
        "key": _key(spec.name),
        "name": spec.name,
        "order": order,
        "notebook": spec.name in NOTEBOOK_GPUS,
        "memory": {
            "usable_bytes": memory.usable_bytes,
            "context_bytes": memory.context_bytes,
            "overhead": memory.overhead,
            "tensor_budget": memory.tensor_budget,
        },
        # The compute dtype `benchlib fit` and `predict` pick on this GPU (`LLMOptions.compute_dtype`).
        "dtype": dtype,
        "rates": {
            "peaks_tflops": rates.peaks_tflops,
            "tf32_convolutions": rates.tf32_convolutions,
            "bandwidth_gbps": rates.bandwidth_gbps,
            "compute_efficiency": rates.compute_efficiency,
            "matmul_fraction": fraction,
            "reached_bandwidth_gbps": reached.value if reached else None,
        },
        "missing_peaks": _missing_peaks(rates),
        "no_speed": _no_speed(spec, dtype, rates.peaks_tflops),
        "no_served": _no_served(spec),
        "host": {"name": host.name, "launch_s": host.launch_s},
        # Formats transformers dequantizes on this GPU while loading (`runs_as`): the setup it runs
        # instead is the same mode in the compute dtype, and why.
        "dequantized": {
            key: why
            for key, setup in SETUPS.items()
            if (why := dequantized_on(setup.weights, spec.name, spec.architecture.value, dtype))
        },
    }


def _engine(name: str) -> dict[str, Any]:
    engine = ENGINES[name]
    refuses = {}
    for key, setup in SETUPS.items():
        try:
            engine.check(setup.mode, setup.weights)
        except EngineMismatch as exc:
            refuses[key] = str(exc)
    numbers = {
        f.name: getattr(engine, f.name)
        for f in fields(engine)
        if f.name
        in (
            "launch_s",
            "step_s",
            "stream_efficiency",
            "attention_efficiency",
            "quantized_efficiency",
            "fused_quantized_tokens",
            "matmul_ceiling_tflops",
            "appends_in_place",
            "host_launched",
        )
    }
    return {"key": name, "title": engine.title, **numbers, "refuses": refuses}


def _gpus() -> list[dict[str, Any]]:
    """Every GPU benchlib can predict for: the tables' columns first (the free notebooks' GPUs lead
    them), then the rest in the specs' order."""
    columns = list(dict.fromkeys(c.gpu for c in COLUMNS))
    specs = [s for s in load_accelerators() if s.kind == "gpu"]
    ranked = sorted(specs, key=lambda s: columns.index(s.name) if s.name in columns else len(columns))
    return [g for i, s in enumerate(ranked) if (g := _gpu(s, i)) is not None]


def compute_table(on_step: Callable[[str], None] = lambda step: None) -> dict[str, Any]:
    on_step("GPUs and engines")
    return {
        "gpus": _gpus(),
        "engines": [_engine(name) for name in FORMULA_ENGINES],
        "several_gpus": {"served": SEVERAL_GPUS_SERVED, "training": SEVERAL_GPUS_TRAINING},
        "served_requirements": VLLM_REQUIREMENTS,
        "evaluation": {
            "dtype_bytes": DTYPE_BYTES,
            "packed": PACKED,
            "dequantize": DEQUANTIZE,
            "fused_quantized": FUSED_QUANTIZED,
            "traffic_kinds": list(TRAFFIC_KINDS),
            "fixed": list(FIXED),
            "growing": list(GROWING),
            "largest_batch": LARGEST_BATCH,
            # llama.cpp's buffers (`benchlib.predict.llama_cpp`): its micro-batch, the KV cache's padding,
            # the CUDA context each GPU holds, and the bytes of a cached value in each cache type.
            "llama_cpp": {
                "micro_batch": MICRO_BATCH,
                "kv_pad": KV_PAD,
                "cuda_context_bytes": CUDA_CONTEXT_BYTES,
                "cache_types": {name: kv_bytes_per_value(name) for name in CACHE_TYPES},
            },
        },
        "setups": {key: asdict(setup) for key, setup in SETUPS.items()},
    }


def inputs() -> dict[str, str]:
    """The figures themselves: computing them takes a moment, and any change to one counts."""
    return {"figures": digest_json(compute_table())}


def summary(table: dict[str, Any]) -> str:
    return f"{len(table['gpus'])} GPUs, {len(table['engines'])} engines"


TABLE = register(
    Table(
        name=NAME,
        description="every GPU's memory budget, rates and host, and the engines' constants, for evaluating llm_formulas",
        compute=compute_table,
        inputs=inputs,
        summary=summary,
    )
)
