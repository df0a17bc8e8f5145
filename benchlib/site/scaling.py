"""The scaling-efficiency chart of the "More than one GPU" page, from ``dp-scaling`` results.

A page calls ``print(scaling_chart())`` in a markdown-exec block. Each bar is one launch of
``benchlib launch``: N-device throughput over N times the one-device throughput, both measured
in that launch; 100 % is linear scaling. Only valid ('ok') records are drawn: the plausibility
checks mark an efficiency above 1.1 invalid, and the data table under the chart lists those with
the reason. Results with no ``dp-scaling`` record give a note on how to measure one instead.
"""

from __future__ import annotations

import json
from html import escape
from typing import TYPE_CHECKING, Any

import pandas as pd

from benchlib.distributed.launch import SCALING
from benchlib.site.figures import STATIC_WIDTH, chart_figure
from benchlib.site.sources import SiteData, site_data

if TYPE_CHECKING:
    import altair as alt

TITLE = "Scaling efficiency of data-parallel training"
PARAMS = ("engine", "backend", "world_size", "interconnect", "baseline_samples_per_s", "samples_per_s", "speedup", "size")
NUMERIC_PARAMS = ("world_size", "baseline_samples_per_s", "samples_per_s", "speedup")
ENGINE_NAMES = {"torch": "PyTorch DDP", "tf": "TensorFlow", "jax": "JAX"}


def _e(value: object) -> str:
    return escape(str(value), quote=True)


