"""The MAMF figures imported from ml-engineering (results/reported/mamf-*.json) and their peaks."""

from __future__ import annotations

import pytest
from glossary_text import without_tooltips

from benchlib.catalog.gpus import find_accelerator
from benchlib.core.paths import reported_dir
from benchlib.results.load import load_results
from benchlib.results.plausibility import findings
from benchlib.results.store import read_results
from benchlib.site.charts import plotted_rows
from benchlib.site.data import SiteData, chart_frames, derive
from benchlib.site.figures import chart
from benchlib.workloads import charts

FILES = sorted(reported_dir().glob("mamf-*.json"))
MATMUL = charts()["matmul"]


def matmul_rows():
    return plotted_rows(chart_frames(derive(load_results(FILES)))["matmul"], MATMUL)


SOURCE = "https://github.com/stas00/ml-engineering/blob/master/compute/accelerator/README.md"


def test_the_table_is_imported_gpu_by_gpu():
    assert len(FILES) == 11
    names = {read_results(path).machine.label.split(" (")[0] for path in FILES}
    assert {"NVIDIA B300 SXM", "NVIDIA GB200 SXM", "AMD MI355X", "AMD MI300X", "NVIDIA H100 SXM"} <= names


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_each_file_is_a_dated_reported_matmul_result(path):
    results = read_results(path, mark_implausible=False)
    assert results.provenance.kind == "reported"
    assert results.provenance.source_url.startswith(SOURCE)
    assert results.provenance.as_of is not None and results.provenance.as_of.year >= 2025  # benchmark version 2
    assert "mamf-finder" in (results.provenance.context or "")
    assert findings(results) == []  # plausibility accepts every figure
    for record in results.measurements:
        assert (record.workload, record.metric.unit, record.status) == ("matmul", "TFLOPS", "ok")
        assert record.dtype in {"bf16", "fp8"}
        assert record.params["shape_mnk"].count("x") == 2
        assert record.peak and 0 < record.value < record.peak
        assert record.efficiency == pytest.approx(record.value / record.peak, abs=1e-4)


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_bf16_figures_stay_below_the_spec_sheet_peak(path):
    for record in read_results(path).measurements:
        spec = find_accelerator(record.device_name or "")
        if record.dtype != "bf16" or spec is None:
            continue  # A100 "SXM"/"PCIe" without a memory size is ambiguous on purpose
        peak = spec.peak_tflops("bf16")
        assert peak is not None and record.value < peak, spec.name
        # The book's own theory figure is the spec sheet's, or the spec sheet names the disagreement.
        fact = spec.bf16_tensor_tflops
        assert record.peak == peak or (fact.status == "conflict" and f"{record.peak:g}" in (fact.note or ""))


def test_the_matrix_multiply_chart_shows_them_with_their_peaks():
    rows = matmul_rows()
    assert len(rows) == sum(len(read_results(path).measurements) for path in FILES)
    assert set(rows["source"]) == {"reported"}
    assert (
        rows["peak"].notna().all()
        and rows["tick"].eq(rows["peak"]).all()
        and rows["label"].str.contains("of peak").all()
    )
    b300 = rows[rows["subject"].str.startswith("NVIDIA B300 SXM") & (rows["setting"] == "bf16")].iloc[0]
    assert b300["label"] == "1,770 · 79% of peak" and b300["date"] == "2025-12-09"


def test_one_source_with_dated_rows_is_one_caption_item_dating_each_machine():
    frame = derive(load_results(FILES))
    html = chart(
        "matmul", SiteData(frame=frame, charts=chart_frames(frame), results_dir=reported_dir(), build_files=frozenset())
    )
    caption = without_tooltips(html.split("<figcaption>", 1)[1].split("</figcaption>", 1)[0])
    assert caption.count("<strong>Reported</strong>") == 1  # one source, one setting, not one item per date
    assert caption.count("The source's setting") == 1
    assert "NVIDIA B300 SXM (MAMF, reported) (as of 2025-12-09)" in caption
    # Older than 12 months at this build: the same mark every dated figure gets.
    assert "AMD MI300X (MAMF, reported) (as of 2025-01-06" in caption
    after = caption.split("AMD MI300X (MAMF, reported) (as of 2025-01-06", 1)[1]
    assert (
        after.startswith('<span class="fg-badge fg-badge--stale"')
        and "may be out of date" in after.split("</span>", 1)[0]
    )
