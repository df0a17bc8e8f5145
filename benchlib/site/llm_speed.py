"""Predicted language-model speeds on the pages: the error each carries, and what they cost.

The speeds come from the committed "Can I run it?" table (``benchlib/tables/can_i_run_it.json``);
their measured error, and the engines' constants, from the committed check against published
measurements (``benchlib/tables/llm_speed_check.json``, `benchlib.derive.compared.held_out_error`).
Costs are worked out when the site is built, from those speeds and the dated prices in the specs
file, so a new price changes the pages without recomputing any prediction.

* **$ per million generated tokens**: a served engine (vLLM) decoding as many sequences at once as
  fit (capped, as the table states), and ``model.generate()`` at batch 1.
* **$ per million training tokens**: QLoRA and LoRA at the largest batch that fits.
* **Break-even hours**: a card's dated purchase price over the hourly price of renting the same
  card, or, where nobody rents it, the rentable GPU nearest in memory bandwidth (what sets decode
  speed). Electricity and the rest of the computer are not counted.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any

from benchlib.catalog.gpus import AcceleratorSpec, find_gpu
from benchlib.catalog.language_models import shipped_models
from benchlib.catalog.published_llm_speeds import published_rows
from benchlib.derive import compared
from benchlib.site.platform_pages import Source, fact_flags
from benchlib.site.render import page_link, render
from benchlib.site.sources import read_table

TABLE = "can_i_run_it"
CHECK_TABLE = "llm_speed_check"
METHOD_SECTION = "benchmarks/methodology.md#how-speed-is-predicted"
# The model the cost tables and the LLM price-performance chart are for: the 8B model most
# fine-tuning guides start from, and one a 24 GB card serves in bf16.
COST_MODEL = "llama-3.1-8b"
NOT_CHECKED = "not yet checked against a published measurement"
# The two bars of the LLM price-performance chart.
GENERATED, TRAINED = "generated (vLLM)", "QLoRA training"
KIND_TEXT = {"decode": "decode", "prefill": "prefill", "training": "fine-tuning"}


@functools.cache
def _table() -> dict[str, Any]:
    return read_table(TABLE)


@functools.cache
def _check_table() -> dict[str, Any]:
    return read_table(CHECK_TABLE)


def rate_text(rate: float) -> str:
    """A predicted rate to two significant digits (``1,500``, ``52``, ``9.3``): no more than the prediction knows."""
    rounded = float(f"{rate:.2g}")
    return f"{rounded:,.0f}" if rounded >= 10 else f"{rounded:g}"


def hours_text(hours: float) -> str:
    """Hours to two significant digits."""
    return rate_text(hours)


def per_million_tokens(usd_per_hour: float, tokens_per_s: float) -> float:
    """US dollars per million tokens at ``tokens_per_s`` on a GPU rented at ``usd_per_hour``."""
    return usd_per_hour / (tokens_per_s * 3600) * 1e6


def hours_per_million_tokens(tokens_per_s: float) -> float:
    """Hours a run at ``tokens_per_s`` takes for a million tokens."""
    return 1e6 / tokens_per_s / 3600


def usd_text(usd: float) -> str:
    """Dollars to two significant digits, and at least whole cents: ``$0.035``, ``$0.10``, ``$3.1``, ``$1,200``."""
    if usd >= 1:
        return "$" + rate_text(usd)
    decimals = max(2, 1 - math.floor(math.log10(usd)))
    return f"${usd:.{decimals}f}"


# ----------------------------------------------------------------------------- measured error


def held_out_error(engine: str, kind: str) -> dict[str, Any] | None:
    """The held-out error of ``engine``'s ``kind`` predictions, or None where nothing checked them yet."""
    return compared.held_out_error(_check_table(), engine, kind)


def error_text(engine: str, kind: str) -> str:
    """``a median error of 14% on 52 published measurements held out of the fit``, or that none checked it."""
    summary = held_out_error(engine, kind)
    if summary is None:
        return NOT_CHECKED
    text = (
        f"a median error of {summary['held_out_median_abs_error']:.0%} on {summary['held_out_rows']} "
        "published measurements held out of the fit"
    )
    band = summary.get("band")
    if band:  # where four in five of those predictions fell, as a share of the measurement
        text += f", predicted at {band['p10']:.2f} to {band['p90']:.2f} times the measured speed (p10 to p90)"
    return text


