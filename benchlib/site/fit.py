"""Blocks for the GPU buying guide (docs/gpus/buying-guide.md): what fits, speed, price, advice.

Every number comes from a data file or a results file when the site is built:

* what fits where: `benchlib fit` predictions for each model on each GPU in the specs, cached
  under ``.cache/benchlib/fit/`` (keyed by model, dtype, torch and benchlib versions);
* speed: Lambda's published ResNet-50 throughput (``results/reported/lambda-dlbench-*.json``)
  and benchlib's own measurements from the results folder;
* price: cloud prices with their dates from ``benchlib/data/gpus.yaml``;
* history: Lambda's 2020 tables (``results/reported/lambda-2020-*.json``) and dated advice
  (``benchlib/fit/history.yaml``).

Pages call these from markdown-exec blocks; each returns HTML. Every string from a data file
is escaped.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from html import escape
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import pandas as pd
import yaml

import benchlib
from benchlib.fit.models import MODELS, get_model
from benchlib.fit.predict import (
    ALLOCATOR_OVERHEAD,
    CUDA_CONTEXT_BYTES,
    CUDA_CONTEXT_SOURCE,
    USABLE_FRACTION,
    DeviceMemory,
    Predictor,
    gpu_memory,
)
from benchlib.probe.units import format_bytes
from benchlib.site.figures import STATIC_WIDTH, chart_figure
from benchlib.freshness import build_date
from benchlib.site.platforms import Flag, badge, stale_badge
from benchlib.site.sources import load_site_results, project_root, results_dir

if TYPE_CHECKING:
    import altair as alt

    from benchlib.specs import AcceleratorSpec

REPORTED_DIR = Path(__file__).resolve().parents[2] / "results" / "reported"
HISTORY_FILE = Path(__file__).resolve().parents[1] / "fit" / "history.yaml"
MATRIX_MODELS: tuple[str, ...] = tuple(MODELS)
MATRIX_DTYPES: tuple[str, ...] = ("fp32", "fp16")
LAMBDA_2020 = "lambda-2020-"
LAMBDA_BENCH = "lambda-dlbench-"
BAR_PX = 14
_META = "font-size:.8em;color:var(--md-default-fg-color--light);"


def _e(value: object) -> str:
    return escape(str(value), quote=True)


def _link(url: object, text: str | None = None) -> str:
    href = str(url)
    if urlsplit(href).scheme not in ("http", "https"):
        return _e(text or href)
    return f'<a href="{_e(href)}">{_e(text or urlsplit(href).netloc.removeprefix("www."))}</a>'


def _status_badge(status: str) -> str:
    """A visible badge for anything short of a verified figure."""
    if status in ("verified", "given"):
        return ""
    kind = "conflict" if status == "conflict" else "unverified"
    text = {"conflict": "conflicting sources", "estimated": "estimated by rule"}.get(status, status)
    return badge(Flag(kind, text))


def _source(url: object, as_of: str | date, status: str = "verified", *, can_age: bool = True) -> str:
    """'source, date' with the status badge and, for an old fact that can change, the stale badge.

    Prices, reported figures and advice age; a chip's specification (``can_age=False``) does not.
    """
    aged = stale_badge(as_of) if can_age else ""
    return f'<span style="{_META}">{_link(url)}, {_e(as_of)}</span>{_status_badge(status)}{aged}'


def _table(head: list[str], rows: list[str], name: str = "") -> str:
    # No class on the table: Material styles only class-less tables; data-table names it for tests.
    thead = "<thead><tr>" + "".join(f"<th>{h}</th>" for h in head) + "</tr></thead>"
    named = f' data-table="{_e(name)}"' if name else ""
    return (
        '<div class="md-typeset__scrollwrap"><div class="md-typeset__table">'
        f'<table{named}>{thead}<tbody>{"".join(rows)}</tbody></table></div></div>'
    )


def _notice(title: str, text: str, kind: str = "info") -> str:
    return f'<div class="admonition {kind}"><p class="admonition-title">{_e(title)}</p><p>{text}</p></div>'


# ----------------------------------------------------------------------------- predictions


def cache_dir() -> Path:
    return project_root() / ".cache" / "benchlib" / "fit"


def gpu_names() -> list[str]:
    """Every GPU in the specs with a memory size, smallest memory first."""
    from benchlib.specs import load_accelerators

    gpus = [a for a in load_accelerators() if a.kind == "gpu" and a.memory_gb is not None]
    return [a.name for a in sorted(gpus, key=lambda a: (gpu_memory(a.name).usable_bytes, a.name))]


@functools.cache
def predictions(models: tuple[str, ...] = MATRIX_MODELS, dtypes: tuple[str, ...] = MATRIX_DTYPES,
                gpus: tuple[str, ...] | None = None, size: str = "full", cache: Path | None = None,
                optimizer: str = "adam") -> pd.DataFrame:
    """Predicted largest batch of each model and dtype on each GPU: one row each.

    Larger memories go first, so their traces bound the smaller ones (see ``solve_max_batch``).
    """
    devices = [gpu_memory(name) for name in (gpus or gpu_names())]
    rows = []
    for model in models:
        for dtype in dtypes:
            predictor = Predictor(model, dtype=dtype, optimizer=optimizer, size=size, foreach=True, cache_dir=cache)
            for device in sorted(devices, key=lambda d: -d.tensor_budget):
                rows.append({
                    "model": model, "dtype": dtype, "gpu": device.name, "usable_bytes": device.usable_bytes,
                    "max_batch": predictor.predict(device, verify=False).max_batch, "torch": predictor.torch_version,
                })
    return pd.DataFrame(rows)


def _site_predictions() -> pd.DataFrame:
    return predictions(cache=cache_dir())


def _batches(frame: pd.DataFrame, gpu: str, model: str) -> dict[str, int]:
    picked = frame[(frame["gpu"] == gpu) & (frame["model"] == model)]
    return dict(zip(picked["dtype"], picked["max_batch"]))


def _batch_cell(batches: dict[str, int], model: str, gpu: str) -> str:
    parts = []
    for dtype in MATRIX_DTYPES:
        value = batches.get(dtype)
        text = "✗" if value == 0 else ("" if value is None else f"{value:,}")
        title = f"{dtype}: does not fit" if value == 0 else f"{dtype}: largest batch {value}"
        parts.append(f'<span data-dtype="{dtype}" title="{_e(title)}">{_e(text)}</span>')
    return f'<td data-model="{_e(model)}" data-gpu="{_e(gpu)}">{" / ".join(parts)}</td>'


def _memory_cell(device: DeviceMemory) -> str:
    if device.status == "estimated":
        detail = _e(device.basis.removeprefix("rule: "))
    else:
        detail = f"{_link(device.source)}, {_e(device.as_of)}" if device.source else _e(device.basis)
    return f'<td>{_e(format_bytes(device.usable_bytes))}{_status_badge(device.status)}<br><span style="{_META}">{detail}</span></td>'


def _model_head(model: str) -> str:
    spec = get_model(model)
    shape = "×".join(map(str, spec.input_shape()))
    return f'{_e(spec.short)}<br><span style="{_META}">{_e(shape)}</span>'


def fit_assumptions() -> str:
    """What every prediction on the page assumes, with the figures and their sources."""
    import torch

    return (
        '<ul class="fg-fit-assumptions">'
        "<li>Predicted with <code>benchlib fit</code>: one full training step (forward, backward, Adam update) traced "
        "on fake tensors with PyTorch's <code>MemTracker</code>; weights, gradients, Adam state, activations and "
        f"temporaries are counted, nothing is allocated (PyTorch {_e(torch.__version__)}, benchlib "
        f"{_e(benchlib.__version__)}, computed {_e(build_date().isoformat())}).</li>"
        "<li>fp16 means mixed precision: autocast with fp32 weights and optimizer state, as usually trained.</li>"
        f"<li>CUDA context: {_e(format_bytes(CUDA_CONTEXT_BYTES))} set aside ({_link(CUDA_CONTEXT_SOURCE, 'PyTorch issue 109888')}, "
        "an NVIDIA engineer's figure with lazy module loading).</li>"
        f"<li>Allocator overhead: {ALLOCATOR_OVERHEAD:.0%} on top of the tensors, {badge(Flag('unverified', 'our assumption'))} "
        "not yet checked against a GPU run.</li>"
        "<li>Usable memory: the specs' figure where they give one; otherwise "
        f"{USABLE_FRACTION:.4g} of the memory on the label (the share a T4 shows), marked as estimated.</li>"
        "<li>Checked against real training steps on a CPU only (<code>benchmarks/fit_accuracy.py</code>); "
        "no GPU has checked these numbers yet.</li></ul>"
    )


def what_fits(frame: pd.DataFrame | None = None) -> str:
    """The matrix: GPUs (grouped by usable memory) × models, predicted largest batch in fp32 / fp16."""
    frame = _site_predictions() if frame is None else frame
    models = [m for m in MATRIX_MODELS if m in set(frame["model"])]
    groups: dict[tuple[int, str, str], list[DeviceMemory]] = {}
    for gpu in dict.fromkeys(frame.sort_values(["usable_bytes", "gpu"])["gpu"]):
        device = gpu_memory(gpu)
        groups.setdefault((device.usable_bytes, device.basis, device.status), []).append(device)
    rows = []
    for devices in groups.values():
        names = ", ".join(d.name for d in devices)
        cells = "".join(_batch_cell(_batches(frame, devices[0].name, m), m, devices[0].name) for m in models)
        rows.append(f'<tr data-gpus="{_e(names)}"><th scope="row">{_e(names)}</th>{_memory_cell(devices[0])}{cells}</tr>')
    head = ["GPU", "Usable memory"] + [_model_head(m) for m in models]
    return (
        f'<p style="{_META}">Largest batch that trains, predicted: fp32 / fp16 in each cell, ✗ where even one '
        "sample does not fit. GPUs with the same usable memory share a row.</p>"
        + _table(head, rows, "fit-matrix") + fit_assumptions()
    )


def models_table() -> str:
    """The models of the matrix: what each one is, as `benchlib fit --model` names it."""
    rows = [
        f"<tr><td><code>{_e(s.name)}</code></td><td>{_e(s.title)}</td><td>{_e(s.description)}</td></tr>"
        for s in MODELS.values()
    ]
    return _table(["--model", "Model", "What is trained"], rows)


# ----------------------------------------------------------------------------- reported and measured results


def _load(prefix: str) -> pd.DataFrame:
    return load_site_results(sorted(REPORTED_DIR.glob(f"{prefix}*.json")))


def _specs(name: str | None) -> "AcceleratorSpec | None":
    from benchlib.specs import find_accelerator

    return find_accelerator(name) if name else None


def _figure(fig_id: str, make: Callable[[Any], "alt.TopLevelMixin"], title: str, caption: str, table: str) -> str:
    """A chart as the site's charts.js expects it (see `chart_figure`), then its data."""
    figure = chart_figure(fig_id, make("container").to_dict(validate=True),
                          make(STATIC_WIDTH).to_dict(validate=True), caption)
    return figure + (
        f'<details class="note bench-chart__data"><summary>Data behind the {_e(title.lower())} chart</summary>{table}</details>'
    )


