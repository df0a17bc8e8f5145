"""Memory and time as formulas (benchlib.predict.formula): derived from a few traces, they give a full
trace's peak within 1 % and a full count's seconds within 2 % at sizes they were not derived at, and
`benchlib fit --sizes` answers from the memory formula."""

from __future__ import annotations

import json

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from benchlib.catalog.gpus import find_gpu
from benchlib.catalog.language_models import resolve_model
from benchlib.cli import app
from benchlib.predict.engines import ENGINES
from benchlib.predict.formula import MemoryFormula, TimeFormula, memory_formula, time_formula
from benchlib.predict.llm_memory import make_setup
from benchlib.predict.llm_speed import predict_llm_speed

pytestmark = pytest.mark.slow

TOLERANCE = 0.01  # the bound on memory (#37)
# One of each way a step's peak is made: a prefill whose peak moves from the logits to a dequantized
# weight, split over GPUs; training's two phases, split over GPUs; adapters on NF4 weights with
# checkpointing; an MoE's experts in MXFP4.
CASES = {
    "gptq inference on 2 GPUs": ("llama-3.1-8b", "inference", {"weights": "gptq-int4"}, 2),
    "full fine-tuning on 2 GPUs": ("llama-3.1-8b", "train", {}, 2),
    "qlora with checkpointing": ("qwen2.5-0.5b", "qlora", {"grad_checkpointing": True}, 1),
    "moe in mxfp4": ("gpt-oss-20b", "inference", {"weights": "mxfp4"}, 1),
}
_formulas: dict[str, MemoryFormula] = {}


def formula_of(case: str) -> MemoryFormula:
    if case not in _formulas:
        name, mode, options, gpus = CASES[case]
        _formulas[case] = memory_formula(resolve_model(name), make_setup(mode, **options), gpus)
    return _formulas[case]


def full_trace(formula: MemoryFormula, batch: int, length: int) -> dict[str, int]:
    """The whole model's peak from full traces at this size, made as `LLMPredictor.breakdown` makes it."""
    predictor = formula.predictor
    traced = []
    for layers in predictor.plan.layers:
        phases = predictor.tracer(layers).moments(batch, length)
        traced.append({phase: max(moments, key=lambda kinds: kinds["total"]) for phase, moments in phases.items()})
    return predictor.combined(traced)


@pytest.mark.parametrize("case", CASES)
@settings(max_examples=6, deadline=None)
@given(batch=st.integers(1, 64), length=st.integers(1, 32_768))
# Each side of gpt-oss's 128-token window, where its sliding layers' caches stop growing.
@example(batch=1, length=127)
@example(batch=3, length=128)
@example(batch=2, length=40)
def test_the_formula_gives_a_full_traces_peak_at_any_size(case: str, batch: int, length: int) -> None:
    formula = formula_of(case)
    length = min(length, formula.predictor.model.max_positions())
    traced, predicted = full_trace(formula, batch, length), formula.at(batch, length)
    figures = [k for k in traced if k == "total" or k.startswith("gpu")]
    assert len(figures) == 1 + (CASES[case][3] if CASES[case][3] > 1 else 0)
    for figure in figures:
        assert predicted[figure] == pytest.approx(traced[figure], rel=TOLERANCE), (case, batch, length, figure)


def test_a_peak_is_the_largest_of_its_moments() -> None:
    formula = formula_of("moe in mxfp4")
    tracer = formula.predictor.tracer(formula.predictor.plan.layers[0])
    moments = tracer.moments(1, 300)["prefill"]
    assert len(moments) > 100  # one per operation
    assert max(m["total"] for m in moments) == tracer.peak(300)["prefill"]["total"]


def test_fit_sizes_gives_the_longest_context_at_other_batches_from_the_formula() -> None:
    args = ["fit", "--model", "qwen2.5-0.5b", "--gpu", "T4", "--batch", "16", "--sizes", "--json"]
    result = CliRunner().invoke(app, args, env={"HF_HUB_OFFLINE": "1"})
    assert result.exit_code == 0, result.output
    answer = json.loads(result.output)
    contexts = {row["batch"]: row["largest_context"] for row in answer["other_sizes"]}
    assert sorted(contexts) == [1, 4, 16, 64]
    # More sequences leave room for shorter ones, and at the batch asked the formula's answer is the
    # traced search's (both within the formula's 1 %).
    assert contexts[1] >= contexts[4] >= contexts[16] >= contexts[64] > 0
    assert contexts[16] == pytest.approx(answer["largest_context"], rel=TOLERANCE)
    assert contexts[1] == answer["limit"]  # one sequence reads the model's whole context on a T4


@pytest.mark.parametrize(
    ("args", "names"),
    [
        (["--model", "resnet50", "--gpu", "T4"], "language models"),
        (["--model", "gpt-oss-20b", "--gpu", "T4", "--engine", "llama.cpp"], "llama.cpp"),
    ],
)
def test_fit_sizes_where_no_formula_applies_is_one_line(args: list[str], names: str) -> None:
    result = CliRunner().invoke(app, ["fit", *args, "--sizes"], env={"HF_HUB_OFFLINE": "1", "COLUMNS": "80"})
    assert result.exit_code == 2
    assert "--sizes" in result.output and names in result.output and "Traceback" not in result.output


