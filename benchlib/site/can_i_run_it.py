"""Blocks for the "Can I run it?" page (docs/gpus/can-i-run-it.md) and the pages that point to it.

Everything comes from the committed prediction table (``benchlib/tables/can_i_run_it.json``,
written by `benchlib tables`): which model fits on which GPU for each task, what those
predictions assume, and how predictions compared with published measurements. Nothing is
predicted while the site builds, so no page waits on torch or transformers.
"""

from __future__ import annotations

import functools
import json
from typing import Any

from benchlib.core.units import format_bytes
from benchlib.site.llm_speed import error_text, hours_per_million_tokens, hours_text, method_link, rate_text
from benchlib.site.render import page_link, render
from benchlib.site.sources import read_table

PAGE = "gpus/can-i-run-it.md"


@functools.cache
def _table() -> dict[str, Any]:
    return read_table("can_i_run_it")


def _context_text(tokens: int, maximum: int) -> str:
    """``32K``; a star where the model's own context limit comes before the GPU's memory."""
    if tokens <= 0:
        return "✗"
    text = f"{tokens // 1024}K" if tokens >= 1024 else str(tokens)
    return text + ("*" if tokens >= maximum else "")


def _cell(row: dict[str, Any], task: dict[str, Any], column: dict[str, Any], speed: dict[str, Any]) -> dict[str, Any]:
    value = row["cells"][task["key"]][column["key"]]
    key = column["key"]
    lines: list[str] = []
    rate = None
    if value is None:
        text = "–"
        title = f"{row['title']} on {column['label']}: not predicted ({task['experts_left_out']})"
    elif task["setup"]["mode"] == "inference":
        text = _context_text(value, row["max_positions"])
        title = f"{row['title']} on {column['label']}: " + (
            f"prompts up to {value:,} tokens at batch 1" if value else "does not fit, even for a 1-token prompt"
        )
        if task["key"] == speed["task"]:
            rate = row["decode_tokens_per_s"][speed["eager"]][key]
            served = row["decode_tokens_per_s"][speed["served"]][key]
            if rate is not None:
                lines.append(f"{rate_text(rate)} / {rate_text(served) if served else '–'} tok/s")
                title += f"; decodes about {rate_text(rate)} tokens/s with generate()"
                title += f", {rate_text(served)} served (vLLM)" if served else ", served engine not predicted here"
        elif task["key"] == speed.get("gguf_task"):
            title = title.replace("at batch 1", f"at batch 1 in llama.cpp ({_gguf_label(row)}), every layer on the GPU")
            rate = row["decode_tokens_per_s"].get(speed["llama_cpp"], {}).get(key)
            if rate is not None:
                lines.append(f"{rate_text(rate)} tok/s")
                title += f"; decodes about {rate_text(rate)} tokens/s in llama.cpp"
    else:
        text = str(value) if value else "✗"
        split = ", the layers split over both" if column["count"] > 1 else ""
        title = f"{row['title']} on {column['label']}: " + (
            f"largest batch {value}{split}" if value else "does not fit at batch 1"
        )
        rate = row["training_tokens_per_s"][task["key"]][key]
        if rate is not None:
            hours = hours_per_million_tokens(rate)
            lines += [f"{rate_text(rate)} tok/s", f"{hours_text(hours)} h/M"]
            title += f"; trains about {rate_text(rate)} tokens/s, {hours_text(hours)} hours per million tokens"
    return {
        "text": text,
        "title": title + " (predicted)",
        "value": value,
        "column": key,
        "rate": rate,
        "lines": lines,
    }


def _gguf_label(row: dict[str, Any]) -> str:
    """The GGUF file a row's llama.cpp cells are for: Q4_K_M, or the model's own MXFP4."""
    return "MXFP4" if row.get("gguf_weights") == "gguf-mxfp4" else "Q4_K_M"