def _bars(data: pd.DataFrame, *, y: str, x: str, color: str, order: list[str], colors: list[str], x_title: str,
          title: str, description: str) -> Callable[[Any], "alt.TopLevelMixin"]:
    def make(width: Any) -> "alt.TopLevelMixin":
        import altair as alt

        # Bars side by side within a row only where a row has one per colour.
        grouped = data.groupby(y)[color].nunique().max() > 1
        offset = {"yOffset": alt.YOffset(f"{color}:N", sort=colors)} if grouped else {}
        base = alt.Chart(data).encode(
            y=alt.Y(f"{y}:N", sort=order, title=None, axis=alt.Axis(labelLimit=320)),
            **offset,
            x=alt.X(f"{x}:Q", title=x_title, scale=alt.Scale(domain=[0, float(data[x].max()) * 1.2], nice=True)),
            tooltip=[alt.Tooltip(f"{c}:N") if data[c].dtype == object else alt.Tooltip(f"{c}:Q", format=",.4~r")
                     for c in data.columns],
        )
        bars = base.mark_bar().encode(color=alt.Color(f"{color}:N", sort=colors, legend=alt.Legend(orient="top")))
        labels = base.mark_text(align="left", baseline="middle", dx=3, fontSize=10).encode(text=alt.Text(f"{x}:Q", format=",.4~r"))
        return (
            alt.layer(bars, labels)
            .properties(width=width, height=len(order) * ((len(colors) if grouped else 1) * BAR_PX + 6),
                        title=alt.Title(title, anchor="start"),
                        description=description, background="transparent")
            .configure_view(stroke=None)
        )

    return make


