"""A chart block for a page: `<figure>` with the interactive chart, a static SVG and provenance.

The interactive view is drawn in the browser by vega-embed from the spec in the view's
``data-spec`` attribute (assets/javascripts/charts.js starts it from Material's ``document$``).
Not a ``<script type="application/json">``: instant navigation re-creates scripts without their
``type``, which would run the JSON as JavaScript. The static SVG made by vl-convert shows until
the interactive chart is drawn, and whenever JavaScript is off.
Every string that comes from a results file is escaped: results are data, never markup.
"""

from __future__ import annotations

import json
from html import escape
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pandas as pd

from benchlib.charts import BUILD_MACHINE, FAILED, REPORTED, annotate, chart_rows, chart_spec, kind, value_text
from benchlib.site.platforms import stale_badge
from benchlib.site.sources import MEASURE_ENV, RESULTS_ENV, SiteData, project_root, site_data

STATIC_WIDTH = 640
# Chart blocks live on the pages under benchmarks/, next to these.
RUN_IT_YOURSELF = "../run-it-yourself/"
METHODOLOGY = "../methodology/"


def _e(value: object) -> str:
    return escape(str(value), quote=True)


def _link(url: str | None, text: str) -> str:
    if url and urlparse(url).scheme in ("http", "https"):
        return f'<a href="{_e(url)}">{_e(text)}</a>'
    return _e(text)


_SOFTWARE = ("benchlib_version", "methodology_version", "suite", "torch_version", "python_version")


def _software(row: pd.Series) -> str:
    text = f"benchlib {_e(row['benchlib_version'])} (methodology {_e(row['methodology_version'])})"
    if _present(row["suite"]):
        text += f", {_e(row['suite'])} suite"
    for name, col in (("torch", "torch_version"), ("Python", "python_version")):
        if _present(row[col]):
            text += f", {name} {_e(row[col])}"
    return text


def _when(g: pd.DataFrame) -> str:
    dates = sorted(set(g["date"]))
    when = dates[0] if len(dates) == 1 else f"{dates[0]} to {dates[-1]}"
    return _e(when) + (", during this build" if (g["source"] == BUILD_MACHINE).any() else "")


def provenance(rows: pd.DataFrame) -> str:
    """Where the plotted numbers come from: measured runs grouped by software, reported ones by source."""
    items = []
    measured = rows[rows["source"] != REPORTED]
    for _, group in measured.groupby(list(_SOFTWARE), sort=False, dropna=False):
        machines = "; ".join(f"{_e(subject)} ({_when(g)})" for subject, g in group.groupby("subject", sort=False))
        items.append(f"<li><strong>Measured</strong> with {_software(group.iloc[0])}: {machines}.</li>")
    reported = rows[rows["source"] == REPORTED]
    for _, group in reported.groupby(["source_url", "source_context"], sort=False, dropna=False):
        first = group.iloc[0]
        source = _link(first["source_url"], urlparse(first["source_url"] or "").netloc or "source")
        dated = dict(zip(group["subject"], group["date"]))
        if len(set(dated.values())) == 1:
            when = f", as of {_e(first['date'])}{stale_badge(first['date'])}"
            machines = "; ".join(_e(subject) for subject in dated)
        else:
            # One source whose figures carry their own dates (a table grown over time): date each machine.
            when = ""
            machines = "; ".join(f"{_e(subject)} (as of {_e(day)}{stale_badge(day)})" for subject, day in dated.items())
        context = ""
        if _present(first["source_context"]):
            # Sources come with long notes on their setting; fold them so the caption stays short.
            context = (
                ' <details class="bench-chart__context"><summary>The source\'s setting</summary>'
                f"<p>{_e(first['source_context'])}</p></details>"
            )
        items.append(f"<li><strong>Reported</strong> by {source}{when}: {machines}.{context}</li>")
    return f'<ul class="bench-chart__sources">{"".join(items)}</ul>'


def _present(value: object) -> bool:
    return value is not None and bool(pd.notna(value)) and value != ""


def _number(value: object, fmt: str) -> str:
    return format(value, fmt) if _present(value) else ""


def data_table(rows: pd.DataFrame, setting_title: str) -> str:
    head = [
        "Machine", setting_title, "Value", "Unit", "Of peak", "Noise (IQR / median)",
        "Samples", "Status", "Date", "Source",
    ]
    body = []
    for _, r in rows.iterrows():
        noise = r["iqr_s"] / r["median_s"] if _present(r["iqr_s"]) and r["median_s"] else None
        status = r["status"] + (f": {r['message']}" if _present(r["message"]) else "")
        if _present(r["noisy"]) and bool(r["noisy"]):
            status += " (noisy)"
        value = value_text(r["value"]) if _present(r["value"]) else ""
        cells = [r["subject"], r["setting"], value, r["unit"], _number(r["efficiency"], ".0%"),
                 _number(noise, ".1%"), _number(r["n"], ".0f"), status]
        reported = r["source"] == REPORTED
        # A reported figure's date is its source's, so it ages like any sourced fact.
        when = _e(r["date"]) + (stale_badge(r["date"]) if reported else "")
        source = _link(r["source_url"], r["source"]) if reported else _e(r["source"])
        body.append("<tr>" + "".join(f"<td>{_e(c)}</td>" for c in cells) + f"<td>{when}</td><td>{source}</td></tr>")
    header = "".join(f"<th>{_e(h)}</th>" for h in head)
    return (
        '<div class="md-typeset__scrollwrap"><div class="md-typeset__table">'
        f"<table><thead><tr>{header}</tr></thead><tbody>{''.join(body)}</tbody></table></div></div>"
    )


