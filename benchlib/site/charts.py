"""The site's one chart builder: a chart's rows (from `benchlib.site.data`) into an Altair chart.

Every chart is horizontal bars: one band per subject (a machine, a GPU), one bar per setting
(dtype, framework, model), reported figures faded, predicted ones hollow with a dashed outline, and optionally a tick on each bar (the device's
peak, a p90) and a dashed rule (1× for a speedup, 100 for the score). What a chart says (titles,
label format, rule) comes from its `benchlib.workloads.Chart` declaration; nothing here knows
a workload.

Colours are left to Vega's defaults and the background is transparent: the site themes text
and grid lines for Material's light and dark palettes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pandas as pd

from benchlib.workloads import Chart

if TYPE_CHECKING:
    import altair as alt

BUILD_MARK = "★ "
BAR_PX = 12
BAND_GAP_PX = 8
# Reported figures are drawn faded: they are not our measurements.
REPORTED_OPACITY = 0.55
# Predicted figures (a row whose source is "predicted") are nearly hollow bars with a dashed outline: nobody measured them.
PREDICTED = "predicted"
PREDICTED_OPACITY = 0.15
PREDICTED_OUTLINE_PX = 1.5


def value_text(value: float) -> str:
    """Three significant digits, without the exponent notation '.3g' gives from 1000 up."""
    rounded = float(f"{value:.3g}")
    return f"{rounded:,.0f}" if abs(rounded) >= 100 else f"{rounded:g}"


def value_label(chart: Chart, row: pd.Series | dict[str, Any]) -> str:
    """A bar's label: the chart's format with the value to three digits, then % of peak or the tick."""
    text = chart.label.format(value=value_text(row["value"]))
    efficiency, tick = row.get("efficiency"), row.get("tick")
    if efficiency is not None and pd.notna(efficiency):
        text += f" · {efficiency:.0%} of peak"
    elif chart.tick_title and tick is not None and pd.notna(tick):
        text += f" ({chart.tick_title} {value_text(tick)})"
    return text


def plotted_rows(rows: pd.DataFrame, chart: Chart) -> pd.DataFrame:
    """What is plotted: valid figures only, the newest per subject and setting, with a label."""
    ok = rows[rows["status"] == "ok"].sort_values("created").drop_duplicates(["subject", "setting"], keep="last").copy()
    ok["label"] = [value_label(chart, r) for r in ok.to_dict("records")]
    return ok


def _setting_order(chart: Chart, rows: pd.DataFrame) -> list[str]:
    present = list(dict.fromkeys(rows["setting"]))
    known = [s for s in chart.setting_order if s in present]
    return known + sorted(s for s in present if s not in known)


def _subject_order(rows: pd.DataFrame, higher_is_better: bool) -> list[str]:
    best = rows.groupby("subject")["value"].max() if higher_is_better else rows.groupby("subject")["value"].min()
    return list(best.sort_values(ascending=not higher_is_better).index)


def bar_chart(rows: pd.DataFrame, chart: Chart, *, width: int | str = "container") -> alt.LayerChart:
    """Grouped horizontal bars of `plotted_rows` output, with value labels, ticks and the rule."""
    import altair as alt

    if rows.empty:
        raise ValueError(f"nothing to chart for {chart.title!r}")
    unit = str(rows["unit"].iloc[0])
    higher = bool(rows["higher_is_better"].iloc[0])
    settings = _setting_order(chart, rows)
    subjects = _subject_order(rows, higher)
    value = rows["value"].astype(float)
    blank = pd.Series(None, index=rows.index, dtype=object)
    tick = pd.to_numeric(rows.get("tick", blank), errors="coerce")
    data = pd.DataFrame(
        {
            "subject": rows["subject"],
            "setting": rows["setting"],
            "value": value,
            "label": rows["label"],
            "tick": tick,
            # Labels start after the tick when there is one, so the two never overlap.
            "label_at": pd.concat([value, tick], axis=1).max(axis=1),
            "efficiency": pd.to_numeric(rows.get("efficiency", blank), errors="coerce"),
            "source": rows["source"],
            "date": rows["date"],
            "derived": rows.get("derived", blank).fillna(""),
            "opacity": [
                REPORTED_OPACITY if s == "reported" else PREDICTED_OPACITY if s == PREDICTED else 1.0
                for s in rows["source"]
            ],
            "outline": [PREDICTED_OUTLINE_PX if s == PREDICTED else 0.0 for s in rows["source"]],
        }
    )
    # Room on the right for the value labels.
    domain_max = max(float(data["label_at"].max()), chart.rule_at or 0.0) * 1.25
    better = "higher is better" if higher else "lower is better"
    axis_title = f"{chart.axis_title or unit}, {better}"

    y = alt.Y(
        "subject:N",
        sort=subjects,
        title=None,
        axis=alt.Axis(
            # Long machine names may take up to 40 % of a narrow page; static SVGs have no container.
            labelLimit=alt.ExprRef("containerSize()[0] > 0 ? min(320, containerSize()[0] * 0.4) : 320"),
            labelFontWeight=alt.ExprRef(f"indexof(datum.label, '{BUILD_MARK}') === 0 ? 'bold' : 'normal'"),
        ),
    )
    y_offset = alt.YOffset("setting:N", sort=settings, scale=alt.Scale(paddingInner=0.1))

    def x(field: str) -> alt.X:
        # Every layer names the same title and scale, so the shared axis keeps one title.
        return alt.X(
            f"{field}:Q",
            title=axis_title,
            scale=alt.Scale(domain=[0, domain_max], nice=True),
            # Thousands with separators are wide: keep a gap so neighbouring tick labels never touch.
            axis=alt.Axis(labelOverlap=True, labelSeparation=6),
        )

    tooltip = [
        alt.Tooltip("subject:N", title="machine"),
        alt.Tooltip("setting:N", title=chart.setting_title),
        alt.Tooltip("value:Q", title=unit, format=",.3~r"),
        alt.Tooltip("source:N"),
        alt.Tooltip("date:N"),
    ]
    if data["efficiency"].notna().any():
        tooltip.insert(3, alt.Tooltip("efficiency:Q", title="of peak", format=".0%"))
    if data["tick"].notna().any():
        tooltip.insert(3, alt.Tooltip("tick:Q", title=chart.tick_title or f"peak, {unit}", format=",.4~r"))
    if (data["derived"] != "").any():
        tooltip.append(alt.Tooltip("derived:N", title="derived from"))
    base = alt.Chart(data).encode(y=y, yOffset=y_offset, x=x("value"), tooltip=tooltip)
    color = alt.Color(
        "setting:N",
        sort=settings,
        title=chart.setting_title,
        # More than three long setting names would run past a narrow chart's edge in one row.
        legend=alt.Legend(orient="top", columns=2 if len(settings) > 3 else 0),
    )
    layers: list[Any] = [
        base.mark_bar(strokeDash=[4, 2]).encode(
            color=color,
            fillOpacity=alt.FillOpacity("opacity:Q", scale=None),
            # The outline in the bar's colour; only predicted bars have one.
            stroke=alt.Stroke("setting:N", sort=settings, legend=None),
            strokeWidth=alt.StrokeWidth("outline:Q", scale=None),
        )
    ]
    if data["tick"].notna().any():
        # The tick in the bar's colour, so what a bar reaches is seen next to its peak or its p90.
        layers.append(
            base.transform_filter("isValid(datum.tick)")
            .mark_tick(thickness=2, size=BAR_PX)
            .encode(x=x("tick"), color=alt.Color("setting:N", sort=settings, legend=None))
        )
    layers.append(
        base.mark_text(align="left", baseline="middle", dx=4, fontSize=10).encode(x=x("label_at"), text="label:N")
    )
    if chart.rule_at is not None:
        layers.append(alt.Chart(pd.DataFrame({"at": [chart.rule_at]})).mark_rule(strokeDash=[4, 3]).encode(x=x("at")))
    return (
        alt.layer(*layers)
        .properties(
            width=width,
            # A fixed height (not a step) so Vega-Lite can fit the width to the page without a warning.
            height=len(subjects) * (len(settings) * BAR_PX + BAND_GAP_PX),
            title=alt.Title(chart.title, anchor="start"),
            description=f"{chart.title} by machine and {chart.setting_title} ({axis_title}).",
            background="transparent",
        )
        .configure_view(stroke=None)
    )


def chart_spec(rows: pd.DataFrame, chart: Chart, *, width: int | str = "container") -> dict[str, Any]:
    """The chart as a validated Vega-Lite dict."""
    return bar_chart(rows, chart, width=width).to_dict(validate=True)


# --- points: the one chart that is not bars ----------------------------------------------------

SCATTER_HEIGHT = 360
# The plot's width that labels are laid out for: the static fallback's (figures.STATIC_WIDTH); a
# wider page only spreads the points further apart.
SCATTER_LAYOUT_WIDTH = 640
# A phone's: a 390 px page leaves about 300 px beside the y axis. Below `SCATTER_NARROW_BELOW` px the
# chart draws the labels laid out for this width, fewer of them, so that none overlap there either.
SCATTER_NARROW_WIDTH = 300
SCATTER_NARROW_BELOW = 480
# Log-axis ticks at 1, 2 and 5 times a power of ten: Vega's own pick crowds a narrow axis ("30 4050").
LOG_TICK_STEPS = (1, 2, 5)
# Vega's first category colour, which the filled points have without a colour encoding.
SCATTER_COLOUR = "#4c78a8"
LABEL_FONT_SIZE = 9
# A label's box for the overlap check: an average glyph of the chart's sans-serif font is about
# 0.55 em wide, and its ascender to descender about 1.1 em tall.
LABEL_CHAR_PX = 0.55 * LABEL_FONT_SIZE
LABEL_LINE_PX = 1.1 * LABEL_FONT_SIZE
POINT_RADIUS_PX = 4.5  # a circle of area 60 px²
# Where a point's name may go, tried in order: (place, dx, dy, align). A name that fits nowhere
# is left out of the drawing; the tooltip and the table under the chart still give it.
LABEL_PLACES = (
    ("right", 6, 0, "left"),
    ("left", -6, 0, "right"),
    ("above", 0, -10, "center"),
    ("below", 0, 10, "center"),
    ("above right", 4, -9, "left"),
    ("below right", 4, 9, "left"),
    ("above left", -4, -9, "right"),
    ("below left", -4, 9, "right"),
)
# Log axes span the points and this much more each way, fixed so the layout matches the drawing.
LOG_PADDING = 1.25


def _log_pixels(values: pd.Series, length: float, flip: bool) -> tuple[pd.Series, list[float]]:
    """Pixel positions of ``values`` on a log axis ``length`` long, and the axis' domain."""
    import numpy as np

    low, high = float(values.min()) / LOG_PADDING, float(values.max()) * LOG_PADDING
    share = (np.log(values.astype(float)) - np.log(low)) / (np.log(high) - np.log(low))
    return (1 - share if flip else share) * length, [low, high]


