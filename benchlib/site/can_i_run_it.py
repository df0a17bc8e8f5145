"""Blocks for the "Can I run it?" page (docs/gpus/can-i-run-it.md) and the pages that point to it.

Everything comes from the committed prediction table (``benchlib/tables/can_i_run_it.json``,
written by `benchlib tables`): which model fits on which GPU for each task, what those
predictions assume, and how predictions compared with published measurements. Nothing is
predicted while the site builds, so no page waits on torch or transformers.
"""

from __future__ import annotations

import functools
from typing import Any

from benchlib.core.units import format_bytes
from benchlib.site.llm_speed import error_text, hours_text, method_link, rate_text
from benchlib.site.render import page_link, render
from benchlib.site.sources import read_table
from benchlib.tables.can_i_run_it import hours_per_million_tokens

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


def _cell(row: dict[str, Any], task: str, column: dict[str, Any], speed: dict[str, Any]) -> dict[str, Any]:
    value = row["cells"][task][column["key"]]
    key = column["key"]
    lines: list[str] = []
    if task == "inference":
        text = _context_text(value, row["max_positions"])
        title = f"{row['title']} on {column['label']}: " + (
            f"prompts up to {value:,} tokens at batch 1" if value else "does not fit, even for a 1-token prompt"
        )
        eager = row["decode_tokens_per_s"][speed["eager"]][key]
        served = row["decode_tokens_per_s"][speed["served"]][key]
        if eager is not None:
            lines.append(f"{rate_text(eager)} / {rate_text(served) if served else '–'} tok/s")
            title += f"; decodes about {rate_text(eager)} tokens/s with generate()"
            title += f", {rate_text(served)} served (vLLM)" if served else ", served engine not predicted here"
        rate = eager
    else:
        text = str(value) if value else "✗"
        per_gpu = " per GPU" if column["count"] > 1 else ""
        title = f"{row['title']} on {column['label']}: " + (
            f"largest batch {value}{per_gpu}" if value else "does not fit at batch 1"
        )
        rate = row["training_tokens_per_s"][task][key]
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
            "peak": format_bytes(row["peaks_at_one"][task]["total"]),
            "cells": [_cell(row, task, column, table["speed"]) for column in columns],
        }
        for row in table["rows"]
    ]
    at_one = "prompt of 1,024 tokens" if task == "inference" else "batch 1"
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
    eager, served = speed["eager"], speed["served"]
    labels = {c["key"]: c["label"] for c in columns}
    return {
        "task": task,
        "inference": task == speed["task"],
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


def on_platform(column_keys: list[str], here: str) -> str:
    """For a platform page: on its GPUs, the largest shipped model each task fits, linked to the table."""
    table = _table()
    columns = [c for c in table["columns"] if c["key"] in column_keys]
    lines = []
    for column in columns:
        answers = []
        for task in table["tasks"]:
            fitting = [row for row in table["rows"] if row["cells"][task["key"]][column["key"]] > 0]
            best = max(fitting, key=lambda row: row["peaks_at_one"]["inference"]["weights"], default=None)
            value = best["cells"][task["key"]][column["key"]] if best else 0
            if best is None:
                answers.append({"task": task, "model": None, "text": "", "anchor": ""})
            elif task["key"] == "inference":
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
                per_gpu = " per GPU" if column["count"] > 1 else ""
                answers.append(
                    {
                        "task": task,
                        "model": best["title"],
                        "anchor": f"{task['key']}-{best['model']}",
                        "text": f"batch {value}{per_gpu}",
                    }
                )
        lines.append({"column": column, "answers": answers})

    return render("llm_fit_platform.html", lines=lines, link=page_link(PAGE, here))
