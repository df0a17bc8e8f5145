"""`benchlib predict` and benchlib.predict's speed: counting on fake tensors, the roofline, and the published check."""

from __future__ import annotations

import json
import statistics

import pytest
import torch
from typer.testing import CliRunner

from benchlib.catalog.gpus import find_gpu, load_accelerators
from benchlib.core.paths import reported_dir
from benchlib.derive.published_speed import (
    TARGET_MEDIAN_ERROR,
    compare,
    fit_memory_efficiency,
    halves,
    median_abs_error,
)
from benchlib.models.trainable import get_model
from benchlib.predict.count import op_counter
from benchlib.predict.roofline import (
    COMPUTE_EFFICIENCY,
    DEFAULT_COMPUTE_EFFICIENCY,
    EAGER_LAUNCH_S,
    MEMORY_EFFICIENCY,
    NVIDIA_GENERATIONS,
    generation,
    gpu_rates,
    step_time,
)
from benchlib.predict.speed import predict_speed
from benchlib.results.store import read_results


def invoke(*args: str):
    from benchlib.cli import app

    return CliRunner().invoke(app, ["predict", *args])


# ----------------------------------------------------------------------------- counting


def test_a_matmul_counts_its_flops_and_the_bytes_it_reads_and_writes():
    a, b = torch.randn(64, 32), torch.randn(32, 16)
    with op_counter() as counter:
        torch.mm(a, b)
    (op,) = counter.ops
    assert (op.op, op.kind, op.dtype) == ("mm", "matmul", "fp32")
    assert op.flops == 2 * 64 * 32 * 16
    assert op.bytes == 4 * (64 * 32 + 32 * 16 + 64 * 16)


def test_views_move_nothing_and_elementwise_ops_only_move_memory():
    x = torch.randn(8, 8, dtype=torch.float16)
    with op_counter() as counter:
        y = x.reshape(64).unsqueeze(0)
        torch.relu(y)
    (op,) = counter.ops
    assert (op.kind, op.flops, op.dtype, op.bytes) == ("memory", 0, "fp16", 2 * 2 * 64)


def test_an_embedding_lookup_reads_only_the_rows_it_returns():
    table, ids = torch.randn(50_000, 16), torch.tensor([[1, 2, 3]])
    with op_counter() as counter:
        torch.nn.functional.embedding(ids, table)
    assert [op.bytes for op in counter.ops] == [2 * 3 * 16 * 4]


def test_grouped_query_attention_counts_the_arithmetic_of_every_query_head():
    # 8 query heads share 2 key/value heads: the arithmetic is that of 8 full heads.
    q, kv = torch.randn(1, 8, 16, 32), torch.randn(1, 2, 16, 32)
    with op_counter() as counter:
        torch.nn.functional.scaled_dot_product_attention(q, kv, kv, enable_gqa=True)
    assert sum(op.flops for op in counter.ops) == 4 * 8 * 16 * 16 * 32


# ----------------------------------------------------------------------------- the GPU's figures


def test_compute_efficiency_per_generation_is_the_median_mamf_fraction():
    """The constants are the reported MAMF bf16 figures over the specs' peaks, one median per generation."""
    by_generation: dict[str, list[float]] = {}
    gpus = [s for s in load_accelerators() if s.kind == "gpu"]
    for path in sorted(reported_dir().glob("mamf-*.json")):
        for record in read_results(path).measurements:
            if record.dtype != "bf16":
                continue
            words = set(record.device_name.replace("NVIDIA ", "").replace("AMD ", "").split()[:1])
            spec = next(s for s in gpus if words <= set(s.name.split()))  # "A100 SXM": both A100s are Ampere
            # Over the specs' peak, the figure a prediction multiplies the fraction by.
            peak = spec.bf16_tensor_tflops.value
            by_generation.setdefault(generation(spec.architecture.value), []).append(record.value / peak)
    recomputed = {g: round(statistics.median(v), 3) for g, v in by_generation.items()}
    assert recomputed == COMPUTE_EFFICIENCY
    assert DEFAULT_COMPUTE_EFFICIENCY == pytest.approx(
        statistics.median(COMPUTE_EFFICIENCY[g] for g in NVIDIA_GENERATIONS), abs=5e-4
    )


def test_a_gpu_without_a_mamf_figure_says_its_efficiency_is_a_default():
    t4 = gpu_rates(find_gpu("Tesla T4"))
    assert (t4.name, t4.generation, t4.compute_efficiency) == ("T4", "Turing", DEFAULT_COMPUTE_EFFICIENCY)
    assert "no MAMF figure for Turing" in t4.efficiency_basis
    assert gpu_rates(find_gpu("A100 80GB SXM")).compute_efficiency == COMPUTE_EFFICIENCY["Ampere"]
    assert "fp16 peak" in gpu_rates(find_gpu("GeForce RTX 4090")).unverified


