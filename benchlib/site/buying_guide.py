"""Blocks for the GPU buying guide (docs/gpus/buying-guide.md): what fits, speed, price, advice.

Every number comes from data when the site is built:

* what fits where: `benchlib fit` predictions for each model on each GPU in the specs, cached
  under ``fit/`` in the cache folder (`benchlib.core.cache`) (keyed by model, dtype, torch and benchlib versions);
* speed: the results through `benchlib.site.data.site_data`; the reported ResNet-50 throughput,
  its relative and per-dollar figures are declared by `benchlib.workloads.training_throughput`,
  largest batches by `benchlib.workloads.max_batch`;
* specs and prices: `gpu_frame`, the one place the GPU figures the blocks show are prepared from
  the specs file (``benchlib/data/gpus.yaml``);
* advice: dated claims from others (``benchlib/data/buying_advice.yaml``).

Pages call these from markdown-exec blocks; each passes values to a ``buying_*.html`` template,
which escapes every string from a data file. What the numbers mean is prose on the page.
"""

from __future__ import annotations

import functools
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pandas as pd
import yaml

import benchlib
from benchlib.catalog.gpus import gpu_spec_name, load_accelerators
from benchlib.core.cache import cache_folder
from benchlib.core.freshness import build_date
from benchlib.core.package_data import data_file
from benchlib.core.units import format_bytes
from benchlib.derive.searched import fit_prediction, model_label, request_of
from benchlib.models.trainable import MODELS, get_model
from benchlib.predict.memory import (
    ALLOCATOR_OVERHEAD,
    CUDA_CONTEXT_BYTES,
    CUDA_CONTEXT_SOURCE,
    USABLE_FRACTION,
    Predictor,
    gpu_memory,
)
from benchlib.results.load import params_of
from benchlib.site import speed_check as speed
from benchlib.site.charts import Scatter, chart_spec, plotted_rows, scatter_spec, value_text
from benchlib.site.data import REPORTED, SiteData, plot_rows, site_data
from benchlib.site.figures import STATIC_WIDTH, figure_context
from benchlib.site.platform_pages import Source, fact_flags
from benchlib.site.render import render
from benchlib.workloads import Plot, charts
from benchlib.workloads import llm_max_batch as llm_max_batch_records
from benchlib.workloads import max_batch as max_batch_records
from benchlib.workloads import training_throughput as throughput_records

HISTORY_FILE = data_file("buying_advice.yaml")
MATRIX_MODELS: tuple[str, ...] = tuple(MODELS)
MATRIX_DTYPES: tuple[str, ...] = ("fp32", "fp16")
# The recommendation tables show what trains in mixed precision, as most training is done.
RECOMMENDED_DTYPE = "fp16"
# NVIDIA's ResNet-50 example, which the reported batches come from, trains with SGD and momentum.
REPORTED_OPTIMIZER = "sgd"
DOES_NOT_FIT = "✗"
FREE_TIERS: tuple[tuple[str, str, str], ...] = (
    # (platform, tier, the GPU one notebook gets there)
    ("colab", "free", "T4"),
    ("kaggle", "free", "T4"),
    ("studio-lab", "free", "T4"),
)
RESNET50_TITLE = "ResNet-50 training throughput: reported and predicted"
BANDWIDTH_VS_COMPUTE = Scatter(
    title="Memory bandwidth against compute",
    description="Each GPU's peak memory bandwidth against its peak fp16 compute, from benchlib's specs file.",
    x="fp16 TFLOPS",
    x_title="fp16 peak TFLOPS (log scale)",
    y="GB/s",
    y_title="memory bandwidth GB/s (log scale)",
    label="GPU",
    details=("FLOPs per byte",),
)


# ----------------------------------------------------------------------------- predictions


def fit_cache() -> Path | None:
    return cache_folder("fit")


def gpu_names() -> list[str]:
    """Every GPU in the specs with a memory size, smallest memory first."""
    gpus = [a for a in load_accelerators() if a.kind == "gpu" and a.memory_gb is not None]
    return [a.name for a in sorted(gpus, key=lambda a: (gpu_memory(a.name).usable_bytes, a.name))]