def _reported_by(frame: pd.DataFrame) -> str:
    """'Reported by source, as of date' for a reported file's rows, with the stale badge when old."""
    first = frame.iloc[0]
    return (
        f"<strong>Reported</strong> by {_link(first['source_url'])}, as of {_e(first['source_as_of'])}"
        f"{stale_badge(first['source_as_of'])}"
    )


def _provenance(frame: pd.DataFrame) -> str:
    return f"<p>{_reported_by(frame)}: {_e(frame.iloc[0]['source_context'])}</p>"


def resnet50_throughput() -> str:
    """Lambda's ResNet-50 training throughput per GPU (reported), chart and table."""
    frame = _load(LAMBDA_BENCH)
    frame = frame[(frame["workload"] == "training_throughput") & (frame["status"] == "ok")]
    if frame.empty:
        return _notice("No reported throughput", f"No <code>{LAMBDA_BENCH}*.json</code> file in <code>results/reported</code>.")
    data = pd.DataFrame({
        "GPU": frame["device_name"],
        "precision": [json.loads(p)["precision"] for p in frame["params"]],
        "images/s": frame["value"].astype(float),
        "batch": [json.loads(p)["batch"] for p in frame["params"]],
    })
    amp = data[data["precision"] == "AMP"].sort_values("images/s", ascending=False)
    order = list(amp["GPU"]) + [g for g in dict.fromkeys(data["GPU"]) if g not in set(amp["GPU"])]
    reference = data[data["precision"] == "FP32"].set_index("GPU")["images/s"]
    rows = []
    for gpu in order:
        cells = [f"<td>{_e(gpu)}</td>"]
        for precision in ("FP32", "AMP"):
            hit = data[(data["GPU"] == gpu) & (data["precision"] == precision)]
            cells.append(f"<td>{hit['images/s'].iloc[0]:,.0f} (batch {int(hit['batch'].iloc[0])})</td>" if len(hit) else "<td></td>")
        fastest = reference.max()
        cells.append(f"<td>{reference.get(gpu, float('nan')) / fastest:.2f}</td>" if gpu in reference else "<td></td>")
        rows.append(f"<tr>{''.join(cells)}</tr>")
    table = _table(["GPU", "FP32 images/s", "AMP images/s", "FP32, relative to the fastest"], rows)
    make = _bars(data, y="GPU", x="images/s", color="precision", order=order, colors=["FP32", "AMP"],
                 x_title="images/s, higher is better", title="ResNet-50 training throughput (reported by Lambda)",
                 description="ResNet-50 training images per second on one GPU, FP32 and mixed precision, reported by Lambda.")
    return _figure("lambda-resnet50", make, "ResNet-50 training throughput", _provenance(frame), table)


