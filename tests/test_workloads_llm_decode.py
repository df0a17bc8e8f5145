"""llm_decode: prefill and decode tokens/s with a KV cache, each on its own chart, at every batch size."""

import dataclasses
import math

import pytest
from charted import TEST_CPU, plotted
from fakes import not_installed

from benchlib.measure.runner import run_workload
from benchlib.workloads import RunContext, get

TINY_MODEL = {
    "hidden_size": 32,
    "intermediate_size": 64,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "vocab_size": 128,
}
TINY = {
    "model": TINY_MODEL,
    "batches": [1, 3],
    "prompt_len": 8,
    "new_tokens": 4,
    "accelerator_dtypes": ["bf16", "fp16"],
    "timer": {"target_block_s": 0.0, "warmup_s": 0.0, "min_time_s": 0.0, "max_time_s": 0.1, "min_samples": 3},
}


def run_tiny():
    w = dataclasses.replace(get("llm_decode"), sizes={"quick": TINY})
    return run_workload(w, RunContext(device="cpu", machine=TEST_CPU, size="quick"), "cpu")


@pytest.fixture(scope="module")
def records():
    return run_tiny()


def test_prefill_and_decode_tokens_per_second_at_each_batch(records):
    by = {(r.metric.name, r.params["batch_size"]): r for r in records}
    assert set(by) == {(m, b) for m in ("prefill_tokens_per_s", "decode_tokens_per_s") for b in (1, 3)}
    for (metric, batch), r in by.items():
        assert r.status == "ok", r.message
        assert (r.workload, r.metric.unit, r.dtype, r.device) == ("llm_decode", "tokens/s", "fp32", "cpu")
        assert math.isfinite(r.value) and r.value > 0
        tokens = batch * (8 if metric.startswith("prefill") else 4)
        assert r.value == pytest.approx(tokens / r.stats.median)
        assert r.params["phase"] == metric.split("_")[0] and r.params["cache"] == "DynamicCache"
        assert r.params["model"] == "2-layer, 32-wide" and r.params["prompt_len"] == 8 and r.params["new_tokens"] == 4


def test_each_phase_has_its_chart_with_a_bar_per_batch(records):
    settings = {"2-layer, 32-wide · batch 1 · fp32", "2-layer, 32-wide · batch 3 · fp32"}
    assert set(plotted(records, "llm_prefill")) == settings
    assert set(plotted(records, "llm_decode")) == settings


def test_every_timed_decode_loop_generates_what_generate_would():
    """Each loop starts from the same prefilled cache, so repeated calls do the same work and pick generate's tokens."""
    import torch

    from benchlib.models.llama import random_llama
    from benchlib.workloads.llm_decode import phases

    llama = random_llama(TINY_MODEL, "cpu", 16).eval()
    prompt = torch.randint(0, 128, (2, 8), generator=torch.Generator().manual_seed(3))
    with torch.inference_mode():
        prefill, decode = phases(llama, prompt, new_tokens=4)
        first, last, again = prefill(), decode(), decode()
        expected = llama.generate(
            prompt,
            attention_mask=torch.ones_like(prompt),
            do_sample=False,
            max_new_tokens=5,
            min_new_tokens=5,
            pad_token_id=0,
        )
    assert torch.equal(first[:, 0], expected[:, 8]) and torch.equal(last[:, 0], expected[:, -1])
    assert torch.equal(again, last)


def test_a_cpu_decodes_the_standard_model_from_a_shorter_prompt():
    """The CPU's standard size (`llm_decode.CPU_STANDARD`): the same weights to read per token."""
    w = get("llm_decode")
    gpu, cpu = w.params("standard"), w.params("standard", "cpu")
    assert cpu["model"] == gpu["model"] and cpu["batches"] == gpu["batches"]
    assert cpu["prompt_len"] < gpu["prompt_len"] and cpu["new_tokens"] < gpu["new_tokens"]
    assert cpu["timer"]["min_samples"] < gpu["timer"]["min_samples"]
    assert w.params("standard", "cuda") == gpu


def test_missing_transformers_skips_it_and_says_how_to_install(monkeypatch):
    not_installed(monkeypatch, "transformers")
    [r] = run_tiny()
    assert r.status == "skipped" and r.skip_reason == "framework-missing"
    assert "transformers is not installed" in r.message and "benchlib[llm]" in r.message
