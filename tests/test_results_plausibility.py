"""Plausibility: impossible values are marked invalid on every path a number can take."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

import pytest
from site_samples import GBPS, MS, TFLOPS, measurement, results

from benchlib.results import plausibility
from benchlib.results.load import load_results
from benchlib.results.schema import (
    Accelerators,
    GPUInfo,
    Machine,
    MeasurementRecord,
    Metric,
    ResultsFile,
    Software,
    Stats,
    TorchDevices,
)
from benchlib.results.store import read_results, write_results

SCALING = Metric(name="scaling_efficiency", unit="ratio", higher_is_better=True)

T4_MACHINE = Machine(
    id="colab-tesla-t4-1234abcd",
    label="Colab · Tesla T4",
    software=Software(python="3.11"),
    accelerators=Accelerators(nvidia=[GPUInfo(index=0, name="Tesla T4")]),
)
CPU_MACHINE = Machine(
    id="local-epyc-1234abcd",
    label="local · EPYC (CPU only)",
    software=Software(python="3.11"),
    accelerators=Accelerators(nvidia=[], torch=TorchDevices(cuda_available=False)),
)


T4_MATMUL = {"workload": "matmul", "metric": TFLOPS, "value": 20.0, "device_name": "Tesla T4", "dtype": "fp16"}


def rec(**kw) -> MeasurementRecord:
    """A torch matmul on cuda, ``T4_MATMUL`` but for ``kw``."""
    return measurement(**(T4_MATMUL | kw))


def stats(**kw) -> Stats:
    return Stats(**({"median": 1e-3, "iqr": 1e-5, "mean": 1e-3, "min": 9e-4, "max": 2e-3, "n": 5, "noisy": False} | kw))


@pytest.mark.parametrize(
    "record, machine, expected",
    [
        (rec(value=80.0, peak=65.0), None, "123% of the known peak 65"),
        # No peak in the record: the spec sheet's T4 fp16 peak (65 TFLOPS) is used instead.
        (rec(value=400.0), None, "of the known peak"),
        (rec(metric=GBPS, dtype="uint8", value=5000.0), None, "of the known peak"),
        (rec(metric=MS, value=0.0), None, "0 ms is not a possible time"),
        (rec(metric=MS, value=-3.0), None, "-3 ms is not a possible time"),
        (rec(value=0.0), None, "not a possible rate or score"),
        (rec(metric=MS, value=1.0, stats=stats(median=0.0)), None, "stats.median: 0 s is not a possible time"),
        (rec(metric=MS, value=1.0, stats=stats(times=[1e-3, -1e-3])), None, "stats.times: -0.001 s"),
        (rec(metric=MS, value=1.0, duration_s=-1.0), None, "duration_s: -1 s"),
        (rec(value=float("inf")), None, "not a finite number"),
        (rec(metric=SCALING, dtype=None, value=1.3), None, "scaling efficiency of 1.3 is above 1.1"),
        (rec(device="cpu", device_name="NVIDIA A100-SXM4-80GB", metric=MS, value=3.0), None, "names the GPU"),
        (rec(device="cpu", device_name="Tesla T4", metric=MS, value=3.0), None, "names the GPU 'Tesla T4'"),
        (rec(metric=MS, value=3.0), CPU_MACHINE, "claims cuda, but machine 'local-epyc-1234abcd' has no GPU"),
    ],
)
def test_impossible_values_are_named(record, machine, expected):
    found = plausibility.problems(record, machine)
    assert found and any(expected in p for p in found), found


@pytest.mark.parametrize(
    "record, machine",
    [
        (rec(value=60.0, peak=65.0), T4_MACHINE),
        (rec(value=70.0, peak=65.0), None),  # 108 %: within the 10 % tolerance
        (rec(metric=SCALING, dtype=None, value=1.05), None),
        (rec(metric=MS, value=2.0), T4_MACHINE),
        (rec(device="cpu", device_name="AMD EPYC 7B13", metric=MS, value=3.0), CPU_MACHINE),
        (rec(device="cpu", device_name="host CPU of the TPU runtime", metric=MS, value=3.0), None),
        (rec(device="tpu", device_name="TPU v2 (8 cores)", metric=MS, value=3.0), CPU_MACHINE),
        # A machine whose accelerators weren't recorded (reported files) can't be judged.
        (rec(metric=MS, value=3.0), Machine(id="reported-x", label="x")),
        (rec(status="oom", value=None, message="out of memory"), CPU_MACHINE),
        (rec(value=999.0, status="invalid", message="already marked"), None),
    ],
)
def test_plausible_or_unjudged_values_pass(record, machine):
    assert plausibility.problems(record, machine) == []


def test_lower_is_better_non_time_metric_may_be_zero():
    loss = Metric(name="final_loss", unit="nats", higher_is_better=False)
    assert plausibility.problems(rec(metric=loss, dtype=None, value=0.0)) == []


def results_with(*records: MeasurementRecord, machine: Machine = T4_MACHINE) -> ResultsFile:
    return results(
        machine, list(records), run_id="20261121T000000Z-abcdef", created=datetime(2026, 11, 21, tzinfo=timezone.utc)
    )


def test_reading_a_file_marks_implausible_values_and_keeps_them(tmp_path):
    path = write_results(results_with(rec(value=20.0, peak=65.0), rec(value=300.0, peak=65.0)), tmp_path / "r.json")
    marked = read_results(path)
    good, bad = marked.measurements
    assert good.status == "ok"
    assert bad.status == "invalid" and bad.value == 300.0
    assert bad.message.startswith("implausible: value: 300 TFLOPS is 462% of the known peak 65")
    # The file itself is untouched, and can be inspected as written.
    assert read_results(path, mark_implausible=False).measurements[1].status == "ok"
    assert plausibility.findings(read_results(path, mark_implausible=False)) == [
        "measurements.1.value: 300 TFLOPS is 462% of the known peak 65; a timing or sync error is more likely than a real result"
    ]


def test_load_results_excludes_implausible_rows_from_ok(tmp_path):
    write_results(results_with(rec(value=20.0, peak=65.0), rec(metric=MS, value=0.0)), tmp_path / "r.json")
    df = load_results(tmp_path)
    assert list(df.status) == ["ok", "invalid"]
    assert "not a possible time" in df.message.iloc[1]


def test_mark_returns_the_same_object_when_nothing_is_wrong():
    results = results_with(rec(value=20.0, peak=65.0))
    assert plausibility.mark(results) is results


def test_committed_reported_files_are_plausible():
    for path in sorted((Path(__file__).parents[1] / "results").rglob("*.json")):
        assert plausibility.findings(read_results(path, mark_implausible=False)) == [], path


def test_nan_from_json_is_refused_with_its_field(tmp_path):
    from benchlib.results.store import ResultsError

    data = json.loads(results_with(rec(value=20.0)).model_dump_json())
    data["measurements"][0]["value"] = float("nan")
    path = tmp_path / "nan.json"
    path.write_text(json.dumps(data))  # Python writes NaN, which is not JSON
    with pytest.raises(ResultsError, match="field 'measurements.0.value': NaN"):
        read_results(path)
