"""Every shipped language model's memory and step time as formulas in the batch and the length.

`benchlib.predict.formula` turns a few traces into formulas: a phase's peak memory is its largest
kept moment, each moment ``c0 + c1·b + c2·b·L + c3·b·L²`` (one sequence: ``c0 + c2·L + c3·L²``);
a call's ops have FLOPs, bytes and rows that are the same terms. This table writes them down
(`benchlib.predict.formula_json`) for each shipped model and each setup the "Can I run it?" picker
offers (`SETUPS`).

The formulas hold no GPU: `benchlib.predict.formula_file` (the CLI) and the picker's script
evaluate them for any GPU, count of GPUs, batch and length, with the GPUs' rates and budgets and
the engines' constants as they are when the site is built. ``tests/test_predict_formula_file.py`` checks
that the written formulas give what `benchlib.predict.formula` gives, and
``tests/test_predict_formula.py`` that those give what full traces give.

Each model's row records the digest of what its entries are computed from (`row_inputs`: its
config, the code that writes an entry, and the versions of torch, transformers and peft). A run
copies an entry from the committed table where that digest and the setup are unchanged, so adding a
model or a setup computes only the new entries (all of them take about 165 minutes on two cores);
`benchlib tables --fresh` computes every one again.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import asdict
from functools import cache
from multiprocessing import get_context
from typing import Any

from benchlib import tables
from benchlib.catalog.language_models import resolve_model, shipped_models
from benchlib.predict.llm_memory import Setup, make_setup
from benchlib.tables import Table, code_digests, data_digests, digest_json, installed_versions, register

NAME = "llm_formulas"
PACKAGES = ("torch", "transformers", "peft")
# Every attention projection: peft matches names as suffixes and needs one of them to match, so
# Phi-3's fused qkv_proj and everyone else's q, k and v projections are one list.
ATTENTION_PROJECTIONS = "q_proj,k_proj,v_proj,o_proj,qkv_proj"
# The setups the picker offers, each at its sizes' defaults (the formulas hold every batch and
# length): bf16 inference, with its KV cache in fp8 too (vLLM's --kv-cache-dtype fp8), and every
# quantized format `benchlib fit --weights` takes, GGUF's four files among them (whose KV cache's
# type llama.cpp's shapes take, `benchlib.predict.llama_cpp.with_cache_of`); and the three ways of
# fine-tuning, with gradient checkpointing as recipes for small GPUs do, and without it
# (Trainer's default). Computed in bf16: fp16 takes the same bytes and the same ops (the picker
# runs a T4's at its fp16 peak). Inference takes seconds a model and setup, a training setup
# about a minute.
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
    "inference-gguf-q4_k_m": make_setup("inference", weights="gguf-q4_k_m"),
    "inference-gguf-q5_k_m": make_setup("inference", weights="gguf-q5_k_m"),
    "inference-gguf-q8_0": make_setup("inference", weights="gguf-q8_0"),
    "inference-gguf-mxfp4": make_setup("inference", weights="gguf-mxfp4"),
    "qlora": make_setup("qlora", grad_checkpointing=True),
    "lora": make_setup("lora", grad_checkpointing=True),
    "train": make_setup("train", dtype="bf16", grad_checkpointing=True),
    "qlora-no-checkpointing": make_setup("qlora"),
    "lora-no-checkpointing": make_setup("lora"),
    "train-no-checkpointing": make_setup("train", dtype="bf16"),
    # LoRA and QLoRA at a higher rank than peft's recipes' 16, with checkpointing: the QLoRA
    # paper's 64; and on the attention projections alone, as many notebooks adapt them.
    "qlora-r64": make_setup("qlora", grad_checkpointing=True, lora_rank=64),
    "qlora-attention": make_setup("qlora", grad_checkpointing=True, lora_targets=ATTENTION_PROJECTIONS),
    "lora-r64": make_setup("lora", grad_checkpointing=True, lora_rank=64),
    "lora-attention": make_setup("lora", grad_checkpointing=True, lora_targets=ATTENTION_PROJECTIONS),
}
# The module that writes an entry: its code and what it imports make an entry's values.
ENTRY_CODE = "benchlib.predict.formula_json"


def _entry_of(job: tuple[str, str]) -> tuple[str, str, dict[str, Any]]:
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from benchlib.predict.formula_json import entry

        name, key = job
        return name, key, entry(name, SETUPS[key])


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


def row_inputs(name: str, shared: dict[str, Any] | None = None) -> str:
    """The digest of what the entries of the shipped model ``name`` are computed from: its config's
    values, and what every model's are (``shared``, else `shared_inputs`)."""
    model = tables.data_entry("language_models.yaml", "models", name)
    return digest_json({"model": model, **(shared or shared_inputs())})