def method_link(here: str) -> str:
    return page_link(METHOD_SECTION, here)


# ----------------------------------------------------------------------------- prices


@dataclass(frozen=True)
class Price:
    """The cheapest dated hourly price of one GPU, as the pages cite it."""

    gpu: str
    usd_per_hour: float
    provider: str
    text: str
    source: Source


def _cited(fact: Any) -> Source:
    return Source(str(fact.source), str(fact.as_of), tuple(fact_flags(fact)), None, ())


def cheapest_price(spec: AcceleratorSpec) -> Price | None:
    """The cheapest listed hourly price of ``spec`` (a range counts at its low end), or None."""
    prices = spec.hourly_prices()
    if not prices:
        return None
    p = prices[0]
    top = f"–{p.usd_per_hour_max:.2f}" if p.usd_per_hour_max else ""
    return Price(spec.name, p.usd_per_hour, p.provider, f"${p.usd_per_hour:.2f}{top}/h", _cited(p))


def _row(model: str) -> dict[str, Any]:
    return next(r for r in _table()["rows"] if r["model"] == model)


def costs(model: str = COST_MODEL) -> list[dict[str, Any]]:
    """Per single-GPU column with a price: the price and $ per million tokens generated and trained.

    Each figure is None where the model doesn't fit (or the engine doesn't run there).
    """
    table, row = _table(), _row(model)
    out = []
    for column in table["columns"]:
        if column["count"] > 1:
            continue  # a pair of T4s is rented as two T4s: the T4's row says it
        price = cheapest_price(find_gpu(column["gpu"]))
        if price is None:
            continue
        key = column["key"]
        served = row["serving"][key]
        eager = row["decode_tokens_per_s"][table["speed"]["eager"]][key]

        def cost(tokens_per_s: float | None, usd: float = price.usd_per_hour) -> float | None:
            return per_million_tokens(usd, tokens_per_s) if tokens_per_s else None

        out.append(
            {
                "column": column,
                "price": price,
                "served": cost(served["tokens_per_s"]) if served else None,
                "served_batch": served["batch"] if served else None,
                "eager": cost(eager),
                "training": {
                    task: {
                        "usd": cost(row["training_tokens_per_s"][task][key]),
                        "batch": row["cells"][task][key],
                    }
                    for task in ("qlora", "lora")
                },
            }
        )
    return out


def _money(value: float | None) -> str:
    return usd_text(value) if value is not None else "✗"


def cost_table(model: str = COST_MODEL, here: str = "gpus/can-i-run-it.md") -> str:
    """The compact cost table: per GPU, the cheapest dated price and $ per million tokens."""
    table = _table()
    speed = table["speed"]
    found = costs(model)
    served = [c for c in found if c["served"] is not None and c["eager"] is not None]
    best = min(served, key=lambda c: c["served"], default=None)
    cheapest = (
        {"gpu": best["column"]["label"], "served": usd_text(best["served"]), "eager": usd_text(best["eager"])}
        if best
        else None
    )
    rows = [
        {
            "gpu": c["column"]["label"],
            "key": c["column"]["key"],
            "price": c["price"],
            "cells": [
                {
                    "name": "served",
                    "text": _money(c["served"]),
                    "value": c["served"],
                    "note": f"batch {c['served_batch']}" if c["served_batch"] else "",
                },
                {"name": "eager", "text": _money(c["eager"]), "value": c["eager"], "note": ""},
                *(
                    {
                        "name": task,
                        "text": _money(c["training"][task]["usd"]),
                        "value": c["training"][task]["usd"],
                        "note": f"batch {c['training'][task]['batch']}" if c["training"][task]["usd"] else "",
                    }
                    for task in ("qlora", "lora")
                ),
            ],
        }
        for c in found
    ]
    head = [
        "GPU",
        ("Cheapest price", "dated"),
        ("Generating, served", f"vLLM, up to {speed['serving_batch_cap']} at once"),
        ("Generating, generate()", "batch 1"),
        ("QLoRA training", "largest batch"),
        ("LoRA training", "largest batch"),
    ]
    return render(
        "llm_cost.html",
        head=head,
        rows=rows,
        cheapest=cheapest,
        model=shipped_models()[model].title,
        seq_len=f"{speed['seq_len']:,}",
        cap=speed["serving_batch_cap"],
        decode_error={e: error_text(e, "decode") for e in (speed["served"], speed["eager"])},
        training_error=error_text(speed["eager"], "training"),
        link=method_link(here),
    )