@functools.cache
def predictions(
    models: tuple[str, ...] = MATRIX_MODELS,
    dtypes: tuple[str, ...] = MATRIX_DTYPES,
    gpus: tuple[str, ...] | None = None,
    size: str = "full",
    cache: Path | None = None,
    optimizer: str = "adam",
) -> pd.DataFrame:
    """Predicted largest batch of each model and dtype on each GPU: one row each.

    Larger memories go first, so their traces bound the smaller ones (see ``solve_max_batch``).
    """
    devices = [gpu_memory(name) for name in (gpus or gpu_names())]
    rows = []
    for model in models:
        for dtype in dtypes:
            predictor = Predictor(model, dtype=dtype, optimizer=optimizer, size=size, foreach=True, cache_dir=cache)
            for device in sorted(devices, key=lambda d: -d.tensor_budget):
                rows.append(
                    {
                        "model": model,
                        "dtype": dtype,
                        "gpu": device.name,
                        "usable_bytes": device.usable_bytes,
                        "max_batch": predictor.predict(device, verify=False).max_batch,
                        "torch": predictor.torch_version,
                    }
                )
    return pd.DataFrame(rows)


def _site_predictions() -> pd.DataFrame:
    return predictions(cache=fit_cache())


def _batches(frame: pd.DataFrame, gpu: str, model: str) -> dict[str, int]:
    picked = frame[(frame["gpu"] == gpu) & (frame["model"] == model)]
    return dict(zip(picked["dtype"], picked["max_batch"]))


def _batch_text(value: int | None) -> str:
    return DOES_NOT_FIT if value == 0 else ("" if value is None else f"{value:,}")


# ----------------------------------------------------------------------------- GPU specs and prices


@functools.cache
def gpu_frame() -> pd.DataFrame:
    """One row per GPU in the specs, indexed by name: every figure of it the blocks show.

    The one place these are prepared: usable memory as `benchlib fit` counts it, the cloud prices
    per GPU (cheapest first), launch and street prices, and the fp16 and bandwidth peaks with the
    FLOPs per byte they imply (verified or conflicting peaks only; an unverified one gives none).
    """
    rows = []
    for spec in load_accelerators():
        if spec.kind != "gpu":
            continue
        bandwidth, tflops = spec.peak_bandwidth_gbps(), spec.peak_tflops("fp16")
        rows.append(
            {
                "gpu": spec.name,
                "memory": gpu_memory(spec.name) if spec.memory_gb is not None else None,
                "cloud_prices": spec.hourly_prices(),
                "launch_price": spec.launch_price_usd,
                "purchase_prices": spec.purchase_prices_usd,
                "bandwidth": spec.bandwidth_gbps,
                "fp16": spec.fp16_tensor_tflops or spec.fp16_tflops,
                "peak_bandwidth_gbps": bandwidth,
                "peak_fp16_tflops": tflops,
                "flops_per_byte": tflops * 1e12 / (bandwidth * 1e9) if bandwidth and tflops else None,
            }
        )
    return pd.DataFrame(rows).set_index("gpu", drop=False)


def _price_text(price: Any) -> str:
    top = f"–{price.usd_per_hour_max:.2f}" if price.usd_per_hour_max else ""
    return f"${price.usd_per_hour:.2f}{top}/h"


def _cited(fact: Any, *, ages: bool = True, note: bool = True) -> Source:
    """Where ``fact`` comes from (a spec figure, a price, a platform fact or a claim), as the pages cite it.

    Its status badge always; the stale badge only where the fact can age: a chip's specification
    (``ages=False``) does not, prices, reported figures and advice do.
    """
    flags = [flag for flag in fact_flags(fact) if ages or flag.kind != "stale"]
    return Source(
        str(fact.source),
        str(fact.as_of),
        tuple(flags),
        getattr(fact, "note", None) if note else None,
        tuple(str(url) for url in getattr(fact, "see_also", ())),
    )


