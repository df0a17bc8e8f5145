"""`benchlib fit` for language models: the extrapolation, the storage it models and the command's interface."""

from __future__ import annotations

import json
import textwrap

import pytest
from fit_cli import invoke
from tiny_configs import TINY_QWEN2

from benchlib.catalog.language_models import LanguageModel, resolve_model, shipped_models
from benchlib.core.units import GIB
from benchlib.predict.llm_memory import BASE_LAYERS, LLMPredictor, StepTracer, make_setup
from benchlib.predict.memory import memory_limit
from benchlib.predict.published_memory import Comparison, median_abs_error, published_rows
from benchlib.predict.quantized import storage_bytes

LAYERS = 6
# What every tiny language model here has: 64 wide, four heads over two key-value heads, 512 tokens.
TINY = dict(hidden_size=64, num_attention_heads=4, num_key_value_heads=2, vocab_size=512, max_position_embeddings=4096)


def tiny_llama(layers: int = LAYERS, **extra) -> LanguageModel:
    from transformers import LlamaConfig

    config = LlamaConfig(
        **TINY, intermediate_size=128, num_hidden_layers=layers, architectures=["LlamaForCausalLM"], **extra
    )
    return LanguageModel("tiny-llama", "Tiny Llama", config=config)


SETUPS = {
    "inference": make_setup("inference", seq_len=64),
    "inference nf4": make_setup("inference", weights="nf4", seq_len=64),
    "train fp32 + bf16 autocast": make_setup("train", dtype="bf16", batch=2, seq_len=32),
    "train pure bf16": make_setup("train", weights="bf16", batch=2, seq_len=32),
    "lora": make_setup("lora", batch=2, seq_len=32, lora_rank=4),
    "lora q,v with checkpointing": make_setup(
        "lora", batch=2, seq_len=32, lora_rank=4, lora_targets="q_proj,v_proj", grad_checkpointing=True
    ),
    "qlora": make_setup("qlora", batch=2, seq_len=32, lora_rank=4),
    "qlora 8-bit paged optimizer": make_setup(
        "qlora", batch=2, seq_len=32, lora_rank=4, optimizer="paged_adamw_8bit", grad_checkpointing=True
    ),
    "lora int8": make_setup("lora", weights="int8", batch=2, seq_len=32, lora_rank=4),
}


# The trainings' traces (backward and optimizer step at two depths and full depth) take seconds each.
SLOW_SETUPS = {
    "train fp32 + bf16 autocast",
    "train pure bf16",
    "lora",
    "lora q,v with checkpointing",
    "qlora",
    "qlora 8-bit paged optimizer",
    "lora int8",
}


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.slow) if n in SLOW_SETUPS else n for n in SETUPS])
def test_the_extrapolation_from_two_depths_equals_a_full_depth_trace(name):
    setup = SETUPS[name]
    model = tiny_llama()
    size = setup.batch if setup.trains else setup.seq_len
    predictor = LLMPredictor(model, setup)
    predicted = predictor.breakdown(size)
    assert [len(layers) for layers in predictor.plan.layers] == [BASE_LAYERS, BASE_LAYERS + 1]
    phases = StepTracer(model, setup, None).peak(size)
    assert predicted == max(phases.values(), key=lambda kinds: kinds["total"])


def tiny_gemma3(layers: int = 14) -> LanguageModel:
    """Gemma 3's text decoder in small: five sliding-window layers to one global layer."""
    from transformers import Gemma3TextConfig

    config = Gemma3TextConfig(
        **TINY,
        intermediate_size=128,
        num_hidden_layers=layers,
        head_dim=16,
        sliding_window=16,
        architectures=["Gemma3ForCausalLM"],
    )
    return LanguageModel("tiny-gemma3", "Tiny Gemma 3", config=config)


def tiny_gpt_oss(layers: int = 7) -> LanguageModel:
    """gpt-oss in small: a MoE whose layers alternate sliding-window and full attention (eager, with sinks)."""
    from transformers import GptOssConfig

    config = GptOssConfig(
        **TINY,
        intermediate_size=64,
        num_hidden_layers=layers,
        head_dim=16,
        num_local_experts=8,
        num_experts_per_tok=2,
        sliding_window=16,
        architectures=["GptOssForCausalLM"],
    )
    return LanguageModel("tiny-gpt-oss", "Tiny gpt-oss", config=config)