def fit_table(task: str) -> str:
    """One task's table: shipped models (rows) by GPUs (columns)."""
    table = _table()
    task_info = next(t for t in table["tasks"] if t["key"] == task)
    columns = table["columns"]
    rows = [
        {
            "model": row["model"],
            "title": row["title"],
            "hf_id": row["hf_id"],
            "source": row["source"],
            "peak": format_bytes(row["peaks_at_one"][task]["total"]) if task in row["peaks_at_one"] else "–",
            "file": _gguf_label(row) if task == table["speed"].get("gguf_task") else None,
            "cells": [_cell(row, task_info, column, table["speed"]) for column in columns],
        }
        for row in table["rows"]
    ]
    at_one = "prompt of 1,024 tokens" if task_info["setup"]["mode"] == "inference" else "batch 1"
    head = [("Model", "Hugging Face config"), ("Memory", f"at {at_one}, tensors")] + [
        (c["label"], f"{format_bytes(c['usable_bytes'] * c['count'])} usable") for c in columns
    ]
    return render(
        "llm_fit_table.html",
        head=head,
        rows=rows,
        task=task_info,
        legend=_speed_legend(table, task),
    )


def _speed_legend(table: dict[str, Any], task: str) -> dict[str, Any]:
    """What the speeds under the cells are, and how far such predictions were from published measurements."""
    speed = table["speed"]
    columns = table["columns"]
    task_info = next(t for t in table["tasks"] if t["key"] == task)
    eager, served = speed["eager"], speed["served"]
    labels = {c["key"]: c["label"] for c in columns}
    llama_cpp = speed.get("llama_cpp")
    return {
        "task": task,
        "inference": task == speed["task"],
        "llama_cpp": task == speed.get("gguf_task"),
        "llama_cpp_error": error_text(llama_cpp, "decode") if llama_cpp else None,
        "llama_cpp_engine": speed["engines"].get(llama_cpp) if llama_cpp else None,
        "mxfp4": [r["title"] for r in table["rows"] if r.get("gguf_weights") == "gguf-mxfp4"],
        "llama_cpp_method": speed.get("llama_cpp_method"),
        # The GPTQ task: memory only, its speeds not predicted (the bf16 tab has them).
        "memory_only": task not in (speed["task"], speed.get("gguf_task"))
        and task_info["setup"]["mode"] == "inference",
        "not_predicted": [r["title"] for r in table["rows"] if task not in r["peaks_at_one"]],
        "left_out": task_info["experts_left_out"],
        "left_out_source": task_info["experts_left_out_source"],
        "batch": speed["batch"],
        "seq_len": f"{speed['seq_len']:,}",
        "fp16": [c["label"] for c in columns if speed["dtypes"][c["key"]] == "fp16"],
        "pairs": [c["label"] for c in columns if c["count"] > 1],
        "no_served": [{"label": labels[key], "why": why} for key, why in speed["no_served_engine"].items()],
        "vllm_requirements": speed["vllm_requirements"],
        "eager_error": error_text(eager, "decode"),
        "served_error": error_text(served, "decode"),
        "training_error": error_text(eager, "training"),
        "link": method_link(PAGE),
    }


def assumptions() -> str:
    """What every cell assumes: the setups, the method, the allowances and the versions."""
    table = _table()
    allowances = table["allowances"]
    return render(
        "llm_fit_assumptions.html",
        tasks=table["tasks"],
        versions=table["versions"],
        created=table["created"][:10],
        context=format_bytes(allowances["cuda_context_bytes"]),
        context_source=allowances["cuda_context_source"],
        overhead=f"{allowances['allocator_overhead']:.0%}",
        columns=table["columns"],
        matrix_link=page_link("gpus/buying-guide.md#what-fits-where", PAGE),
    )


def published_comparison() -> str:
    """Predicted against published peak memories, each with its source, date and setup; then the rows left out."""
    table = _table()
    rows = []
    for r in table["published"]:
        rows.append(
            {
                **r,
                "model_name": r["model"].split("/")[-1],
                "at": f"{r['batch']} × {r['seq_len']:,}" if r["batch"] and r["seq_len"] else "not stated",
                "lora": f"rank {r['lora_rank']} on {', '.join(r['lora_targets'])}"
                if r.get("lora_rank") and r.get("lora_targets")
                else "",
                "published_text": f"{float(r['measured']):.2f} {r['unit']}",
                "predicted_text": f"{r['predicted_bytes'] / (r['measured_bytes'] / float(r['measured'])):.2f} {r['unit']}"
                if r["predicted_bytes"]
                else "",
                "error_text": f"{r['error']:+.0%}" if r["error"] is not None else "",
            }
        )
    compared = [r for r in rows if not r["left_out"]]
    sources = {r["source"]: r for r in rows}
    return render(
        "llm_fit_published.html",
        compared=compared,
        left_out=[r for r in rows if r["left_out"]],
        sources=list(sources.values()),
        median=f"{table['median_abs_error']:.1%}",
        median_plain=f"{table['median_abs_error_plain']:.1%}",
        plain_count=sum(1 for r in compared if r["plain_transformers"]),
    )


