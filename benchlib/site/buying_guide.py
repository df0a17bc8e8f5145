"""Blocks for the GPU buying guide (docs/gpus/buying-guide.md): what fits, speed, price, advice.

Every number comes from data when the site is built; nothing is traced or predicted here:

* what fits where: `benchlib fit`'s predictions for each model on each GPU in the specs, and for
  the batches sources trained with, computed by `benchlib tables` (``benchlib/tables/buying_guide.json``);
  beside each measured largest-batch search, fit's prediction for it (``benchlib/tables/searched.json``;
  a search it doesn't hold stops the build, naming the command that predicts it);
* speed: the results through `benchlib.site.data.site_data`; the reported throughput, its relative
  and per-dollar figures are the charts a workload declares for this page (`declared_plot`), the
  records checked against a prediction those whose workload declares the check (`PredictionCheck`);
* specs and prices: `gpu_frame`, the one place the GPU figures the blocks show are prepared from
  the specs file (``benchlib/data/gpus.yaml``) and the usable memory fit counts;
* advice: dated claims from others (``benchlib/data/buying_advice.yaml``).

Pages call these from markdown-exec blocks; each passes values to a ``buying_*.html`` template,
which escapes every string from a data file. What the numbers mean is prose on the page.
"""

from __future__ import annotations

import functools
from dataclasses import replace
from types import SimpleNamespace
from typing import Any

import pandas as pd
import yaml

from benchlib import tables
from benchlib.catalog.gpus import find_gpu, gpu_spec_name, load_accelerators
from benchlib.core.freshness import build_date
from benchlib.core.package_data import data_file
from benchlib.core.units import format_bytes
from benchlib.results.load import params_of
from benchlib.results.searches import request_of, search_key
from benchlib.site import speed_check as speed
from benchlib.site.charts import Scatter, chart_spec, plotted_rows, scatter_spec, value_text
from benchlib.site.data import REPORTED, SiteData, plot_rows, site_data
from benchlib.site.figures import figure_context
from benchlib.site.llm_speed import COST_MODEL, Cheapest, cheapest, cheapest_price, costs, options, rate_text, usd_text
from benchlib.site.llm_speed import TABLE as LLM_TABLE
from benchlib.site.platform_pages import cited, fact_flags
from benchlib.site.render import page_link, render
from benchlib.site.sources import read_table, table_error
from benchlib.workloads import (
    LARGEST_BATCH,
    TRAINED_BATCH,
    PerDollar,
    Plot,
    Relative,
    Workload,
    charts,
    checked_by,
    declared_plot,
)

HISTORY_FILE = data_file("buying_advice.yaml")
PREDICTIONS = "buying_guide"
SEARCHED = "searched"
# The charts of this page, as the workloads that plot them declare them.
RESNET50_CHART = "resnet50-throughput"
PRICE_CHART = "price-performance"
# The recommendation tables show what trains in mixed precision, as most training is done.
RECOMMENDED_DTYPE = "fp16"
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
    hollow="unverified",
    filled_title="verified peaks",
    hollow_title="a peak unverified",
)


# ----------------------------------------------------------------------------- predictions


@functools.cache
def _predictions_table() -> dict[str, Any]:
    return read_table(PREDICTIONS)


def matrix_models() -> list[dict[str, Any]]:
    """The models of the matrix, as `benchlib fit --model` names them: name, title, short name, input."""
    return _predictions_table()["models"]


def matrix_dtypes() -> list[str]:
    return _predictions_table()["dtypes"]


def usable_bytes(gpu: str) -> int:
    """The memory a training step may use on ``gpu``, as `benchlib fit` counts it."""
    return _predictions_table()["memory"][gpu]["usable_bytes"]


def gpu_names() -> list[str]:
    """Every GPU in the specs with a memory size, smallest memory first."""
    return sorted(_predictions_table()["memory"], key=lambda gpu: (usable_bytes(gpu), gpu))


def _site_predictions() -> pd.DataFrame:
    """fit's predicted largest batch of each model and dtype on each GPU: one row each."""
    return pd.DataFrame(_predictions_table()["predictions"])


