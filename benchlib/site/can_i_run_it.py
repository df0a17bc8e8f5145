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
        "batches": ", ".join(str(b) for b in speed["training_batches"][:-1]) + f" and {speed['training_batches'][-1]}",
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
# the table gains shows under its own key.
MODE_LABELS = {"inference": "Inference", "qlora": "QLoRA", "lora": "LoRA", "train": "Full fine-tune"}


# The free GPUs the picker's short answer covers: Colab's T4 and Kaggle's two. Kaggle's P100 is being
# phased out (its page says so), so it is no free GPU to plan on; its column stays in the tables.
FREE_GPU_COLUMNS = ("t4", "t4x2")
# The job the picker times first: ten million tokens, a small fine-tune's dataset (readers type their own).
JOB_TOKENS = 10_000_000


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


def picker_data() -> dict[str, Any]:
    """What the page's picker answers from: the committed table, reshaped, with nothing added.

    Models, GPUs, modes and weight formats are whatever the table holds, so a task, format or
    model added to it shows in the picker without a change here. Each task (one mode with one
    weight format) carries, per model and GPU, the table's largest context or batch, its peak at
    the task's own setting, and the speeds the table predicts for it, as numbers and as the
    tables' text. The page's script compares a reader's choice with these, and counts a training
    job's hours at the table's speed in the free tiers' sessions and quotas; it computes nothing else.
    """
    table = _table()
    speed = table["speed"]
    rows, columns = table["rows"], table["columns"]
    tasks = []
    for task in table["tasks"]:
        key, setup = task["key"], task["setup"]
        entry: dict[str, Any] = {
            "key": key,
            "mode": setup["mode"],
            "weights": setup["weights"],
            "describe": task["describe"],
            # Whose memory the cells are: transformers' (PyTorch allocator) or llama.cpp's buffers.
            "engine": task.get("engine", "transformers"),
            # llama.cpp's file per model (Q4_K_M, or the model's own MXFP4).
            "files": {r["model"]: _gguf_label(r) for r in rows} if key == speed.get("gguf_task") else None,
            # Inference cells are the longest prompt at the setup's batch; training cells the largest
            # batch of samples of the setup's length.
            "axis": "tokens" if setup["mode"] == "inference" else "batch",
            "batch": setup["batch"],
            "seq_len": setup["seq_len"],
            "largest": {r["model"]: {c["key"]: r["cells"][key].get(c["key"]) for c in columns} for r in rows},
            # Why a model's cells are null here, where the table says (a GPTQ mixture of experts).
            "left_out": task.get("experts_left_out"),
            "peak": {
                r["model"]: {
                    "bytes": r["peaks_at_one"][key]["total"],
                    "text": format_bytes(r["peaks_at_one"][key]["total"]),
                }
                for r in rows
                if key in r.get("peaks_at_one", {})
            },
        }
        engines = (
            [speed["eager"], speed["served"]]
            if key == speed["task"]
            else [speed["llama_cpp"]]
            if key == speed.get("gguf_task")
            else []
        )
        if engines:
            entry["decode"] = {
                "batch": speed["batch"],
                "seq_len": speed["seq_len"],
                "engines": [{"key": e, "title": speed["engines"][e]["title"]} for e in engines],
                "missing": speed["no_served_engine"],
                "rates": {
                    r["model"]: {
                        c["key"]: {e: _rate(r["decode_tokens_per_s"].get(e, {}).get(c["key"])) for e in engines}
                        for c in columns
                    }
                    for r in rows
                },
            }
        if any(key in r.get("training_tokens_per_s", {}) for r in rows):
            entry["training"] = {
                r["model"]: {
                    c["key"]: _rate(r["training_tokens_per_s"].get(key, {}).get(c["key"]), hours=True) for c in columns
                }
                for r in rows
            }
        tasks.append(entry)
    largest_batch = max(
        (v or 0 for t in tasks if t["axis"] == "batch" for m in t["largest"].values() for v in m.values()), default=1
    )
    return {
        "created": table["created"][:10],
        "models": [
            {"key": r["model"], "title": r["title"], "hf_id": r["hf_id"], "max_positions": r["max_positions"]}
            for r in rows
        ],
        "gpus": [{"key": c["key"], "label": c["label"], "count": c["count"]} for c in columns],
        "modes": [{"key": m, "label": MODE_LABELS.get(m, m)} for m in dict.fromkeys(t["mode"] for t in tasks)],
        "formats": list(dict.fromkeys(t["weights"] for t in tasks)),
        "tasks": tasks,
        # Choices for the two numbers: powers of two over what the table spans; any other number typed in is answered the same way.
        "tokens": _powers_of_two(1024, max(r["max_positions"] for r in rows)),
        "batches": _powers_of_two(1, largest_batch),
        # The free tiers' sessions and quotas per GPU column, to count a training job in.
        "budgets": {c["key"]: _budgets(c["gpu"], c["count"]) for c in columns},
        "job_tokens": JOB_TOKENS,
        "allowances": {
            "context": format_bytes(table["allowances"]["cuda_context_bytes"]),
            "overhead": f"{table['allowances']['allocator_overhead']:.0%}",
        },
    }


def _rate(rate: float | None, hours: bool = False) -> dict[str, Any] | None:
    """A predicted rate with the text the tables show for it (and hours per million tokens for training)."""
    if rate is None:
        return None
    out: dict[str, Any] = {"value": rate, "text": rate_text(rate)}
    if hours:
        out["hours_text"] = hours_text(hours_per_million_tokens(rate))
    return out


def picker() -> str:
    """The picker near the top of the page: its data, and a short answer for readers without JavaScript."""
    return render(
        "llm_fit_picker.html",
        data=json.dumps(picker_data(), separators=(",", ":")),
        lines=_platform_lines(list(FREE_GPU_COLUMNS)),
    )