def _sourced(text: str, fact: Any, *, ages: bool = True, note: bool = True) -> dict[str, Any]:
    """A table cell: ``text`` over the source line of ``fact``."""
    return {"text": text, "source": _cited(fact, ages=ages, note=note)}


# ----------------------------------------------------------------------------- what fits


def _matrix_cell(frame: pd.DataFrame, gpu: str, model: str) -> dict[str, Any]:
    batches = _batches(frame, gpu, model)
    return {
        "model": model,
        "batches": [
            {"dtype": dtype, "value": batches.get(dtype), "text": _batch_text(batches.get(dtype))}
            for dtype in MATRIX_DTYPES
        ],
    }


def what_fits(frame: pd.DataFrame | None = None) -> str:
    """The matrix: GPUs (grouped by usable memory) × models, predicted largest batch in fp32 / fp16."""
    import torch

    frame = _site_predictions() if frame is None else frame
    models = [m for m in MATRIX_MODELS if m in set(frame["model"])]
    memory = gpu_frame()["memory"]
    groups: dict[tuple[int, str, str], list[Any]] = {}
    for gpu in dict.fromkeys(frame.sort_values(["usable_bytes", "gpu"])["gpu"]):
        device = memory[gpu]
        groups.setdefault((device.usable_bytes, device.basis, device.status), []).append(device)
    rows = [
        {
            "gpus": ", ".join(d.name for d in devices),
            "gpu": devices[0].name,
            "basis": devices[0].basis,
            "usable": format_bytes(devices[0].usable_bytes),
            "estimated": devices[0].status == "estimated",
            "rule": devices[0].basis.removeprefix("rule: "),
            "source": _cited(devices[0], ages=False) if devices[0].source else None,
            "cells": [_matrix_cell(frame, devices[0].name, model) for model in models],
        }
        for devices in groups.values()
    ]
    head = ["GPU", "Usable memory"] + [
        (get_model(m).short, "×".join(map(str, get_model(m).input_shape()))) for m in models
    ]
    return render(
        "buying_fits.html",
        head=head,
        rows=rows,
        torch_version=torch.__version__,
        benchlib_version=benchlib.__version__,
        computed=build_date().isoformat(),
        context=format_bytes(CUDA_CONTEXT_BYTES),
        context_source=CUDA_CONTEXT_SOURCE,
        overhead=f"{ALLOCATOR_OVERHEAD:.0%}",
        usable_fraction=f"{USABLE_FRACTION:.4g}",
    )


def models_table() -> str:
    """The models of the matrix: what each one is, as `benchlib fit --model` names it."""
    return render("buying_models.html", models=list(MODELS.values()))


# ----------------------------------------------------------------------------- reported and measured results


def _records(data: SiteData, plot: Plot, workload: str) -> pd.DataFrame:
    """The valid records ``plot`` declares, each named by its GPU (the chart's title says they are reported)."""
    rows = plot_rows(data.frame, plot, workload)
    rows = rows[rows["status"] == "ok"]
    return rows.assign(subject=rows["device_name"])


def _sources(rows: pd.DataFrame) -> list[dict[str, Any]]:
    """Each reported source of ``rows``: address, as-of date and its own account of the setting."""
    first = rows.drop_duplicates("source_url")
    return [
        {"url": r["source_url"], "as_of": r["date"], "context": r["source_context"]} for r in first.to_dict("records")
    ]


