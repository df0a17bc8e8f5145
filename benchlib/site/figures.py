"""Chart blocks for a page: ``<figure>`` with the interactive chart, a static SVG, provenance and data.

The interactive view is drawn in the browser by vega-embed from the spec in the view's
``data-spec`` attribute (assets/javascripts/charts.js starts it from Material's ``document$``).
Not a ``<script type="application/json">``: instant navigation re-creates scripts without their
``type``, which would run the JSON as JavaScript. The static SVG made by vl-convert shows until
the interactive chart is drawn, and whenever JavaScript is off. The markup is in the templates
``chart.html``, ``chart_notes.html`` and ``chart_empty.html``; everything from a results file is
escaped there.

A page shows one chart with ``print(chart("matmul"))``. The Results page also ends with
``print(page.remaining())`` on a `ChartsOnPage`, which shows every declared chart the page has not
shown yet: a new workload's chart appears there with no page edited.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from benchlib.core.paths import RESULTS_ENV, project_root
from benchlib.results.schema import NO_VALUE_STATUSES
from benchlib.site.charts import chart_spec, plotted_rows, value_text
from benchlib.site.data import BUILD_MACHINE, REPORTED, SiteData, site_data
from benchlib.site.render import render
from benchlib.site.sources import MEASURE_ENV
from benchlib.workloads import Chart, all_workloads, charts

STATIC_WIDTH = 640
# The page chart blocks are on unless a caller says otherwise; their links are relative to it.
RESULTS_PAGE = "benchmarks/results.md"
_SOFTWARE = ("benchlib_version", "methodology_version", "suite", "torch_version", "python_version")


def _present(value: object) -> bool:
    return value is not None and bool(pd.notna(value)) and value != ""


def _software(row: pd.Series) -> str:
    text = f"benchlib {row['benchlib_version']} (methodology {row['methodology_version']})"
    if _present(row["suite"]):
        text += f", {row['suite']} suite"
    for name, col in (("torch", "torch_version"), ("Python", "python_version")):
        if _present(row[col]):
            text += f", {name} {row[col]}"
    return text


def _when(group: pd.DataFrame) -> str:
    dates = sorted(set(group["date"]))
    when = dates[0] if len(dates) == 1 else f"{dates[0]} to {dates[-1]}"
    return when + (", while this site was built" if (group["source"] == BUILD_MACHINE).any() else "")


def provenance(rows: pd.DataFrame) -> dict[str, list[dict[str, Any]]]:
    """Where the plotted numbers come from: measured runs grouped by software, reported ones by source."""
    measured = [
        {
            "software": _software(group.iloc[0]),
            "machines": [{"subject": s, "when": _when(g)} for s, g in group.groupby("subject", sort=False)],
        }
        for _, group in rows[rows["source"] != REPORTED].groupby(list(_SOFTWARE), sort=False, dropna=False)
    ]
    reported = []
    for _, group in rows[rows["source"] == REPORTED].groupby(
        ["source_url", "source_context"], sort=False, dropna=False
    ):
        first = group.iloc[0]
        dated = dict(zip(group["subject"], group["date"]))
        # One source whose figures carry their own dates (a table grown over time) dates each machine.
        one_date = len(set(dated.values())) == 1
        reported.append(
            {
                "url": first["source_url"],
                "as_of": first["date"] if one_date else None,
                "machines": [{"subject": s, "when": d} for s, d in dated.items()],
                "context": first["source_context"] if _present(first["source_context"]) else None,
            }
        )
    return {"measured": measured, "reported": reported}


def _number(value: object, fmt: str) -> str:
    return format(value, fmt) if _present(value) else ""


def table_rows(rows: pd.DataFrame) -> list[dict[str, Any]]:
    """The data table's cells, formatted once."""
    out = []
    for r in rows.to_dict("records"):
        noise = (
            r["iqr_s"] / r["median_s"] if _present(r["iqr_s"]) and _present(r["median_s"]) and r["median_s"] else None
        )
        status = r["status"] + (f": {r['message']}" if _present(r["message"]) else "")
        if _present(r["noisy"]) and bool(r["noisy"]):
            status += " (noisy)"
        out.append(
            {
                "subject": r["subject"],
                "setting": r["setting"],
                "value": value_text(r["value"]) if _present(r["value"]) else "",
                "unit": r["unit"],
                "of_peak": _number(r["efficiency"], ".0%"),
                "noise": _number(noise, ".1%"),
                "samples": _number(r["n"], ".0f"),
                "status": status,
                "date": r["date"],
                "reported": r["source"] == REPORTED,
                "source": r["source"],
                "source_url": r["source_url"],
                "derived": r.get("derived") or "",
            }
        )
    return out