KINDS_OF_LAYERS = {
    "gemma3 inference": (tiny_gemma3, make_setup("inference", seq_len=48)),
    "gemma3 lora": (tiny_gemma3, make_setup("lora", batch=2, seq_len=32, lora_rank=4)),
    "gpt-oss inference fp16": (tiny_gpt_oss, make_setup("inference", weights="fp16", seq_len=48)),
    "gpt-oss lora": (tiny_gpt_oss, make_setup("lora", batch=2, seq_len=32, lora_rank=4)),
}


@pytest.mark.parametrize(
    "name",
    [pytest.param(n, marks=pytest.mark.slow) if "lora" in n or n.startswith("gemma3") else n for n in KINDS_OF_LAYERS],
)
def test_layers_of_different_kinds_extrapolate_per_kind_to_a_full_depth_trace(name):
    build, setup = KINDS_OF_LAYERS[name]
    model = build()
    size = setup.batch if setup.trains else setup.seq_len
    predictor = LLMPredictor(model, setup)
    kinds = list(dict.fromkeys(model.layer_kinds))
    assert len(kinds) == 2 and len(predictor.plan.layers) == 1 + len(kinds)
    assert "extrapolated per kind of layer" in predictor.method()
    phases = StepTracer(model, setup, None).peak(size)
    full = max(phases.values(), key=lambda kinds: kinds["total"])
    predicted = predictor.breakdown(size)
    # What the layers hold adds up exactly; where in the step the peak falls can differ by a layer's
    # passing buffers, which doesn't grow with depth (under 0.5 % of these tiny models' peaks).
    for kind in ("weights", "gradients", "optimizer_state", "kv_cache"):
        assert predicted[kind] == full[kind], kind
    assert predicted["total"] == pytest.approx(full["total"], rel=0.01)


def test_a_model_no_deeper_than_its_reduced_traces_is_traced_whole():
    predictor = LLMPredictor(tiny_llama(layers=BASE_LAYERS + 1), make_setup("inference", seq_len=32))
    assert predictor.plan.layers == (None,)
    assert f"full depth ({BASE_LAYERS + 1} layers)" in predictor.method()


def test_the_kv_cache_is_two_tensors_per_layer_of_the_prompts_keys_and_values():
    setup = make_setup("inference", batch=3, seq_len=100)
    breakdown = LLMPredictor(tiny_llama(), setup).breakdown(100)
    head_dim, kv_heads, bf16 = 64 // 4, 2, 2
    assert breakdown["kv_cache"] == 2 * LAYERS * 3 * kv_heads * head_dim * 100 * bf16


def test_weights_are_the_parameters_in_their_storage():
    model = tiny_llama()
    hidden, ff, vocab = 64, 128, 512
    linears = [(64, 64), (32, 64), (32, 64), (64, 64), (ff, hidden), (ff, hidden), (hidden, ff)]  # q k v o gate up down
    per_layer_params = sum(o * i for o, i in linears) + 2 * hidden  # two norms
    params = LAYERS * per_layer_params + 2 * vocab * hidden + hidden  # untied embeddings and head, final norm
    setup = make_setup("inference", seq_len=8)
    # Buffers (the rotary embedding's fp32 frequencies) count as weights too.
    rotary = sum(b.numel() * b.element_size() for b in StepTracer(model, setup, None).model.buffers())
    bf16 = LLMPredictor(model, setup).breakdown(8)
    assert bf16["weights"] == 2 * params + rotary
    # NF4: linear layers in bitsandbytes' layout; the rest (embeddings, norms, head) kept in the compute dtype.
    nf4 = LLMPredictor(model, make_setup("inference", weights="nf4", seq_len=8)).breakdown(8)
    quantized = LAYERS * sum(sum(storage_bytes(o, i, "nf4").values()) for o, i in linears)
    assert nf4["weights"] == quantized + 2 * (params - LAYERS * sum(o * i for o, i in linears)) + rotary