def shared_inputs() -> dict[str, Any]:
    """What every model's entries are computed from: the code that writes an entry, and the
    versions of the packages that trace it."""
    return {"code": code_digests(ENTRY_CODE), "versions": installed_versions(PACKAGES)}


def _reusable(setups: dict[str, Any], inputs: dict[str, str]) -> dict[tuple[str, str], dict[str, Any]]:
    """The committed entries computed from what they would be computed from now (``inputs``, by
    model; ``setups`` as written), by model and setup; none with ``benchlib tables --fresh`` or
    where the committed table can't be read."""
    committed = tables.committed_to_reuse(NAME)
    if committed is None:
        return {}
    return {
        (row["model"], key): entry
        for row in committed.get("models", [])
        if row.get("inputs") is not None and row.get("inputs") == inputs.get(row["model"])
        for key, entry in row["setups"].items()
        if key in setups and committed.get("setups", {}).get(key) == setups[key]
    }


def compute_table(on_step: Callable[[str], None], models: list[str] | None = None) -> dict[str, Any]:
    """Every model's formulas, in parallel over the machine's cores (each job builds its own models);
    the committed entries whose inputs are unchanged are copied."""
    names = models or predicted_models()
    # As the file holds them (tuples as lists), to compare with the committed ones.
    setups = json.loads(json.dumps({key: {**asdict(s), "describe": s.describe()} for key, s in SETUPS.items()}))
    shared = shared_inputs()
    inputs = {name: row_inputs(name, shared) for name in names}
    found = _reusable(setups, inputs)
    for name, key in found:
        on_step(f"{name}: {key} (unchanged)")
    # The longest jobs first, so that no core is left with one of them at the end.
    jobs = sorted(((n, k) for n in names for k in SETUPS if (n, k) not in found), key=_work, reverse=True)
    if jobs:
        workers = max(1, min(len(jobs), os.cpu_count() or 1))
        with ProcessPoolExecutor(workers, mp_context=get_context("spawn")) as pool:
            futures = [pool.submit(_entry_of, job) for job in jobs]
            for future in as_completed(futures):
                name, key, value = future.result()
                on_step(f"{name}: {key}")
                found[name, key] = value
    shipped = shipped_models()
    rows = [
        {
            "model": name,
            "title": shipped[name].title,
            "max_positions": resolve_model(name).max_positions(),
            "inputs": inputs[name],
            "setups": {key: found[name, key] for key in SETUPS},
        }
        for name in names
    ]
    for row in rows:
        row["llama_cpp"] = _llama_cpp_shapes(row, setups)
    return {
        "setups": setups,
        # Ahead of the formulas, what the picker's menus need of each model, read without them.
        "index": [
            {
                **{field: row[field] for field in ("model", "title", "max_positions")},
                "not_predicted": {k: e["not_predicted"] for k, e in row["setups"].items() if "not_predicted" in e},
            }
            for row in rows
        ],
        "models": rows,
    }


def _llama_cpp_shapes(row: dict[str, Any], setups: dict[str, Any]) -> dict[str, dict[str, int | None]]:
    """Per GGUF setup with formulas, the sizes llama.cpp's buffers follow (`llama_cpp.shape_of`):
    the model's config, and the file's tensors, which its memory formula holds at one token."""
    from benchlib.predict.formula_file import Formulas
    from benchlib.predict.llama_cpp import shape_of
    from benchlib.predict.weight_formats import GGUF_FORMATS

    formulas = Formulas.of({"setups": setups, "models": [row]}, TABLE.path)
    model = resolve_model(row["model"])
    shapes = {}
    for key, setup in SETUPS.items():
        found = formulas.find(row["model"], setup) if setup.weights in GGUF_FORMATS else None
        if found is not None:
            shapes[key] = asdict(shape_of(model, setup, found.at(1, 1)["weights"]))
    return shapes


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