def resnet50_throughput(data: SiteData | None = None) -> str:
    """ResNet-50 training throughput per GPU and precision: reported by Lambda, predicted for the GPUs
    Lambda never ran (`benchlib.site.speed_check`); chart, sources, how far off predictions were, and table."""
    data = data or site_data()
    chart = throughput_records.RESNET50_CHART
    rows = _records(data, throughput_records.RESNET50, throughput_records.NAME)
    if rows.empty:
        return render("buying_empty.html", what="throughput")
    reported = plotted_rows(rows, chart)
    predicted = speed.unrun_rows(str(reported["unit"].iloc[0]))
    if len(predicted):
        chart = replace(chart, title=RESNET50_TITLE)
    plotted = plotted_rows(pd.concat([rows, predicted], ignore_index=True), chart) if len(predicted) else reported
    of_fastest = _records(
        data, replace(throughput_records.RESNET50, metric=throughput_records.OF_FASTEST.metric), throughput_records.NAME
    )
    settings = [s for s in chart.setting_order if s in set(plotted["setting"])]
    figures = {(r["subject"], r["setting"]): r for r in plotted.to_dict("records")}
    relative = {(r["subject"], r["setting"]): r["value"] for r in of_fastest.to_dict("records")}
    relative.update(_predicted_relative(reported, predicted))
    # Fastest first, as the chart orders its bands.
    order = sorted(dict.fromkeys(plotted["subject"]), key=lambda g: -max(plotted.loc[plotted["subject"] == g, "value"]))
    table = [
        [gpu]
        + [
            f"{figures[gpu, s]['value']:,.0f} (batch {figures[gpu, s]['param_batch']:.0f})"
            if (gpu, s) in figures
            else ""
            for s in settings
        ]
        + [f"{relative[gpu, s]:.2f}" if (gpu, s) in relative else "" for s in settings]
        for gpu in order
    ]
    unit = plotted["unit"].iloc[0]
    head = ["GPU"] + [f"{s} {unit}" for s in settings] + [f"{s}, relative to the fastest" for s in settings]
    return render(
        "buying_throughput.html",
        chart=chart,
        **figure_context(chart.id, chart_spec(plotted, chart), chart_spec(plotted, chart, width=STATIC_WIDTH)),
        sources=_sources(reported),
        head=head,
        rows=table,
        **speed.chart_note(),
        reference=_fastest_reported(reported),
    )


def _fastest_reported(reported: pd.DataFrame) -> dict[str, str]:
    """The GPU with the highest reported figure of each precision."""
    best = reported.loc[reported.groupby("setting")["value"].idxmax()]
    return dict(zip(best["setting"], best["subject"]))


def _predicted_relative(reported: pd.DataFrame, predicted: pd.DataFrame) -> dict[tuple[str, str], float]:
    """A predicted GPU against the fastest reported GPU's prediction, not its reported figure: two
    predictions, so the bias the comparison shows on that GPU cancels instead of adding up."""
    if predicted.empty:
        return {}
    fastest = _fastest_reported(reported)
    reference = {(r.gpu, r.precision): r.predicted for r in speed.checked().rows}
    return {
        (row["subject"], row["setting"]): row["value"] / reference[fastest[row["setting"]], row["setting"]]
        for row in predicted.to_dict("records")
        if (fastest.get(row["setting"]), row["setting"]) in reference
    }


def measured_results(*chart_ids: str) -> str:
    """benchlib's own measurements on the charts named (every chart if none), best value per machine and setting."""
    declared = charts()
    unknown = [c for c in chart_ids if c not in declared]
    if unknown:
        raise KeyError(f"no chart {unknown[0]!r}; declared charts: {', '.join(declared)}")
    data = site_data()
    table = []
    for chart_id in chart_ids or tuple(declared):
        rows = data.charts.get(chart_id, pd.DataFrame())
        if rows.empty:
            continue
        rows = rows[(rows["source"] != REPORTED) & (rows["status"] == "ok")]
        for (subject, setting), group in rows.groupby(["subject", "setting"], sort=False):
            best = group.loc[group["value"].idxmax() if group["higher_is_better"].iloc[0] else group["value"].idxmin()]
            device = best["device_name"] if isinstance(best["device_name"], str) else ""
            table.append(
                [subject, device, declared[chart_id].title, setting, f"{value_text(best['value'])} {best['unit']}"]
            )
    if not table:
        return render("buying_empty.html", what="measured")
    return render("table.html", head=["Machine", "Device", "Chart", "Setting", "Best"], rows=table)


def _searched_row(row: dict[str, Any]) -> list[str]:
    """A measured largest-batch search as one table row, next to `benchlib fit`'s prediction for the same case."""
    request = request_of(params_of(row), row["dtype"], row["device"])
    device = row["device_name"] or row["device"]
    if request.memory_limit:
        device = f"{device}, capped at {format_bytes(request.memory_limit)}"
    prediction = fit_prediction(request, row["device_name"])
    measured = "" if pd.isna(row["value"]) else f"{int(row['value']):,}"
    predicted = "" if prediction is None else f"{prediction.max_batch:,}"
    return [row["machine_label"], device, model_label(request), row["dtype"], measured, predicted, row["date"]]