def snippet_prediction() -> str:
    """What `benchlib fit` predicts for the QLoRA snippet's own setup."""
    snippet = _table()["snippet"]
    return render(
        "llm_fit_snippet.html",
        snippet=snippet,
        peak=format_bytes(snippet["tensor_peak_bytes"]),
        on_device=format_bytes(snippet["peak_bytes"]),
    )


# The 7-8B models readers QLoRA on a free T4, for the advice beside the snippet: the one not gated
# first (the snippet's MODEL_ID must load without a token), then Llama's and Qwen3's.
EIGHT_B_MODELS = ("qwen2.5-7b", "llama-3.1-8b", "qwen3-8b")


def snippet_for_8b() -> str:
    """Beside the QLoRA snippet: what to change for an 8B model on a T4 (and on Kaggle's two), from the table."""
    table = _table()
    task = next(t for t in table["tasks"] if t["key"] == "qlora")
    rows = {r["model"]: r for r in table["rows"]}
    models = []
    for name in EIGHT_B_MODELS:
        row = rows[name]
        rate = row["training_tokens_per_s"]["qlora"]["t4"]
        models.append(
            {
                "title": row["title"],
                "hf_id": row["hf_id"],
                "batch": row["cells"]["qlora"]["t4"],
                "pair": row["cells"]["qlora"]["t4x2"],
                "rate": rate_text(rate) if rate else None,
                "hours": hours_text(hours_per_million_tokens(rate)) if rate else None,
            }
        )
    return render("llm_fit_8b.html", models=models, seq_len=task["setup"]["seq_len"], created=table["created"][:10])


def on_platform(column_keys: list[str], here: str) -> str:
    """For a platform page: on its GPUs, the largest shipped model each task fits, linked to the table."""
    return render("llm_fit_platform.html", lines=_platform_lines(column_keys), link=page_link(PAGE, here))


def _platform_lines(column_keys: list[str]) -> list[dict[str, Any]]:
    """On each of these GPUs, for each task, the largest shipped model that fits and what fits of it."""
    table = _table()
    columns = [c for c in table["columns"] if c["key"] in column_keys]
    lines = []
    for column in columns:
        answers = []
        for task in table["tasks"]:
            fitting = [row for row in table["rows"] if (row["cells"][task["key"]][column["key"]] or 0) > 0]
            best = max(fitting, key=lambda row: row["peaks_at_one"]["inference"]["weights"], default=None)
            value = best["cells"][task["key"]][column["key"]] if best else 0
            if best is None:
                answers.append({"task": task, "model": None, "text": "", "anchor": ""})
            elif task["setup"]["mode"] == "inference":
                limit = " (the model's own limit)" if value >= best["max_positions"] else ""
                answers.append(
                    {
                        "task": task,
                        "model": best["title"],
                        "anchor": f"{task['key']}-{best['model']}",
                        "text": f"prompts up to {_context_text(value, best['max_positions']).rstrip('*')} tokens{limit}",
                    }
                )
            else:
                split = ", the layers split over both" if column["count"] > 1 else ""
                answers.append(
                    {
                        "task": task,
                        "model": best["title"],
                        "anchor": f"{task['key']}-{best['model']}",
                        "text": f"batch {value}{split}",
                    }
                )
        lines.append({"column": column, "answers": answers})
    return lines


# The picker's controls: a mode's label where the table's key alone reads poorly; any other mode
# the tables gain shows under its own key.
MODE_LABELS = {"inference": "Inference", "qlora": "QLoRA", "lora": "LoRA", "train": "Full fine-tune"}