def log_ticks(domain: list[float]) -> list[float]:
    """The tick values of a log axis over ``domain``: 1, 2 and 5 times each power of ten inside it."""
    import math

    low, high = domain
    return [
        step * 10.0**power
        for power in range(math.floor(math.log10(low)), math.ceil(math.log10(high)) + 1)
        for step in LOG_TICK_STEPS
        if low <= step * 10.0**power <= high
    ]


def label_places(
    rows: pd.DataFrame, scatter: Scatter, width: float = SCATTER_LAYOUT_WIDTH
) -> tuple[list[str | None], dict[str, list[float]]]:
    """Each point's label place (None: not drawn), so that no two labels and no label and point
    overlap on a plot ``width`` px wide, earlier rows first; and the log axes' domains the layout assumed."""
    xs, x_domain = _log_pixels(rows[scatter.x], width, flip=False)
    ys, y_domain = _log_pixels(rows[scatter.y], SCATTER_HEIGHT, flip=True)
    points = [
        (x - POINT_RADIUS_PX, y - POINT_RADIUS_PX, x + POINT_RADIUS_PX, y + POINT_RADIUS_PX) for x, y in zip(xs, ys)
    ]
    taken: list[tuple[float, float, float, float]] = list(points)
    places: list[str | None] = []
    for (x, y), name in zip(zip(xs, ys), rows[scatter.label].astype(str)):
        label_px = len(name) * LABEL_CHAR_PX
        chosen = None
        for place, dx, dy, align in LABEL_PLACES:
            left = x + dx - {"left": 0, "right": label_px, "center": label_px / 2}[align]
            box = (left, y + dy - LABEL_LINE_PX / 2, left + label_px, y + dy + LABEL_LINE_PX / 2)
            inside = 0 <= box[0] and box[2] <= width and 0 <= box[1] and box[3] <= SCATTER_HEIGHT
            own = (x - POINT_RADIUS_PX, y - POINT_RADIUS_PX, x + POINT_RADIUS_PX, y + POINT_RADIUS_PX)
            if inside and not any(_overlap(box, other) for other in taken if other != own):
                chosen = place
                taken.append(box)
                break
        places.append(chosen)
    return places, {"x": x_domain, "y": y_domain}