def measured_vs_predicted() -> str:
    """Every measured largest-batch search (`benchlib max-batch`, and `benchlib campaign`'s language
    models too) next to `benchlib fit`'s prediction for the same case."""
    frame = site_data().frame
    searches = (max_batch_records.NAME, llm_max_batch_records.NAME)
    measured = frame[
        frame["owner"].isin(searches)
        & (frame["metric"] == max_batch_records.MAX_BATCH.name)
        & (frame["source"] != REPORTED)
    ]
    if measured.empty:
        return render("buying_empty.html", what="measured_batches")
    rows = [_searched_row(r) for r in measured.to_dict("records")]
    head = ["Machine", "Device", "Model", "dtype", "Measured largest batch", "Predicted", "Date"]
    return render("table.html", head=head, rows=rows)


def lambda_batches(data: SiteData | None = None) -> str:
    """The reported ResNet-50 batch sizes, which trained on real GPUs, against the predicted largest batch.

    A batch that trained is a lower bound on the largest one, so a prediction below it is wrong.
    """
    data = data or site_data()
    rows = _records(data, throughput_records.RESNET50, throughput_records.NAME)
    rows = rows.assign(gpu=[gpu_spec_name(name) for name in rows["device_name"]]).dropna(subset=["gpu"])
    if rows.empty:
        return render("buying_empty.html", what="batches")
    known = tuple(dict.fromkeys(rows["gpu"]))
    predicted = predictions(
        models=tuple(dict.fromkeys(rows["param_model"])), gpus=known, cache=fit_cache(), optimizer=REPORTED_OPTIMIZER
    )
    memory = gpu_frame()["memory"]
    table, below = [], 0
    for gpu in sorted(known, key=lambda g: memory[g].usable_bytes):
        cells = [gpu]
        for dtype in MATRIX_DTYPES:
            ran = rows[(rows["gpu"] == gpu) & (rows["dtype"] == dtype)]
            reported = int(ran["param_batch"].iloc[0]) if len(ran) else None
            ours = _batches(predicted, gpu, ran["param_model"].iloc[0]).get(dtype) if len(ran) else None
            below += reported is not None and ours is not None and ours < reported
            cells += ["" if reported is None else str(reported), "" if ours is None else str(ours)]
        table.append(cells)
    precision = dict(zip(rows["dtype"], rows["param_precision"]))
    head = ["GPU"] + [
        text
        for dtype in MATRIX_DTYPES
        for text in (
            f"{precision.get(dtype, dtype)}: reported batch",
            f"{dtype}: predicted largest ({REPORTED_OPTIMIZER.upper()})",
        )
    ]
    return render("buying_batches.html", below=below, head=head, rows=table, sources=_sources(rows))


def price_performance(data: SiteData | None = None) -> str:
    """Images per dollar: the reported mixed-precision throughput over each dated cloud price, chart and table."""
    data = data or site_data()
    chart = throughput_records.PRICE_CHART
    rows = _records(data, throughput_records.PRICE_PERFORMANCE, throughput_records.NAME)
    if rows.empty:
        return render("buying_empty.html", what="price")
    rows = rows.assign(subject=[f"{gpu} · {price.provider}" for gpu, price in zip(rows["device_name"], rows["price"])])
    plotted = plotted_rows(rows, chart)
    rates = _records(
        data,
        replace(throughput_records.PRICE_PERFORMANCE, metric=throughput_records.THROUGHPUT.name),
        throughput_records.NAME,
    )
    rate = {(r["file"], r["dtype"]): r for r in rates.to_dict("records")}
    table = [
        {
            "gpu": r["device_name"],
            "provider": r["price"].provider,
            "price": _sourced(_price_text(r["price"]), r["price"]),
            "rate": f"{rate[r['file'], r['dtype']]['value']:,.0f}",
            "per_dollar": f"{r['value']:,.0f}",
        }
        for r in plotted.sort_values(["device_name", "value"], ascending=[True, False]).to_dict("records")
    ]
    first = rates.iloc[0]
    head = [
        "GPU",
        "Provider",
        "Price (dated)",
        f"Reported {first['param_precision']} {first['unit']}",
        throughput_records.PER_DOLLAR.metric.capitalize(),
    ]
    return render(
        "buying_price.html",
        chart=chart,
        **figure_context(chart.id, chart_spec(plotted, chart), chart_spec(plotted, chart, width=STATIC_WIDTH)),
        sources=_sources(rates),
        head=head,
        rows=table,
    )


