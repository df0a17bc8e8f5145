"""benchlib.site.charts and the derive stage: results DataFrame -> a chart's rows -> valid Vega-Lite specs."""

from __future__ import annotations

import pandas as pd
import pytest
from site_samples import CPU, GPU, HOSTILE, sample_files, write_samples

from benchlib.results.load import load_results
from benchlib.results.store import write_results
from benchlib.site.charts import BUILD_MARK, chart_spec, plotted_rows, value_text
from benchlib.site.data import BUILD_MACHINE, BUILD_SUBJECT, MEASURED, REPORTED, chart_frames, derive
from benchlib.site.figures import chart
from benchlib.workloads import charts

CHARTS = charts()
SAMPLED = ("matmul", "conv2d", "bandwidth")


def annotate(frame: pd.DataFrame, chart_id: str, build_files: set[str] | frozenset[str] = frozenset()) -> pd.DataFrame:
    """The chart's rows after the one derive stage, as the site gets them."""
    return chart_frames(derive(frame, build_files))[chart_id]


def chart_rows(rows: pd.DataFrame, chart_id: str = "matmul") -> pd.DataFrame:
    return plotted_rows(rows, CHARTS[chart_id])


@pytest.fixture(scope="module")
def samples(tmp_path_factory) -> pd.DataFrame:
    return load_results(write_samples(tmp_path_factory.mktemp("results")))


def _layer_marks(spec: dict) -> list[str]:
    return [layer["mark"]["type"] for layer in spec["layer"]]


@pytest.mark.parametrize("workload", SAMPLED)
def test_every_chart_is_a_valid_vega_lite_spec(samples, workload):
    rows = chart_rows(annotate(samples, workload), workload)
    spec = chart_spec(rows, CHARTS[workload])  # to_dict(validate=True) inside
    assert spec["$schema"].startswith("https://vega.github.io/schema/vega-lite/")
    # A tick marks the peak only where some plotted row has one (the sample GPU's matmul rows do).
    assert _layer_marks(spec) == (["bar", "tick", "text"] if rows["peak"].notna().any() else ["bar", "text"])
    assert spec["width"] == "container"
    assert spec["background"] == "transparent"
    unit = rows["unit"].iloc[0]
    assert unit in spec["layer"][0]["encoding"]["x"]["title"]
    data = next(iter(spec["datasets"].values()))
    assert len(data) == len(rows)
    assert chart_spec(rows, CHARTS[workload], width=640)["width"] == 640


def test_matmul_rows_exclude_invalid_and_failed_and_keep_efficiency(samples):
    annotated = annotate(samples, "matmul")
    rows = chart_rows(annotated)
    assert set(rows["status"]) == {"ok"}
    assert "bf16" not in set(rows[rows["machine_id"] == GPU.id]["setting"])  # the invalid one
    fp32 = rows[(rows["machine_id"] == GPU.id) & (rows["setting"] == "fp32")].iloc[0]
    assert fp32["label"] == "4 · 50% of peak"
    cpu = rows[rows["machine_id"] == CPU.id].iloc[0]
    assert "peak" not in cpu["label"]  # no known peak, no claim


def test_peak_tick_sits_at_the_peak_and_labels_start_after_it(samples):
    rows = chart_rows(annotate(samples, "matmul"))
    spec = chart_spec(rows, CHARTS["matmul"])
    tick = next(layer for layer in spec["layer"] if layer["mark"]["type"] == "tick")
    assert tick["encoding"]["x"]["field"] == "tick"  # the peak, on the matmul chart
    assert tick["transform"] == [{"filter": "isValid(datum.tick)"}]  # no tick where no peak is known
    data = {(d["subject"], d["setting"]): d for d in next(iter(spec["datasets"].values()))}
    gpu_fp32 = data[("Colab · Test GPU", "fp32")]
    assert (gpu_fp32["value"], gpu_fp32["tick"], gpu_fp32["label_at"]) == (4.0, 8.0, 8.0)
    cpu_fp32 = data[("local · Test CPU (CPU only)", "fp32")]
    assert cpu_fp32["tick"] is None and cpu_fp32["label_at"] == cpu_fp32["value"]
    # Every layer shares one axis title, and the scale leaves room past the highest peak.
    titles = {layer["encoding"]["x"]["title"] for layer in spec["layer"]}
    assert titles == {"TFLOPS, higher is better"}
    assert spec["layer"][0]["encoding"]["x"]["scale"]["domain"][1] >= 8.0 * 1.25


