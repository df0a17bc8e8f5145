"""The scaling chart block of the "More than one GPU" page, from results files on disk.

The throughput values below are test inputs, not measurements: the block must chart valid
efficiencies, list invalid ones with their reason, and say how to measure when there are none.
"""

from __future__ import annotations

import html
import json
import re
from datetime import datetime, timezone
from pathlib import Path

import pytest
from site_samples import results_file

from benchlib.measure.distributed.launch import check, scaling_record, train_record
from benchlib.measure.distributed.report import WorkerReport
from benchlib.measure.distributed.topology import Interconnect
from benchlib.results.load import load_results
from benchlib.results.store import write_results
from benchlib.site.charts import bar_chart, chart_spec
from benchlib.site.data import SiteData, chart_frames, derive
from benchlib.site.scaling import chart_rows, scaling_html, scaling_rows
from benchlib.workloads.dp_scaling import CHART

pytest.importorskip("altair")
pytest.importorskip("vl_convert")

PCIE = Interconnect("pcie", "PCIe, through the CPU's PCIe host bridge (GPUs [0, 1])")


def launch_records(machine, one_s: float, two_s: float) -> list:
    """dp-train for 1 and 2 GPUs with these step times, and the dp-scaling record between them."""

    def report(world: int, step_s: float) -> WorkerReport:
        return WorkerReport(
            engine="torch",
            framework="torch",
            framework_version="2.x",
            launcher="torchrun",
            backend="nccl",
            device="cuda",
            device_names=["Tesla T4"] * world,
            world_size=world,
            per_device_batch=128,
            warmup_steps=10,
            warmup_s=2.0,
            steps_per_sample=5,
            sample_times_s=[step_s] * 3,
            sync="torch.cuda.synchronize",
            loss_first=2.3,
            loss_last=1.2,
            replicas_in_sync=True,
        )

    one, two = (train_record(report(w, s), PCIE, None, "standard") for w, s in ((1, one_s), (2, two_s)))
    return [one, two, check(scaling_record(one, two), "cuda", machine)]


def write(folder: Path, machine, records, run_id: str) -> None:
    created = datetime(2026, 11, 20, tzinfo=timezone.utc)
    results = results_file(machine, records, run_id=run_id, created=created, suite="standard", complete=True)
    write_results(results, folder / machine.id / f"{run_id}.json")


def data(folder: Path) -> SiteData:
    frame = derive(load_results(folder))
    return SiteData(frame=frame, charts=chart_frames(frame), results_dir=folder, build_files=frozenset())


@pytest.fixture
def kaggle(machine):
    return machine.model_copy(update={"id": "kaggle-2x-tesla-t4-0000", "label": "Kaggle · 2× Tesla T4 <b>"})


def test_no_results_gives_the_how_to_note(tmp_path):
    out = scaling_html(data(tmp_path))
    assert "No multi-device measurements yet" in out and "GPU T4 x2" in out
    assert "benchlib contribute" in out and "#contribute-a-gpu" in out
    assert 'href="../../benchmarks/run-it-yourself/#look-at-the-results-in-the-site"' in out  # how to see the file
    assert "<figure" not in out


def test_valid_efficiency_is_charted_with_spec_fallback_and_table(tmp_path, kaggle):
    write(tmp_path, kaggle, launch_records(kaggle, one_s=0.10, two_s=0.125), "20261120T000000Z-aaaaaa")
    rows = scaling_rows(data(tmp_path))
    (row,) = chart_rows(rows).itertuples()
    assert row.value == pytest.approx(0.8) and row.param_speedup == pytest.approx(1.6)
    assert (row.param_engine, row.param_backend, row.param_interconnect, row.param_world_size) == (
        "torch",
        "nccl",
        "pcie",
        2,
    )
    assert row.subject == "Kaggle · 2× Tesla T4 <b>" and row.setting == "PyTorch · 2 devices · pcie"
    assert row.label == "80% (1.60× speedup)"

    out = scaling_html(data(tmp_path))
    view = re.search(r'class="bench-chart__view"[^>]*data-spec="([^"]*)"', out)
    assert json.loads(html.unescape(view.group(1))) == chart_spec(chart_rows(rows), CHART)
    assert '<div class="bench-chart__fallback"' in out and "<svg" in out
    assert "Kaggle · 2× Tesla T4 &lt;b&gt;" in out and "<b>" not in out  # labels are data, never markup
    assert "<td>80.0%</td>" in out and "<td>1.60</td>" in out
    assert "not drawn" not in out


def test_chart_spec_is_valid_vega_lite_with_a_linear_rule(tmp_path, kaggle):
    write(tmp_path, kaggle, launch_records(kaggle, one_s=0.10, two_s=0.125), "20261120T000000Z-aaaaaa")
    spec = bar_chart(chart_rows(scaling_rows(data(tmp_path))), CHART).to_dict(validate=True)
    marks = [layer["mark"]["type"] for layer in spec["layer"]]
    assert marks == ["bar", "text", "rule"]
    assert "1 = linear scaling" in spec["layer"][0]["encoding"]["x"]["title"]
    datasets = spec["datasets"].values()
    assert [{"at": 1.0}] in list(datasets)


def test_faster_than_linear_is_listed_not_drawn(tmp_path, kaggle):
    write(tmp_path, kaggle, launch_records(kaggle, one_s=0.10, two_s=0.125), "20261120T000000Z-aaaaaa")
    write(tmp_path, kaggle, launch_records(kaggle, one_s=0.10, two_s=0.05), "20261120T010000Z-bbbbbb")
    rows = scaling_rows(data(tmp_path))
    assert sorted(rows["status"]) == ["invalid", "ok"]
    out = scaling_html(data(tmp_path))
    assert "1 measurement(s) marked invalid are not drawn" in out
    spec = chart_spec(chart_rows(rows), CHART)
    (plotted,) = [d for d in spec["datasets"].values() if d and "subject" in d[0]]
    assert [d["value"] for d in plotted] == [pytest.approx(0.8)]
    assert "<td>200.0%</td>" in out and "scaling efficiency" in out  # kept, with the reason


def test_only_invalid_results_say_so(tmp_path, kaggle):
    write(tmp_path, kaggle, launch_records(kaggle, one_s=0.10, two_s=0.05), "20261120T010000Z-bbbbbb")
    out = scaling_html(data(tmp_path))
    assert "No valid multi-device measurements yet" in out and "1 scaling measurement(s), all marked invalid" in out
    assert "<figure" not in out and "<table>" in out