def bandwidth_vs_compute() -> str:
    """Memory bandwidth against fp16 tensor compute per GPU (specs), chart and table."""
    gpus = gpu_frame()
    gpus = gpus[gpus["bandwidth"].notna()]
    table = [
        {
            "gpu": g["gpu"],
            "bandwidth": _sourced(f"{g['bandwidth'].value:,.0f}", g["bandwidth"], ages=False, note=False),
            "fp16": _sourced(f"{g['fp16'].value:,.4g}", g["fp16"], ages=False, note=False) if g["fp16"] else None,
            "ratio": f"{g['flops_per_byte']:,.0f}" if pd.notna(g["flops_per_byte"]) else "",
        }
        for g in gpus.to_dict("records")
    ]
    points = gpus[gpus["flops_per_byte"].notna()]
    plotted = pd.DataFrame(
        {
            "GPU": points["gpu"],
            "fp16 TFLOPS": points["peak_fp16_tflops"],
            "GB/s": points["peak_bandwidth_gbps"],
            "FLOPs per byte": points["flops_per_byte"].round(),
        }
    )
    scatter = BANDWIDTH_VS_COMPUTE
    return render(
        "buying_bandwidth.html",
        chart=scatter,
        rows=table,
        **figure_context(
            "bandwidth-compute", scatter_spec(plotted, scatter), scatter_spec(plotted, scatter, width=STATIC_WIDTH)
        ),
    )


# ----------------------------------------------------------------------------- recommendations


def _fits(frame: pd.DataFrame, gpu: str) -> list[dict[str, str]]:
    return [{"model": m, "text": _batch_text(_batches(frame, gpu, m).get(RECOMMENDED_DTYPE))} for m in MATRIX_MODELS]


def _offers(name: str, head: list[Any], rows: list[dict[str, Any]]) -> str:
    batch = f"{RECOMMENDED_DTYPE} batch"
    return render(
        "buying_offers.html", name=name, head=head + [(MODELS[m].short, batch) for m in MATRIX_MODELS], rows=rows
    )


def free_tiers(frame: pd.DataFrame | None = None) -> str:
    """Free notebook tiers, what GPU they give and what trains on it (predicted, fp16)."""
    from benchlib.catalog.platforms import load_platforms

    frame = _site_predictions() if frame is None else frame
    platforms = load_platforms().platforms
    rows = []
    for platform_id, tier_id, gpu in FREE_TIERS:
        platform = platforms[platform_id]
        tier = platform.tiers[tier_id]
        offer, price = tier.field("accelerators")[0], tier.field("price")[0]
        rows.append(
            {
                "cells": [f"{platform.name} {tier.name}", _sourced(offer.value, offer), _sourced(price.value, price)],
                "fits": _fits(frame, gpu),
            }
        )
    return _offers("free-tiers", ["Where", "GPU offered", "Price"], rows)


def rent_table(frame: pd.DataFrame | None = None) -> str:
    """GPUs to rent by the hour, cheapest listed price first, with what trains on each (predicted, fp16)."""
    frame = _site_predictions() if frame is None else frame
    gpus = gpu_frame().loc[list(dict.fromkeys(frame["gpu"]))]
    gpus = gpus[gpus["cloud_prices"].map(bool)]
    cheapest = sorted(((g["cloud_prices"][0], g) for g in gpus.to_dict("records")), key=lambda pg: pg[0].usd_per_hour)
    rows = [
        {
            "cells": [
                g["gpu"],
                format_bytes(g["memory"].usable_bytes),
                _sourced(f"{_price_text(price)} ({price.provider})", price, note=False),
            ],
            "fits": _fits(frame, g["gpu"]),
        }
        for price, g in cheapest
    ]
    return _offers("rent", ["GPU", "Usable memory", "Cheapest listed price (dated)"], rows)


