"""Training, mixed-precision, inference and score charts: valid Vega-Lite, reported beside measured."""

import json
import re
from datetime import datetime, timezone
from html import unescape
from pathlib import Path

import pandas as pd
import pytest
from site_samples import measurement, results_file

from benchlib.core.paths import reported_dir
from benchlib.derive.score import SCORE_TESTS
from benchlib.results.load import load_results, rows_of
from benchlib.results.schema import Metric
from benchlib.site.charts import chart_spec, plotted_rows
from benchlib.site.data import SiteData, chart_frames, derive
from benchlib.site.figures import chart
from benchlib.site.score_blocks import score_block
from benchlib.workloads import charts

REPORTED = reported_dir()
CHARTS = charts()


def chart_of(frame: pd.DataFrame, chart_id: str) -> pd.DataFrame:
    return chart_frames(derive(frame))[chart_id]


def spec_of(rows: pd.DataFrame, chart_id: str) -> dict:
    return chart_spec(plotted_rows(rows, CHARTS[chart_id]), CHARTS[chart_id])


def site(frame: pd.DataFrame) -> SiteData:
    derived = derive(frame)
    return SiteData(frame=derived, charts=chart_frames(derived), results_dir=Path("results"), build_files=frozenset())


def rec(workload, framework, metric, unit, value, dtype="fp32", higher=True, **params):
    metric = Metric(name=metric, unit=unit, higher_is_better=higher)
    return measurement(workload, metric, value, framework=framework, device_name="Tesla T4", dtype=dtype, params=params)


def measured_frame(machine, label="Colab · Tesla T4", records=None):
    records = records or [
        rec("cnn_fashion_mnist", "torch", "throughput", "samples/s", 5000.0, batch_size=256),
        rec("cnn_fashion_mnist", "tensorflow", "throughput", "samples/s", 6000.0, batch_size=256),
        rec("amp", "torch", "speedup", "x", 2.1, dtype="fp16", model="cnn_fashion_mnist"),
        rec("amp", "tensorflow", "speedup", "x", 1.7, dtype="fp16", model="cnn_fashion_mnist"),
        rec(
            "fastai_transfer",
            "fastai",
            "epoch_time",
            "s",
            30.0,
            higher=False,
            batch_size=64,
            arch="resnet34",
            image_side=64,
        ),
        rec(
            "fastai_transfer",
            "fastai",
            "epoch_time",
            "s",
            20.0,
            dtype="fp16",
            higher=False,
            batch_size=64,
            arch="resnet34",
            image_side=64,
        ),
        rec("inference", "torch", "latency_p50", "ms", 8.0, higher=False, model="resnet50", batch_size=1),
        rec("inference", "torch", "latency_p90", "ms", 9.5, higher=False, model="resnet50", batch_size=1),
        rec("inference", "torch", "latency_p50", "ms", 40.0, higher=False, model="resnet50", batch_size=32),
    ]
    machine = machine.model_copy(update={"label": label})
    results = results_file(
        machine, records, run_id="r", created=datetime(2026, 11, 21, tzinfo=timezone.utc), suite="standard"
    )
    return pd.DataFrame(rows_of(results, f"results/{label}.json"))


@pytest.fixture
def frame(machine):
    return pd.concat([measured_frame(machine), load_results(REPORTED)], ignore_index=True)


def test_training_chart_puts_the_seeds_reported_rate_beside_measured(frame):
    rows = chart_of(frame, "cnn_fashion_mnist")
    reported = rows[rows["source"] == "reported"]
    assert not reported.empty and all("reported" in s.lower() for s in reported["subject"])
    # Seed 002: 5 epochs x 100 steps x batch 1024 in a reported 120 s on Colab's K80.
    k80 = reported[reported["subject"].str.contains("K80")].iloc[0]
    assert k80["value"] == pytest.approx(5 * 100 * 1024 / 120) and "120 s" in k80["derived"]
    assert set(rows[rows["source"] == "measured"]["setting"]) == {
        "PyTorch · batch 256",
        "TensorFlow (Keras) · batch 256",
    }
    spec = spec_of(rows, "cnn_fashion_mnist")
    assert spec["title"]["text"] == "Fashion-MNIST CNN training throughput"