# The free GPUs the picker's short answer covers: Colab's T4 and Kaggle's two. Kaggle's P100 is being
# phased out (its page says so), so it is no free GPU to plan on; its column stays in the tables.
FREE_GPU_COLUMNS = ("t4", "t4x2")
# The job the picker times first: ten million tokens, a small fine-tune's dataset (readers type their own).
JOB_TOKENS = 10_000_000
# How many GPUs the picker splits a model over, as `benchlib fit --gpus N` does: one to a server's eight.
MOST_GPUS = 8


def _budgets(gpu: str, count: int) -> list[dict[str, Any]]:
    """The free tiers' limits in numbers for ``count`` of ``gpu``, for the picker to count a job in."""
    from benchlib.catalog.platforms import session_budgets

    return [
        {
            "tier": b.tier,
            "session_hours": b.session_hours,
            "daily_hours": b.daily_hours,
            "weekly_hours": b.weekly_hours,
            "as_of": b.as_of.isoformat(),
        }
        for b in session_budgets(gpu, 1.0, count=count)
    ]


def _powers_of_two(start: int, stop: int) -> list[int]:
    values = [start]
    while values[-1] < stop:
        values.append(values[-1] * 2)
    return values


def _gpu_group(gpu: dict[str, Any], table_gpus: set[str]) -> str:
    """Which list a GPU shows in: the notebooks' GPUs, the tables' other columns, every other GPU."""
    if gpu["notebook"]:
        return "notebook"
    return "table" if gpu["name"] in table_gpus else "other"


def picker_data() -> dict[str, Any]:
    """What the page's picker answers from: the committed tables, reshaped, with nothing added.

    The models and their setups are the formulas table's (``llm_formulas``), whose formulas the
    page's script fetches a model at a time (`benchlib.derive.formula_assets`) and evaluates for the
    reader's GPU, count of GPUs, batch and length. The GPUs, their rates and budgets, the engines'
    constants and the evaluation's own constants are the ``llm_constants`` table's, as
    `benchlib.predict` computes them; the error of each kind of prediction is the published
    comparisons', as the tables' legends give it. A GGUF file's memory is llama.cpp's buffers, from
    the shape each model's formulas hold for it (`benchlib.predict.llama_cpp`). The free tiers'
    limits, to count a job in, come with their dates.
    """
    table = _table()
    # The formulas' header: the setups, and each model's title and what it has no formulas for.
    formulas = read_table("llm_formulas", fields=("created", "setups", "index"))
    constants = read_table("llm_constants")
    hf_ids = {r["model"]: r["hf_id"] for r in table["rows"]}
    setups = formulas["setups"]
    modes = list(dict.fromkeys(s["mode"] for s in setups.values()))
    table_gpus = {c["gpu"] for c in table["columns"]}
    gpus = []
    for gpu in constants["gpus"]:
        budgets = {n: _budgets(gpu["name"], n) for n in range(1, MOST_GPUS + 1)}
        gpus.append(
            {
                **gpu,
                "group": _gpu_group(gpu, table_gpus),
                "usable_text": format_bytes(gpu["memory"]["usable_bytes"]),
                # Keyed by the count as text, as the page's JSON keys it.
                "budgets": {str(n): b for n, b in budgets.items() if b},
            }
        )
    compared = [r for r in table["published"] if not r["left_out"]]
    served = table["speed"]["served"]
    eager = table["speed"]["eager"]
    return {
        "created": formulas["created"][:10],
        "models": [
            {
                "key": m["model"],
                "title": m["title"],
                "hf_id": hf_ids.get(m["model"]),
                "max_positions": m["max_positions"],
                # A setup the formulas couldn't be derived for, and why.
                "not_predicted": m["not_predicted"],
            }
            for m in formulas["index"]
        ],
        "setups": [_setup_choice(k, s, _adapter_of(k, setups)) for k, s in setups.items()],
        "modes": [{"key": m, "label": MODE_LABELS.get(m, m)} for m in modes],
        "gpus": gpus,
        "most_gpus": MOST_GPUS,
        "engines": constants["engines"],
        "several_gpus": constants["several_gpus"],
        "evaluation": constants["evaluation"],
        # Each kind of prediction's error against published measurements, as the tables' legends say it.
        "errors": {
            "memory": f"a median error of {table['median_abs_error']:.1%} on {len(compared)} published peak "
            "memory measurements",
            "decode": {e["key"]: error_text(e["key"], "decode") for e in constants["engines"]},
            "prefill": {e["key"]: error_text(e["key"], "prefill") for e in constants["engines"]},
            "training": error_text(eager, "training"),
        },
        # The served engine: not modelled on several GPUs, nor on GPUs vLLM doesn't run on.
        "served": served,
        # The engine that runs GGUF files, and them alone here.
        "llama_cpp": table["speed"]["llama_cpp"],
        # Choices for the two numbers: powers of two up to the longest context; any other number typed in is answered the same way.
        "tokens": _powers_of_two(256, max(m["max_positions"] for m in formulas["index"])),
        "batches": _powers_of_two(1, 256),
        "job_tokens": JOB_TOKENS,
    }