def test_each_op_takes_the_slower_of_its_compute_and_its_memory():
    # On the meta device: shapes only, so the big fp16 matmul costs nothing on the CPU.
    a, b = (torch.empty(4096, 4096, dtype=torch.float16, device="meta") for _ in range(2))
    with op_counter() as counter:
        torch.mm(a, b)  # compute-bound on any GPU
        a + b  # memory-bound on any GPU
    rates = gpu_rates(find_gpu("A100 80GB SXM"))
    step = step_time(counter.ops, rates)
    matmul, add = counter.ops
    assert step.compute_bound_s == pytest.approx(matmul.flops / (312e12 * rates.compute_efficiency))
    assert step.memory_bound_s == pytest.approx(add.bytes / (2039e9 * MEMORY_EFFICIENCY))
    assert step.seconds == pytest.approx(step.compute_bound_s + step.memory_bound_s)


def test_an_op_shorter_than_a_kernel_launch_takes_one_launch():
    # Eager PyTorch launches every op from the host: a tiny add can't finish sooner than its launch.
    a = torch.empty(8, dtype=torch.float16, device="meta")
    with op_counter() as counter:
        a + a
        a * a
    step = step_time(counter.ops, gpu_rates(find_gpu("A100 80GB SXM")))
    assert step.launch_bound_s == pytest.approx(2 * EAGER_LAUNCH_S)
    assert step.seconds == pytest.approx(2 * EAGER_LAUNCH_S)
    assert step.compute_bound_s == step.memory_bound_s == 0.0


# ----------------------------------------------------------------------------- predictions


@pytest.mark.slow
def test_resnet50_training_is_faster_on_a_faster_gpu_and_with_mixed_precision():
    t4 = predict_speed(get_model("resnet50"), find_gpu("T4"), mode="train", dtype="fp16", batch=32)
    a100 = predict_speed(get_model("resnet50"), find_gpu("A100 80GB SXM"), mode="train", dtype="fp16", batch=32)
    a100_fp32 = predict_speed(get_model("resnet50"), find_gpu("A100 80GB SXM"), mode="train", dtype="fp32", batch=32)
    assert t4.unit == a100.unit == "images/s"
    assert 0 < t4.throughput < a100_fp32.throughput < a100.throughput
    assert a100.throughput == pytest.approx(32 / a100.step.seconds)
    # A training step does about three times a forward pass's work (ResNet-50: 4.1 GMAC per image).
    assert a100.step.flops / 32 == pytest.approx(3 * 2 * 4.1e9, rel=0.05)


# ----------------------------------------------------------------------------- the command


def test_the_done_when_command_prints_images_per_second():
    result = invoke("--model", "resnet50", "--gpu", "A100 80GB SXM", "--mode", "train", "--dtype", "fp16", "--json")
    assert result.exit_code == 0, result.output
    answer = json.loads(result.stdout)
    assert answer["unit"] == "images/s" and answer["throughput"] > 0 and answer["kind"] == "predicted"
    assert answer["step_s"] == pytest.approx(
        answer["compute_bound_s"] + answer["memory_bound_s"] + answer["launch_bound_s"]
    )


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--model", "resnet50", "--gpu", "A100 80GB"], "unknown GPU 'A100 80GB'"),
        (["--model", "resnet50", "--gpu", "T4", "--dtype", "bf16"], "no bf16 peak"),
        (["--model", "resnet50", "--gpu", "T4", "--mode", "serve"], "--mode 'serve'"),
        (["--model", "resnet50", "--gpu", "T4", "--seq-len", "128"], "--seq-len applies to language models"),
        (["--model", "resnet50", "--gpu", "TPU v3"], "TPU"),
        (["--model", "no-such-model", "--gpu", "T4"], "no-such-model"),
    ],
)
def test_bad_input_is_one_line_naming_it(args, says):
    result = invoke(*args)
    assert result.exit_code == 2
    assert says in result.output and "Traceback" not in result.output


# ----------------------------------------------------------------------------- against published throughput


def test_the_halves_alternate_and_do_not_overlap():
    half = halves(["B", "A", "D", "C", "A"])
    assert half == {"A": "calibration", "B": "held out", "C": "calibration", "D": "held out"}


@pytest.mark.slow
def test_lambdas_resnet50_rows_are_predicted_within_the_target_on_both_halves():
    rows, not_compared = compare()
    assert {r.half for r in rows} == {"calibration", "held out"}
    assert {r.precision for r in rows} == {"FP32", "AMP"} and len(rows) >= 20
    assert median_abs_error(rows) <= TARGET_MEDIAN_ERROR
    assert any("2020" in n.what and n.rows > 0 for n in not_compared)


@pytest.mark.slow
def test_the_bandwidth_fraction_is_the_one_the_calibration_half_picks():
    assert fit_memory_efficiency() == MEMORY_EFFICIENCY