def _shown(folder: Path) -> str:
    """The results folder as a reader knows it: relative to the project when it is inside it."""
    try:
        return f"{folder.resolve().relative_to(project_root().resolve())}/"
    except ValueError:
        return str(folder)


def _empty(workload: str, data: SiteData) -> str:
    return (
        f'<div class="admonition info bench-chart bench-chart--empty" data-chart="{_e(workload)}">'
        '<p class="admonition-title">No measurements yet</p>'
        f"<p>No results file in <code>{_e(_shown(data.results_dir))}</code> has "
        f"<code>{_e(workload)}</code> measurements. "
        "Run <code>benchlib run --suite quick</code> and copy the file it writes into <code>results/</code>, "
        f"or build the site with <code>{MEASURE_ENV}=quick</code> to measure the machine that builds it "
        f"(<code>{RESULTS_ENV}</code> points the build at another folder). "
        f'See <a href="{RUN_IT_YOURSELF}">Run it yourself</a>.</p></div>'
    )


def _notes(invalid: pd.DataFrame, failed: pd.DataFrame) -> str:
    out = []
    if not invalid.empty:
        items = "".join(
            f"<li>{_e(r['subject'])}, {_e(r['setting'])}: "
            f"{_e(r['message'] if _present(r['message']) else 'invalid')}</li>"
            for _, r in invalid.iterrows()
        )
        out.append(
            '<div class="admonition warning"><p class="admonition-title">'
            f"{len(invalid)} invalid measurement(s) left out of the chart</p>"
            f'<p>benchlib marks a number invalid when it breaks a <a href="{METHODOLOGY}#sanity-checks">'
            "sanity check</a>.</p>"
            f"<ul>{items}</ul></div>"
        )
    if not failed.empty:
        out.append(
            f'<p class="bench-chart__note">{len(failed)} measurement(s) produced no number '
            "(error, out of memory or skipped); the table lists them with their message.</p>"
        )
    return "".join(out)


def figure_html(workload: str, data: SiteData) -> str:
    """The chart block for ``workload`` from ``data``: figure, notes and the data table."""
    k = kind(workload)
    annotated = annotate(data.frame, workload, data.build_files)
    if annotated.empty:
        return _empty(workload, data)
    plotted = chart_rows(annotated)
    invalid = annotated[annotated["status"] == "invalid"]
    failed = annotated[annotated["status"].isin(FAILED)]
    table = data_table(pd.concat([plotted, invalid, failed]), k.setting_title)
    details = (
        f'<details class="note bench-chart__data"><summary>Data behind the {_e(k.title.lower())} chart '
        f"({len(plotted)} plotted, {len(invalid) + len(failed)} not)</summary>{table}</details>"
    )
    if plotted.empty:
        return (
            f'<div class="admonition info bench-chart bench-chart--empty" data-chart="{_e(workload)}">'
            f'<p class="admonition-title">No valid {_e(workload)} measurements yet</p></div>'
            + _notes(invalid, failed) + details
        )
    highlight = ""
    if (plotted["source"] == BUILD_MACHINE).any():
        highlight = f" ★ marks {BUILD_MACHINE}, measured while this site was built."
    caption = (
        f"<p>{_e(k.title)} by machine and {_e(k.setting_title)}.{_e(highlight)} Where the numbers come from:</p>"
        + provenance(plotted)
    )
    figure = chart_figure(
        workload, chart_spec(plotted, workload), chart_spec(plotted, workload, width=STATIC_WIDTH), caption
    )
    return figure + _notes(invalid, failed) + details


_CONTROL_CHARS = {c: None for c in [*range(0x00, 0x20), *range(0x7F, 0xA0)]}


def _printable(value: Any) -> Any:
    """``value`` with control characters dropped from every string in it.

    vl-convert's text layout panics and aborts the whole process (not an exception) on a
    control character such as U+0004, and labels come from contributed results files.
    """
    if isinstance(value, str):
        return value.translate(_CONTROL_CHARS)
    if isinstance(value, dict):
        return {k: _printable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_printable(v) for v in value]
    return value


def chart_figure(chart_id: str, spec: dict[str, Any], static_spec: dict[str, Any], caption_html: str) -> str:
    """The ``<figure>`` charts.js draws: ``spec`` in the view's ``data-spec``, ``static_spec`` as SVG.

    ``caption_html`` must already be escaped. The figure's label is the spec's description.
    """
    import vl_convert

    label = _e(spec.get("description", chart_id))
    return (
        f'<figure class="bench-chart" id="chart-{_e(chart_id)}" data-chart="{_e(chart_id)}">'
        f'<div class="bench-chart__view" role="img" aria-label="{label}" '
        f'data-spec="{_e(json.dumps(spec, separators=(",", ":")))}"></div>'
        # data-search-exclude: the SVG's ticks and labels would only clutter the search index.
        f'<div class="bench-chart__fallback" role="img" aria-label="{label}" data-search-exclude>'
        f"{vl_convert.vegalite_to_svg(_printable(static_spec))}</div>"
        f"<figcaption>{caption_html}</figcaption></figure>"
    )


def chart(workload: str) -> str:
    """The chart block for a page: ``print(chart("matmul"))`` in a markdown-exec block."""
    return figure_html(workload, site_data())
