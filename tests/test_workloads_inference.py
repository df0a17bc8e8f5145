"""Inference: images/s and p50/p90 latency per model and batch size, in torch and Keras."""

import dataclasses

import pytest
from fakes import not_installed

from benchlib.core.timing import Measurement
from benchlib.measure.runner import run_workload
from benchlib.results.schema import MeasurementRecord
from benchlib.workloads import RunContext, get
from benchlib.workloads.inference import THROUGHPUT, each_model, oom_record, p90

TINY = {
    "models": ["mobilenet_v2"],
    "batches": [1, 2],
    "side": 32,
    "timer": {"target_block_s": 0.0, "warmup_s": 0.0, "min_time_s": 0.0, "max_time_s": 0.3, "min_samples": 5},
}


def run_tiny(name, machine, **overrides):
    w = dataclasses.replace(get(name), sizes={"quick": TINY | overrides})
    return run_workload(w, RunContext(device="cpu", machine=machine, size="quick"), "cpu")


@pytest.mark.slow
@pytest.mark.parametrize("name, framework", [("inference", "torch"), ("inference_keras", "tensorflow")])
def test_throughput_and_latency_per_batch(name, framework, machine):
    records = run_tiny(name, machine)
    assert all(r.status == "ok" for r in records), [r.message for r in records]
    assert {r.workload for r in records} == {name} and {r.framework for r in records} == {framework}
    for batch in (1, 2):
        by = {r.metric.name: r for r in records if r.params["batch_size"] == batch}
        assert set(by) == {"throughput", "latency_p50", "latency_p90"}
        stats = by["throughput"].stats
        assert stats.number_per_sample == 1, "every call timed alone, so a sample is one request"
        assert by["throughput"].value == pytest.approx(batch / stats.median)
        assert by["latency_p50"].value == pytest.approx(stats.median * 1e3)
        assert by["latency_p50"].value <= by["latency_p90"].value <= stats.max * 1e3
        assert by["latency_p90"].metric.unit == "ms" and not by["latency_p90"].metric.higher_is_better


def test_p90_from_per_call_times():
    m = Measurement(times=tuple(float(t) for t in range(1, 11)), number_per_sample=1, warmup_s=0.0)
    assert p90(m) == pytest.approx(9.1)
    assert p90(Measurement(times=(0.5,), number_per_sample=1, warmup_s=0.0)) == 0.5


def test_unknown_model_fails_naming_it(machine):
    [record] = run_tiny("inference", machine, models=["resnet9000"])
    assert record.status == "error"
    assert "resnet9000" in record.message and record.message.startswith("inference raised")


def test_oom_at_one_batch_size_keeps_the_others():
    def measure(model, batch):
        if batch == 64:
            raise RuntimeError("CUDA out of memory. Tried to allocate 3.00 GiB")
        return [
            MeasurementRecord(
                workload="inference", framework="torch", device="cuda", metric=THROUGHPUT, value=float(batch)
            )
        ]

    records = each_model(
        {"models": ["resnet50"], "batches": [1, 64, 8]},
        measure,
        lambda e: "out of memory" in str(e),
        oom_record("torch", "cuda", "Tesla T4"),
    )
    assert [r.status for r in records] == ["ok", "oom", "ok"]
    assert records[1].params == {"mode": "inference", "model": "resnet50", "batch_size": 64}
    assert "resnet50 at batch 64: out of memory" in records[1].message


def test_missing_torch_skips(monkeypatch, machine):
    not_installed(monkeypatch, "torch")
    [record] = run_tiny("inference", machine)
    assert record.status == "skipped" and "torch is not installed" in record.message


def test_missing_tensorflow_skips(monkeypatch, machine):
    not_installed(monkeypatch, "tensorflow")
    [record] = run_tiny("inference_keras", machine)
    assert record.status == "skipped" and "tensorflow is not installed" in record.message