def _shown(data: SiteData) -> str:
    """The results folder as a reader knows it: relative to the project when it is inside it."""
    try:
        return f"{data.results_dir.resolve().relative_to(project_root().resolve())}/"
    except ValueError:
        return str(data.results_dir)


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


_CONTROL_CHARS = {c: None for c in [*range(0x00, 0x20), *range(0x7F, 0xA0)]}


def static_svg(spec: dict[str, Any]) -> str:
    import vl_convert

    return vl_convert.vegalite_to_svg(_printable(spec))


def figure_context(chart_id: str, spec: dict[str, Any]) -> dict[str, Any]:
    """What ``figure.html`` needs: ``spec`` for the interactive view, and the same chart at the
    static width drawn as SVG (the width is the one thing that differs: no second chart is built)."""
    return {
        "chart_id": chart_id,
        "description": spec.get("description", chart_id),
        "spec": json.dumps(spec, separators=(",", ":")),
        "svg": static_svg({**spec, "width": STATIC_WIDTH}),
    }


def _workloads_of(chart: Chart) -> list[str]:
    return [w.name for w in all_workloads().values() if any(p.chart.id == chart.id for p in w.plots)]


def _suite_of(chart: Chart) -> str:
    suites = [s for w in all_workloads().values() if w.name in _workloads_of(chart) for s in w.suites]
    return "quick" if "quick" in suites else (suites[0] if suites else "quick")


def chart_html(chart: Chart, rows: pd.DataFrame, data: SiteData, here: str = RESULTS_PAGE) -> str:
    """The block for ``chart`` from its rows: figure, notes and the data table, or why it is empty."""
    plotted = plotted_rows(rows, chart) if not rows.empty else rows
    if plotted.empty:
        empty = render(
            "chart_empty.html",
            chart=chart,
            has_rows=not rows.empty,
            results_dir=_shown(data),
            workloads=_workloads_of(chart),
            suite=_suite_of(chart),
            measure_env=MEASURE_ENV,
            results_env=RESULTS_ENV,
            here=here,
        )
        return empty + (_notes(chart, rows, plotted, here) if not rows.empty else "")
    spec = chart_spec(plotted, chart)
    return render(
        "chart.html",
        chart=chart,
        **figure_context(chart.id, spec),
        build_machine=BUILD_MACHINE if (plotted["source"] == BUILD_MACHINE).any() else None,
        any_reported=(plotted["source"] == REPORTED).any(),
        **provenance(plotted),
        **_note_context(chart, rows, plotted, here),
    )


def _note_context(chart: Chart, rows: pd.DataFrame, plotted: pd.DataFrame, here: str) -> dict[str, Any]:
    invalid = rows[rows["status"] == "invalid"]
    failed = rows[rows["status"].isin(NO_VALUE_STATUSES)]
    shown = pd.concat([plotted, invalid, failed])
    return {
        "invalid": invalid.to_dict("records"),
        "failed": failed.to_dict("records"),
        "rows": table_rows(shown),
        "plotted_count": len(plotted),
        "here": here,
        "any_derived": bool((shown.get("derived", pd.Series(dtype=str)).fillna("") != "").any()),
    }


def _notes(chart: Chart, rows: pd.DataFrame, plotted: pd.DataFrame, here: str) -> str:
    return render("chart_notes.html", chart=chart, **_note_context(chart, rows, plotted, here))


def chart(chart_id: str, data: SiteData | None = None, here: str = RESULTS_PAGE) -> str:
    """The chart block for a page: ``print(chart("matmul"))`` in a markdown-exec block.

    ``here`` is the docs page that shows it (for its links), the Results page unless said.
    """
    declared = charts()
    if chart_id not in declared:
        raise KeyError(f"no chart {chart_id!r}; declared charts: {', '.join(declared)}")
    data = data or site_data()
    return chart_html(declared[chart_id], data.charts.get(chart_id, pd.DataFrame()), data, here)


@dataclass
class ChartsOnPage:
    """The charts one page shows, so that the page can end with every declared chart it hasn't shown.

    Used in a markdown-exec session: ``page = ChartsOnPage()`` in the first block,
    ``print(page.chart("matmul"))`` where a chart has its own section, ``print(page.remaining())`` last.
    """

    shown: list[str] = field(default_factory=list)

    def chart(self, chart_id: str) -> str:
        self.shown.append(chart_id)
        return chart(chart_id)

    def remaining(self) -> str:
        data = site_data()
        blocks = []
        for chart_id, declared in charts().items():
            if chart_id not in self.shown:
                self.shown.append(chart_id)
                blocks.append(chart_html(declared, data.charts.get(chart_id, pd.DataFrame()), data))
        return "".join(blocks)
