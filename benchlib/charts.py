"""Benchmark results (a DataFrame from `load_results`) into Altair charts.

One chart per workload: horizontal bars, one band per machine and device, one bar per setting
(dtype, convolution shape, copy direction). `chart_rows` prepares what is plotted, so the site
can show the same rows as a table; `make_chart` turns them into an Altair chart.

Colours are left to Vega's defaults and the background is transparent: the site themes text
and grid lines for Material's light and dark palettes.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, get_args

import pandas as pd

from benchlib.results.schema import Status

if TYPE_CHECKING:
    import altair as alt

BUILD_MACHINE = "this build machine"
MEASURED = "measured"
REPORTED = "reported"
OPACITY = {BUILD_MACHINE: 1.0, MEASURED: 1.0, REPORTED: 0.55}
BUILD_MARK = "★ "
BAR_PX = 12
BAND_GAP_PX = 8

# Statuses that carry no number: listed in tables, never plotted.
FAILED = tuple(s for s in get_args(Status) if s not in ("ok", "invalid"))


def _matmul_setting(row: pd.Series) -> str:
    return row["dtype"] or "—"


def _conv2d_setting(row: pd.Series) -> str:
    p = json.loads(row["params"])
    if not {"batch", "side"} <= p.keys():
        return "—"
    return f"batch {p['batch']}, {p['side']}×{p['side']} px"


_DIRECTIONS = {
    "device_copy": "copy on device",
    "host_to_device": "host → device",
    "device_to_host": "device → host",
}


def _bandwidth_setting(row: pd.Series) -> str:
    # Params are free-form in a results file: a contributed direction may be any JSON value.
    direction = json.loads(row["params"]).get("direction")
    if direction is None:
        return "—"
    if isinstance(direction, str):
        return _DIRECTIONS.get(direction, direction)
    return json.dumps(direction)


@dataclass(frozen=True)
class ChartKind:
    """How one workload is charted: its title, what a bar's colour stands for, and the order."""

    workload: str
    title: str
    setting_title: str
    setting: Callable[[pd.Series], str]
    setting_order: tuple[str, ...] = ()


KINDS: dict[str, ChartKind] = {
    k.workload: k
    for k in (
        ChartKind("matmul", "Matrix multiply throughput", "dtype", _matmul_setting, ("fp32", "tf32", "fp16", "bf16")),
        ChartKind("conv2d", "Convolution forward time", "input", _conv2d_setting),
        ChartKind("bandwidth", "Memory bandwidth", "direction", _bandwidth_setting, tuple(_DIRECTIONS.values())),
    )
}


def kind(workload: str) -> ChartKind:
    if workload not in KINDS:
        raise KeyError(f"no chart for workload {workload!r}; charts exist for: {', '.join(KINDS)}")
    return KINDS[workload]


def _subject(row: pd.Series) -> str:
    # The machine label names the accelerator; a CPU run on a GPU machine needs saying so.
    label = row["machine_label"]
    if row["device"] == "cpu" and (row["gpu_count"] or 0) > 0:
        label = f"{label} · CPU"
    if row["source"] == REPORTED and REPORTED not in label.lower():
        label = f"{label} (reported)"
    if row["source"] == BUILD_MACHINE:
        label = f"{BUILD_MARK}{label} ({BUILD_MACHINE})"
    return label


def value_text(value: float) -> str:
    """Three significant digits, without the exponent notation '.3g' gives from 1000 up."""
    rounded = float(f"{value:.3g}")
    return f"{rounded:,.0f}" if abs(rounded) >= 100 else f"{rounded:g}"


def _value_label(row: pd.Series) -> str:
    text = value_text(row["value"])
    if pd.notna(row["efficiency"]):
        text += f" · {row['efficiency']:.0%} of peak"
    return text


def annotate(df: pd.DataFrame, workload: str, build_files: Collection[str] = ()) -> pd.DataFrame:
    """The workload's rows with `source`, `subject`, `setting` and `date` columns added.

    ``build_files`` are the results files measured during this build; their rows get the source
    "this build machine" so charts can highlight them.
    """
    k = kind(workload)
    rows = df[df["workload"] == workload].copy()
    if rows.empty:
        return rows.assign(**{c: pd.Series(dtype=str) for c in ("source", "subject", "setting", "date")})
    builds = set(build_files)
    rows["source"] = [
        BUILD_MACHINE if f in builds else (REPORTED if p == REPORTED else MEASURED)
        for f, p in zip(rows["file"], rows["provenance"])
    ]
    rows["subject"] = rows.apply(_subject, axis=1)
    # Two machines with one label (say, two Colab T4 hosts) must not share a band.
    ids_per_subject = rows.groupby("subject")["machine_id"].transform("nunique")
    clash = ids_per_subject > 1
    rows.loc[clash, "subject"] = rows.loc[clash, "subject"] + " [" + rows.loc[clash, "machine_id"].str[-8:] + "]"
    rows["setting"] = rows.apply(k.setting, axis=1)
    # A reported figure dates from its source, not from when it was typed into a file.
    rows["date"] = [
        as_of if src == REPORTED and as_of else created.strftime("%Y-%m-%d")
        for src, as_of, created in zip(rows["source"], rows["source_as_of"], rows["created"])
    ]
    return rows


