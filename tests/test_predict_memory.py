"""`benchlib fit`: the batch solver, the traced peaks, GPU memory from the specs, the cache, the command."""

from __future__ import annotations

import contextlib
import json

import pytest
import typer
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from benchlib.catalog.gpus import UnknownGPU, find_gpu
from benchlib.cli.fit import fit
from benchlib.cli.fit_options import parse_bytes, parse_shape
from benchlib.core.units import GIB, MIB
from benchlib.predict import memory as fit_predict
from benchlib.predict.memory import (
    ALLOCATOR_OVERHEAD,
    CUDA_CONTEXT_BYTES,
    PeakTracer,
    Predictor,
    gpu_memory,
    memory_limit,
    solve_max_batch,
)

# ----------------------------------------------------------------------------- the solver

lines = st.lists(st.tuples(st.integers(0, 10**9), st.integers(0, 10**7)), min_size=1, max_size=4)


def brute_force(lines: list[tuple[int, int]], budget: int, limit: int) -> int:
    """The largest b <= limit with every line a + k*b within budget, worked out line by line."""
    per_line = [(budget - a) // k if k else (limit if a <= budget else -1) for a, k in lines]
    return max(0, min(limit, *per_line))


@settings(max_examples=300, deadline=None)
@given(lines=lines, budget=st.integers(0, 2 * 10**9), first=st.tuples(st.integers(1, 300), st.integers(1, 300)))
def test_solver_matches_brute_force_on_any_convex_peak(lines, budget, first):
    # A step's peak is the largest of several moments, each fixed plus per-sample memory.
    def peak(batch: int) -> int:
        return max(a + k * batch for a, k in lines)

    limit = 5000
    calls: list[int] = []
    answer = solve_max_batch(lambda b: calls.append(b) or peak(b), budget, first=first, limit=limit)
    assert answer == brute_force(lines, budget, limit)
    assert answer == 0 or answer in calls, "the answer itself must have been traced"
    # Lines cut the search short; a flat peak can only be doubled up to the limit: log2(5000) ~ 13,
    # and the size after the answer is traced too.
    assert len(calls) <= 17


# Pieces that stop growing: a sliding window's caches, or, extrapolated from reduced depths, a
# moment that takes over in one traced depth before another.
capped = st.lists(st.tuples(st.integers(0, 10**7), st.integers(0, 10**9)), max_size=3)


@settings(max_examples=300, deadline=None)
@given(lines=lines, capped=capped, budget=st.integers(0, 2 * 10**9))
def test_solver_matches_brute_force_on_any_non_decreasing_peak(lines, capped, budget):
    def peak(batch: int) -> int:
        return max(a + k * batch for a, k in lines) + sum(min(k * batch, cap) for k, cap in capped)

    limit = 5000
    answer = solve_max_batch(peak, budget, limit=limit)
    assert answer == max((b for b in range(limit + 1) if peak(b) <= budget), default=0)


def test_solver_goes_on_where_a_peak_that_stops_growing_fools_its_bounds():
    # Steep up to 600, then one per batch: the line through the two failing batches (1,000 and
    # 2,000) says 550 is the most that fits; 551 fits too, so the search bisects on to 597.
    def peak(batch: int) -> int:
        return batch if batch <= 500 else 500 + 20 * (batch - 500) if batch <= 600 else 2500 + batch - 600

    assert solve_max_batch(peak, 2450, {1000: peak(1000), 2000: peak(2000)}) == 597


@settings(max_examples=200, deadline=None)
@given(lines=lines, budgets=st.lists(st.integers(0, 2 * 10**9), min_size=1, max_size=15))
def test_solver_without_verifying_is_still_exact_for_many_budgets(lines, budgets):
    def peak(batch: int) -> int:
        return max(a + k * batch for a, k in lines)

    known: dict[int, int] = {}
    for budget in sorted(budgets, reverse=True):
        answer = solve_max_batch(peak, budget, known, limit=5000, verify=False)
        assert answer == brute_force(lines, budget, 5000)


def test_solver_needs_two_traces_and_two_checks_on_a_straight_line():
    # The answer is traced, and so is the batch after it, which must not fit.
    calls: list[int] = []
    answer = solve_max_batch(lambda b: calls.append(b) or 1000 + 10 * b, 5000, first=(4, 16))
    assert answer == 400 and calls == [4, 16, 400, 401]


def test_solver_traces_nothing_more_when_the_smallest_batch_already_fails():
    # A 70B model on a T4: batch 1 is over budget, so batches 4 and 16 can't fit and aren't traced.
    calls: list[int] = []
    answer = solve_max_batch(lambda b: calls.append(b) or 100 + 7 * b, 50, {1: 107}, first=(4, 16))
    assert (answer, calls) == (0, [])


def test_solver_tries_batch_1_first_when_nothing_known_fits():
    # A 70B model on a T4 at 2,048 tokens: context 1 fails too, so contexts 4 and 16 aren't traced.
    calls: list[int] = []
    answer = solve_max_batch(lambda b: calls.append(b) or 100 + 7 * b, 50, {2048: 14436}, first=(4, 16))
    assert (answer, calls) == (0, [1])
    calls.clear()
    answer = solve_max_batch(lambda b: calls.append(b) or 100 + 7 * b, 400, {64: 548}, first=(4, 16, 128))
    assert answer == 42 and calls[:3] == [1, 4, 16] and 128 not in calls


def test_solver_reuses_known_traces_across_budgets():
    known: dict[int, int] = {}
    calls: list[int] = []
    peak = lambda b: calls.append(b) or 100 + 7 * b  # noqa: E731
    small = solve_max_batch(peak, 1000, known)
    big = solve_max_batch(peak, 5000, known)
    assert (small, big) == (128, 700)
    assert len(calls) == len(set(calls)) == len(known)


# ----------------------------------------------------------------------------- tracing


def test_peak_only_tracker_keeps_memtrackers_peak():
    from torch.distributed._tools.mem_tracker import MemTracker

    tracer = PeakTracer("vit_b_16", size="small", foreach=None)
    for batch in (3, 17):
        assert tracer.peak(batch) == tracer.peak(batch, MemTracker)


@pytest.mark.parametrize(("dtype", "masked"), [("fp32", True), ("fp16", True), ("fp16", False)])
def test_attention_with_dropout_and_a_mask_keeps_no_seq_by_seq_tensor(dtype, masked):
    # On the CPU, dropout or a mask sends attention to the math path, which keeps the seq x seq
    # probabilities for the backward; a GPU's fused kernels keep none, and fit predicts the GPU.
    import torch
    from torch import nn
    from torch._subclasses.fake_tensor import FakeTensorMode

    from benchlib.predict.memory import fused_attention, peak_only_tracker

    def peak(seq: int, fused: bool) -> int:
        with FakeTensorMode(allow_non_fake_inputs=True) as mode:
            torch_dtype = {"fp16": torch.float16, "fp32": torch.float32}[dtype]
            layer = nn.MultiheadAttention(64, 8, dropout=0.1, batch_first=True, dtype=torch_dtype)
            x = torch.randn(2, seq, 64, dtype=torch_dtype, requires_grad=True)
            mask = nn.Transformer.generate_square_subsequent_mask(seq, dtype=x.dtype) if masked else None
            tracker = peak_only_tracker()()
            with tracker, fused_attention() if fused else contextlib.nullcontext():
                layer(x, x, x, attn_mask=mask, need_weights=False)[0].sum().backward()
        del mode
        snapshot = tracker.get_tracker_snapshot("peak")
        return int(sum(s["Total"] for d, s in snapshot.items() if isinstance(d, torch.device)))

    # Doubling the sequence quadruples what the math path keeps, and roughly doubles the fused kernel's.
    assert peak(1024, fused=False) > 3 * peak(512, fused=False)
    assert peak(1024, fused=True) < 2.5 * peak(512, fused=True)
    assert peak(1024, fused=True) < peak(1024, fused=False) / 4


def test_traced_peak_counts_weights_gradients_and_optimizer_state():
    import torch

    tracer = PeakTracer("gpt2_small", size="small", foreach=None)
    params = sum(p.numel() for p in tracer.step.model.parameters()) * 4
    peak = tracer.peak(1)
    # Weights and Adam's two moments are live all step; activations and gradients come on top.
    assert peak > 3 * params
    assert tracer.peak(64) > tracer.peak(8) > peak
    assert all(isinstance(p, torch._subclasses.fake_tensor.FakeTensor) for p in tracer.step.model.parameters())


@pytest.mark.slow  # over 3 s here: kept out of the fast command (README command 3)
def test_predicted_max_batch_is_the_boundary_of_traced_peaks():
    predictor = Predictor("unet", size="small", foreach=None)
    budget = memory_limit(40 * MIB)
    prediction = predictor.predict(budget, batch=8)
    b = prediction.max_batch
    fresh = PeakTracer("unet", size="small", foreach=None)
    assert fresh.peak(b) <= budget.tensor_budget < fresh.peak(b + 1)
    assert prediction.fits is True and prediction.tensor_peak_at_batch == fresh.peak(8)


def test_fp16_mixed_precision_needs_less_activation_memory_than_fp32():
    fp32 = Predictor("resnet50", size="small", dtype="fp32").peak(64)
    fp16 = Predictor("resnet50", size="small", dtype="fp16").peak(64)
    assert fp16 < fp32


# ----------------------------------------------------------------------------- GPU memory


def test_a_gpu_with_a_published_nvidia_smi_total_has_that_total_with_its_source():
    from benchlib.catalog.gpus import find_accelerator

    fact = find_accelerator("T4").smi_memory_mib
    t4 = gpu_memory(find_gpu("Tesla T4"))
    assert t4.name == "T4" and t4.usable_bytes == fact.value * MIB == 15 * GIB
    assert t4.basis == "nvidia-smi total" and (t4.status, t4.source, t4.as_of) == (fact.status, fact.source, fact.as_of)


def test_a_gpu_without_one_takes_the_median_share_of_its_label_and_says_so():
    import statistics

    from benchlib.catalog.gpus import load_accelerators

    published = [s for s in load_accelerators() if s.smi_memory_mib and s.memory_gb]
    assert len(published) >= 5
    share = statistics.median(
        s.smi_memory_mib.value / (s.memory_gb.value * 1024 / (s.devices_per_unit.value if s.devices_per_unit else 1))
        for s in published
    )
    p4 = gpu_memory(find_gpu("Tesla P4"))
    assert p4.usable_bytes == int(8 * GIB * share)
    assert p4.status == "estimated" and f"{share:.1%} of the 8 GB label" in p4.basis


def test_dual_gpu_boards_count_one_device():
    assert gpu_memory(find_gpu("K80")).total_bytes == 12 * GIB


def test_allowances_are_set_aside_before_the_tensors():
    t4 = gpu_memory(find_gpu("T4"))
    assert (t4.context_bytes, t4.overhead) == (CUDA_CONTEXT_BYTES, ALLOCATOR_OVERHEAD)
    assert t4.tensor_budget == int((t4.usable_bytes - CUDA_CONTEXT_BYTES) / (1 + ALLOCATOR_OVERHEAD))
    assert abs(t4.on_device(t4.tensor_budget) - t4.usable_bytes) < 16


def test_a_geforce_card_is_found_without_its_brand_as_help_writes_it():
    assert find_gpu("RTX 4090").name == find_gpu("GeForce RTX 4090").name == "GeForce RTX 4090"


@pytest.mark.parametrize(
    ("name", "message"), [("T5", "did you mean 'T4'"), ("TPU v3", "is a TPU, not a GPU"), ("H1OO", "unknown GPU")]
)
def test_unknown_or_non_gpu_devices_are_named(name, message):
    with pytest.raises(UnknownGPU, match=message):
        find_gpu(name)


# ----------------------------------------------------------------------------- cache


def test_traces_are_cached_and_reused_without_tracing(tmp_path, monkeypatch):
    first = Predictor("bert_base", size="small", cache_dir=tmp_path).predict(memory_limit(32 * MIB))
    [entry] = list(tmp_path.glob("*.json"))
    key = json.loads(entry.read_text())["key"]
    assert key["model"] == "bert_base" and key["dtype"] == "fp32" and key["torch"] and key["benchlib"]

    def no_tracing(*args, **kwargs):
        raise AssertionError("a cached prediction must not trace")

    monkeypatch.setattr(fit_predict, "PeakTracer", no_tracing)
    again = Predictor("bert_base", size="small", cache_dir=tmp_path).predict(memory_limit(32 * MIB))
    assert again.max_batch == first.max_batch and again.traces == first.traces


def test_the_cache_key_changes_with_the_torch_version(tmp_path, monkeypatch):
    import torch

    one = Predictor("unet", size="small", cache_dir=tmp_path).cache
    monkeypatch.setattr(torch, "__version__", "0.0.1")
    assert Predictor("unet", size="small", cache_dir=tmp_path).cache != one
    assert Predictor("unet", size="small", dtype="fp16", cache_dir=tmp_path).cache != one


def test_a_damaged_cache_entry_is_traced_again(tmp_path):
    predictor = Predictor("unet", size="small", cache_dir=tmp_path)
    predictor.cache.write_text("{not json")
    prediction = Predictor("unet", size="small", cache_dir=tmp_path).predict(memory_limit(8 * MIB))
    assert prediction.max_batch > 0 and json.loads(predictor.cache.read_text())["traces"]


# ----------------------------------------------------------------------------- the command


def command() -> typer.Typer:
    app = typer.Typer()
    app.command("fit")(fit)
    app.command("unused")(lambda: None)
    return app


def test_fit_command_answers_for_a_memory_budget_as_json():
    result = CliRunner().invoke(
        command(), ["fit", "--model", "unet", "--size", "small", "--memory-limit", "16MiB", "--batch", "4", "--json"]
    )
    assert result.exit_code == 0, result.output
    answer = json.loads(result.stdout)
    assert answer["max_batch"] >= 4 and answer["fits"] is True
    assert answer["device"]["usable_bytes"] == 16 * MIB and answer["tensor_peak_at_max"] <= 16 * MIB


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--model", "resnet50"], "either --gpu NAME or --memory-limit SIZE"),
        (["--model", "resnet50", "--gpu", "T4", "--memory-limit", "1G"], "either --gpu NAME or --memory-limit SIZE"),
        (["--model", "resnet", "--gpu", "T4"], "unknown model 'resnet'"),
        (["--model", "resnet50", "--gpu", "T5"], "unknown GPU 'T5'"),
        (["--model", "resnet50", "--gpu", "T4", "--dtype", "int8"], "unknown dtype 'int8'"),
        (["--model", "resnet50", "--gpu", "T4", "--dtype", "bf16"], "no hardware bf16"),
        (["--model", "resnet50", "--gpu", "T4", "--batch", "0"], "--batch must be at least 1, got 0"),
        (["--model", "resnet50", "--gpu", "T4", "--input", "big"], "--input 'big'"),
    ],
)
def test_fit_command_rejects_bad_input_by_name(args, message):
    result = CliRunner().invoke(command(), ["fit", *args])
    assert result.exit_code == 2, result.output
    output = " ".join(result.output.split())
    assert message in output and "Traceback" not in output


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2GiB", 2 * GIB),
        ("1.5G", int(1.5 * GIB)),
        ("512MiB", 512 * MIB),
        ("4GB", 4 * GIB),
        ("1024", 1024),
        ("64 kib", 64 * 1024),
    ],
)
def test_parse_bytes(text, expected):
    assert parse_bytes(text) == expected


@pytest.mark.parametrize("text", ["", "lots", "-1G", "0", "2PB"])
def test_parse_bytes_rejects_what_it_cannot_read(text):
    with pytest.raises(ValueError, match="--memory-limit"):
        parse_bytes(text)


def test_parse_shape():
    assert parse_shape("3x224x224") == (3, 224, 224) == parse_shape("3, 224, 224")
    assert parse_shape("512") == (512,)
    with pytest.raises(ValueError, match="--input"):
        parse_shape("3x-1")
