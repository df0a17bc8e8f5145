"""Python's answers from a model's formulas as ``llm_formulas`` writes them: the reference the picker's
script (docs/assets/javascripts/can-i-run-it.js) is held to.

The written formulas are read back into `benchlib.predict.formula`'s own objects (`MemoryFormula`,
`CallFormula`, `OpsFormula`) and evaluated by `benchlib.predict`'s own code: `LLMPredictor` for the
memory (its input embeddings' bytes read from the file, as nothing is traced), `predict_llm_speed`
for the speed, on the ops a T4 or P100 runs in fp16 (`_as_dtype`), and `max_concurrency`'s rule on
the formula's breakdown at one sequence.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from benchlib.catalog.gpus import find_gpu
from benchlib.catalog.language_models import TracePlan, resolve_model
from benchlib.predict.engines import ENGINES, EngineMismatch
from benchlib.predict.formula import CallFormula, MemoryFormula, OpsFormula, TimeFormula
from benchlib.predict.llama_cpp import LlamaCppShape, fit_shape
from benchlib.predict.llm_memory import LARGEST_BATCH, LLMPredictor, Setup
from benchlib.predict.llm_options import has_bf16
from benchlib.predict.llm_speed import CountedCall, InferenceCalls, predict_llm_speed
from benchlib.predict.memory import gpu_memory
from benchlib.predict.roofline import UnknownSpeedGPU
from benchlib.predict.weight_formats import dequantized_on
from benchlib.tables.can_i_run_it import _as_dtype


def _rows(value: Any, terms: int) -> Any:
    """A written row (or a 0 standing for an all-zero row), nested, as a numpy array."""
    if value == 0:
        return np.zeros(terms)
    if isinstance(value[0], list) or value[0] == 0 and len(value) != terms:
        return np.array([_rows(v, terms) for v in value])
    return np.array(value, dtype=float)


def _terms(one: bool) -> int:
    return 3 if one else 4


def setup_of(table_setup: dict[str, Any]) -> Setup:
    return Setup(**{k: v for k, v in table_setup.items() if k != "describe"})


def memory_formula(model: Any, setup: Setup, memory: dict[str, Any], gpus: int) -> MemoryFormula:
    pieces = tuple(
        (
            piece["upto"],
            {
                one: tuple(
                    {phase: np.array([_rows(m, _terms(one)) for m in moments]) for phase, moments in depth.items()}
                    for depth in piece[side]
                )
                for side, one in (("one", True), ("many", False))
            },
        )
        for piece in memory["pieces"]
    )
    predictor = LLMPredictor(model, setup, gpus=gpus)
    predictor._embedding_bytes = lambda: memory["embedding_bytes"]  # type: ignore[method-assign]
    return MemoryFormula(tuple(memory["kinds"]), pieces, predictor)


def _ops(depth: dict[str, Any], one: bool) -> OpsFormula:
    ops = [depth["ops"][i] for i in depth["order"]]
    fixed = tuple(tuple(op[:-1]) for op in ops)
    coefficients = np.array([[_rows(c, _terms(one)) for c in op[-1]] for op in ops])
    return OpsFormula(fixed, coefficients)


def time_formula(setup: Setup, time: dict[str, Any]) -> TimeFormula:
    calls = {}
    for name, call in time["calls"].items():
        plan = TracePlan(tuple(None for _ in call["plan_coefficients"]), tuple(call["plan_coefficients"]))
        pieces = tuple(
            (
                piece["upto"],
                {one: tuple(_ops(d, one) for d in piece[side]) for side, one in (("one", True), ("many", False))},
            )
            for piece in call["pieces"]
        )
        calls[name] = CallFormula(plan, pieces, time["experts_per_token"], call["per_token"])
    return TimeFormula(setup, **calls)


def answer(
    entry: dict[str, Any], setups: dict[str, Any], key: str, gpu: str, count: int, batch: int, length: int
) -> dict[str, Any]:
    """Python's answer for the model of ``entry`` (its file's contents) run as setup ``key`` on ``count``
    of ``gpu``, at ``batch`` sequences of ``length`` tokens: the fullest GPU's tensor peak, the largest
    batch or context, and each engine's tokens/s (None where not predicted)."""
    model = resolve_model(entry["model"])
    spec = find_gpu(gpu)
    dtype = "bf16" if has_bf16(spec) else "fp16"
    table_setup = setups[key]
    if dequantized_on(table_setup["weights"], spec.name, spec.architecture.value, dtype):  # `runs_as`
        key = next(k for k, s in setups.items() if s["mode"] == table_setup["mode"] and s["weights"] == "bf16")
    setup = setup_of(setups[key])
    written = entry["setups"][key]
    memory = memory_formula(model, setup, written["memory"], count)
    budget = gpu_memory(spec).tensor_budget
    trains = setup.trains
    out: dict[str, Any] = {
        "setup": key,
        "peak": memory.peak(batch, length),
        "largest": memory.largest(budget, length=length) if trains else memory.largest(budget, batch=batch),
        "limit": LARGEST_BATCH if trains else model.max_positions(),
    }
    time = time_formula(setup, written["time"])
    at = replace(setup, batch=batch, seq_len=length)
    if dtype != setup.dtype and setup.dtype == "bf16":  # the T4's fp16, for the same bytes
        at = replace(at, dtype=dtype, weights=dtype if at.weights == "bf16" else at.weights)
    for name in ("transformers", "vllm"):
        out[name] = None
        if count > 1 and (trains or name == "vllm"):
            continue
        if trains:
            counted: Any = _as_dtype(time.training(batch, length), dtype)
        else:
            calls = time.inference(batch, length)
            counted = InferenceCalls(
                _as_dtype(calls.prefill, dtype), _as_dtype(calls.decode, dtype) if calls.decode else None
            )
        try:
            speed = predict_llm_speed(model, spec, at, ENGINES[name], concurrency=False, counted=counted)
        except (EngineMismatch, UnknownSpeedGPU):
            continue
        out[name] = {
            "prefill": speed.prefill_tokens_per_s,
            "decode": speed.decode_tokens_per_s,
            "training": speed.training_tokens_per_s,
        }
    if not trains and count == 1:
        one = memory_formula(model, setup, written["memory"], 1).at(1, length)
        free = budget - one["weights"] - one["activations"]
        out["concurrency"] = max(0, free // max(1, one["kv_cache"]))
    return out


def llama_cpp_answer(
    entry: dict[str, Any], setups: dict[str, Any], key: str, gpu: str, count: int, length: int
) -> dict[str, Any]:
    """Python's answer for the GGUF file of setup ``key`` in llama.cpp, one sequence of ``length``
    tokens on ``count`` of ``gpu``: `fit_shape` on the file's shape as ``entry`` holds it, and
    llama.cpp's tokens/s from the time formula in f16, as `benchlib predict --engine llama.cpp` runs it."""
    model = resolve_model(entry["model"])
    spec = find_gpu(gpu)
    setup = replace(setup_of(setups[key]), seq_len=length)
    shape = LlamaCppShape(**entry["llama_cpp"][key])
    fit = fit_shape(model.title, shape, setup, gpu_memory(spec), model.max_positions(), count)
    calls = time_formula(setup, entry["setups"][key]["time"]).inference(1, length)
    counted = InferenceCalls(
        _as_dtype(calls.prefill, "fp16"), _as_dtype(calls.decode, "fp16") if calls.decode else None
    )
    at = replace(setup, dtype="fp16", kv_cache="fp16")
    try:
        speed = predict_llm_speed(model, spec, at, ENGINES["llama.cpp"], concurrency=False, counted=counted)
    except UnknownSpeedGPU:  # no fp16 peak in the GPU's specs
        return {"fit": fit, "llama.cpp": None}
    return {
        "fit": fit,
        "llama.cpp": {"prefill": speed.prefill_tokens_per_s, "decode": speed.decode_tokens_per_s, "training": None},
    }


__all__ = ["CountedCall", "answer", "llama_cpp_answer"]