def test_speedup_chart_has_amp_fastai_and_the_seeds_reported_fp16(frame):
    rows = chart_of(frame, "amp")
    measured = rows[rows["source"] == "measured"].set_index("setting")["value"]
    assert measured["PyTorch · fp16"] == 2.1
    assert measured["fastai to_fp16 · batch 64"] == pytest.approx(30 / 20)
    reported = rows[rows["source"] == "reported"]
    # Seed 003: fastai on Colab's K80 at batch 16, fp32 1194 s against fp16 997 s.
    assert reported[reported["subject"].str.contains("K80")]["value"].iloc[0] == pytest.approx(1194 / 997)
    spec = spec_of(rows, "amp")
    assert any(layer["mark"]["type"] == "rule" for layer in spec["layer"] if isinstance(layer.get("mark"), dict))


def test_latency_chart_shows_batch_one_p50_with_p90(frame):
    rows = chart_of(frame, "inference")
    assert len(rows) == 1
    row = rows.iloc[0]
    assert (row["value"], row["tick"], row["setting"]) == (8.0, 9.5, "resnet50 · PyTorch")
    assert plotted_rows(rows, CHARTS["inference"]).iloc[0]["label"] == "8 ms (p90 9.5)"
    spec_of(rows, "inference")


def test_aibench_scores_are_reported_and_titled_as_another_scale(frame):
    rows = chart_of(frame, "ai_benchmark_score")
    assert set(rows["source"]) == {"reported"} and rows["value"].max() == 16289
    spec = spec_of(rows, "ai_benchmark_score")
    assert "not the benchlib score" in spec["title"]["text"]


def score_extra(factor):
    out = []
    for t in SCORE_TESTS:
        higher = t.metric == "throughput"
        unit = "ms" if t.metric.startswith("latency") else "s" if t.metric == "epoch_time" else "u"
        value = 10.0 * factor if higher else 10.0 / factor
        out.append(rec(t.workload, t.framework, t.metric, unit, value, dtype=t.dtype, higher=higher, **t.params))
    return out


def test_score_chart_charts_complete_runs_against_the_reference(machine, monkeypatch):
    from benchlib.derive import score as score_module

    created = datetime(2026, 11, 1, tzinfo=timezone.utc)
    reference = results_file(machine, score_extra(1.0), run_id="ref", created=created, suite="standard")
    monkeypatch.setattr(score_module, "load_reference", lambda path=None: reference)
    frame = pd.concat(
        [
            measured_frame(machine, label="Fast", records=score_extra(3.0)),
            measured_frame(machine, label="Partial", records=score_extra(3.0)[1:]),
        ],
        ignore_index=True,
    )
    rows = score_module.score_frame(frame)
    assert rows.set_index("machine_label").loc["Fast", "score"] == pytest.approx(300)
    assert not rows.set_index("machine_label").loc["Partial", "complete"]
    html = score_block(site(frame))
    spec = json.loads(unescape(re.search(r'data-spec="([^"]*)"', html).group(1)))
    # Only the complete run is charted: its score and its two parts.
    assert {v["subject"] for v in spec["datasets"][next(iter(spec["datasets"]))]} == {"Fast"}
    assert "<figure" in html and "incomplete" in html and "Partial" in html


def test_blocks_render_figures_with_provenance_and_tables(frame):
    data = site(frame)
    for chart_id in ("cnn_fashion_mnist", "amp", "inference", "ai_benchmark_score"):
        html = chart(chart_id, data)
        assert html.startswith("<figure") and "<svg" in html and "data-spec=" in html
        assert "Data behind the" in html
    assert "Reported</strong>" in chart("cnn_fashion_mnist", data)
    # A figure derived from reported ones says how, in the table's "Derived from" column.
    amp = chart("amp", data)
    assert "Derived from" in amp and "fp32 total_time 1194 / fp16 997" in amp


def test_empty_results_give_a_note_not_a_crash():
    empty = load_results([])
    data = site(empty)
    for chart_id in ("cnn_fashion_mnist", "amp", "inference"):
        assert "No " in chart(chart_id, data) and "<figure" not in chart(chart_id, data)