# ----------------------------------------------------------------------------- buying against renting


def _bandwidth(spec: AcceleratorSpec) -> float | None:
    return spec.peak_bandwidth_gbps()


def rented_as(spec: AcceleratorSpec) -> tuple[AcceleratorSpec, Price] | None:
    """The GPU to rent instead of buying ``spec``: the same card where someone rents it, otherwise
    the rentable column GPU nearest in memory bandwidth."""
    own = cheapest_price(spec)
    if own is not None:
        return spec, own
    bandwidth = _bandwidth(spec)
    if bandwidth is None:
        return None
    rentable = []
    for column in _table()["columns"]:
        other = find_gpu(column["gpu"])
        price, theirs = cheapest_price(other), _bandwidth(other)
        if price is not None and theirs is not None and other.name != spec.name:
            rentable.append((abs(theirs - bandwidth), other.name, other, price))
    if not rentable:
        return None
    _, _, other, price = min(rentable)
    return other, price


def break_even() -> list[dict[str, Any]]:
    """Each column card with a dated purchase price: what it costs, what renting instead costs, and
    the hours of use after which buying is cheaper."""
    out = []
    seen = set()
    for column in _table()["columns"]:
        spec = find_gpu(column["gpu"])
        if spec.name in seen or spec.launch_price_usd is None:
            continue
        seen.add(spec.name)
        renting = rented_as(spec)
        if renting is None:
            continue
        other, price = renting
        purchase = spec.launch_price_usd
        out.append(
            {
                "gpu": spec.name,
                "purchase": purchase.value,
                "purchase_text": f"${purchase.value:,.0f}",
                "purchase_source": Source(
                    str(purchase.source), str(purchase.as_of), tuple(fact_flags(purchase)), purchase.note, ()
                ),
                "rented": other.name,
                "same": other.name == spec.name,
                "price": price,
                "hours": purchase.value / price.usd_per_hour,
            }
        )
    return sorted(out, key=lambda r: r["purchase"])


def break_even_table() -> str:
    rows = [{**r, "hours_text": rate_text(r["hours"])} for r in break_even()]
    return render("llm_break_even.html", rows=rows)


# ----------------------------------------------------------------------------- how speed is predicted


def _launch_text(engine: dict[str, Any]) -> str:
    if engine.get("host_launched"):
        return "the host's (below)"
    if engine["launch_s"]:
        return f"{engine['launch_s'] * 1e6:g} µs of GPU time at least (CUDA graph)"
    return "none (CUDA graph)"