@pytest.mark.slow
def test_nf4_storage_is_what_bitsandbytes_keeps():
    import torch
    from bitsandbytes.functional import quantize_4bit

    def nbytes(t: torch.Tensor) -> int:
        return t.numel() * t.element_size()

    for double_quant in (True, False):
        packed, state = quantize_4bit(torch.randn(256, 192), quant_type="nf4", compress_statistics=double_quant)
        kept = nbytes(packed) + nbytes(state.absmax) + nbytes(state.code)
        if double_quant:
            kept += nbytes(state.state2.absmax) + nbytes(state.state2.code) + nbytes(state.offset.reshape(1))
        assert sum(storage_bytes(256, 192, "nf4", double_quant).values()) == kept


@pytest.mark.slow
def test_modes_rank_as_their_memory_should():
    model = resolve_model("llama-3.2-1b")
    peaks = {mode: LLMPredictor(model, make_setup(mode, seq_len=256)).peak(1) for mode in ("train", "lora", "qlora")}
    assert peaks["qlora"] < peaks["lora"] < peaks["train"]


@pytest.mark.slow
def test_checkpointing_trades_activations_for_recompute():
    model = tiny_llama()
    plain = LLMPredictor(model, make_setup("lora", batch=4, seq_len=256)).breakdown(4)
    checkpointed = LLMPredictor(model, make_setup("lora", batch=4, seq_len=256, grad_checkpointing=True)).breakdown(4)
    assert checkpointed["activations"] < plain["activations"]
    assert checkpointed["weights"] == plain["weights"]


@pytest.mark.slow
def test_predictions_answer_fits_and_the_largest_batch_or_context():
    model = tiny_llama()
    device = memory_limit(8 * 1024**2)
    inference = LLMPredictor(model, make_setup("inference", seq_len=64)).predict(device)
    assert inference.searched == "context" and 64 <= inference.largest <= 4096 and inference.fits
    training = LLMPredictor(model, make_setup("lora", batch=1, seq_len=64)).predict(device)
    assert training.searched == "batch" and training.largest >= 1
    over = LLMPredictor(model, make_setup("lora", batch=training.largest + 1, seq_len=64)).predict(device)
    assert not over.fits


