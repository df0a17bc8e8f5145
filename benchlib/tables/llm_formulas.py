"""Every shipped language model's memory and step time as formulas in the batch and the length.

`benchlib.predict.formula` turns a few traces into formulas: a phase's peak memory is its largest
kept moment, each moment ``c0 + c1·b + c2·b·L + c3·b·L²`` (one sequence: ``c0 + c2·L + c3·L²``);
a call's ops have FLOPs, bytes and rows that are the same terms. This table writes them down for
each shipped model and each setup the "Can I run it?" picker offers (`SETUPS`), with what the
evaluators need besides: the trace plan that adds the traced depths up to the whole model, and the
input embeddings' bytes, which put the layers of a split model on their GPUs.

The formulas hold no GPU: `benchlib.predict.formula_file` (the CLI) and the picker's script
evaluate them for any GPU, count of GPUs, batch and length, with the GPUs' rates and budgets and
the engines' constants as they are when the site is built. ``tests/test_predict_formula_file.py`` checks
that the written formulas give what `benchlib.predict.formula` gives, and
``tests/test_predict_formula.py`` that those give what full traces give.

A call's ops are written once each (``ops``) with the order they run in (``order``, indices into
``ops``): a training step runs about 1,500 ops of about 100 kinds, and an engine that reads packed
weights pairs each dequantize op with the matmul after it, so the order counts.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import asdict
from functools import cache
from multiprocessing import get_context
from typing import Any

from benchlib.catalog.language_models import resolve_model, shipped_models
from benchlib.predict.formula import FormulaError, memory_formula, time_formula
from benchlib.predict.llm_memory import Setup, make_setup
from benchlib.tables import Table, code_digests, data_digests, register

NAME = "llm_formulas"
PACKAGES = ("torch", "transformers", "peft")
# The setups the picker offers, each at its sizes' defaults (the formulas hold every batch and
# length): bf16 inference, with its KV cache in fp8 too (vLLM's --kv-cache-dtype fp8), and every
# quantized format `benchlib fit --weights` takes but GGUF's (llama.cpp's, which the table
# "can_i_run_it" answers); and the three ways of fine-tuning with gradient checkpointing, as
# recipes for small GPUs do. Computed in bf16: fp16 takes the same bytes and the same ops (the
# picker runs a T4's at its fp16 peak). Inference takes seconds a model and setup, a training
# setup about a minute.
SETUPS: dict[str, Setup] = {
    "inference-bf16": make_setup("inference"),
    "inference-bf16-kv-fp8": make_setup("inference", kv_cache="fp8"),
    "inference-int8": make_setup("inference", weights="int8"),
    "inference-nf4": make_setup("inference", weights="nf4"),
    "inference-gptq-int4": make_setup("inference", weights="gptq-int4"),
    "inference-gptq-int8": make_setup("inference", weights="gptq-int8"),
    "inference-awq-int4": make_setup("inference", weights="awq-int4"),
    "inference-fp8": make_setup("inference", weights="fp8"),
    "inference-mxfp4": make_setup("inference", weights="mxfp4"),
    "qlora": make_setup("qlora", grad_checkpointing=True),
    "lora": make_setup("lora", grad_checkpointing=True),
    "train": make_setup("train", dtype="bf16", grad_checkpointing=True),
}
# Seven significant digits: a coefficient's rounding moves a 100 GB peak by a few kB. What is left
# of a solve's rounding (below `NOISE`) is zero: a real coefficient counts whole bytes or FLOPs in
# some term, or a fraction of one no smaller than a 4-bit weight's share of its group's scale.
DIGITS = 7
NOISE = 1e-6


def _number(x: float) -> float | int:
    if abs(x) < NOISE:
        return 0
    rounded = float(f"{x:.{DIGITS}g}")
    return int(rounded) if rounded.is_integer() else rounded


def _rounded(values: Any) -> Any:
    """Nested lists of ``values`` (a numpy array), each number as `_number` writes it, and a list
    of zeros (an op's count that no term grows) as one 0."""
    if getattr(values, "ndim", 0) == 1:
        row = [_number(float(x)) for x in values]
        return row if any(row) else 0
    return [_rounded(v) for v in values]


def _memory(model: Any, setup: Setup) -> dict[str, Any]:
    formula = memory_formula(model, setup)
    predictor = formula.predictor
    plan = predictor.plan
    return {
        "kinds": list(formula.kinds),
        "plan": {
            "coefficients": list(plan.coefficients),
            "layers": [list(layers) if layers is not None else None for layers in plan.layers],
            "full": list(plan.full),
        },
        # A split puts the embeddings on the first GPU (`LLMPredictor._per_gpu`).
        "embedding_bytes": predictor._embedding_bytes() if plan.reduced else None,
        "tied": bool(getattr(model.text_config, "tie_word_embeddings", False)),
        "pieces": [
            {
                "upto": upto,
                **{
                    side: [{phase: _rounded(c) for phase, c in depth.items()} for depth in sides[one]]
                    for side, one in (("one", True), ("many", False))
                },
            }
            for upto, sides in formula.pieces
        ],
    }


def _ops(depth: Any) -> dict[str, Any]:
    """One traced depth's ops: each kind once, and the order they run in."""
    ops: list[list[Any]] = []
    index: dict[str, int] = {}
    order = []
    for fixed, coefficients in zip(depth.fixed, _rounded(depth.coefficients), strict=True):
        op = [*fixed, coefficients]
        key = repr(op)
        if key not in index:
            index[key] = len(ops)
            ops.append(op)
        order.append(index[key])
    return {"ops": ops, "order": order}


def _time(model: Any, setup: Setup) -> dict[str, Any]:
    formula = time_formula(model, setup)
    calls = {}
    for name in ("prefill", "decode", "train"):
        call = getattr(formula, name)
        if call is None:
            continue
        calls[name] = {
            "per_token": call.per_token,
            "plan_coefficients": list(call.plan.coefficients),
            "pieces": [
                {
                    "upto": upto,
                    **{side: [_ops(d) for d in sides[one]] for side, one in (("one", True), ("many", False))},
                }
                for upto, sides in call.pieces
            ],
        }
    return {"experts_per_token": model.experts_per_token, "calls": calls}


def entry(name: str, key: str) -> dict[str, Any]:
    """The formulas of the shipped model ``name`` run as ``SETUPS[key]``, or why there are none."""
    model = resolve_model(name)
    setup = SETUPS[key]
    try:
        return {"memory": _memory(model, setup), "time": _time(model, setup)}
    # A setup the model can't run (ValueError from make_setup or the predictor: MXFP4 on a model
    # without experts), one whose ops change with the size (FormulaError, named for the reader
    # though it is a ValueError), or an architecture the trace can't build: the entry says why.
    except (FormulaError, ValueError, NotImplementedError) as exc:
        return {"not_predicted": str(exc)}


def _entry_of(job: tuple[str, str]) -> tuple[str, str, dict[str, Any]]:
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return (*job, entry(*job))


def _work(job: tuple[str, str]) -> int:
    """How many calls a job traces, roughly: per traced depth and piece of lengths, a training step
    (forward, backward, checkpointed forward and update, for memory and for time) or a prefill."""
    return _traced_pieces(job[0]) * (4 if SETUPS[job[1]].trains else 1)


@cache
def _traced_pieces(name: str) -> int:
    from benchlib.predict.formula import length_pieces
    from benchlib.predict.llm_speed import plan_of

    model = resolve_model(name)
    return len(plan_of(model).layers) * len(length_pieces(model))


def predicted_models() -> list[str]:
    return [m.name for m in shipped_models().values() if m.on_page]


def compute_table(on_step: Callable[[str], None], models: list[str] | None = None) -> dict[str, Any]:
    """Every model's formulas, in parallel over the machine's cores (each job builds its own models)."""
    names = models or predicted_models()
    # The longest jobs first, so that no core is left with one of them at the end.
    jobs = sorted(((name, key) for name in names for key in SETUPS), key=_work, reverse=True)
    found: dict[tuple[str, str], dict[str, Any]] = {}
    workers = max(1, min(len(jobs), os.cpu_count() or 1))
    with ProcessPoolExecutor(workers, mp_context=get_context("spawn")) as pool:
        futures = [pool.submit(_entry_of, job) for job in jobs]
        for future in as_completed(futures):
            name, key, value = future.result()
            on_step(f"{name}: {key}")
            found[name, key] = value
    shipped = shipped_models()
    return {
        "setups": {key: {**asdict(setup), "describe": setup.describe()} for key, setup in SETUPS.items()},
        "models": [
            {
                "model": name,
                "title": shipped[name].title,
                "max_positions": resolve_model(name).max_positions(),
                "setups": {key: found[name, key] for key in SETUPS},
            }
            for name in names
        ],
    }


def inputs() -> dict[str, str]:
    """The shipped configs (transformers fills in the rest, and its version counts) and the code that traces."""
    return {**data_digests("language_models.yaml"), **code_digests(__name__)}


def summary(table: dict[str, Any]) -> str:
    done = sum("memory" in e for m in table["models"] for e in m["setups"].values())
    return f"{len(table['models'])} models x {len(SETUPS)} setups; {done} with formulas"


TABLE = register(
    Table(
        name=NAME,
        description="every shipped language model's memory and step time as formulas in the batch and the length",
        compute=compute_table,
        inputs=inputs,
        steps=lambda: len(predicted_models()) * len(SETUPS),
        packages=PACKAGES,
        summary=summary,
        compact=True,
    )
)