def _overlap(a: tuple[float, float, float, float], b: tuple[float, float, float, float]) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


@dataclass(frozen=True)
class Scatter:
    """A chart of points: column ``x`` against column ``y``, each point named by column ``label``.

    ``details`` are more columns the tooltip shows; ``log`` puts both axes on a log scale; a row
    whose ``hollow`` column is true is drawn as a hollow circle, named in the legend by
    ``hollow_title`` (an unverified figure), the others by ``filled_title``. Labels go to the rows
    in their order: put first the points that most need a name.
    """

    title: str
    description: str
    x: str
    x_title: str
    y: str
    y_title: str
    label: str
    details: tuple[str, ...] = ()
    log: bool = True
    hollow: str | None = None
    filled_title: str = ""
    hollow_title: str = ""


def scatter_chart(rows: pd.DataFrame, scatter: Scatter, *, width: int | str = "container") -> alt.LayerChart:
    """Labelled points of ``rows`` as ``scatter`` declares them."""
    import altair as alt

    if rows.empty:
        raise ValueError(f"nothing to chart for {scatter.title!r}")
    hollow = [scatter.hollow] if scatter.hollow else []
    data = rows[[scatter.label, scatter.x, scatter.y, *scatter.details, *hollow]].reset_index(drop=True)
    if scatter.log:
        places, domains = label_places(data, scatter)
        narrow, _ = label_places(data, scatter, SCATTER_NARROW_WIDTH)
        x_scale = alt.Scale(type="log", domain=domains["x"], nice=False)
        y_scale = alt.Scale(type="log", domain=domains["y"], nice=False)
        x_axis = alt.Axis(values=log_ticks(domains["x"]), labelOverlap="greedy", labelSeparation=4)
        y_axis = alt.Axis(values=log_ticks(domains["y"]), labelOverlap="greedy")
    else:
        places = narrow = ["right"] * len(data)
        x_scale = y_scale = alt.Scale(zero=False)
        x_axis = y_axis = alt.Axis(labelOverlap=True)
    kind = (
        [scatter.hollow_title if h else scatter.filled_title for h in data[scatter.hollow]] if scatter.hollow else None
    )
    data = data.assign(label_place=places, label_place_narrow=narrow, **({"figure": kind} if kind else {}))
    tooltip = [
        alt.Tooltip(f"{scatter.label}:N"),
        *(alt.Tooltip(f"{c}:Q", format=",.4~r") for c in (scatter.x, scatter.y, *scatter.details)),
    ]
    if kind:
        tooltip.append(alt.Tooltip("figure:N"))
    base = alt.Chart(data).encode(
        x=alt.X(f"{scatter.x}:Q", scale=x_scale, title=scatter.x_title, axis=x_axis),
        y=alt.Y(f"{scatter.y}:Q", scale=y_scale, title=scatter.y_title, axis=y_axis),
        tooltip=tooltip,
    )
    # The narrow layout where the plot is narrow (a phone); the static SVG has its fixed, wide width.
    place = f"(width < {SCATTER_NARROW_BELOW} ? datum.label_place_narrow : datum.label_place)"
    labels = [
        base.transform_filter(f"{place} === '{name}'")
        .mark_text(align=align, dx=dx, dy=dy, fontSize=LABEL_FONT_SIZE)
        .encode(text=f"{scatter.label}:N")
        for name, dx, dy, align in LABEL_PLACES
        if name in places or name in narrow
    ]
    if kind:
        titles = [scatter.filled_title, scatter.hollow_title]
        points = base.mark_point(size=60, shape="circle", strokeWidth=1.5, color=SCATTER_COLOUR).encode(
            fill=alt.Fill(
                "figure:N",
                sort=titles,
                scale=alt.Scale(domain=titles, range=[SCATTER_COLOUR, "transparent"]),
                legend=alt.Legend(title=None, orient="top"),
            ),
        )
    else:
        points = base.mark_circle(size=60)
    return (
        alt.layer(points, *labels)
        .properties(
            width=width,
            height=SCATTER_HEIGHT,
            title=alt.Title(scatter.title, anchor="start"),
            description=scatter.description,
            background="transparent",
        )
        .configure_view(stroke=None)
    )


def scatter_spec(rows: pd.DataFrame, scatter: Scatter, *, width: int | str = "container") -> dict[str, Any]:
    """The scatter as a validated Vega-Lite dict."""
    return scatter_chart(rows, scatter, width=width).to_dict(validate=True)