@pytest.mark.slow
def test_traces_are_cached_on_disk_and_reused(tmp_path, monkeypatch):
    model, setup = tiny_llama(), make_setup("qlora", batch=2, seq_len=32)
    first = LLMPredictor(model, setup, tmp_path).breakdown(2)
    monkeypatch.setattr(StepTracer, "peak", lambda *a: pytest.fail("traced again"))
    assert LLMPredictor(model, setup, tmp_path).breakdown(2) == first


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"mode": "train", "weights": "nf4"}, "quantized weights can't be trained"),
        ({"mode": "qlora", "weights": "bf16"}, "--mode qlora stores the base in nf4"),
        ({"mode": "inference", "lora_rank": 8}, "--lora-rank applies to --mode lora or qlora"),
        ({"mode": "inference", "grad_checkpointing": True}, "--grad-checkpointing applies to training modes"),
        ({"mode": "finetune"}, "--mode 'finetune'"),
        ({"mode": "lora", "weights": "bf16", "dtype": "fp16"}, "--weights bf16 computes in bf16"),
    ],
)
def test_setups_that_make_no_sense_are_named(kwargs, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(")):
        make_setup(**kwargs)


# ----------------------------------------------------------------------------- shipped configs


def test_every_shipped_config_builds_with_transformers_own_class():
    import torch
    from torch._subclasses.fake_tensor import FakeTensorMode

    for shipped in shipped_models().values():
        model = resolve_model(shipped.name)
        assert shipped.source.startswith("https://huggingface.co/") and shipped.release and shipped.checked
        layers = model.trace_plan(BASE_LAYERS).layers[0]
        with torch.device("meta"), FakeTensorMode(allow_non_fake_inputs=True):
            built = model.build(layers, torch.bfloat16)
        assert type(built).__name__ == shipped.config["architectures"][0]
        text = shipped.config.get("text_config", shipped.config)
        assert built.config.get_text_config().num_hidden_layers == len(layers or model.layer_kinds)
        assert model.depth == text["num_hidden_layers"]


def test_an_8b_model_is_about_16_gb_in_bf16_and_a_quarter_of_that_in_nf4():
    model = resolve_model("meta-llama/Llama-3.1-8B")
    bf16 = LLMPredictor(model, make_setup("inference", seq_len=16)).breakdown(16)["weights"]
    nf4 = LLMPredictor(model, make_setup("inference", weights="nf4", seq_len=16)).breakdown(16)["weights"]
    assert 8.0e9 * 2 < bf16 < 8.1e9 * 2  # 8.03 billion parameters
    # Linear layers in 4 bits; embeddings and the output layer (2 x 0.53 billion) stay in bf16.
    assert 5.0 * GIB < nf4 < 6.0 * GIB


# ----------------------------------------------------------------------------- the command


def tiny_config(tmp_path, **fields) -> str:
    config = tmp_path / "config.json"
    config.write_text(json.dumps(TINY_QWEN2 | fields))
    return str(config)


def on_one_and_two_gpus(tmp_path, mode: str, *flags_for_two: str) -> tuple[dict, dict]:
    """`benchlib fit --json`'s answers for an 8-layer model on one T4 and on two."""
    config = tiny_config(tmp_path, num_hidden_layers=8)
    flags = ["--model", config, "--gpu", "T4", "--mode", mode, "--seq-len", "256", "--json"]
    one = json.loads(invoke(*flags).stdout)
    result = invoke(*flags, "--gpus", "2", *flags_for_two)
    assert result.exit_code == 0, result.output
    return one, json.loads(result.stdout)


@pytest.mark.slow  # over 3 s here: kept out of the fast command (README command 3)
@pytest.mark.parametrize("mode", ["inference", "lora"])
def test_two_gpus_split_the_layers_and_answer_for_the_fullest(tmp_path, mode):
    one, two = on_one_and_two_gpus(tmp_path, mode)
    context = two["device"]["context_bytes"]
    assert two["gpus"] == 2 and len(two["per_gpu"]) == 2 and "per_gpu" not in one
    assert two["peak_bytes"] == max(two["per_gpu"]) and two["tensor_peak_bytes"] < one["tensor_peak_bytes"]
    # Both GPUs hold layers and a CUDA context each; together they hold at least the whole model.
    assert all(peak > context for peak in two["per_gpu"])
    assert sum(two["per_gpu"]) - 2 * context >= one["peak_bytes"] - context - one["breakdown"]["allocator"]
    assert two["breakdown"]["cuda_context"] == 2 * context
    assert "layers split over 2 GPUs" in two["method"]


@pytest.mark.slow  # over 3 s here: kept out of the fast command (README command 3)
@pytest.mark.parametrize("mode", ["inference", "lora"])
def test_data_parallel_puts_the_whole_model_on_each_gpu(tmp_path, mode):
    one, two = on_one_and_two_gpus(tmp_path, mode, "--parallel", "data")
    # Each GPU runs the one-GPU step; training adds DDP's own copy of the (adapters') gradients.
    buckets = two["breakdown"]["gradient_buckets"]
    assert buckets == (one["breakdown"]["gradients"] if mode == "lora" else 0)
    assert two["tensor_peak_bytes"] == one["tensor_peak_bytes"] + buckets
    assert two["per_gpu"] == [two["peak_bytes"]] * 2 and two["parallel"] == "data"
    assert "data parallel" in two["method"] and two["largest_" + one["searched"]] <= one["largest_" + one["searched"]]


def test_parallel_names_its_choices(tmp_path):
    result = invoke("--model", tiny_config(tmp_path), "--gpu", "T4", "--gpus", "2", "--parallel", "pipeline")
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert "--parallel 'pipeline': choose layers or data" in " ".join(result.output.split())


@pytest.mark.slow
def test_fit_answers_for_a_shipped_model_as_json():
    result = invoke("--model", "qwen2.5-0.5b", "--mode", "qlora", "--gpu", "T4", "--seq-len", "512", "--json")
    assert result.exit_code == 0, result.output
    answer = json.loads(result.stdout)
    assert isinstance(answer["tensor_peak_bytes"], int) and isinstance(answer["peak_bytes"], int)
    assert answer["peak_bytes"] > answer["tensor_peak_bytes"] and answer["fits"] is True
    assert set(answer["breakdown"]) == {
        "weights",
        "gradients",
        "optimizer_state",
        "activations",
        "kv_cache",
        "cuda_context",
        "allocator",
    }
    assert sum(answer["breakdown"].values()) == answer["peak_bytes"]
    assert answer["setup"]["weights"] == "nf4" and answer["setup"]["dtype"] == "fp16"  # the T4 has no bf16
    assert answer["largest_batch"] >= 1


def test_fit_reads_a_config_json(tmp_path):
    config = tiny_config(tmp_path)
    result = invoke("--model", config, "--memory-limit", "64MiB", "--seq-len", "128")
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert "at batch 1 x 128 tokens" in text and "fits" in text
    assert "longest context (batch 1) │ 1,024 tokens (the model's maximum)" in text
    answer = json.loads(invoke("--model", config, "--memory-limit", "64MiB", "--json").stdout)
    assert "extrapolated per layer to 6" in answer["method"] and answer["largest_context"] == 1024


@pytest.mark.slow
def test_fit_builds_a_model_from_a_factory(tmp_path, monkeypatch):
    (tmp_path / "my_models.py").write_text(
        textwrap.dedent("""
        import torch
        from torch import nn

        def tiny_gpt2():
            from transformers import GPT2Config, GPT2LMHeadModel
            return GPT2LMHeadModel(GPT2Config(n_embd=64, n_layer=6, n_head=4, vocab_size=300, n_positions=256))

        class Plain(nn.Module):
            def __init__(self):
                super().__init__()
                self.embed = nn.Embedding(300, 32)
                self.mix = nn.Linear(32, 32)
                self.head = nn.Linear(32, 300)

            def forward(self, ids):
                return self.head(torch.relu(self.mix(self.embed(ids))))

        def plain():
            return Plain()
    """)
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    gpt2 = invoke(
        "--model", "my_models:tiny_gpt2", "--mode", "lora", "--memory-limit", "256MiB", "--seq-len", "64", "--json"
    )
    assert gpt2.exit_code == 0, gpt2.output
    answer = json.loads(gpt2.stdout)
    assert "extrapolated per layer to 6" in answer["method"] and answer["fits"]
    plain = invoke(
        "--model", "my_models:plain", "--mode", "train", "--memory-limit", "256MiB", "--seq-len", "64", "--json"
    )
    assert plain.exit_code == 0, plain.output
    answer = json.loads(plain.stdout)
    assert "full depth" in answer["method"] and answer["breakdown"]["optimizer_state"] > 0


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--model", "lama-3.2-1b", "--gpu", "T4"], "unknown model 'lama-3.2-1b' (did you mean 'llama-3.2-1b'?)"),
        (
            ["--model", "llama-3.2-1b", "--gpu", "T4", "--mode", "train", "--weights", "nf4"],
            "quantized weights can't be trained",
        ),
        (["--model", "llama-3.2-1b", "--gpu", "T4", "--dtype", "bf16"], "--dtype bf16: the T4 has no hardware bf16"),
        (
            ["--model", "llama-3.2-1b", "--gpu", "T4", "--input", "3x224x224"],
            "--input is for the five built-in networks",
        ),
        (["--model", "missing/config.json", "--gpu", "T4"], "--model missing/config.json: no config.json there"),
        (["--model", "nowhere_module:factory", "--gpu", "T4"], "can't import nowhere_module"),
        (
            ["--model", "resnet50", "--gpu", "T4", "--mode", "lora"],
            "--mode lora: resnet50 is one of the five built-in networks",
        ),
        (["--model", "llama-3.2-1b", "--gpu", "T4", "--gpus", "0"], "--gpus must be at least 1, got 0"),
        (["--model", "llama-3.2-1b", "--gpu", "T4", "--gpus", "-2"], "--gpus must be at least 1, got -2"),
        (["--model", "resnet50", "--gpu", "T4", "--gpus", "2"], "--gpus 2: sharing work over GPUs applies to"),
    ],
)
def test_fit_rejects_bad_language_model_input_by_name(args, message, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    result = invoke(*args)
    assert result.exit_code == 2, result.output
    output = " ".join(result.output.split())
    assert message in output and "Traceback" not in output


def test_a_moe_config_without_its_expert_fields_names_the_missing_field(tmp_path):
    config = tiny_config(tmp_path, model_type="qwen3_moe", architectures=["Qwen3MoeForCausalLM"], num_experts_per_tok=2)
    result = invoke("--model", config, "--gpu", "T4")
    output = " ".join(result.output.split())
    assert (
        result.exit_code == 2
        and "'num_experts' (experts per layer)" in output.replace("'num_local_experts' or ", "")
        and "Traceback" not in output
    )


def test_a_config_that_is_not_json_is_named(tmp_path):
    config = tmp_path / "config.json"
    config.write_text("{not json")
    result = invoke("--model", str(config), "--gpu", "T4")
    squashed = "".join(result.output.split())  # rich may wrap a long path
    assert result.exit_code == 2
    assert f"--model{config}:notareadableJSONconfig" in squashed and "Traceback" not in squashed


def test_tied_embeddings_are_counted_once_as_from_pretrained_ties_them():
    model = resolve_model("llama-3.2-1b")
    setup = make_setup("inference", seq_len=16)
    weights = LLMPredictor(model, setup).breakdown(16)["weights"]
    hidden, ff, kv, vocab, layers = 2048, 8192, 512, 128256, 16
    per_layer = 2 * hidden * hidden + 2 * hidden * kv + 3 * hidden * ff + 2 * hidden
    params = vocab * hidden + layers * per_layer + hidden  # one embedding matrix, shared with the output layer
    assert round(params / 1e9, 2) == 1.24  # the size its model card gives
    # The rotary embedding's buffers belong to the model, not to a layer: the same at any depth.
    buffers = sum(b.numel() * b.element_size() for b in StepTracer(model, setup, model.layer_kinds[:2]).model.buffers())
    assert weights == 2 * params + buffers


@pytest.mark.slow
@pytest.mark.parametrize(
    ("config", "mode"),
    [
        (
            {
                "model_type": "bert",
                "architectures": ["BertForMaskedLM"],
                "hidden_size": 64,
                "intermediate_size": 128,
                "num_hidden_layers": 6,
                "num_attention_heads": 4,
                "vocab_size": 400,
                "max_position_embeddings": 256,
            },
            "train",
        ),
        (
            {
                "model_type": "llama",
                "architectures": ["LlamaForSequenceClassification"],
                "hidden_size": 64,
                "intermediate_size": 128,
                "num_hidden_layers": 6,
                "num_attention_heads": 4,
                "num_key_value_heads": 2,
                "vocab_size": 400,
                "num_labels": 3,
                "pad_token_id": 0,
                "max_position_embeddings": 256,
            },
            "lora",
        ),
    ],
)
def test_masked_lms_and_classifiers_are_built_with_the_class_their_config_names(tmp_path, config, mode):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    model = resolve_model(str(path))
    setup = make_setup(mode, batch=2, seq_len=64)
    tracer = StepTracer(model, setup, model.layer_kinds[:3])
    built = tracer.model.get_base_model() if mode == "lora" else tracer.model
    assert type(built).__name__ == config["architectures"][0]
    assert LLMPredictor(model, setup).breakdown(2) == max(
        StepTracer(model, setup, None).peak(2).values(), key=lambda kinds: kinds["total"]
    )


def test_each_published_memory_row_is_compared_or_says_why_not_and_the_median_skips_the_rest():
    rows = published_rows()
    assert len(rows) >= 10
    for row in rows:
        assert row.measured_bytes > 0 and row.source["url"].startswith("https://")
        if row.excluded() is None:
            assert row.setup().mode == row.row["mode"]
    compared = [Comparison(rows[0], rows[0].measured_bytes * 1.1, None), Comparison(rows[1], None, "left out")]
    assert median_abs_error(compared) == pytest.approx(0.1)