def scaling_rows(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per ``dp-scaling`` record, its params spread into columns, with a bar label."""
    rows = frame[frame["workload"] == SCALING].copy()
    if rows.empty:
        return rows.reindex(columns=[*rows.columns, *PARAMS, "date", "setup", "label"])
    params = [json.loads(p) for p in rows["params"]]
    for key in PARAMS:
        rows[key] = [p.get(key) if isinstance(p, dict) else None for p in params]
    # params come from files anyone can contribute: a non-number here must not break the build.
    for key in NUMERIC_PARAMS:
        rows[key] = pd.to_numeric(rows[key].map(lambda v: v if isinstance(v, (int, float)) else None), errors="coerce")
    rows["date"] = rows["created"].dt.strftime("%Y-%m-%d")
    rows["setup"] = [
        f"{r.machine_label} · {ENGINE_NAMES.get(r.engine, r.engine)} · {r.world_size} devices"
        for r in rows.itertuples()
    ]
    rows["label"] = [
        f"{v:.0%} ({s:.2f}× speedup)" if pd.notna(v) else "" for v, s in zip(rows["value"], rows["speedup"])
    ]
    return rows.sort_values("created")


def make_chart(rows: pd.DataFrame, *, width: int | str = "container") -> alt.LayerChart:
    """Horizontal bars of efficiency per setup (valid records only) and a rule at linear scaling."""
    import altair as alt

    plotted = rows[rows["status"] == "ok"].drop_duplicates("setup", keep="last")
    if plotted.empty:
        raise ValueError("no valid dp-scaling measurements to chart")
    data = plotted[["setup", "value", "label", "backend", "interconnect", "speedup", "date"]]
    domain_max = max(1.25, float(plotted["value"].max()) * 1.35)  # room for the labels right of the bars
    x = alt.X("value:Q", title="efficiency (100 % = linear scaling)", axis=alt.Axis(format="%"),
              scale=alt.Scale(domain=[0, domain_max]))
    y = alt.Y("setup:N", title=None, sort=list(plotted["setup"]), axis=alt.Axis(labelLimit=360))
    tooltip = [
        alt.Tooltip("setup:N", title="setup"),
        alt.Tooltip("value:Q", title="efficiency", format=".1%"),
        alt.Tooltip("speedup:Q", title="speedup", format=".2f"),
        alt.Tooltip("backend:N"),
        alt.Tooltip("interconnect:N"),
        alt.Tooltip("date:N"),
    ]
    base = alt.Chart(data).encode(x=x, y=y, tooltip=tooltip)
    bars = base.mark_bar().encode(
        color=alt.Color("interconnect:N", title="link between devices", legend=alt.Legend(orient="top")),
    )
    labels = base.mark_text(align="left", baseline="middle", dx=4, fontSize=10).encode(text="label:N")
    linear = alt.Chart(pd.DataFrame({"at": [1.0], "what": ["linear"]}))
    rule = linear.mark_rule(strokeDash=[4, 3]).encode(x="at:Q", tooltip=[alt.Tooltip("what:N")])
    rule_text = linear.mark_text(align="left", baseline="bottom", dx=3, fontSize=10).encode(
        x="at:Q", y=alt.value(0), text="what:N"
    )
    return (
        alt.layer(bars, labels, rule, rule_text)
        .properties(
            width=width, height={"step": 22},
            title=alt.Title(TITLE, subtitle="N devices against 1 in the same launch; higher is better", anchor="start"),
            description=f"{TITLE}: efficiency per machine, framework and device count (100 % is linear).",
            background="transparent",
        )
        .configure_view(stroke=None)
    )


def chart_spec(rows: pd.DataFrame, *, width: int | str = "container") -> dict[str, Any]:
    """The chart as a validated Vega-Lite dict."""
    return make_chart(rows, width=width).to_dict(validate=True)


def _number(value: object, fmt: str) -> str:
    return format(value, fmt) if value is not None and pd.notna(value) else ""


def _table(rows: pd.DataFrame) -> str:
    head = ["Machine", "Framework", "Backend", "Link", "Devices", "1 device (samples/s)", "N devices (samples/s)",
            "Speedup", "Efficiency", "Size", "Date", "Status"]
    body = []
    for _, r in rows.iterrows():
        status = r["status"] + (f": {r['message']}" if isinstance(r["message"], str) and r["message"] else "")
        cells = [r["machine_label"], ENGINE_NAMES.get(r["engine"], r["engine"]), r["backend"], r["interconnect"],
                 r["world_size"], _number(r["baseline_samples_per_s"], ".4g"), _number(r["samples_per_s"], ".4g"),
                 _number(r["speedup"], ".2f"), _number(r["value"], ".1%"), r["size"], r["date"], status]
        body.append("<tr>" + "".join(f"<td>{_e(c)}</td>" for c in cells) + "</tr>")
    header = "".join(f"<th>{_e(h)}</th>" for h in head)
    return (
        '<div class="md-typeset__scrollwrap"><div class="md-typeset__table">'
        f"<table><thead><tr>{header}</tr></thead><tbody>{''.join(body)}</tbody></table></div></div>"
    )


def _provenance(rows: pd.DataFrame) -> str:
    items = []
    for label, g in rows.groupby("machine_label", sort=False):
        first = g.iloc[-1]
        versions = ", ".join(
            f"{name} {first[col]}" for name, col in (("torch", "torch_version"), ("TensorFlow", "tf_version"),
                                                     ("Python", "python_version"))
            if isinstance(first[col], str) and first[col]
        )
        dates = sorted(set(g["date"]))
        when = dates[0] if len(dates) == 1 else f"{dates[0]} to {dates[-1]}"
        items.append(f"<li><strong>{_e(label)}</strong>: measured {_e(when)} by benchlib "
                     f"{_e(first['benchlib_version'])}; {_e(versions)}</li>")
    return f'<ul class="bench-chart__sources">{"".join(items)}</ul>'


def empty_note(invalid: int = 0) -> str:
    """What to do when there is nothing to draw: no scaling record at all, or only invalid ones."""
    if invalid:
        title = "No valid multi-device measurements yet"
        found = f"The results hold {invalid} scaling measurement(s), all marked invalid (see the table below)."
    else:
        title = "No multi-device measurements yet"
        found = "No results file has a scaling measurement."
    return (
        f'<div class="admonition info bench-chart bench-chart--empty" data-chart="{SCALING}">'
        f'<p class="admonition-title">{title}</p>'
        f"<p>{found} To add one, run <code>benchlib launch</code> on a machine with two or more devices (on Kaggle, "
        "choose <em>GPU T4 x2</em>): it trains on one device, then on all of them, and writes a results file. "
        "Copy that file into the repository's <code>results/</code> folder and rebuild the site.</p></div>"
    )


def scaling_html(data: SiteData) -> str:
    """The chart block: figure with interactive chart and static SVG, provenance, data table."""

    rows = scaling_rows(data.frame)
    if rows.empty:
        return empty_note()
    details = (
        f'<details class="note bench-chart__data"><summary>Data behind the scaling chart ({len(rows)} launch(es))'
        f"</summary>{_table(rows)}</details>"
    )
    ok = rows[rows["status"] == "ok"]
    if ok.empty:
        return empty_note(invalid=len(rows)) + details
    left_out = len(rows) - len(ok)
    note = (
        f'<p class="bench-chart__note">{left_out} measurement(s) marked invalid are not drawn; '
        "the table below gives the reason.</p>"
        if left_out else ""
    )
    caption = (
        f"<p>{_e(TITLE)}: each bar is one <code>benchlib launch</code>, N devices against one. "
        f"Each number comes from a results file:</p>{_provenance(ok)}"
    )
    return (
        chart_figure(SCALING, chart_spec(rows), chart_spec(rows, width=STATIC_WIDTH), caption)
        + note
        + details
    )


def scaling_chart() -> str:
    """The block for the page: ``print(scaling_chart())`` in a markdown-exec block."""
    return scaling_html(site_data())