def measured_results() -> str:
    """benchlib's own measurements from the results folder that compare devices, best value per setting."""
    folder = results_dir()
    paths = [p for p in sorted(folder.rglob("*.json")) if "reported" not in p.parts] if folder.is_dir() else []
    frame = load_site_results(paths) if paths else pd.DataFrame()
    wanted = {"matmul": "fp16 matrix multiply", "inference": "inference", "cnn_fashion_mnist": "small CNN training"}
    if not frame.empty:
        frame = frame[(frame["provenance"] == "measured") & frame["workload"].isin(wanted) & (frame["status"] == "ok")]
        frame = frame[(frame["workload"] != "matmul") | (frame["dtype"] == "fp16")]
    if frame.empty:
        return _notice(
            "No measured GPU results yet",
            "No results file in the results folder has matrix-multiply, inference or training measurements. "
            'Run <code>benchlib run --suite standard</code> on a GPU and add the file; see <a href="../../benchmarks/run-it-yourself/">Run it yourself</a>.',
        )
    best = frame.groupby(["machine_label", "device_name", "workload", "unit", "dtype"], dropna=False)["value"].max().reset_index()
    rows = [
        f"<tr><td>{_e(r['machine_label'])}</td><td>{_e(r['device_name'] or '')}</td><td>{_e(wanted[r['workload']])}</td>"
        f"<td>{_e(r['dtype'] if pd.notna(r['dtype']) else '')}</td><td>{r['value']:,.4g} {_e(r['unit'])}</td></tr>"
        for _, r in best.sort_values(["workload", "value"], ascending=[True, False]).iterrows()
    ]
    return (
        f'<p style="{_META}">Measured by benchlib; the best value per machine and setting. Methods and every run: '
        '<a href="../../benchmarks/results/">Benchmark results</a>.</p>'
        + _table(["Machine", "Device", "Workload", "dtype", "Best"], rows)
    )


