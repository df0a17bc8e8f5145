"""The scaling-efficiency chart of the "More than one GPU" page, from `benchlib launch` results.

A page calls ``print(scaling_chart())`` in a markdown-exec block. Each bar is one launch: N-device
throughput over N times the one-device throughput, both measured in that launch; 1 is linear
scaling. The records and the chart are declared by the workload that plots it (`SCALING_CHART`). Only valid
('ok') records are drawn: the plausibility checks mark an efficiency above 1.1 invalid, and the
data table under the chart lists those with the reason. Without a valid record the block says
how to measure one.
"""

from __future__ import annotations

import pandas as pd

from benchlib.results.load import PARAM_PREFIX
from benchlib.site.charts import chart_spec, plotted_rows
from benchlib.site.data import SiteData, plot_rows, site_data
from benchlib.site.figures import figure_context
from benchlib.site.render import page_link, render
from benchlib.workloads import declared_plot

# The chart `benchlib launch`'s records are drawn on, as their workload declares it.
SCALING_CHART = "dp-scaling"
PAGE = "guides/multi-gpu.md"  # the page that shows the block
# How a reader sees a results file of their own in the site's charts.
SEE_YOUR_RESULTS = "benchmarks/run-it-yourself.md#look-at-the-results-in-the-site"
CONTRIBUTE = "benchmarks/run-it-yourself.md#contribute-a-gpu"
HEAD = [
    "Machine",
    "Framework",
    "Backend",
    "Link",
    "Devices",
    "1 device (samples/s)",
    "N devices (samples/s)",
    "Speedup",
    "Efficiency",
    "Size",
    "Date",
    "Status",
]


def _number(value: object, fmt: str) -> str:
    # Params come from files anyone can contribute: a non-number there is shown as nothing.
    return (
        format(value, fmt)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and pd.notna(value)
        else ""
    )


def _text(value: object) -> str:
    return "" if value is None or (isinstance(value, float) and pd.isna(value)) else str(value)


def scaling_rows(data: SiteData) -> pd.DataFrame:
    """Every scaling record, oldest first, as the chart declares it (subject, setting)."""
    workload, plot = declared_plot(SCALING_CHART)
    return plot_rows(data.frame, plot, workload.name).sort_values("created")


def chart_rows(rows: pd.DataFrame) -> pd.DataFrame:
    """The bars: valid records, the newest per machine and setup, labelled with efficiency and speedup."""
    plotted = plotted_rows(rows, declared_plot(SCALING_CHART)[1].chart)
    plotted["label"] = [
        f"{value:.0%}" + (f" ({speedup:.2f}× speedup)" if _number(speedup, ".2f") else "")
        for value, speedup in zip(
            plotted["value"], plotted.get(f"{PARAM_PREFIX}speedup", pd.Series(None, index=plotted.index))
        )
    ]
    return plotted


def _table(rows: pd.DataFrame) -> list[list[str]]:
    def column(name: str) -> pd.Series:
        return rows.get(f"{PARAM_PREFIX}{name}", pd.Series(None, index=rows.index, dtype=object))

    return [
        [
            r["machine_label"],
            r["framework_name"],
            _text(backend),
            _text(link),
            _number(world, ".0f"),
            _number(base, ".4g"),
            _number(scaled, ".4g"),
            _number(speedup, ".2f"),
            _number(r["value"], ".1%"),
            _text(size),
            r["date"],
            r["status"] + (f": {r['message']}" if isinstance(r["message"], str) and r["message"] else ""),
        ]
        for r, backend, link, world, base, scaled, speedup, size in zip(
            rows.to_dict("records"),
            column("backend"),
            column("interconnect"),
            column("world_size"),
            column("baseline_samples_per_s"),
            column("samples_per_s"),
            column("speedup"),
            column("size"),
        )
    ]


def _provenance(rows: pd.DataFrame) -> list[dict[str, str]]:
    """Per machine: when it was measured, by which benchlib, with which framework versions."""
    out = []
    for label, group in rows.groupby("machine_label", sort=False):
        last = group.iloc[-1]
        versions = ", ".join(
            f"{name} {last[col]}"
            for name, col in (("torch", "torch_version"), ("TensorFlow", "tf_version"), ("Python", "python_version"))
            if isinstance(last[col], str) and last[col]
        )
        dates = sorted(set(group["date"]))
        out.append(
            {
                "machine": label,
                "when": dates[0] if len(dates) == 1 else f"{dates[0]} to {dates[-1]}",
                "benchlib": last["benchlib_version"],
                "versions": versions,
            }
        )
    return out


def scaling_html(data: SiteData) -> str:
    """The chart block: figure with interactive chart and static SVG, provenance, data table; or how to measure."""
    chart = declared_plot(SCALING_CHART)[1].chart
    rows = scaling_rows(data)
    table = _table(rows)
    plotted = chart_rows(rows) if not rows.empty else rows
    if plotted.empty:
        return render(
            "scaling_empty.html",
            chart=chart,
            invalid=len(rows),
            head=HEAD,
            rows=table,
            build_link=page_link(SEE_YOUR_RESULTS, PAGE),
            contribute_link=page_link(CONTRIBUTE, PAGE),
        )
    ok = rows[rows["status"] == "ok"]
    return render(
        "scaling.html",
        chart=chart,
        **figure_context(chart.id, chart_spec(plotted, chart)),
        machines=_provenance(ok),
        left_out=len(rows) - len(ok),
        head=HEAD,
        rows=table,
    )


def scaling_chart() -> str:
    """The block for the page: ``print(scaling_chart())`` in a markdown-exec block."""
    return scaling_html(site_data())
