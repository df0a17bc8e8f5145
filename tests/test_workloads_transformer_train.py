"""transformer_train: tokens/s of a Llama-style training step per precision and mode; fp16 and a failed compile are skipped."""

import dataclasses
import math

import pytest
from charted import TEST_CPU, chart_rows, plotted
from fakes import not_installed

from benchlib.measure.runner import run_workload
from benchlib.workloads import RunContext, get

TINY_MODEL = {
    "hidden_size": 32,
    "intermediate_size": 64,
    "num_hidden_layers": 1,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "vocab_size": 128,
}
TINY = {
    "model": TINY_MODEL,
    "batch_size": 2,
    "seq_len": 16,
    "dtypes": ["fp32", "bf16", "fp16"],
    "modes": ["eager"],
    "timer": {"warmup_s": 0.0, "min_time_s": 0.0, "max_time_s": 0.1, "min_samples": 3},
}


def run_tiny(**changes):
    w = dataclasses.replace(get("transformer_train"), sizes={"quick": TINY | changes})
    return run_workload(w, RunContext(device="cpu", machine=TEST_CPU, size="quick"), "cpu")


@pytest.fixture(scope="module")
def records():
    return run_tiny()


def test_cpu_trains_in_fp32_and_bf16_and_reports_tokens_per_second(records):
    by = {r.dtype: r for r in records}
    for dtype in ("fp32", "bf16"):
        r = by[dtype]
        assert r.status == "ok", r.message
        assert (r.workload, r.metric.name, r.metric.unit, r.device) == (
            "transformer_train",
            "throughput",
            "tokens/s",
            "cpu",
        )
        assert math.isfinite(r.value) and r.value > 0
        assert r.value == pytest.approx(2 * 16 / r.stats.median)
        assert (
            r.params
            | {
                "model": "1-layer, 32-wide",
                "compile": "eager",
                "batch_size": 2,
                "seq_len": 16,
                "optimizer": "AdamW",
                "num_key_value_heads": 2,
            }
            == r.params
        )
        assert r.params["parameters"] > 0
    assert by["fp32"].params["autocast"] is False and by["bf16"].params["autocast"] is True
    assert by["bf16"].params["grad_scaler"] is False


def test_fp16_is_skipped_on_the_cpu_with_the_reason(records):
    [fp16] = [r for r in records if r.dtype == "fp16"]
    assert fp16.status == "skipped" and fp16.value is None
    assert fp16.message.startswith("transformer_train: fp16 mixed precision is not available on Test CPU")
    assert fp16.params["grad_scaler"] is True


def test_the_chart_has_a_bar_per_model_precision_and_mode(records):
    assert set(plotted(records, "transformer_train")) == {
        "1-layer, 32-wide · fp32 · eager",
        "1-layer, 32-wide · bf16 · eager",
    }
    rows = chart_rows(records)["transformer_train"]
    assert list(rows[rows["status"] == "skipped"]["setting"]) == ["1-layer, 32-wide · fp16 · eager"]


def test_a_cpu_trains_the_quick_model_at_standard_in_every_precision_and_mode():
    """The CPU's standard size (`transformer_train.CPU_STANDARD`): quick's model, eager and compiled."""
    w = get("transformer_train")
    gpu, cpu, quick = w.params("standard"), w.params("standard", "cpu"), w.params("quick", "cpu")
    assert cpu["dtypes"] == gpu["dtypes"] and cpu["modes"] == gpu["modes"] == ["eager", "torch.compile"]
    assert (cpu["model"], cpu["batch_size"], cpu["seq_len"]) == (quick["model"], quick["batch_size"], quick["seq_len"])
    assert cpu["model"] != gpu["model"] and w.params("standard", "cuda") == gpu


def test_a_compiled_step_records_its_compile_time_apart(monkeypatch):
    """The bookkeeping of the compiled variant; torch.compile itself is replaced (it takes 15-45 s on this CPU)."""
    import torch

    monkeypatch.setattr(torch, "compile", lambda model: model)
    [r] = run_tiny(dtypes=["fp32"], modes=["torch.compile"])
    assert r.status == "ok" and r.params["compile"] == "torch.compile" and r.params["compile_s"] > 0


def test_a_compile_that_fails_is_skipped_with_the_error(monkeypatch):
    import torch

    class Broken(torch.nn.Module):
        """What torch.compile returns, with the model's parameters; its first call is where compiling fails."""

        def __init__(self, model):
            super().__init__()
            self.model = model

        def forward(self, **_):
            raise RuntimeError("inductor: no working C++ compiler\nlong traceback")

    monkeypatch.setattr(torch, "compile", Broken)
    [r] = run_tiny(dtypes=["fp32"], modes=["torch.compile"])
    assert r.status == "skipped" and r.value is None
    assert r.message == (
        "transformer_train: torch.compile doesn't work here for fp32 on Test CPU: "
        "RuntimeError: inductor: no working C++ compiler"
    )


def test_missing_transformers_skips_it_and_says_how_to_install(monkeypatch):
    not_installed(monkeypatch, "transformers")
    [r] = run_tiny()
    assert r.status == "skipped" and r.skip_reason == "framework-missing"
    assert "transformers is not installed" in r.message and "benchlib[llm]" in r.message