def measured_vs_predicted() -> str:
    """`benchlib max-batch` results from the results folder next to `benchlib fit`'s prediction for the same case."""
    from benchlib.fit.predict import memory_limit

    folder = results_dir()
    frame = load_site_results(sorted(folder.rglob("*.json"))) if folder.is_dir() else pd.DataFrame()
    if not frame.empty:
        frame = frame[(frame["workload"] == "max_batch") & (frame["metric"] == "max_batch") & (frame["provenance"] == "measured")]
    if frame.empty:
        return _notice(
            "No measured largest batches yet",
            "No results file in the results folder holds a <code>benchlib max-batch</code> run. Run "
            "<code>benchlib max-batch --model resnet50 --dtype fp16</code> on a GPU and add the file: it shows up here "
            "next to the prediction for the same GPU.",
        )
    rows = []
    for _, r in frame.iterrows():
        params = json.loads(r["params"])
        spec = get_model(params["model"])
        shape = tuple(params["input_shape"])
        measured = "" if pd.isna(r["value"]) else f"{int(r['value']):,}"
        predicted, device = "", r["device_name"] or r["device"]
        if r["device"] == "cuda" and _specs(r["device_name"]) is not None and not params.get("memory_limit_bytes"):
            target, foreach = gpu_memory(r["device_name"]), True
        elif params.get("memory_limit_bytes"):
            target, foreach = memory_limit(int(params["memory_limit_bytes"])), None if r["device"] == "cpu" else True
            device = f"{device}, capped at {format_bytes(int(params['memory_limit_bytes']))}"
        else:
            target = None
        if target is not None:
            predictor = Predictor(spec.name, dtype=r["dtype"], optimizer=params["optimizer"], size=params["size"],
                                  foreach=foreach, input_shape=shape, cache_dir=cache_dir())
            predicted = f"{predictor.predict(target, verify=False).max_batch:,}"
        rows.append(
            f"<tr><td>{_e(r['machine_label'])}</td><td>{_e(device)}</td><td>{_e(spec.title)} ({_e('×'.join(map(str, shape)))})</td>"
            f"<td>{_e(r['dtype'])}</td><td>{_e(measured)}</td><td>{_e(predicted)}</td><td>{_e(str(r['created'])[:10])}</td></tr>"
        )
    return _table(["Machine", "Device", "Model", "dtype", "Measured largest batch", "Predicted", "Date"], rows)


def lambda_batches() -> str:
    """Lambda's ResNet-50 batch sizes, which trained on real GPUs, against the predicted largest batch.

    A batch that trained is a lower bound on the largest one, so a prediction below it would be
    wrong. The prediction uses SGD with momentum, as NVIDIA's ResNet-50 example does.
    """
    frame = _load(LAMBDA_BENCH)
    frame = frame[(frame["workload"] == "training_throughput") & (frame["status"] == "ok")]
    known = [g for g in dict.fromkeys(frame["device_name"]) if _specs(g) is not None]
    if not known:
        return _notice("Nothing to compare", "No reported ResNet-50 run names a GPU in the specs.")
    predicted = predictions(models=("resnet50",), gpus=tuple(known), cache=cache_dir(), optimizer="sgd")
    rows, below = [], 0
    for gpu in sorted(known, key=lambda g: gpu_memory(g).usable_bytes):
        cells = []
        for dtype in MATRIX_DTYPES:
            ran = frame[(frame["device_name"] == gpu) & (frame["dtype"] == dtype)]
            lambda_batch = json.loads(ran["params"].iloc[0])["batch"] if len(ran) else None
            ours = _batches(predicted, gpu, "resnet50").get(dtype)
            below += lambda_batch is not None and ours is not None and ours < lambda_batch
            cells.append(f"<td>{_e(lambda_batch if lambda_batch is not None else '')}</td><td>{_e(ours if ours is not None else '')}</td>")
        rows.append(f"<tr><td>{_e(gpu)}</td>{''.join(cells)}</tr>")
    verdict = (
        "Every predicted largest batch is at least the batch Lambda trained." if not below
        else f"{below} predicted largest batch(es) fall below a batch Lambda trained: the prediction is too low there."
    )
    return (
        f"<p>{_e(verdict)} Lambda's batches were chosen by hand per memory size, so they show what fits, not the limit; "
        "NVIDIA's ResNet-50 code also differs from torchvision's in details (data layout, loss), so this is a "
        "plausibility check, not a validation.</p>"
        + _table(["GPU", "FP32: Lambda's batch", "FP32: predicted largest (SGD)", "AMP: Lambda's batch", "fp16: predicted largest (SGD)"], rows)
        + _provenance(frame)
    )