def test_subjects_order_best_first_and_lower_is_better_flips(samples):
    matmul = chart_spec(chart_rows(annotate(samples, "matmul")), CHARTS["matmul"])
    y = matmul["layer"][0]["encoding"]["y"]
    assert y["sort"][0] == "Colab · Test GPU"  # highest TFLOPS first
    conv = chart_rows(annotate(samples, "conv2d"), "conv2d")
    assert list(conv["setting"]) == ["batch 16, 32×32 px"]
    assert "lower is better" in chart_spec(conv, CHARTS["conv2d"])["layer"][0]["encoding"]["x"]["title"]


def test_reported_rows_are_marked_and_dated_by_their_source(samples):
    rows = chart_rows(annotate(samples, "matmul"))
    reported = rows[rows["source"] == REPORTED].iloc[0]
    assert reported["subject"].endswith("(reported)")
    assert HOSTILE in reported["subject"]  # kept as data; escaping is the HTML layer's job
    assert reported["date"] == "2020-02-01"
    assert set(rows[rows["provenance"] == "measured"]["source"]) == {MEASURED}


def test_build_machine_is_highlighted(samples):
    build_file = next(f for f in samples["file"] if CPU.id in f)
    rows = chart_rows(annotate(samples, "matmul", build_files={build_file}))
    mine = rows[rows["file"] == build_file]
    assert set(mine["source"]) == {BUILD_MACHINE}
    assert all(s.startswith(BUILD_MARK) and s.endswith(f"({BUILD_SUBJECT})") for s in mine["subject"])
    spec = chart_spec(rows, CHARTS["matmul"])
    weight = spec["layer"][0]["encoding"]["y"]["axis"]["labelFontWeight"]
    assert BUILD_MARK in weight["expr"] and "bold" in weight["expr"]
    data = next(iter(spec["datasets"].values()))
    opacity = {d["source"]: d["opacity"] for d in data}
    assert opacity[REPORTED] < opacity[MEASURED] == opacity[BUILD_MACHINE] == 1.0  # reported bars are faded


def test_newest_run_wins_and_label_clashes_get_machine_ids(tmp_path):
    files = sample_files()
    cpu = files[f"{CPU.id}/cpu-run.json"]
    newer = cpu.model_copy(
        update={
            "run_id": "newer",
            "created": cpu.created + pd.Timedelta(days=1),
            "measurements": [cpu.measurements[0].model_copy(update={"value": 0.75})],
        }
    )
    twin = cpu.model_copy(update={"machine": CPU.model_copy(update={"id": "local-test-cpu-99999999"})})
    for name, data in {"a.json": cpu, "b.json": newer, "c.json": twin}.items():
        write_results(data, tmp_path / name)
    rows = chart_rows(annotate(load_results(tmp_path), "matmul"))
    subjects = set(rows["subject"])
    assert subjects == {f"{CPU.label} [{CPU.id[-8:]}]", f"{CPU.label} [99999999]"}
    fp32 = rows[(rows["subject"] == f"{CPU.label} [{CPU.id[-8:]}]") & (rows["setting"] == "fp32")]
    assert list(fp32["value"]) == [0.75]


def test_cpu_run_on_a_gpu_machine_is_named_cpu(tmp_path):
    gpu = sample_files()[f"{GPU.id}/gpu-run.json"]
    on_cpu = gpu.model_copy(update={"measurements": [gpu.measurements[0].model_copy(update={"device": "cpu"})]})
    write_results(on_cpu, tmp_path / "x.json")
    rows = chart_rows(annotate(load_results(tmp_path), "matmul"))
    assert list(rows["subject"]) == ["Colab · Test GPU · CPU"]


def test_value_labels_keep_three_digits_without_exponents():
    assert [value_text(v) for v in (2447.0, 280.4, 3.704, 0.021484, 99.96)] == ["2,450", "280", "3.7", "0.0215", "100"]


def test_a_label_that_says_reported_is_not_marked_twice(tmp_path):
    data = sample_files()["reported/hostile.json"]
    data = data.model_copy(update={"machine": data.machine.model_copy(update={"label": "Colab K80 (2018, reported)"})})
    write_results(data, tmp_path / "r.json")
    assert list(chart_rows(annotate(load_results(tmp_path), "matmul"))["subject"]) == ["Colab K80 (2018, reported)"]


def test_unknown_chart_and_empty_rows_fail_clearly(samples):
    with pytest.raises(KeyError, match="declared charts: .*matmul"):
        chart("resnet")
    empty = plotted_rows(annotate(samples.iloc[0:0], "matmul"), CHARTS["matmul"])
    assert {"source", "subject", "setting", "date"} <= set(empty.columns)
    with pytest.raises(ValueError, match="nothing to chart for 'Matrix multiply throughput'"):
        chart_spec(empty, CHARTS["matmul"])
