"""Training, mixed-precision, inference and score charts, with the seeds' reported figures beside ours.

A page calls a block in a markdown-exec block, e.g. ``print(training_throughput_chart())``. Each
block is a figure (interactive chart, static SVG, provenance caption) and the data table, in the
markup of `benchlib.site.figures`. Reported figures are drawn faded and labelled *(reported)*;
where a reported figure is turned into the chart's unit (a total time into samples/s, two
times into a speedup), the row says how in its ``derived`` column, shown in the table.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from html import escape
from typing import TYPE_CHECKING, Any

import pandas as pd

from benchlib.charts import BAND_GAP_PX, BAR_PX, BUILD_MACHINE, BUILD_MARK, MEASURED, OPACITY, REPORTED, value_text
from benchlib.site.figures import STATIC_WIDTH, chart_figure, data_table, provenance
from benchlib.site.sources import SiteData, site_data

if TYPE_CHECKING:
    import altair as alt

FRAMEWORKS = {"torch": "PyTorch", "tensorflow": "TensorFlow (Keras)", "fastai": "fastai"}


def _e(value: object) -> str:
    return escape(str(value), quote=True)


def _params(rows: pd.DataFrame) -> list[dict[str, Any]]:
    return [json.loads(p) for p in rows["params"]]


def _annotate(rows: pd.DataFrame, build_files: frozenset[str] = frozenset()) -> pd.DataFrame:
    """Add source (measured / reported / this build machine), subject (the band's label) and date."""
    rows = rows.copy()
    rows["source"] = [
        BUILD_MACHINE if f in build_files else (REPORTED if p == REPORTED else MEASURED)
        for f, p in zip(rows["file"], rows["provenance"])
    ]
    subjects = []
    for r in rows.itertuples():
        label = r.machine_label
        if r.source == REPORTED and REPORTED not in label.lower():
            label = f"{label} (reported)"
        if r.source == BUILD_MACHINE:
            label = f"{BUILD_MARK}{label} ({BUILD_MACHINE})"
        subjects.append(label)
    rows["subject"] = subjects
    rows["date"] = [
        as_of if src == REPORTED and as_of else created.strftime("%Y-%m-%d")
        for src, as_of, created in zip(rows["source"], rows["source_as_of"], rows["created"])
    ]
    if "derived" not in rows:
        rows["derived"] = ""
    return rows


def _newest(rows: pd.DataFrame) -> pd.DataFrame:
    """Valid rows only, the newest per band and setting, with a value label."""
    ok = rows[rows["status"] == "ok"].sort_values("created").drop_duplicates(["subject", "setting"], keep="last").copy()
    ok["label"] = [value_text(v) for v in ok["value"]]
    return ok


def training_rows(frame: pd.DataFrame, build_files: frozenset[str] = frozenset()) -> pd.DataFrame:
    """Fashion-MNIST CNN training samples/s by machine, framework and batch size.

    Seed 002's reported figure is a total time for ``epochs`` x ``steps_per_epoch`` batches; it
    becomes samples/s as batch size x steps x epochs / time (its time includes Keras' per-epoch
    validation, so it understates the rate a little).
    """
    rows = frame[frame["workload"] == "cnn_fashion_mnist"]
    measured = rows[(rows["provenance"] != REPORTED) & (rows["metric"] == "throughput")].copy()
    reported = rows[(rows["provenance"] == REPORTED) & (rows["metric"] == "train_time")].copy()
    if not reported.empty:
        p = _params(reported)
        samples = [q["batch_size"] * q["steps_per_epoch"] * q["epochs"] for q in p]
        reported["derived"] = [
            f"{q['epochs']} x {q['steps_per_epoch']} steps x batch {q['batch_size']} = {n:,} samples in a reported {t:g} s"
            for q, n, t in zip(p, samples, reported["value"])
        ]
        reported["value"] = [n / t if pd.notna(t) and t > 0 else None for n, t in zip(samples, reported["value"])]
        reported["metric"], reported["unit"], reported["higher_is_better"] = "throughput", "samples/s", True
    out = _annotate(pd.concat([measured, reported]), build_files)
    out["setting"] = [f"{FRAMEWORKS.get(f, f)} · batch {q.get('batch_size')}" for f, q in zip(out["framework"], _params(out))]
    return out


def speedup_rows(frame: pd.DataFrame, build_files: frozenset[str] = frozenset()) -> pd.DataFrame:
    """Mixed-precision speedup (fp32 time / mixed-precision time) by machine and setting.

    Measured: the ``amp`` workloads' speedups, and fastai ``to_fp16`` against fp32 at the same
    batch size in the same run. Reported: seed 003's fastai total times, fp32 and fp16 at the
    same batch size on the same machine.
    """
    amp = frame[(frame["workload"] == "amp") & (frame["metric"] == "speedup")].copy()
    amp["setting"] = [f"{FRAMEWORKS.get(f, f)} · {d}" for f, d in zip(amp["framework"], amp["dtype"])]
    pairs = []
    fastai = frame[(frame["workload"] == "fastai_transfer") & (frame["status"] == "ok")]
    for file, group in fastai.groupby("file", sort=False):
        by_bs: dict[int, dict[str, pd.Series]] = {}
        for (_, r), p in zip(group.iterrows(), _params(group)):
            by_bs.setdefault(p.get("batch_size"), {})[r["dtype"]] = r
        for bs, dtypes in by_bs.items():
            if "fp32" in dtypes and "fp16" in dtypes and dtypes["fp16"]["value"] > 0:
                fp32, fp16 = dtypes["fp32"], dtypes["fp16"]
                row = fp16.copy()
                row["value"] = fp32["value"] / fp16["value"]
                row["metric"], row["unit"], row["higher_is_better"] = "speedup", "x", True
                row["setting"] = f"fastai to_fp16 · batch {bs}"
                row["derived"] = f"fp32 {fp32['metric']} {fp32['value']:g} s / fp16 {fp16['value']:g} s"
                row["median_s"] = row["iqr_s"] = row["n"] = row["noisy"] = None
                pairs.append(row)
    out = pd.concat([amp, pd.DataFrame(pairs)]) if pairs else amp
    return _annotate(out, build_files)


def latency_rows(frame: pd.DataFrame, build_files: frozenset[str] = frozenset()) -> pd.DataFrame:
    """Batch-1 inference latency p50, with p90 alongside, by machine, model and framework."""
    rows = frame[(frame["workload"] == "inference") & frame["metric"].isin(["latency_p50", "latency_p90"])].copy()
    p = _params(rows)
    rows = rows[pd.Series([q.get("batch_size") == 1 for q in p], index=rows.index, dtype=bool)]
    rows["setting"] = [f"{q['model']} · {FRAMEWORKS.get(f, f)}" for f, q in zip(rows["framework"], _params(rows))]
    p50 = rows[rows["metric"] == "latency_p50"]
    p90 = rows[(rows["metric"] == "latency_p90") & (rows["status"] == "ok")][["file", "setting", "value"]]
    out = p50.merge(p90.rename(columns={"value": "p90"}), on=["file", "setting"], how="left")
    return _annotate(out, build_files)


def _bars(
    rows: pd.DataFrame, *, title: str, setting_title: str, x_title: str, width: int | str,
    higher_is_better: bool, rule_at: float | None = None, extra: Callable[[Any, Any], list[Any]] | None = None,
) -> alt.LayerChart:
    """Grouped horizontal bars: a band per machine, a bar per setting, reported bars faded."""
    import altair as alt

    if rows.empty:
        raise ValueError(f"nothing to chart for {title!r}")
    settings = sorted(dict.fromkeys(rows["setting"]))
    best = rows.groupby("subject")["value"].max() if higher_is_better else rows.groupby("subject")["value"].min()
    subjects = list(best.sort_values(ascending=not higher_is_better).index)
    cols = ["subject", "setting", "value", "label", "source", "date", "derived"] + (["p90"] if "p90" in rows else [])
    data = rows.assign(opacity=[OPACITY[s] for s in rows["source"]], derived=rows["derived"].fillna(""))[cols + ["opacity"]]
    top = float(data[["value", "p90"]].max().max() if "p90" in data else data["value"].max())
    better = "higher is better" if higher_is_better else "lower is better"
    y = alt.Y("subject:N", sort=subjects, title=None, axis=alt.Axis(labelLimit=320))
    y_offset = alt.YOffset("setting:N", sort=settings, scale=alt.Scale(paddingInner=0.1))
    x = alt.X("value:Q", title=f"{x_title}, {better}", scale=alt.Scale(domain=[0, top * 1.25], nice=True))
    tooltip = [alt.Tooltip("subject:N", title="machine"), alt.Tooltip("setting:N", title=setting_title),
               alt.Tooltip("value:Q", title=x_title, format=",.3~r"), alt.Tooltip("source:N"), alt.Tooltip("date:N"),
               alt.Tooltip("derived:N", title="derived from")]
    base = alt.Chart(data).encode(y=y, yOffset=y_offset, x=x, tooltip=tooltip)
    layers: list[Any] = [
        base.mark_bar().encode(
            color=alt.Color("setting:N", sort=settings, title=setting_title, legend=alt.Legend(orient="top", columns=2)),
            opacity=alt.Opacity("opacity:Q", scale=None),
        ),
        base.mark_text(align="left", baseline="middle", dx=4, fontSize=10).encode(text="label:N"),
    ]
    if extra:
        layers += extra(base, alt)
    if rule_at is not None:
        layers.append(alt.Chart(pd.DataFrame({"at": [rule_at]})).mark_rule(strokeDash=[4, 3]).encode(x="at:Q"))
    return (
        alt.layer(*layers)
        .properties(
            width=width, height=len(subjects) * (len(settings) * BAR_PX + BAND_GAP_PX),
            title=alt.Title(title, anchor="start"),
            description=f"{title} by machine and {setting_title} ({x_title}, {better}).",
            background="transparent",
        )
        .configure_view(stroke=None)
    )


def training_chart(rows: pd.DataFrame, *, width: int | str = "container") -> alt.LayerChart:
    return _bars(_newest(rows), title="Fashion-MNIST CNN training throughput", setting_title="framework",
                 x_title="samples/s", width=width, higher_is_better=True)


def speedup_chart(rows: pd.DataFrame, *, width: int | str = "container") -> alt.LayerChart:
    ok = _newest(rows)
    ok["label"] = [f"{v:.2f}×" for v in ok["value"]]
    return _bars(ok, title="Mixed-precision speedup over fp32", setting_title="setting",
                 x_title="speedup (×; 1 = no gain)", width=width, higher_is_better=True, rule_at=1.0)


def latency_chart(rows: pd.DataFrame, *, width: int | str = "container") -> alt.LayerChart:
    ok = _newest(rows)
    ok["label"] = [f"{value_text(v)} ms" + (f" (p90 {value_text(p)})" if pd.notna(p) else "") for v, p in zip(ok["value"], ok["p90"])]

    def p90_ticks(base: Any, alt: Any) -> list[Any]:
        # A tick at p90 on each p50 bar: how much slower one request in ten is.
        return [base.mark_tick(thickness=2, size=BAR_PX).encode(x="p90:Q")]

    return _bars(ok, title="Inference latency at batch 1 (p50, tick at p90)", setting_title="model",
                 x_title="ms", width=width, higher_is_better=False, extra=p90_ticks)


def score_rows(frame: pd.DataFrame) -> pd.DataFrame:
    """The benchlib score of every measured results file (see `benchlib.score.score_frame`)."""
    from benchlib.score import score_frame

    return score_frame(frame)


def _conditions(disturbed: bool | None) -> str:
    """What the score table says about the machine during a run (see `benchlib.conditions`)."""
    return "not recorded" if disturbed is None else "disturbed" if disturbed else "quiet"


def score_chart(rows: pd.DataFrame, *, width: int | str = "container") -> alt.LayerChart:
    """Complete scores only (an incomplete run has no score), the reference's 100 marked by a rule."""
    import altair as alt

    # Per machine its newest run, and a disturbed one only where the machine has no other.
    done = rows[rows["complete"]]
    done = (done.assign(quiet=~done["disturbed"].eq(True)).sort_values(["quiet", "created"])
            .drop_duplicates("machine_label", keep="last"))
    if done.empty:
        raise ValueError("no complete benchlib score to chart")
    labels = [f"{v:.0f}" + (" (disturbed)" if d is True else "") for v, d in zip(done["score"], done["disturbed"])]
    data = done.assign(label=labels, conditions=[_conditions(d) for d in done["disturbed"]])[
        ["machine_label", "score", "training", "inference", "label", "conditions"]]
    order = list(data.sort_values("score", ascending=False)["machine_label"])
    x = alt.X("score:Q", title="benchlib score (reference machine = 100), higher is better",
              scale=alt.Scale(domain=[0, float(data["score"].max()) * 1.25], nice=True))
    tooltip = [alt.Tooltip("machine_label:N", title="machine"), alt.Tooltip("score:Q", format=".1f"),
               alt.Tooltip("training:Q", format=".1f"), alt.Tooltip("inference:Q", format=".1f"), alt.Tooltip("conditions:N")]
    base = alt.Chart(data).encode(y=alt.Y("machine_label:N", sort=order, title=None, axis=alt.Axis(labelLimit=320)), x=x, tooltip=tooltip)
    rule = alt.Chart(pd.DataFrame({"at": [100.0]})).mark_rule(strokeDash=[4, 3]).encode(x="at:Q")
    return (
        alt.layer(base.mark_bar(), base.mark_text(align="left", baseline="middle", dx=4, fontSize=10).encode(text="label:N"), rule)
        .properties(width=width, height={"step": 22}, title=alt.Title("benchlib score by machine", anchor="start"),
                    description="benchlib score by machine (reference machine = 100, higher is better).", background="transparent")
        .configure_view(stroke=None)
    )


def aibench_rows(frame: pd.DataFrame) -> pd.DataFrame:
    """ai-benchmark training scores as reported by seed 001: another scale than benchlib's score."""
    rows = frame[(frame["workload"] == "ai_benchmark_score") & (frame["status"] == "ok")]
    return _annotate(rows).assign(setting="ai-benchmark training score")


def aibench_chart(rows: pd.DataFrame, *, width: int | str = "container") -> alt.LayerChart:
    return _bars(_newest(rows), title="ai-benchmark training score (reported; not the benchlib score)",
                 setting_title="score", x_title="ai-benchmark score", width=width, higher_is_better=True)


def _figure(chart_id: str, make: Callable[..., Any], rows: pd.DataFrame, caption: str, table: str) -> str:
    figure = chart_figure(chart_id, make(rows).to_dict(validate=True),
                          make(rows, width=STATIC_WIDTH).to_dict(validate=True), caption)
    return figure + f'<details class="note bench-chart__data"><summary>Data behind the chart</summary>{table}</details>'


def _empty(chart_id: str, what: str) -> str:
    return (
        f'<div class="admonition info bench-chart bench-chart--empty" data-chart="{_e(chart_id)}">'
        f'<p class="admonition-title">No {_e(what)} yet</p><p>Run <code>benchlib run --suite standard</code> '
        "and copy the results file into <code>results/</code>.</p></div>"
    )


def _bar_block(chart_id: str, rows: pd.DataFrame, make: Callable[..., Any], setting_title: str, what: str) -> str:
    plotted = _newest(rows)
    if plotted.empty:
        return _empty(chart_id, what)
    table_rows = pd.concat([plotted, rows[rows["status"] != "ok"]])
    table = data_table(table_rows, setting_title)
    derived = plotted[plotted["derived"].fillna("") != ""]
    notes = "".join(f"<li>{_e(r.subject)}, {_e(r.setting)}: {_e(r.derived)}</li>" for r in derived.itertuples())
    caption = (
        "<p>Faded bars marked <em>(reported)</em> are published figures, not our measurements. "
        "Where the numbers come from:</p>" + provenance(plotted)
        + (f"<p>Converted from reported figures:</p><ul>{notes}</ul>" if notes else "")
    )
    return _figure(chart_id, make, rows, caption, table)


def training_throughput_html(data: SiteData) -> str:
    return _bar_block("cnn_fashion_mnist", training_rows(data.frame, data.build_files), training_chart, "framework", "training measurements")


def amp_speedup_html(data: SiteData) -> str:
    return _bar_block("amp", speedup_rows(data.frame, data.build_files), speedup_chart, "setting", "mixed-precision measurements")


def inference_latency_html(data: SiteData) -> str:
    return _bar_block("inference", latency_rows(data.frame, data.build_files), latency_chart, "model", "inference measurements")


def aibench_html(data: SiteData) -> str:
    return _bar_block("ai_benchmark_score", aibench_rows(data.frame), aibench_chart, "score", "ai-benchmark scores")


def score_html(data: SiteData) -> str:
    try:
        rows = score_rows(data.frame)
    except ValueError as exc:  # the reference file is missing or unreadable: say so, don't break the build
        return _empty("score", "benchlib score") + f'<p class="bench-chart__note">{_e(exc)}</p>'
    head = "".join(f"<th>{h}</th>" for h in ("Machine", "Score", "Training", "Inference", "Complete", "Missing tests", "Conditions", "File"))
    body = "".join(
        "<tr>" + "".join(f"<td>{_e(c)}</td>" for c in (
            r.machine_label, f"{r.score:.1f}" if pd.notna(r.score) else "—",
            f"{r.training:.1f}" if pd.notna(r.training) else "—", f"{r.inference:.1f}" if pd.notna(r.inference) else "—",
            "yes" if r.complete else "no (incomplete)", r.missing, _conditions(r.disturbed), r.file)) + "</tr>"
        for r in rows.itertuples()
    )
    table = f'<div class="md-typeset__table"><table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>'
    if not rows["complete"].any():
        return _empty("score", "complete benchlib score") + f'<details class="note bench-chart__data"><summary>Runs</summary>{table}</details>'
    caption = ("<p>100 × the geometric mean of reference time / measured time over the score's tests; "
               "the reference machine scores 100 (dashed line). Runs missing a test have no score and are "
               "listed in the table as incomplete. A run marked <em>disturbed</em> shared the machine with other "
               "work that may have slowed it (see Methodology).</p>")
    return _figure("score", score_chart, rows, caption, table)


def training_throughput_chart() -> str:
    """``print(training_throughput_chart())`` in a markdown-exec block."""
    return training_throughput_html(site_data())


def amp_speedup_chart() -> str:
    return amp_speedup_html(site_data())


def inference_latency_chart() -> str:
    return inference_latency_html(site_data())


def score_by_machine_chart() -> str:
    return score_html(site_data())


def aibench_score_chart() -> str:
    return aibench_html(site_data())