# ----------------------------------------------------------------------------- price and hardware


@dataclass(frozen=True)
class Price:
    gpu: str
    provider: str
    usd_per_hour: float
    usd_per_hour_max: float | None
    as_of: str
    source: str
    status: str
    note: str | None

    @property
    def text(self) -> str:
        top = f"–{self.usd_per_hour_max:.2f}" if self.usd_per_hour_max else ""
        return f"${self.usd_per_hour:.2f}{top}/h"


def cloud_prices(gpu: str) -> list[Price]:
    """Hourly prices per accelerator from the specs, cheapest first."""
    spec = _specs(gpu)
    if spec is None:
        return []
    return sorted(
        (Price(spec.name, p.provider, p.usd_per_hour / p.units, p.usd_per_hour_max / p.units if p.usd_per_hour_max else None,
               p.as_of, p.source, p.status, p.note) for p in spec.cloud_prices),
        key=lambda p: p.usd_per_hour,
    )


def price_performance() -> str:
    """ResNet-50 images per dollar: Lambda's mixed-precision throughput over each dated cloud price."""
    frame = _load(LAMBDA_BENCH)
    frame = frame[(frame["workload"] == "training_throughput") & (frame["dtype"] == "fp16") & (frame["status"] == "ok")]
    rows, data = [], []
    for _, r in frame.iterrows():
        for price in cloud_prices(r["device_name"]):
            per_dollar = r["value"] * 3600 / price.usd_per_hour
            label = f"{price.gpu} · {price.provider}"
            data.append({"offer": label, "images per dollar": round(per_dollar), "price": price.text,
                         "price as of": price.as_of, "kind": "price range, low end" if price.usd_per_hour_max else "list price"})
            rows.append(
                f"<tr><td>{_e(price.gpu)}</td><td>{_e(price.provider)}</td><td>{_e(price.text)}<br>{_source(price.source, price.as_of, price.status)}"
                + (f'<br><span style="{_META}">{_e(price.note)}</span>' if price.note else "")
                + f"</td><td>{r['value']:,.0f}</td><td>{per_dollar:,.0f}</td></tr>"
            )
    if not data:
        return _notice("No price-performance data", "No GPU has both a reported throughput and a cloud price.")
    table = _table(["GPU", "Provider", "Price (dated)", "ResNet-50 AMP images/s (Lambda)", "Images per dollar"], rows)
    chart_data = pd.DataFrame(data).sort_values("images per dollar", ascending=False)
    make = _bars(chart_data, y="offer", x="images per dollar", color="kind", order=list(chart_data["offer"]),
                 colors=["list price", "price range, low end"], x_title="ResNet-50 training images per dollar, higher is better",
                 title="Price-performance: ResNet-50 images per dollar",
                 description="Images per dollar: Lambda's reported ResNet-50 mixed-precision throughput times 3600, divided by each dated hourly price.")
    caption = (
        f"<p>Throughput {_reported_by(frame)}, on "
        "Lambda's machines; prices from each provider on the date shown (benchlib's specs file). The provider's GPU may be "
        "another form factor or clock than Lambda's, so read these as estimates, not measurements.</p>"
    )
    return _figure("price-performance", make, "Price-performance", caption, table)