def buy_table(frame: pd.DataFrame | None = None) -> str:
    """GPUs with a launch price in the specs, cheapest first, with what trains on each (predicted, fp16)."""
    frame = _site_predictions() if frame is None else frame
    gpus = gpu_frame().loc[list(dict.fromkeys(frame["gpu"]))]
    cards = sorted((g for g in gpus.to_dict("records") if g["launch_price"]), key=lambda g: g["launch_price"].value)
    rows = [
        {
            "cells": [
                g["gpu"],
                format_bytes(g["memory"].usable_bytes),
                _sourced(f"${g['launch_price'].value:,.0f}", g["launch_price"], note=False),
            ],
            "fits": _fits(frame, g["gpu"]),
        }
        for g in cards
    ]
    return _offers("buy", ["GPU", "Usable memory", "Launch price (dated)"], rows)


# ----------------------------------------------------------------------------- history


def _price_then(gpu: str | None, as_of: str) -> dict[str, Any] | None:
    """The street price the specs give for ``gpu`` in the period of a source dated ``as_of``."""
    if gpu is None:
        return None
    prices = [
        p for p in gpu_frame().at[gpu, "purchase_prices"] if as_of.startswith(p.as_of) or p.as_of.startswith(as_of)
    ]
    return _sourced(f"${prices[0].value:,.0f}", prices[0], note=False) if prices else None


def reported_largest_batches(data: SiteData | None = None) -> str:
    """Largest batches sources report per model and GPU, with the street price of the time; one table per source."""
    data = data or site_data()
    frame = data.frame
    reported = frame[
        (frame["owner"] == max_batch_records.NAME)
        & (frame["metric"] == max_batch_records.MAX_BATCH.name)
        & (frame["source"] == REPORTED)
    ]
    if reported.empty:
        return render("buying_empty.html", what="reported_batches")
    tables = []
    for (url, as_of), rows in reported.groupby(["source_url", "date"], sort=False):
        models = list(dict.fromkeys(rows["param_model"]))
        gpus = list(dict.fromkeys(rows.sort_values("param_gpu_memory_gb", kind="stable")["device_name"]))
        table = []
        for gpu in gpus:
            mine = rows[rows["device_name"] == gpu]
            cells = []
            for model in models:
                hit = mine[(mine["param_model"] == model) & (mine["status"] == "ok")]
                cells.append(f"{hit['value'].iloc[0]:.0f}" if len(hit) else None)
            table.append(
                {
                    "gpu": gpu,
                    "memory": f"{mine['param_gpu_memory_gb'].iloc[0]:.0f} GB",
                    "price": _price_then(gpu_spec_name(gpu), as_of),
                    "cells": cells,
                    "fits_all": bool((mine["status"] == "ok").all()),
                }
            )
        tables.append(
            {
                "url": url,
                "as_of": as_of,
                "context": rows["source_context"].iloc[0],
                "models": models,
                "rows": table,
                "month": pd.Timestamp(as_of).strftime("%B %Y"),
                "fits_all": [r["gpu"] for r in table if r["fits_all"]],
            }
        )
    return render("buying_reported_batches.html", tables=tables, does_not_fit=DOES_NOT_FIT)


def advice_history() -> str:
    """Dated advice from others (buying_advice.yaml), each claim with its source, date and status."""
    guides = yaml.safe_load(HISTORY_FILE.read_text(encoding="utf-8"))["guides"]
    shown = [
        {
            "id": g["id"],
            "title": g["title"],
            "claims": [{"value": c["value"], "source": _cited(SimpleNamespace(**c))} for c in g["claims"]],
        }
        for g in guides
    ]
    return render("buying_advice.html", guides=shown)