def _batches(frame: pd.DataFrame) -> dict[tuple[str, str], dict[str, int]]:
    """(GPU, model) -> {dtype: predicted largest batch}: each prediction of ``frame``, found in one look-up."""
    index: dict[tuple[str, str], dict[str, int]] = {}
    for gpu, model, dtype, batch in zip(frame["gpu"], frame["model"], frame["dtype"], frame["max_batch"]):
        index.setdefault((gpu, model), {})[dtype] = int(batch)
    return index


def _batch_text(value: int | None) -> str:
    return DOES_NOT_FIT if value == 0 else ("" if value is None else f"{value:,}")


# ----------------------------------------------------------------------------- GPU specs and prices


@functools.cache
def gpu_frame() -> pd.DataFrame:
    """One row per GPU in the specs, indexed by name: every figure of it the blocks show.

    The one place these are prepared: usable memory as `benchlib fit` counts it, the cloud prices
    per GPU (cheapest first), launch and street prices, and the fp16 and bandwidth peaks per device
    with the FLOPs per byte they imply, and whether either peak is unverified (``verified``: both are
    verified or conflicting, the figures predictions take).
    """
    memory = _predictions_table()["memory"]
    rows = []
    for spec in load_accelerators():
        if spec.kind != "gpu":
            continue
        fp16 = spec.fp16_tensor_tflops or spec.fp16_tflops
        bandwidth, tflops = _per_device(spec, spec.bandwidth_gbps), _per_device(spec, fp16)
        rows.append(
            {
                "gpu": spec.name,
                "memory": SimpleNamespace(name=spec.name, **memory[spec.name]) if spec.name in memory else None,
                "cloud_prices": spec.hourly_prices(),
                "launch_price": spec.launch_price_usd,
                "purchase_prices": spec.purchase_prices_usd,
                "bandwidth": spec.bandwidth_gbps,
                "fp16": fp16,
                "peak_bandwidth_gbps": bandwidth,
                "peak_fp16_tflops": tflops,
                "verified": spec.peak_bandwidth_gbps() is not None and spec.peak_tflops("fp16") is not None,
                "flops_per_byte": tflops * 1e12 / (bandwidth * 1e9) if bandwidth and tflops else None,
            }
        )
    return pd.DataFrame(rows).set_index("gpu", drop=False)


def _per_device(spec: Any, figure: Any) -> float | None:
    """A spec figure per device (a board of several counts each), verified or not: the chart draws
    an unverified one hollow, and its table cell carries the badge."""
    if figure is None:
        return None
    units = spec.devices_per_unit
    return figure.value / units.value if units is not None else figure.value


def _price_text(price: Any) -> str:
    top = f"–{price.usd_per_hour_max:.2f}" if price.usd_per_hour_max else ""
    return f"${price.usd_per_hour:.2f}{top}/h"


def _sourced(text: str, fact: Any, *, ages: bool = True, note: bool = True) -> dict[str, Any]:
    """A table cell: ``text`` over the source line of ``fact``."""
    return {"text": text, "source": cited(fact, ages=ages, note=note)}


# ----------------------------------------------------------------------------- what fits


def _matrix_cell(index: dict[tuple[str, str], dict[str, int]], gpu: str, model: str) -> dict[str, Any]:
    batches = index.get((gpu, model), {})
    return {
        "model": model,
        "batches": [
            {"dtype": dtype, "value": batches.get(dtype), "text": _batch_text(batches.get(dtype))}
            for dtype in matrix_dtypes()
        ],
    }


def what_fits(frame: pd.DataFrame | None = None) -> str:
    """The matrix: GPUs (grouped by usable memory) × models, predicted largest batch in fp32 / fp16."""
    table = _predictions_table()
    frame = _site_predictions() if frame is None else frame
    models = [m for m in matrix_models() if m["name"] in set(frame["model"])]
    index = _batches(frame)
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
            "source": cited(devices[0], ages=False) if devices[0].source else None,
            "cells": [_matrix_cell(index, devices[0].name, model["name"]) for model in models],
        }
        for devices in groups.values()
    ]
    head = ["GPU", "Usable memory"] + [(m["short"], "×".join(map(str, m["input_shape"]))) for m in models]
    allowances = table["allowances"]
    return render(
        "buying_fits.html",
        measured=measured_overhead(site_data().frame),
        head=head,
        rows=rows,
        torch_version=table["versions"]["torch"],
        benchlib_version=table["versions"]["benchlib"],
        computed=table["created"][:10],
        context=format_bytes(allowances["cuda_context_bytes"]),
        context_source=allowances["cuda_context_source"],
        overhead=f"{allowances['allocator_overhead']:.0%}",
        smi_share=f"{allowances['smi_share']:.1%}",
    )