def bandwidth_vs_compute() -> str:
    """Memory bandwidth against fp16 tensor compute per GPU (specs), chart and table."""
    from benchlib.specs import load_accelerators

    rows, data = [], []
    for spec in load_accelerators():
        if spec.kind != "gpu" or spec.bandwidth_gbps is None:
            continue
        bandwidth, tflops = spec.peak_bandwidth_gbps(), spec.peak_tflops("fp16")
        fact = spec.fp16_tensor_tflops or spec.fp16_tflops
        ratio = f"{tflops * 1e12 / (bandwidth * 1e9):,.0f}" if bandwidth and tflops else ""
        rows.append(
            f"<tr><td>{_e(spec.name)}</td><td>{spec.bandwidth_gbps.value:,.0f}<br>{_source(spec.bandwidth_gbps.source, spec.bandwidth_gbps.as_of, spec.bandwidth_gbps.status, can_age=False)}</td>"
            + (f"<td>{fact.value:,.4g}<br>{_source(fact.source, fact.as_of, fact.status, can_age=False)}</td>" if fact else "<td></td>")
            + f"<td>{ratio}</td></tr>"
        )
        if bandwidth and tflops:
            data.append({"GPU": spec.name, "fp16 TFLOPS": tflops, "GB/s": bandwidth, "FLOPs per byte": round(tflops * 1e3 / bandwidth)})
    table = _table(["GPU", "Memory bandwidth GB/s", "fp16 peak TFLOPS (tensor cores where present)", "FLOPs per byte moved"], rows)
    frame = pd.DataFrame(data)

    def make(width: Any) -> "alt.TopLevelMixin":
        import altair as alt

        base = alt.Chart(frame).encode(
            x=alt.X("fp16 TFLOPS:Q", scale=alt.Scale(type="log"), title="fp16 peak TFLOPS (log scale)"),
            y=alt.Y("GB/s:Q", scale=alt.Scale(type="log"), title="memory bandwidth GB/s (log scale)"),
            tooltip=[alt.Tooltip("GPU:N"), alt.Tooltip("fp16 TFLOPS:Q"), alt.Tooltip("GB/s:Q"), alt.Tooltip("FLOPs per byte:Q")],
        )
        return (
            alt.layer(base.mark_circle(size=60), base.mark_text(align="left", dx=6, fontSize=9).encode(text="GPU:N"))
            .properties(width=width, height=360, title=alt.Title("Memory bandwidth against compute", anchor="start"),
                        description="Each GPU's peak memory bandwidth against its peak fp16 compute, from benchlib's specs file.",
                        background="transparent")
            .configure_view(stroke=None)
        )

    caption = (
        "<p>Peak figures from benchlib's specs file (each with its source in the table). Unverified figures are listed "
        "in the table but left out of the chart. FLOPs per byte is how much arithmetic a kernel must do per byte it "
        "reads before compute, not memory, limits it: the higher, the more a model's speed depends on bandwidth.</p>"
    )
    return _figure("bandwidth-compute", make, "Memory bandwidth against compute", caption, table)


# ----------------------------------------------------------------------------- recommendations


FREE_TIERS: tuple[tuple[str, str, str], ...] = (
    # (platform, tier, the GPU one notebook gets there)
    ("colab", "free", "T4"),
    ("kaggle", "free", "T4"),
    ("studio-lab", "free", "T4"),
)


def _fits_cells(frame: pd.DataFrame, gpu: str, dtype: str = "fp16") -> str:
    cells = []
    for model in MATRIX_MODELS:
        value = _batches(frame, gpu, model).get(dtype)
        cells.append(f'<td data-model="{_e(model)}">{"✗" if value == 0 else "" if value is None else f"{value:,}"}</td>')
    return "".join(cells)


def _fits_head() -> list[str]:
    return [f"{_e(MODELS[m].short)}<br><span style=\"{_META}\">fp16 batch</span>" for m in MATRIX_MODELS]


def free_tiers(frame: pd.DataFrame | None = None) -> str:
    """Free notebook tiers, what GPU they give and what trains on it (predicted, fp16)."""
    from benchlib.platforms import load_platforms
    from benchlib.site.platforms import render_fact

    frame = _site_predictions() if frame is None else frame
    data = load_platforms()
    rows = []
    for platform_id, tier_id, gpu in FREE_TIERS:
        platform = data.platforms[platform_id]
        tier = platform.tiers[tier_id]
        offer = "<br>".join(render_fact(f) for f in tier.field("accelerators")[:1])
        price = "<br>".join(render_fact(f) for f in tier.field("price")[:1])
        rows.append(f"<tr><td>{_e(platform.name)} {_e(tier.name)}</td><td>{offer}</td><td>{price}</td>{_fits_cells(frame, gpu)}</tr>")
    return _table(["Where", "GPU offered", "Price"] + _fits_head(), rows, "free-tiers")