def _but_adapters(setup: dict[str, Any]) -> dict[str, Any]:
    """A setup's fields but its LoRA adapters' (and its description, which names them)."""
    return {k: v for k, v in setup.items() if k not in ("lora_rank", "lora_targets", "describe")}


def _adapter_of(key: str, setups: dict[str, dict[str, Any]]) -> str | None:
    """The setup whose adapters ``key`` varies: the first that differs from it in its adapters
    alone (the table lists each mode's default adapters first). The weights menu offers that one,
    and the adapters menu the others."""
    keys = list(setups)
    same = _but_adapters(setups[key])
    return next((k for k in keys[: keys.index(key)] if _but_adapters(setups[k]) == same), None)


# LoRA's target lists as the picker says them: the layers menu's label, and the answer's words.
# Another list is said as it is written.
LORA_LAYERS = {
    "all-linear": ("all linear", "every linear layer"),
    "q_proj,k_proj,v_proj,o_proj,qkv_proj": ("attention only", "the attention projections"),
}


def _layers(targets: str) -> tuple[str, str]:
    return LORA_LAYERS.get(targets, (targets, targets.replace(",", ", ")))


def _adapters_label(setup: dict[str, Any]) -> str | None:
    """LoRA's adapters as an answer names them: "rank 16 on every linear layer" (the menus: the
    layers, then the rank)."""
    if setup["lora_rank"] is None:
        return None
    return f"rank {setup['lora_rank']} on {_layers(setup['lora_targets'])[1]}"


def _setup_choice(key: str, setup: dict[str, Any], adapter_of: str | None) -> dict[str, Any]:
    """A formulas' setup as the picker's menus offer it; ``adapter_of``: the setup this one varies
    only in its adapters."""
    # A KV cache stored in another format than the compute's (None: the same).
    cache = setup["kv_cache"] if setup["mode"] == "inference" and setup["kv_cache"] != setup["dtype"] else None
    # A GGUF file runs in llama.cpp, whose memory is its buffers; its cache type is a menu of its own.
    gguf = setup["weights"].startswith("gguf-")
    if gguf:
        cache = None
    return {
        "key": key,
        "mode": setup["mode"],
        "weights": setup["weights"],
        "dtype": setup["dtype"],
        "describe": setup["describe"],
        "cache": cache,
        "checkpointing": setup["grad_checkpointing"],
        "llama_cpp": gguf,
        "adapters": _adapters_label(setup),
        "rank": setup["lora_rank"],
        "targets": setup["lora_targets"] if setup["lora_rank"] is not None else None,
        "layers": _layers(setup["lora_targets"])[0] if setup["lora_rank"] is not None else None,
        "adapter_of": adapter_of,
        # What the weights menu shows: the format, and a KV cache stored in another.
        "label": _gguf_file(setup["weights"]) if gguf else setup["weights"] + (f", {cache} KV cache" if cache else ""),
    }


def _gguf_file(weights: str) -> str:
    """A GGUF format as the weights menu names it (the engine menu says llama.cpp): "GGUF Q4_K_M"."""
    kind = "MXFP4_MOE" if weights == "gguf-mxfp4" else weights.removeprefix("gguf-").upper()
    return f"GGUF {kind}"


def picker() -> str:
    """The picker near the top of the page: its data, and a short answer for readers without JavaScript."""
    return render(
        "llm_fit_picker.html",
        data=json.dumps(picker_data(), separators=(",", ":")),
        lines=_platform_lines(list(FREE_GPU_COLUMNS)),
        most_gpus=MOST_GPUS,
    )