TIME_TOLERANCE = 0.02  # the bound on time (#37)
# One of each way a call's ops are made: packed GPTQ weights read fused by one token and dequantized
# for more; a training step with adapters on NF4 weights and checkpointing; a MoE's experts (the
# share of them its tokens touch) with sliding-window layers; GGUF weights under llama.cpp.
TIME_CASES = {
    "gptq inference, transformers, A100": (
        "llama-3.1-8b",
        "inference",
        {"weights": "gptq-int4"},
        "A100 80GB SXM",
        "transformers",
    ),
    "qlora with checkpointing, T4": (
        "qwen2.5-0.5b",
        "qlora",
        {"grad_checkpointing": True, "dtype": "fp16"},
        "T4",
        "transformers",
    ),
    "moe in mxfp4 with a sliding window, H100": (
        "gpt-oss-20b",
        "inference",
        {"weights": "mxfp4"},
        "H100 SXM",
        "transformers",
    ),
    "gguf under llama.cpp, RTX 4090": (
        "llama-3.1-8b",
        "inference",
        {"weights": "gguf-q4_k_m"},
        "RTX 4090",
        "llama.cpp",
    ),
}
_time_formulas: dict[str, TimeFormula] = {}


def time_formula_of(case: str) -> TimeFormula:
    if case not in _time_formulas:
        name, mode, options, _, _ = TIME_CASES[case]
        _time_formulas[case] = time_formula(resolve_model(name), make_setup(mode, **options))
    return _time_formulas[case]


@pytest.mark.parametrize("case", TIME_CASES)
@settings(max_examples=6, deadline=None)
@given(batch=st.integers(1, 64), length=st.integers(1, 32_768))
@example(batch=1, length=127)
@example(batch=5, length=128)
def test_the_time_formula_gives_a_full_counts_seconds_at_any_size(case: str, batch: int, length: int) -> None:
    name, mode, _, gpu, engine = TIME_CASES[case]
    formula, model = time_formula_of(case), resolve_model(name)
    setup = make_setup(mode, **{**TIME_CASES[case][2], "batch": batch, "seq_len": length})
    counted = formula.training(batch, length) if setup.trains else formula.inference(batch, length)
    speeds = [
        predict_llm_speed(model, find_gpu(gpu), setup, ENGINES[engine], concurrency=False, counted=c)
        for c in (counted, None)
    ]
    calls = ("train",) if setup.trains else ("prefill", "decode")
    for call in calls:
        predicted, traced = (getattr(s, call) for s in speeds)
        assert predicted.seconds == pytest.approx(traced.seconds, rel=TIME_TOLERANCE), (case, batch, length, call)
        assert predicted.bound == traced.bound or abs(predicted.seconds / traced.seconds - 1) < 1e-3


def test_predict_sizes_gives_the_speed_at_other_batches_as_predict_gives_each() -> None:
    base = ["predict", "--model", "qwen2.5-0.5b", "--gpu", "L4", "--engine", "vllm", "--seq-len", "2048", "--json"]
    result = CliRunner().invoke(app, [*base, "--sizes"], env={"HF_HUB_OFFLINE": "1"})
    assert result.exit_code == 0, result.output
    others = {row["batch"]: row for row in json.loads(result.output)["other_sizes"]}
    assert sorted(others) == [1, 4, 16, 64] and {row["seq_len"] for row in others.values()} == {2048}
    # More sequences share each weight read: the aggregate decode rate grows with the batch.
    rates = [others[b]["decode_tokens_per_s"] for b in (1, 4, 16, 64)]
    assert rates == sorted(rates) and rates[0] < rates[-1]
    alone = CliRunner().invoke(app, [*base[:-1], "--batch", "16", "--json"], env={"HF_HUB_OFFLINE": "1"})
    assert alone.exit_code == 0, alone.output
    asked = json.loads(alone.output)
    for field in ("decode_tokens_per_s", "prefill_tokens_per_s"):
        assert others[16][field] == pytest.approx(asked[field], rel=TIME_TOLERANCE)


def test_predict_sizes_reads_well_in_80_columns_and_refuses_a_builtin_network() -> None:
    args = ["predict", "--model", "qwen2.5-0.5b", "--gpu", "T4", "--mode", "lora", "--batch", "2", "--sizes"]
    result = CliRunner().invoke(app, args, env={"HF_HUB_OFFLINE": "1", "COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    assert "2 x 512: " in result.output and "2 x 32,768: " in result.output and "training" in result.output
    assert max(len(line) for line in result.output.splitlines()) <= 80
    builtin = CliRunner().invoke(app, ["predict", "--model", "resnet50", "--gpu", "T4", "--sizes"])
    assert builtin.exit_code == 2 and "--sizes" in builtin.output and "Traceback" not in builtin.output