def rent_table(frame: pd.DataFrame | None = None) -> str:
    """GPUs to rent by the hour, cheapest listed price first, with what trains on each (predicted, fp16)."""
    frame = _site_predictions() if frame is None else frame
    offers = [prices[0] for gpu in dict.fromkeys(frame["gpu"]) if (prices := cloud_prices(gpu))]
    rows = [
        f"<tr><td>{_e(p.gpu)}</td><td>{_e(format_bytes(gpu_memory(p.gpu).usable_bytes))}</td>"
        f"<td>{_e(p.text)} ({_e(p.provider)})<br>{_source(p.source, p.as_of, p.status)}</td>{_fits_cells(frame, p.gpu)}</tr>"
        for p in sorted(offers, key=lambda p: p.usd_per_hour)
    ]
    return _table(["GPU", "Usable memory", "Cheapest listed price (dated)"] + _fits_head(), rows, "rent")


def buy_table(frame: pd.DataFrame | None = None) -> str:
    """GPUs with a launch price in the specs, cheapest first, with what trains on each (predicted, fp16)."""
    from benchlib.specs import load_accelerators

    frame = _site_predictions() if frame is None else frame
    known = set(frame["gpu"])
    cards = [a for a in load_accelerators() if a.launch_price_usd is not None and a.name in known]
    rows = [
        f"<tr><td>{_e(a.name)}</td><td>{_e(format_bytes(gpu_memory(a.name).usable_bytes))}</td>"
        f"<td>${a.launch_price_usd.value:,.0f}<br>{_source(a.launch_price_usd.source, a.launch_price_usd.as_of, a.launch_price_usd.status)}</td>"
        f"{_fits_cells(frame, a.name)}</tr>"
        for a in sorted(cards, key=lambda a: a.launch_price_usd.value)
    ]
    return _table(["GPU", "Usable memory", "Launch price (dated)"] + _fits_head(), rows, "buy")


# ----------------------------------------------------------------------------- history


def lambda_2020() -> str:
    """Lambda's February 2020 tables: largest batch per model and GPU, with that month's prices."""
    frame = _load(LAMBDA_2020)
    frame = frame[frame["workload"] == "max_batch"]
    if frame.empty:
        return _notice("No Lambda 2020 data", f"No <code>{LAMBDA_2020}*.json</code> file in <code>results/reported</code>.")
    frame = frame.assign(model=[json.loads(p)["model"] for p in frame["params"]],
                         memory=[json.loads(p)["gpu_memory_gb"] for p in frame["params"]])
    models = list(dict.fromkeys(frame["model"]))
    gpus = list(dict.fromkeys(frame.sort_values("memory", kind="stable")["device_name"]))
    rows, fits_all = [], []
    for gpu in gpus:
        mine = frame[frame["device_name"] == gpu]
        spec = _specs(gpu)
        prices = [p for p in (spec.purchase_prices_usd if spec else []) if p.as_of.startswith("2020")]
        price = f"${prices[0].value:,.0f}<br>{_source(prices[0].source, prices[0].as_of, prices[0].status)}" if prices else ""
        cells = []
        for model in models:
            hit = mine[mine["model"] == model]
            ok = len(hit) and hit["status"].iloc[0] == "ok"
            cells.append(f"<td>{int(hit['value'].iloc[0])}</td>" if ok else '<td title="does not fit">✗</td>')
        if (mine["status"] == "ok").all():
            fits_all.append(gpu)
        rows.append(f"<tr><td>{_e(gpu)}</td><td>{_e(int(mine['memory'].iloc[0]))} GB</td><td>{price}</td>{''.join(cells)}</tr>")
    summary = (
        f"<p>In Lambda's tests only {_e(', '.join(fits_all))} could train every model; "
        "the others ran out of memory on at least one, even at a batch of one.</p>" if fits_all else ""
    )
    table = _table(["GPU", "Memory", "Price, February 2020"] + [_e(m) for m in models], rows, "lambda-2020")
    return summary + table + _provenance(frame)


def advice_history() -> str:
    """Dated advice from others (history.yaml), each claim with its source, date and status."""
    data = yaml.safe_load(HISTORY_FILE.read_text(encoding="utf-8"))
    out = []
    for guide in data["guides"]:
        items = "".join(
            f"<li>{_e(c['value'])} {_source(c['source'], c['as_of'], c['status'])}"
            + (f'<br><span style="{_META}">{_e(c["note"])}</span>' if c.get("note") else "") + "</li>"
            for c in guide["claims"]
        )
        out.append(f'<p><strong>{_e(guide["title"])}</strong></p><ul class="fg-advice" data-guide="{_e(guide["id"])}">{items}</ul>')
    return "".join(out)