def speed_method(here: str = "benchmarks/methodology.md") -> str:
    """The engines with their constants and versions, the hosts, and each engine's held-out error per
    kind and class of GPU, from the committed tables."""
    check = _check_table()
    engines = [
        {
            "name": name,
            "version": f"{engine['version']} ({engine['as_of']})",
            "launch": _launch_text(engine),
            "step": f"{engine['step_s'] * 1e3:g} ms" if engine["step_s"] else "none",
            "stream": f"{engine['stream_efficiency']:.0%}",
            "attention": f"{engine['attention_efficiency']:.0%}",
            "quantized": f"{engine['quantized_efficiency']:.0%}",
            "ceiling": f"{engine['matmul_ceiling_tflops']:g} TFLOPS" if engine.get("matmul_ceiling_tflops") else "",
            "basis": engine["basis"],
        }
        for name, engine in check["engines"].items()
    ]
    hosts = [
        {"name": name, "title": h["title"], "launch": f"{h['launch_s'] * 1e6:g} µs", "basis": h["basis"]}
        for name, h in check.get("hosts", {}).items()
    ]
    held_out = []
    for name, engine in check["engines"].items():
        for kind in ("decode", "prefill", "training"):
            rows = [
                s for s in check["summaries"] if (s["engine"], s["kind"], s["half"]) == (name, kind, compared.HELD_OUT)
            ]
            trains = "lora" in engine["modes"]
            if not rows and kind == "training" and not trains:
                continue  # a served engine doesn't train
            if not rows:
                held_out.append({"engine": name, "kind": KIND_TEXT[kind], "gpus": "", "rows": None})
            for summary in rows:
                ratio = summary.get("ratio") or {}
                held_out.append(
                    {
                        "engine": name,
                        "kind": KIND_TEXT[kind],
                        "gpus": "all" if summary.get("gpu_class", "all") == "all" else summary["gpu_class"],
                        "rows": summary["rows"],
                        "median": f"{summary['median_abs_error']:.0%}",
                        "band": f"{ratio['p10']:.2f}–{ratio['p90']:.2f}" if ratio else "",
                        "worst": f"{summary['worst_error']:+.0%}",
                        "target": f"{summary['target']:.0%}" if summary["target"] is not None else None,
                        "met": summary["target"] is None or summary["median_abs_error"] <= summary["target"],
                    }
                )
    checked = {r["source"] for r in check["rows"]}
    sources = {
        p.source["id"]: {"url": p.source["url"], "title": p.source["title"]}
        for p in published_rows()
        if p.source["id"] in checked
    }
    return render(
        "llm_speed_method.html",
        engines=engines,
        hosts=hosts,
        held_out=held_out,
        not_checked=NOT_CHECKED,
        sources=[sources[key] for key in sorted(sources)],
        table_page=page_link("gpus/can-i-run-it.md", here),
    )


# ----------------------------------------------------------------------------- LLM price-performance


def tokens_per_dollar(model: str = COST_MODEL) -> list[dict[str, Any]]:
    """Per rentable GPU at its cheapest price: million tokens per dollar generated by a served
    engine and trained with QLoRA at the largest batch, where the model fits."""
    out = []
    for c in costs(model):
        for setting, usd, batch in (
            (GENERATED, c["served"], c["served_batch"]),
            (TRAINED, c["training"]["qlora"]["usd"], c["training"]["qlora"]["batch"]),
        ):
            if usd:
                out.append(
                    {
                        "gpu": c["column"]["label"],
                        "price": c["price"],
                        "setting": setting,
                        "value": 1 / usd,
                        "batch": batch,
                    }
                )
    return out


def llm_price_performance(here: str = "gpus/buying-guide.md") -> str:
    """Million tokens per dollar for `COST_MODEL`, generated and fine-tuned: chart, static fallback and data table."""
    import pandas as pd

    from benchlib.site.charts import PREDICTED, chart_spec, plotted_rows
    from benchlib.site.figures import figure_context
    from benchlib.workloads import Chart

    title = shipped_models()[COST_MODEL].title
    points = tokens_per_dollar()
    if not points:
        return render("buying_empty.html", what="price")
    chart = Chart(
        id="llm-price-performance",
        title=f"{title}: million tokens per dollar (predicted)",
        setting_title="tokens",
        axis_title="million tokens per $",
        setting_order=(GENERATED, TRAINED),
    )
    frame = pd.DataFrame(
        [
            {
                "subject": p["gpu"],  # one price per GPU (the cheapest): the data table names its provider
                "setting": p["setting"],
                "value": p["value"],
                "unit": "M tokens/$",
                "higher_is_better": True,
                "source": PREDICTED,
                "date": p["price"].source.as_of,
                "status": "ok",
                "created": "",
            }
            for p in points
        ]
    )
    plotted = plotted_rows(frame, chart)
    speed = _table()["speed"]
    rows = [
        {
            "gpu": p["gpu"],
            "setting": p["setting"],
            "batch": p["batch"],
            "price": p["price"],
            "value": p["value"],
            "text": rate_text(p["value"]),
        }
        for p in points
    ]
    return render(
        "llm_price.html",
        chart=chart,
        **figure_context(chart.id, chart_spec(plotted, chart)),
        rows=rows,
        model=title,
        seq_len=f"{speed['seq_len']:,}",
        cap=speed["serving_batch_cap"],
        served_error=error_text(speed["served"], "decode"),
        training_error=error_text(speed["eager"], "training"),
        link=method_link(here),
    )
