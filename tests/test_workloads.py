"""Every workload on the CPU, at its quick size, returns sane, well-formed measurements."""

import dataclasses

import pytest

from benchlib.measure.runner import run_workload
from benchlib.workloads import RunContext, UnknownWorkload, all_workloads, get
from benchlib.workloads.conv2d import FULL_SHAPE, shape_for

CORE = ["matmul", "conv2d", "bandwidth"]


def test_registry_has_core_workloads_with_all_sizes():
    workloads = all_workloads()
    for name in CORE:
        w = workloads[name]
        assert w.params("quick") and w.params("full")
        assert w.description


def test_unknown_workload_names_it_and_lists_known():
    with pytest.raises(UnknownWorkload) as info:
        get("matmull")
    assert "'matmull'" in str(info.value)
    assert "matmul" in str(info.value).split("known workloads:")[1]


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.slow) if n == "matmul" else n for n in CORE])
def test_workload_runs_on_cpu(name, machine):
    w = get(name)
    records = run_workload(w, RunContext(device="cpu", machine=machine, size="quick"), "cpu")
    assert records
    for r in records:
        assert r.status == "ok", r.message
        assert r.workload == name
        assert r.device == "cpu"
        assert r.device_name == "Test CPU"
        assert r.value > 0
        assert r.stats.n >= 3 and r.stats.median > 0
        assert r.metric == w.metric


@pytest.mark.slow
def test_matmul_reports_fp32_and_bf16_on_cpu(machine):
    records = run_workload(get("matmul"), RunContext(device="cpu", machine=machine), "cpu")
    assert {r.dtype for r in records} == {"fp32", "bf16"}
    assert all(r.params["n"] in r.params["sizes"] for r in records)


def test_conv2d_scale_one_is_the_seeds_operation():
    assert shape_for(1.0) == FULL_SHAPE
    small = shape_for(0.125)
    assert (small["batch"], small["side"], small["filters"], small["kernel"]) == (16, 32, 256, 5)


def test_matmul_measures_each_cpu_dtype_at_a_tiny_size(machine):
    """The quick size's run at one small shape: the fast run's check of the matmul workload."""
    tiny = {"sizes": [128], "timer": {"warmup_s": 0.0, "max_time_s": 0.1}}
    records = run_workload(
        dataclasses.replace(get("matmul"), sizes={"quick": tiny}), RunContext(device="cpu", machine=machine), "cpu"
    )
    assert {r.dtype for r in records} == {"fp32", "bf16"}
    assert all(r.status == "ok" and r.value > 0 and r.params["n"] == 128 for r in records), records


def test_a_workload_runs_with_the_params_its_device_declares(machine):
    """`Workload.device_sizes`: what the runner hands a workload on the CPU, and on another device."""
    from benchlib.results.schema import MeasurementRecord, Metric
    from benchlib.workloads import Workload

    seen: list[dict] = []
    metric = Metric(name="time", unit="ms", higher_is_better=False)

    def run(ctx, params):
        seen.append(params)
        return [MeasurementRecord(workload="w", framework="python", device=ctx.device, metric=metric, value=1.0)]

    w = Workload(
        name="w",
        framework="python",
        description="w",
        metric=metric,
        sizes={"quick": {"n": 1, "keep": "yes"}, "standard": {"n": 100, "keep": "yes"}},
        run=run,
        device_sizes={"cpu": {"standard": {"n": 10}}},
    )
    for size in ("quick", "standard", "full"):
        run_workload(w, RunContext(device="cpu", machine=machine, size=size), "cpu")
    assert seen == [{"n": 1, "keep": "yes"}, {"n": 10, "keep": "yes"}, {"n": 100, "keep": "yes"}]
    assert w.params("standard", "cuda") == {"n": 100, "keep": "yes"}


def test_a_cpu_sweeps_matmul_up_to_1024_with_the_standard_timer():
    """matmul's CPU standard size (`matmul.CPU_STANDARD`): the sizes where a CPU's fp32 rate peaks."""
    w = get("matmul")
    gpu, cpu = w.params("standard"), w.params("standard", "cpu")
    assert cpu["timer"] == gpu["timer"] and cpu["sizes"] == w.params("quick")["sizes"]
    assert max(cpu["sizes"]) == 1024 < max(gpu["sizes"]) and w.params("standard", "cuda") == gpu
