"""attention: SDPA TFLOPS per backend, pass and mask; a backend the CPU lacks is skipped, never given a number."""

import dataclasses
import math

import pytest
from charted import TEST_CPU, chart_rows, plotted

from benchlib.measure.runner import run_workload
from benchlib.workloads import RunContext, get
from benchlib.workloads.attention import FORWARD, FORWARD_BACKWARD, Shape, counted_flops, sweep

TINY = {
    "tokens": 256,
    "model_dim": 64,
    "seq_lens": [64, 128],
    "head_dims": [32],
    "backends": ["math", "flash", "memory-efficient", "cuDNN"],
    "accelerator_dtypes": ["bf16", "fp16"],
    "timer": {"warmup_s": 0.0, "min_time_s": 0.0, "max_time_s": 0.05, "min_samples": 3},
}


@pytest.fixture(scope="module")
def records():
    w = dataclasses.replace(get("attention"), sizes={"quick": TINY})
    return run_workload(w, RunContext(device="cpu", machine=TEST_CPU, size="quick"), "cpu")


@pytest.mark.slow  # over 3 s here: kept out of the fast command (README command 3)
def test_the_cpu_backends_give_one_tflops_figure_per_pass_and_mask(records):
    ok = [r for r in records if r.status == "ok"]
    settings = {(r.params["backend"], r.params["pass"], r.params["mask"]) for r in ok}
    assert settings == {
        (b, p, m) for b in ("math", "flash") for p in (FORWARD, FORWARD_BACKWARD) for m in ("no mask", "causal")
    }
    assert len(ok) == len(settings)
    for r in ok:
        assert (r.workload, r.metric.name, r.metric.unit, r.dtype, r.device) == (
            "attention",
            "throughput",
            "TFLOPS",
            "fp32",
            "cpu",
        )
        assert math.isfinite(r.value) and r.value > 0
        assert r.value == pytest.approx(r.params["flops"] / r.stats.median / 1e12)
        # The record is the sweep's best shape, and the sweep's every rate is kept beside it.
        assert set(r.params["sweep_tflops"]) == {"L64 d32", "L128 d32"}
        assert r.value == pytest.approx(max(r.params["sweep_tflops"].values()), rel=1e-3)
        assert r.params["batch_size"] * r.params["seq_len"] == 256 and r.params["heads"] * r.params["head_dim"] == 64


@pytest.mark.slow  # the CPU attention run they share takes over 3 s here
def test_backends_the_cpu_lacks_are_skipped_with_torchs_reason_and_no_number(records):
    skipped = [r for r in records if r.status == "skipped"]
    assert {r.params["backend"] for r in skipped} == {"memory-efficient", "cuDNN"}
    assert len(skipped) == 2 * 2 * 2  # each pass and mask, so each chart's table says why
    for r in skipped:
        assert r.value is None and r.stats is None
        assert r.message.startswith(
            f"attention: torch's {r.params['backend']} backend has no kernel for fp32 on Test CPU at any of the 2 shapes (torch: "
        )


def test_flops_are_counted_and_causal_counts_half():
    shape = Shape(batch_size=2, heads=4, seq_len=128, head_dim=64)
    forward = counted_flops(shape, causal=False, backward=False)
    assert forward == 4 * 2 * 4 * 128 * 128 * 64  # QK^T and PV, two multiply-adds each
    assert counted_flops(shape, causal=True, backward=False) == forward / 2
    assert counted_flops(shape, causal=False, backward=True) == 3 * forward  # the backward is twice the forward
    assert counted_flops(shape, causal=True, backward=True) == 3 * forward / 2


def test_a_sweep_that_does_not_divide_the_tokens_names_the_shape():
    with pytest.raises(ValueError, match="seq_len 96 and head_dim 64 aren't"):
        sweep({"tokens": 256, "model_dim": 64, "seq_lens": [96], "head_dims": [64]})


def test_a_cpu_sweeps_the_standard_shapes_per_head_on_32_times_fewer_heads_and_sequences():
    """The CPU's standard size (`attention.CPU_STANDARD`): the same attention per head, less of it."""
    w = get("attention")
    gpu, cpu = w.params("standard"), w.params("standard", "cpu")
    assert [s.key for s in sweep(cpu)] == [s.key for s in sweep(gpu)]
    assert cpu["backends"] == gpu["backends"] and cpu["timer"] == gpu["timer"]
    heads = {key: sum(s.batch_size * s.heads for s in sweep(p)) for key, p in (("gpu", gpu), ("cpu", cpu))}
    assert heads["gpu"] == 32 * heads["cpu"]
    assert w.params("standard", "cuda") == gpu


@pytest.mark.slow  # the CPU attention run they share takes over 3 s here
def test_each_pass_has_its_chart_with_a_bar_per_backend_and_mask(records):
    forward = plotted(records, "attention_forward")
    assert set(forward) == {
        "math · no mask · fp32",
        "math · causal · fp32",
        "flash · no mask · fp32",
        "flash · causal · fp32",
    }
    assert set(plotted(records, "attention_forward_backward")) == set(forward)
    table = chart_rows(records)["attention_forward"]
    listed = table[table["status"] == "skipped"]
    assert set(listed["setting"]) == {
        f"{b} · {m} · fp32" for b in ("memory-efficient", "cuDNN") for m in ("no mask", "causal")
    }