def measured_overhead(frame: pd.DataFrame) -> dict[str, Any] | None:
    """The caching allocator's overhead measured at each GPU search's largest batch: what PyTorch
    reserved over what its tensors took (`torch.cuda.max_memory_reserved` over
    `max_memory_allocated`). None until a GPU has run a search."""
    column = "param_max_memory_reserved_bytes"
    searches = _checked_rows(frame, LARGEST_BATCH)
    if searches.empty or column not in frame:
        return None
    searches = searches[(searches["source"] != REPORTED) & (searches["status"] == "ok")]
    trials = frame[frame[column].notna() & (frame["status"] == "ok") & (frame["value"] > 0)]
    # Each search's trial at the batch it found: the same file, model and dtype.
    best = trials.merge(
        searches[["file", "param_model", "dtype", "value"]].rename(columns={"value": "param_batch"}),
        on=["file", "param_model", "dtype", "param_batch"],
    )
    if best.empty:
        return None
    overheads = (best[column].astype(float) / best["value"].astype(float) - 1).sort_values()
    return {
        "median": f"{overheads.median():.0%}",
        "low": f"{overheads.iloc[0]:.0%}",
        "high": f"{overheads.iloc[-1]:.0%}",
        "searches": len(overheads),
        "devices": ", ".join(sorted(dict.fromkeys(best["device_name"].astype(str)))),
    }


def precision_batches(gpus: list[str], frame: pd.DataFrame | None = None) -> str:
    """For the mixed-precision guide: on each of ``gpus``, the largest batch of each model of the
    matrix in fp32 and in fp16 mixed precision, and how many times larger the fp16 one is (predicted)."""
    frame = _site_predictions() if frame is None else frame
    index = _batches(frame)
    fp32, fp16 = matrix_dtypes()
    rows = []
    for gpu in gpus:
        for model in matrix_models():
            batches = index.get((gpu, model["name"]), {})
            low, high = batches.get(fp32), batches.get(fp16)
            ratio = f"{high / low:.1f}×" if low and high else ""
            rows.append([gpu, model["title"], _batch_text(low), _batch_text(high), ratio])
    head = ["GPU", "Model", f"{fp32} largest batch", f"{fp16} mixed precision", "fp16 over fp32"]
    return render("table.html", head=head, rows=rows)


def models_table() -> str:
    """The models of the matrix: what each one is, as `benchlib fit --model` names it."""
    return render("buying_models.html", models=matrix_models())


# ----------------------------------------------------------------------------- reported and measured results


def _records(data: SiteData, plot: Plot, workload: Workload) -> pd.DataFrame:
    """The valid records ``plot`` declares, each named by its GPU (the chart's title says they are reported)."""
    rows = plot_rows(data.frame, plot, workload.name)
    rows = rows[rows["status"] == "ok"]
    return rows.assign(subject=rows["device_name"])


def _derived(workload: Workload, kind: type) -> Any:
    """The figure of type ``kind`` (`Relative`, `PerDollar`) that ``workload`` derives from its records."""
    return next(rule for rule in workload.derived if isinstance(rule, kind))