def chart_rows(annotated: pd.DataFrame) -> pd.DataFrame:
    """What is plotted: valid measurements only, the newest per subject and setting."""
    ok = annotated[annotated["status"] == "ok"].sort_values("created")
    ok = ok.drop_duplicates(["subject", "setting"], keep="last").copy()
    if ok.empty:
        return ok.assign(label=pd.Series(dtype=str))
    ok["label"] = ok.apply(_value_label, axis=1)
    return ok


def _setting_order(k: ChartKind, rows: pd.DataFrame) -> list[str]:
    present = list(dict.fromkeys(rows["setting"]))
    known = [s for s in k.setting_order if s in present]
    return known + sorted(s for s in present if s not in known)


def _subject_order(rows: pd.DataFrame, higher_is_better: bool) -> list[str]:
    best = rows.groupby("subject")["value"].max() if higher_is_better else rows.groupby("subject")["value"].min()
    return list(best.sort_values(ascending=not higher_is_better).index)


def make_chart(rows: pd.DataFrame, workload: str, *, width: int | str = "container") -> alt.LayerChart:
    """Grouped horizontal bars of ``chart_rows`` output, with value (and % of peak) labels.

    Rows with a known peak also get a tick at that peak, so the distance between what was reached
    and what the device could do in theory is visible, not only written in the label.
    """
    import altair as alt

    k = kind(workload)
    if rows.empty:
        raise ValueError(f"no valid {workload} measurements to chart")
    unit = rows["unit"].iloc[0]
    higher = bool(rows["higher_is_better"].iloc[0])
    settings = _setting_order(k, rows)
    subjects = _subject_order(rows, higher)
    value, peak = rows["value"].astype(float), rows["peak"].astype(float)
    data = rows.assign(
        efficiency=rows["efficiency"].astype(float),
        peak=peak,
        # Labels start after the peak tick when there is one, so the two never overlap.
        label_at=pd.concat([value, peak], axis=1).max(axis=1),
        # Reported figures are drawn faded: they are not our measurements.
        opacity=[OPACITY[s] for s in rows["source"]],
    )[["subject", "setting", "value", "label", "label_at", "peak", "source", "date", "efficiency", "unit", "opacity"]]
    # Room on the right for the value labels.
    domain_max = float(data["label_at"].max()) * 1.25
    better = "higher is better" if higher else "lower is better"

    y = alt.Y(
        "subject:N", sort=subjects, title=None,
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
            f"{field}:Q", title=f"{unit}, {better}", scale=alt.Scale(domain=[0, domain_max], nice=True),
            # Thousands with separators are wide: keep a gap so neighbouring tick labels never touch.
            axis=alt.Axis(labelOverlap=True, labelSeparation=6),
        )

    tooltip = [
        alt.Tooltip("subject:N", title="machine"),
        alt.Tooltip("setting:N", title=k.setting_title),
        alt.Tooltip("value:Q", title=unit, format=",.3~r"),
        alt.Tooltip("efficiency:Q", title="of peak", format=".0%"),
        alt.Tooltip("peak:Q", title=f"peak, {unit}", format=",.4~r"),
        alt.Tooltip("source:N"),
        alt.Tooltip("date:N"),
    ]
    base = alt.Chart(data).encode(y=y, yOffset=y_offset, x=x("value"), tooltip=tooltip)
    bars = base.mark_bar().encode(
        color=alt.Color("setting:N", sort=settings, title=k.setting_title, legend=alt.Legend(orient="top")),
        opacity=alt.Opacity("opacity:Q", scale=None),
    )
    labels = base.mark_text(align="left", baseline="middle", dx=4, fontSize=10).encode(
        x=x("label_at"), text="label:N"
    )
    layers = [bars]
    if peak.notna().any():
        # The device's theoretical peak as a tick in the bar's colour, so what it reaches is seen next to it.
        layers.append(
            base.transform_filter("isValid(datum.peak)")
            .mark_tick(thickness=2, size=BAR_PX)
            .encode(x=x("peak"), color=alt.Color("setting:N", sort=settings, legend=None))
        )
    return (
        alt.layer(*layers, labels)
        .properties(
            width=width,
            # A fixed height (not a step) so Vega-Lite can fit the width to the page without a warning.
            height=len(subjects) * (len(settings) * BAR_PX + BAND_GAP_PX),
            title=alt.Title(k.title, anchor="start"),
            description=f"{k.title} by machine and {k.setting_title} ({unit}, {better}).",
            background="transparent",
        )
        .configure_view(stroke=None)
    )


def chart_spec(rows: pd.DataFrame, workload: str, *, width: int | str = "container") -> dict[str, Any]:
    """The chart as a validated Vega-Lite dict."""
    return make_chart(rows, workload, width=width).to_dict(validate=True)