def _checked_rows(frame: pd.DataFrame, predicts: str) -> pd.DataFrame:
    """The records whose workload declares a check of kind ``predicts`` that applies to them."""
    declared = checked_by(predicts)
    mine = frame[frame["owner"].isin(list(declared))]
    keep = [
        declared[r["owner"]].applies(r["metric"], r["device"], params_of(r)) and r["derived"] == ""
        for r in mine.to_dict("records")
    ]
    return mine[keep] if len(mine) else mine


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
    workload, plot = declared_plot(RESNET50_CHART)
    chart = plot.chart
    rows = _records(data, plot, workload)
    if rows.empty:
        return render("buying_empty.html", what="throughput")
    reported = plotted_rows(rows, chart)
    predicted = speed.unrun_rows(str(reported["unit"].iloc[0]))
    if len(predicted):
        chart = replace(chart, title=RESNET50_TITLE)
    plotted = plotted_rows(pd.concat([rows, predicted], ignore_index=True), chart) if len(predicted) else reported
    of_fastest = _records(data, replace(plot, metric=_derived(workload, Relative).metric), workload)
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
        **figure_context(chart.id, chart_spec(plotted, chart)),
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
    return render("table.html", head=["Machine", "Device", "Chart", "Setting", "Best"], rows=table, measured=True)


@functools.cache
def _searched_table() -> dict[str, dict[str, Any]]:
    return {row["key"]: row for row in read_table(SEARCHED)["searches"]}


def _searched_row(row: dict[str, Any]) -> list[str]:
    """A measured largest-batch search as one table row, next to `benchlib fit`'s prediction for the same case.

    The prediction comes from the committed table; a search it doesn't hold (a results folder of
    your own) is a `table_error`, naming the command that predicts it.
    """
    params = params_of(row)
    request = request_of(params, row["dtype"], row["device"])
    found = _searched_table().get(search_key(request, row["device_name"]))
    if found is None:
        table_error(tables.stale(SEARCHED, f"has no prediction for the search of {request.model} in {row['file']}"))
    device = row["device_name"] if isinstance(row["device_name"], str) and row["device_name"] else row["device"]
    if request.memory_limit:
        device = f"{device}, capped at {format_bytes(request.memory_limit)}"
    measured = "" if pd.isna(row["value"]) else f"{int(row['value']):,}"
    predicted = "" if found["max_batch"] is None else f"{found['max_batch']:,}"
    error = "" if not measured or not predicted else f"{found['max_batch'] / row['value'] - 1:+.0%}".replace("-", "−")
    return [row["machine_label"], device, found["model"], row["dtype"], measured, predicted, error, row["date"]]


def measured_vs_predicted() -> str:
    """Every measured largest-batch search (`benchlib max-batch`, and `benchlib campaign`'s language
    models too) next to `benchlib fit`'s prediction for the same case."""
    frame = site_data().frame
    searches = _checked_rows(frame, LARGEST_BATCH)
    measured = searches[searches["source"] != REPORTED]
    if measured.empty:
        return render("buying_empty.html", what="measured_batches")
    rows = [_searched_row(r) for r in measured.to_dict("records")]
    head = ["Machine", "Device", "Model", "dtype", "Measured largest batch", "Predicted", "Error", "Date"]
    return render("table.html", head=head, rows=rows)


def _trained_batches() -> dict[tuple[str, str, str], int]:
    """(model, GPU, dtype) -> fit's largest batch in the setup the source trained with."""
    return {
        (row["model"], row["gpu"], row["dtype"]): row["max_batch"] for row in _predictions_table()["trained_batches"]
    }


def lambda_batches(data: SiteData | None = None) -> str:
    """The reported batch sizes a source trained with on real GPUs, against the predicted largest batch.

    A batch that trained is a lower bound on the largest one, so a prediction below it is wrong.
    The records are those whose workload declares a ``trained batch`` check (Lambda's ResNet-50
    rows), predicted in the optimizer the check names.
    """
    data = data or site_data()
    checked = _checked_rows(data.frame, TRAINED_BATCH)
    rows = checked[checked["status"] == "ok"]
    rows = rows.assign(subject=rows["device_name"], gpu=[gpu_spec_name(name) for name in rows["device_name"]]).dropna(
        subset=["gpu"]
    )
    if rows.empty:
        return render("buying_empty.html", what="batches")
    optimizer = str(next(iter(checked_by(TRAINED_BATCH).values())).options.get("optimizer", "adam"))
    predicted = _trained_batches()
    memory = gpu_frame()["memory"]
    dtypes = matrix_dtypes()
    table, below = [], 0
    for gpu in sorted(dict.fromkeys(rows["gpu"]), key=lambda g: memory[g].usable_bytes):
        cells = [gpu]
        for dtype in dtypes:
            ran = rows[(rows["gpu"] == gpu) & (rows["dtype"] == dtype)]
            reported = int(ran["param_batch"].iloc[0]) if len(ran) else None
            ours = predicted.get((ran["param_model"].iloc[0], gpu, dtype)) if len(ran) else None
            below += reported is not None and ours is not None and ours < reported
            cells += ["" if reported is None else str(reported), "" if ours is None else str(ours)]
        table.append(cells)
    precision = dict(zip(rows["dtype"], rows["param_precision"]))
    head = ["GPU"] + [
        text
        for dtype in dtypes
        for text in (
            f"{precision.get(dtype, dtype)}: reported batch",
            f"{dtype}: predicted largest ({optimizer.upper()})",
        )
    ]
    return render("buying_batches.html", below=below, head=head, rows=table, sources=_sources(rows))


def price_performance(data: SiteData | None = None) -> str:
    """Images per dollar: the reported mixed-precision throughput over each dated cloud price, chart and table."""
    data = data or site_data()
    workload, plot = declared_plot(PRICE_CHART)
    chart = plot.chart
    per_dollar = _derived(workload, PerDollar)
    rows = _records(data, plot, workload)
    if rows.empty:
        return render("buying_empty.html", what="price")
    rows = rows.assign(subject=[f"{gpu} · {price.provider}" for gpu, price in zip(rows["device_name"], rows["price"])])
    plotted = plotted_rows(rows, chart)
    rates = _records(data, replace(plot, metric=per_dollar.of), workload)
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
        per_dollar.metric.capitalize(),
    ]
    return render(
        "buying_price.html",
        chart=chart,
        **figure_context(chart.id, chart_spec(plotted, chart)),
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
    # Labels go first to the cards the guide prices (Can I run it?'s columns), then to verified peaks.
    priced = [find_gpu(c["gpu"]).name for c in read_table(LLM_TABLE)["columns"]]
    order = sorted(
        range(len(points)), key=lambda i: (points["gpu"].iloc[i] not in priced, not points["verified"].iloc[i])
    )
    points = points.iloc[order]
    plotted = pd.DataFrame(
        {
            "GPU": points["gpu"],
            "fp16 TFLOPS": points["peak_fp16_tflops"],
            "GB/s": points["peak_bandwidth_gbps"],
            "FLOPs per byte": points["flops_per_byte"].round(),
            "unverified": ~points["verified"].astype(bool),
        }
    )
    scatter = BANDWIDTH_VS_COMPUTE
    return render(
        "buying_bandwidth.html",
        chart=scatter,
        rows=table,
        **figure_context("bandwidth-compute", scatter_spec(plotted, scatter)),
    )


# ----------------------------------------------------------------------------- recommendations


# The 7–8B model the verdict speaks of: the one Can I run it? prices, so every figure of the verdict
# is also on that page and in this one's token charts.
VERDICT_MODEL = COST_MODEL
HERE = "gpus/buying-guide.md"
CAN_I_RUN_IT = "gpus/can-i-run-it.md"
# The fine-tuning modes of the first line, as Can I run it? keys and names them.
TUNING_MODES = (("qlora", "QLoRA"), ("lora", "LoRA"))


def _claim(verdict: Cheapest) -> dict[str, Any]:
    """A verdict as the template words it: the GPU, its price and cost where it wins, and what is
    cheaper above the price where it stops winning."""
    then = verdict.then
    return {
        "gpu": verdict.winner.item["column"]["label"],
        "price": verdict.winner.price,
        "usd": verdict.cost_text,
        "up_to": verdict.up_to_text,
        "then": None
        if then is None
        else {"gpu": then.item["column"]["label"], "price": then.price, "usd": usd_text(then.cost)},
    }


def _cheapest_tuning(found: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per GPU that trains the verdict model cheapest in some mode over the whole range of every
    price: its price and $ per million tokens in each mode it wins (one GPU usually wins both); a
    mode whose verdict depends on the price gets a line of its own, saying up to which price."""
    winners: list[dict[str, Any]] = []
    for mode, name in TUNING_MODES:
        verdict = cheapest(options(found, lambda c, mode=mode: c["training"][mode]["usd"]))
        if verdict is None:
            continue
        claim = _claim(verdict)
        shared = next((w for w in winners if w["gpu"] == claim["gpu"] and not w["up_to"]), None)
        if shared is not None and not claim["up_to"]:
            shared["modes"].append({"mode": name, "usd": claim["usd"]})
        else:
            winners.append({**claim, "modes": [{"mode": name, "usd": claim["usd"]}]})
    return winners


def recommendations() -> str:
    """The verdict the guide opens with: one line per use, each answer taken from the predictions and
    dated prices the page shows further down (Can I run it?'s table for `VERDICT_MODEL`, its costs,
    the free tiers), each figure with its source or marked predicted."""
    from benchlib.catalog.platforms import load_platforms

    table = read_table(LLM_TABLE)
    row = next(r for r in table["rows"] if r["model"] == VERDICT_MODEL)
    singles = [c for c in table["columns"] if c["count"] == 1]
    found = costs(VERDICT_MODEL)
    platforms = load_platforms().platforms
    free_gpu = FREE_TIERS[0][2]
    free_column = next(c for c in singles if c["gpu"] == free_gpu)
    prices = [
        (platforms[p].name, platforms[p].tiers[t].field("price")[0]) for p, t, gpu in FREE_TIERS if gpu == free_gpu
    ]
    # A free offer whose price may be out of date stays in the Start free table, not in the verdict.
    free = [
        {"name": name, "price": cited(price, note=False)}
        for name, price in prices
        if not any(flag.kind == "stale" for flag in fact_flags(price))
    ]
    served = cheapest(options(found, lambda c: c["served"]))
    rates = [(row["training_tokens_per_s"]["lora"][c["key"]], c) for c in singles]
    rate, fastest = max(((r, c) for r, c in rates if r is not None), key=lambda rc: rc[0])
    fastest_price = cheapest_price(find_gpu(fastest["gpu"]))
    # The cheapest GPU to rent by the hour: the price is the cost.
    rent_first = cheapest(options(found, lambda c: c["price"].usd_per_hour))
    return render(
        "buying_verdict.html",
        model=row["title"],
        free=free,
        free_gpu=free_column["label"],
        free_qlora=row["cells"]["qlora"][free_column["key"]],
        tuning=_cheapest_tuning(found),
        served=_claim(served) if served else None,
        rent_first=_claim(rent_first) if rent_first else None,
        fastest={
            "gpu": fastest["label"],
            "rate": rate_text(rate),
            "price": fastest_price,
        },
        full_fits=[c["label"] for c in singles if row["cells"]["train"][c["key"]]],
        links={
            "qlora": page_link(f"{CAN_I_RUN_IT}#qlora-{VERDICT_MODEL}", HERE),
            "costs": page_link(f"{CAN_I_RUN_IT}#what-it-costs", HERE),
            "train": page_link(f"{CAN_I_RUN_IT}#train-{VERDICT_MODEL}", HERE),
            "fit": page_link(CAN_I_RUN_IT, HERE),
            # A full fine-tune that fits no single GPU: the section on sharding it.
            "multi_gpu": page_link("guides/multi-gpu.md#sharded-training-a-model-too-big-for-one-gpu", HERE),
        },
    )


def _fits(index: dict[tuple[str, str], dict[str, int]], gpu: str) -> list[dict[str, str]]:
    return [
        {"model": m["name"], "text": _batch_text(index.get((gpu, m["name"]), {}).get(RECOMMENDED_DTYPE))}
        for m in matrix_models()
    ]


def _offers(name: str, head: list[Any], rows: list[dict[str, Any]]) -> str:
    batch = f"{RECOMMENDED_DTYPE} batch"
    return render(
        "buying_offers.html", name=name, head=head + [(m["short"], batch) for m in matrix_models()], rows=rows
    )


def free_tiers(frame: pd.DataFrame | None = None) -> str:
    """Free notebook tiers, what GPU they give and what trains on it (predicted, fp16)."""
    from benchlib.catalog.platforms import load_platforms

    frame = _site_predictions() if frame is None else frame
    index = _batches(frame)
    platforms = load_platforms().platforms
    rows = []
    for platform_id, tier_id, gpu in FREE_TIERS:
        platform = platforms[platform_id]
        tier = platform.tiers[tier_id]
        offer, price = tier.field("accelerators")[0], tier.field("price")[0]
        rows.append(
            {
                "cells": [platform.tier_title(tier), _sourced(offer.value, offer), _sourced(price.value, price)],
                "fits": _fits(index, gpu),
            }
        )
    return _offers("free-tiers", ["Where", "GPU offered", "Price"], rows)


def rent_table(frame: pd.DataFrame | None = None) -> str:
    """GPUs to rent by the hour, cheapest listed price first, with what trains on each (predicted, fp16)."""
    frame = _site_predictions() if frame is None else frame
    index = _batches(frame)
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
            "fits": _fits(index, g["gpu"]),
        }
        for price, g in cheapest
    ]
    return _offers("rent", ["GPU", "Usable memory", "Cheapest listed price (dated)"], rows)


# "Buy a card" lists cards launched in the last four years: NVIDIA's cards come about every two
# years (consumer: 2018, 2020, 2022, 2025), so an older card has two newer generations, and its
# launch price says little about what it costs now. The older ones are on the History page.
CURRENT_CARD_YEARS = 4
BUY_HEAD = ["GPU", "Usable memory", "Launch price (dated)"]


def _cards(frame: pd.DataFrame | None, current: bool) -> tuple[list[dict[str, Any]], int]:
    """GPUs with a launch price in the specs, cheapest first, with what trains on each (predicted,
    fp16): those launched in the last `CURRENT_CARD_YEARS` years, or the older ones; and the first
    year that counts as recent."""
    frame = _site_predictions() if frame is None else frame
    index = _batches(frame)
    gpus = gpu_frame().loc[list(dict.fromkeys(frame["gpu"]))]
    cards = sorted((g for g in gpus.to_dict("records") if g["launch_price"]), key=lambda g: g["launch_price"].value)
    since = build_date().year - CURRENT_CARD_YEARS

    def recent(g: dict[str, Any]) -> bool:
        year = find_gpu(g["gpu"]).year
        # A card without a launch year is shown with the recent ones rather than hidden as history.
        return year is None or int(year.value) >= since

    rows = [
        {
            "cells": [
                g["gpu"],
                format_bytes(g["memory"].usable_bytes),
                _sourced(f"${g['launch_price'].value:,.0f}", g["launch_price"], note=False),
            ],
            "fits": _fits(index, g["gpu"]),
        }
        for g in cards
        if recent(g) == current
    ]
    return rows, since


def buy_table(frame: pd.DataFrame | None = None) -> str:
    """The cards of the last `CURRENT_CARD_YEARS` years to buy, cheapest first, with what trains on
    each (predicted, fp16), and where the older ones went."""
    rows, since = _cards(frame, current=True)
    return render(
        "buying_buy.html", current=_offers("buy", BUY_HEAD, rows), since=since, history=page_link("history.md", HERE)
    )


def older_cards(frame: pd.DataFrame | None = None) -> str:
    """For the History page: the cards launched before the recent ones, with their launch prices
    and what trains on each (predicted, fp16)."""
    rows, since = _cards(frame, current=False)
    return render("buying_older.html", older=_offers("buy-older", BUY_HEAD, rows), since=since)


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
    searches = _checked_rows(frame, LARGEST_BATCH)
    reported = searches[searches["source"] == REPORTED]
    if reported.empty:
        return render("buying_empty.html", what="reported_batches")
    by_source = []
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
        by_source.append(
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
    return render("buying_reported_batches.html", tables=by_source, does_not_fit=DOES_NOT_FIT)


def advice_history() -> str:
    """Dated advice from others (buying_advice.yaml), each claim with its source, date and status."""
    guides = yaml.safe_load(HISTORY_FILE.read_text(encoding="utf-8"))["guides"]
    shown = [
        {
            "id": g["id"],
            "title": g["title"],
            "claims": [{"value": c["value"], "source": cited(SimpleNamespace(**c))} for c in g["claims"]],
        }
        for g in guides
    ]
    return render("buying_advice.html", guides=shown)
