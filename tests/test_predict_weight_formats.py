"""`benchlib fit`'s FP8, MXFP4 and GGUF weights and fp8 / q8_0 KV caches: their bytes against the
libraries' own tables and modules, the MoE experts they quantize, and what the command says."""

from __future__ import annotations

import json

import pytest
from fit_cli import invoke
from gguf import GGML_QUANT_SIZES, GGMLQuantizationType

from benchlib.catalog.language_models import LanguageModel
from benchlib.predict.llm_memory import WEIGHTS, LLMPredictor, StepTracer, make_setup
from benchlib.predict.quantized import observe_dequantize, storage_bytes
from benchlib.predict.weight_formats import (
    compute_capability,
    ggml_type_bytes,
    gguf_role,
    gguf_tensor_type,
    kv_bytes_per_value,
)

LAYERS = 6
# llama.cpp's use_more_bits(i, 6): i < 6 / 8 = 0, i >= 7 * 6 / 8 = 5, or (i - 0) % 3 == 2.
MORE_BITS = {2, 5}
HIDDEN, FF, VOCAB, KV = 256, 512, 512, 128  # 2 KV heads of 64
QWEN3_MOE = {
    "architectures": ["Qwen3MoeForCausalLM"],
    "model_type": "qwen3_moe",
    "hidden_size": 256,
    "intermediate_size": 512,
    "moe_intermediate_size": 128,
    "num_hidden_layers": LAYERS,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "head_dim": 64,
    "num_experts": 16,
    "num_experts_per_tok": 4,
    "vocab_size": 1000,
    "max_position_embeddings": 4096,
}
GPT_OSS = {
    "architectures": ["GptOssForCausalLM"],
    "model_type": "gpt_oss",
    "hidden_size": 256,
    "intermediate_size": 256,
    "num_hidden_layers": LAYERS,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "head_dim": 64,
    "num_local_experts": 8,
    "num_experts_per_tok": 2,
    "vocab_size": 1000,
    "max_position_embeddings": 4096,
}


def table_bytes(type_name: str, rows: int, cols: int) -> int:
    """The test's own reading of the gguf package's table."""
    block, size = GGML_QUANT_SIZES[GGMLQuantizationType[type_name]]
    assert cols % block == 0
    return rows * cols // block * size


def tiny_llama() -> LanguageModel:
    from transformers import LlamaConfig

    config = LlamaConfig(
        hidden_size=HIDDEN,
        intermediate_size=FF,
        num_hidden_layers=LAYERS,
        num_attention_heads=4,
        num_key_value_heads=2,
        vocab_size=VOCAB,
        max_position_embeddings=4096,
        architectures=["LlamaForCausalLM"],
    )
    return LanguageModel("tiny-llama", "Tiny Llama", config=config)


def from_config(fields: dict) -> LanguageModel:
    from transformers import AutoConfig

    fields = dict(fields)
    config = AutoConfig.for_model(fields.pop("model_type"), **fields)
    return LanguageModel(config.model_type, config.model_type, config=config)


def weights(model: LanguageModel, weights: str, **kwargs) -> int:
    return LLMPredictor(model, make_setup("inference", weights=weights, seq_len=16, **kwargs)).breakdown(16)["weights"]


# ----------------------------------------------------------------------------- GGUF


@pytest.mark.parametrize("type_name", ["Q4_K", "Q5_K", "Q6_K", "Q8_0", "Q5_0", "F16"])
def test_ggml_bytes_are_the_gguf_packages_blocks(type_name):
    assert ggml_type_bytes(type_name, 3, 512) == table_bytes(type_name, 3, 512)
    if type_name != "F16":
        with pytest.raises(ValueError, match="not a whole number"):
            ggml_type_bytes(type_name, 3, 500)


def test_q8_0_kv_values_take_34_bytes_per_32_from_the_gguf_table():
    block, size = GGML_QUANT_SIZES[GGMLQuantizationType.Q8_0]
    assert kv_bytes_per_value("q8_0") == size / block
    assert kv_bytes_per_value("fp8") == 1 and kv_bytes_per_value("fp16") == 2


def test_the_gguf_recipe_follows_llama_cpps_llama_tensor_get_type():
    q4 = "gguf-q4_k_m"
    # The output layer, and token embeddings tied to it, take Q6_K; untied embeddings the file's type.
    assert gguf_tensor_type(q4, "output", 4096) == "Q6_K"
    assert gguf_tensor_type(q4, "token_embd", 4096, tied=True) == "Q6_K"
    assert gguf_tensor_type(q4, "token_embd", 4096) == "Q4_K"
    assert gguf_tensor_type("gguf-q8_0", "output", 4096) == "Q8_0"
    # use_more_bits over 32 layers: the first and last 4, and every third from layer 6.
    more = [i for i in range(32) if gguf_tensor_type(q4, "attn_v", 4096, layer=i, layers=32) == "Q6_K"]
    assert more == [0, 1, 2, 3, 6, 9, 12, 15, 18, 21, 24, 27, 28, 29, 30, 31]
    assert more == [i for i in range(32) if gguf_tensor_type(q4, "ffn_down", 4096, layer=i, layers=32) == "Q6_K"]
    assert {gguf_tensor_type(q4, role, 4096, layer=5, layers=32) for role in ("attn_q", "attn_k", "ffn_up")} == {"Q4_K"}
    assert gguf_tensor_type("gguf-q5_k_m", "ffn_down", 4096, layer=0, layers=32) == "Q6_K"
    assert gguf_tensor_type("gguf-q5_k_m", "ffn_gate", 4096, layer=0, layers=32) == "Q5_K"
    # Eight experts (Mixtral): attn_v and attn_k in Q8_0, attn_output in Q5_K.
    assert gguf_tensor_type(q4, "attn_v", 4096, layer=5, layers=32, experts=8) == "Q8_0"
    assert gguf_tensor_type(q4, "attn_k", 4096, layer=5, layers=32, experts=8) == "Q8_0"
    assert gguf_tensor_type(q4, "attn_output", 4096, layer=5, layers=32, experts=8) == "Q5_K"
    # A row that is no whole number of 256-value blocks (gpt-oss's 2880) falls back.
    assert gguf_tensor_type(q4, "attn_q", 2880, layer=5, layers=32) == "Q5_0"
    assert gguf_tensor_type("gguf-q5_k_m", "attn_q", 2880, layer=5, layers=32) == "Q5_1"
    assert gguf_tensor_type(q4, "output", 2880) == "Q8_0"
    assert gguf_tensor_type("gguf-q8_0", "attn_q", 100) == "F16"


@pytest.mark.parametrize(
    ("name", "role"),
    [
        ("model.layers.3.self_attn.v_proj", "attn_v"),
        ("model.layers.3.self_attn.o_proj", "attn_output"),
        ("model.layers.3.mlp.down_proj", "ffn_down"),
        ("model.layers.3.mlp.experts.down_proj", "ffn_down"),
        ("model.layers.3.mlp.experts.gate_up_proj", "ffn_up"),
        ("model.layers.3.mlp.gate_proj", "ffn_gate"),
        ("model.layers.3.mlp.gate", "ffn_gate_inp"),  # a router: llama.cpp leaves it unquantized
        ("model.layers.3.block_sparse_moe.gate", "ffn_gate_inp"),
    ],
)
def test_transformers_names_map_to_llama_cpps_tensor_roles(name, role):
    assert gguf_role(name) == role


@pytest.mark.parametrize(
    ("file_type", "default"), [("gguf-q4_k_m", "Q4_K"), ("gguf-q5_k_m", "Q5_K"), ("gguf-q8_0", "Q8_0")]
)
@pytest.mark.slow  # over 3 s here: kept out of the fast command (README command 3)
def test_gguf_weights_are_llama_cpps_mix_over_the_models_depth(file_type, default):
    model = tiny_llama()
    linears = {"attn_q": (HIDDEN, HIDDEN), "attn_k": (KV, HIDDEN), "attn_v": (KV, HIDDEN)}
    linears |= {"attn_output": (HIDDEN, HIDDEN), "ffn_gate": (FF, HIDDEN), "ffn_up": (FF, HIDDEN)}
    linears |= {"ffn_down": (HIDDEN, FF)}
    # Norms stay in the compute dtype (bf16) and the rotary embedding's fp32 buffers stay as they are.
    setup = make_setup("inference", weights=file_type, seq_len=16)
    kept = StepTracer(model, setup, model.layer_kinds[:3]).model.model.rotary_emb.buffers()
    expected = 2 * (2 * LAYERS + 1) * HIDDEN + sum(b.numel() * b.element_size() for b in kept)
    # Untied token embeddings take the file's type; the output layer Q6_K (Q8_0 in a Q8_0 file).
    six = "Q8_0" if default == "Q8_0" else "Q6_K"
    expected += table_bytes(default, VOCAB, HIDDEN) + table_bytes(six, VOCAB, HIDDEN)
    for layer in range(LAYERS):
        for role, (out, inp) in linears.items():
            more = role in ("attn_v", "ffn_down") and layer in MORE_BITS
            expected += table_bytes(six if more else default, out, inp)
    # Each traced layer holds the mean of the mix; the extrapolated total is within a byte a tensor.
    assert 0 <= expected - LLMPredictor(model, setup).breakdown(16)["weights"] < LAYERS * len(linears)


def test_tied_gguf_embeddings_are_stored_once_in_the_output_layers_type_and_read_by_both():
    from transformers import LlamaConfig

    config = LlamaConfig(**{**tiny_llama().config.to_dict(), "tie_word_embeddings": True})
    model = LanguageModel("tied", "Tied", config=config)
    tracer = StepTracer(model, make_setup("inference", weights="gguf-q4_k_m", seq_len=8), model.layer_kinds[:3])
    q6 = table_bytes("Q6_K", VOCAB, HIDDEN)
    assert tracer.model.model.embed_tokens.packed.numel() == q6
    assert not list(tracer.model.lm_head.buffers())
    seen = []
    with observe_dequantize(lambda out, inp, packed: seen.append((out, inp, packed))):
        tracer.peak(8)
    assert (VOCAB, HIDDEN, q6) in seen  # decode time reads the output layer's bytes


# ----------------------------------------------------------------------------- FP8 and MXFP4


def test_fp8_storage_is_what_transformers_fp8_modules_hold():
    import torch
    from transformers.integrations.finegrained_fp8 import FP8Experts, FP8Linear

    def nbytes(module):
        return sum(p.numel() * p.element_size() for p in module.parameters())

    with torch.device("meta"):
        for out, inp in ((200, 320), (128, 256), (4096, 14336)):
            linear = FP8Linear(in_features=inp, out_features=out, block_size=(128, 128), has_bias=False)
            assert sum(storage_bytes(out, inp, "fp8").values()) == nbytes(linear)
        config = from_config(QWEN3_MOE).config
        experts = FP8Experts(config, block_size=(128, 128))
    e, i, h = QWEN3_MOE["num_experts"], QWEN3_MOE["moe_intermediate_size"], QWEN3_MOE["hidden_size"]
    ours = e * sum(storage_bytes(2 * i, h, "fp8").values()) + e * sum(storage_bytes(h, i, "fp8").values())
    assert ours == nbytes(experts)


def test_mxfp4_packs_two_values_a_byte_as_transformers_gpt_oss_experts_do_plus_a_scale_per_32():
    import torch
    from transformers.integrations.mxfp4 import Mxfp4GptOssExperts

    config = from_config(GPT_OSS).config
    with torch.device("meta"):
        experts = Mxfp4GptOssExperts(config)
    e, h, i = GPT_OSS["num_local_experts"], GPT_OSS["hidden_size"], GPT_OSS["intermediate_size"]
    gate_up = storage_bytes(2 * i, h, "mxfp4")
    assert e * gate_up["blocks"] == experts.gate_up_proj.numel()  # uint8, two 4-bit values each
    assert e * gate_up["scales"] == e * 2 * i * h // 32  # the checkpoint's *_scales: one e8m0 byte per 32
    assert e * storage_bytes(h, i, "mxfp4")["blocks"] == experts.down_proj.numel()


def test_fp8_quantizes_every_linear_but_the_output_layer():
    model = tiny_llama()
    linears = [(HIDDEN, HIDDEN), (KV, HIDDEN), (KV, HIDDEN), (HIDDEN, HIDDEN), (FF, HIDDEN), (FF, HIDDEN), (HIDDEN, FF)]
    dense = LAYERS * sum(o * i for o, i in linears)
    packed = LAYERS * sum(sum(storage_bytes(o, i, "fp8").values()) for o, i in linears)
    assert weights(model, "fp8") == weights(model, "bf16") - 2 * dense + packed


# ----------------------------------------------------------------------------- MoE experts


def test_moe_experts_are_quantized_where_the_format_quantizes_them():
    model = from_config(QWEN3_MOE)
    e, i, h = QWEN3_MOE["num_experts"], QWEN3_MOE["moe_intermediate_size"], QWEN3_MOE["hidden_size"]
    experts = [(2 * i, h), (h, i)]  # gate_up_proj [E, 2I, H] and down_proj [E, H, I] per layer
    dense = LAYERS * e * sum(o * n for o, n in experts)
    bf16 = weights(model, "bf16")
    mxfp4 = LAYERS * e * sum(sum(storage_bytes(o, n, "mxfp4").values()) for o, n in experts)
    # MXFP4: the experts alone; attention, router and embeddings stay bf16.
    assert weights(model, "mxfp4") == bf16 - 2 * dense + mxfp4
    # bitsandbytes replaces nn.Linear layers only: transformers 5's 3-D experts stay in the compute dtype.
    tracer = StepTracer(model, make_setup("inference", weights="nf4", seq_len=8), model.layer_kinds[:3])
    kept = [p for n, p in tracer.model.named_parameters() if n.endswith(("experts.gate_up_proj", "experts.down_proj"))]
    assert len(kept) == 6 and all(str(p.dtype) == "torch.bfloat16" for p in kept)
    # GGUF quantizes the experts too: gate_up in the file's type, down_proj (rows of 128: no whole
    # Q4_K block) falls back to Q5_0, or Q6_K's fallback Q8_0 in use_more_bits' layers.
    gguf = weights(model, "gguf-q4_k_m")
    experts_gguf = sum(
        table_bytes("Q4_K", e * 2 * i, h) + table_bytes("Q8_0" if layer in MORE_BITS else "Q5_0", e * h, i)
        for layer in range(LAYERS)
    )
    assert gguf < bf16 - 2 * dense + experts_gguf  # and the attention is quantized as well
    assert weights(model, "fp8") < bf16 - 2 * dense + LAYERS * e * sum(
        sum(storage_bytes(o, n, "fp8").values()) for o, n in experts
    )


def test_a_trace_reads_the_experts_packed_bytes_without_a_dense_copy():
    model = from_config(QWEN3_MOE)
    setup = make_setup("inference", weights="mxfp4", seq_len=16)
    tracer = StepTracer(model, setup, model.layer_kinds[:3])
    seen = []
    with observe_dequantize(lambda out, inp, packed: seen.append((out, inp, packed))):
        mxfp4 = tracer.peak(16)["prefill"]
    e, i, h = QWEN3_MOE["num_experts"], QWEN3_MOE["moe_intermediate_size"], QWEN3_MOE["hidden_size"]
    assert (e * 2 * i, h, sum(storage_bytes(2 * i, h, "mxfp4").values()) * e) in seen
    # The same activations as bf16: the fused kernels never hold a dequantized layer.
    bf16 = StepTracer(model, make_setup("inference", seq_len=16), model.layer_kinds[:3]).peak(16)["prefill"]
    assert mxfp4["activations"] == bf16["activations"]


def test_gpt_oss_mxfp4_end_to_end():
    model = from_config(GPT_OSS)
    assert weights(model, "mxfp4") < weights(model, "bf16") / 2


# ----------------------------------------------------------------------------- KV cache


def test_the_kv_cache_is_stored_in_the_format_asked_for():
    model = tiny_llama()
    bf16 = LLMPredictor(model, make_setup("inference", batch=2, seq_len=64)).breakdown(64)
    assert bf16["kv_cache"] == 2 * LAYERS * 2 * KV * 64 * 2  # keys and values, batch 2, bf16
    values = bf16["kv_cache"] // 2
    for kv_cache, stored in (("fp8", values), ("q8_0", values * 34 // 32), ("fp32", 4 * values)):
        setup = make_setup("inference", batch=2, seq_len=64, kv_cache=kv_cache)
        assert setup.kv_cache == kv_cache and f"{kv_cache} KV cache" in setup.describe()
        at = LLMPredictor(model, setup).breakdown(64)
        assert at["kv_cache"] == stored
        assert at["total"] - bf16["total"] == stored - bf16["kv_cache"]
        assert at["activations"] == bf16["activations"] and at["weights"] == bf16["weights"]
    assert make_setup("inference", dtype="fp16").kv_cache == "fp16"


# ----------------------------------------------------------------------------- setups and the command


def test_setups_name_the_format_problem():
    with pytest.raises(ValueError, match="--kv-cache applies to --mode inference"):
        make_setup("lora", kv_cache="fp8")
    with pytest.raises(ValueError, match="--kv-cache 'int4': choose one of fp32, fp16, bf16, fp8, q8_0"):
        make_setup("inference", kv_cache="int4")
    with pytest.raises(ValueError, match="can't train on MXFP4"):
        make_setup("lora", weights="mxfp4")
    with pytest.raises(ValueError, match="can't train on GGUF"):
        make_setup("lora", weights="gguf-q4_k_m")
    assert make_setup("lora", weights="fp8").weights == "fp8"  # transformers trains adapters over FP8


@pytest.mark.parametrize(
    ("architecture", "capability"),
    [
        ("Turing TU104", (7, 5)),
        ("Ampere GA100", (8, 0)),
        ("Ampere GA102", (8, 6)),
        ("Ada AD102", (8, 9)),
        ("Hopper GH100", (9, 0)),
        ("Volta GV100", (7, 0)),
        ("Google TPU", None),
    ],
)
def test_compute_capability_follows_the_architecture(architecture, capability):
    assert compute_capability(architecture) == capability


@pytest.fixture
def llama_json(tmp_path):
    path = tmp_path / "config.json"
    fields = {"model_type": "llama", "architectures": ["LlamaForCausalLM"], "hidden_size": HIDDEN}
    fields |= {"intermediate_size": FF, "num_hidden_layers": LAYERS, "num_attention_heads": 4}
    fields |= {"num_key_value_heads": 2, "vocab_size": VOCAB, "max_position_embeddings": 1024}
    path.write_text(json.dumps(fields))
    return str(path)


@pytest.fixture
def moe_json(tmp_path):
    path = tmp_path / "moe" / "config.json"
    path.parent.mkdir()
    path.write_text(json.dumps(QWEN3_MOE))
    return str(path)


def said(result) -> str:
    return " ".join(result.output.split())


def test_an_unknown_weight_format_lists_the_formats(llama_json):
    result = invoke("--model", llama_json, "--gpu", "T4", "--weights", "q4_k_m")
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert f"--weights 'q4_k_m': choose one of {', '.join(WEIGHTS)}" in said(result)


@pytest.mark.slow
def test_fp8_on_a_gpu_without_fp8_is_predicted_dequantized_and_says_so(llama_json):
    result = invoke("--model", llama_json, "--gpu", "T4", "--weights", "fp8", "--seq-len", "64")
    assert result.exit_code == 0, result.output
    text = said(result)
    assert "the T4 has no FP8 (compute capability 7.5" in text
    assert "transformers would dequantize the FP8 checkpoint while loading it" in text and "fp16 weights" in text
    answer = json.loads(invoke("--model", llama_json, "--gpu", "T4", "--weights", "fp8", "--json").stdout)
    assert answer["setup"]["weights"] == "fp16" and "dequantize" in answer["note"]
    h100 = json.loads(invoke("--model", llama_json, "--gpu", "H100 SXM", "--weights", "fp8", "--json").stdout)
    assert h100["setup"]["weights"] == "fp8" and h100["note"] is None
    assert h100["breakdown"]["weights"] < answer["breakdown"]["weights"]


def test_mxfp4_on_a_gpu_before_turing_is_predicted_with_dense_experts():
    from benchlib.catalog.gpus import find_gpu
    from benchlib.predict.llm_options import runs_as

    asked = make_setup("inference", weights="mxfp4", dtype="fp16")
    traced, note = runs_as(asked, find_gpu("V100 SXM2 16GB", ""))
    assert traced.weights == "fp16" and traced.dtype == "fp16"
    assert "the V100 SXM2 16GB can't run MXFP4 (compute capability 7.0" in note
    assert "transformers would dequantize the MoE experts to bf16" in note
    traced, note = runs_as(asked, find_gpu("T4", ""))
    assert traced == asked and "triton" in note


@pytest.mark.slow
def test_mxfp4_runs_on_an_a100_with_a_note_on_its_kernels(moe_json):
    # (V100 and T4 compute in fp16, and an fp16 MoE doesn't trace yet: grouped_mm on the CPU.)
    result = invoke("--model", moe_json, "--gpu", "A100 80GB SXM", "--weights", "mxfp4", "--seq-len", "64", "--json")
    assert result.exit_code == 0, result.output
    answer = json.loads(result.stdout)
    assert answer["setup"]["weights"] == "mxfp4" and "kernels package" in answer["note"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--weights", "mxfp4"], "--weights mxfp4 quantizes MoE experts only"),
        (["--mode", "lora", "--kv-cache", "fp8"], "--kv-cache applies to --mode inference"),
        (["--kv-cache", "int4"], "--kv-cache 'int4': choose one of"),
        (["--mode", "lora", "--weights", "gguf-q4_k_m"], "transformers can't train on GGUF weights"),
    ],
)
def test_fit_names_a_format_that_does_not_apply(llama_json, args, message):
    result = invoke("--model", llama_json, "--gpu", "A100 80GB SXM", *args)
    assert result.exit_code == 2, result.output
    assert message in said(result) and "Traceback" not in result.output


def test_kv_cache_is_for_language_models_only():
    result = invoke("--model", "resnet50", "--gpu", "T4", "--kv-cache", "fp8")
    assert result.exit_code == 2 and "--kv-cache: resnet50 is one of the five built-in networks" in said(result)


# ----------------------------------------------------------------------------- speed


@pytest.mark.slow
def test_speed_reads_the_packed_bytes_of_fused_formats_at_any_number_of_tokens():
    from benchlib.predict.engines import DEQUANTIZE, ENGINES, FUSED_QUANTIZED, PACKED, with_fused_weights
    from benchlib.predict.llm_speed import count_inference

    model = tiny_llama()
    for weights_format, left in (("gguf-q4_k_m", set()), ("nf4", {DEQUANTIZE})):
        prefill = count_inference(model, make_setup("inference", weights=weights_format, seq_len=16)).prefill
        ops = with_fused_weights(list(prefill.ops[0]), ENGINES["transformers"], prefill.tokens_per_call)
        assert {op.op for op in ops} & {PACKED, DEQUANTIZE} == left
        if not left:  # every linear layer's matmul reads its packed bytes
            assert sum(op.kind == FUSED_QUANTIZED for op in ops) >= 7 * 3


def test_each_format_runs_on_its_engine_and_the_others_name_the_one_to_use():
    from benchlib.predict.engines import ENGINES, EngineMismatch, default_engine

    for weights_format in ("fp8", "mxfp4"):
        ENGINES["transformers"].check("inference", weights_format)
    for weights_format in ("gguf-q4_0", "gguf-q4_k_m", "gguf-q5_k_m", "gguf-q8_0", "gguf-mxfp4", "fp16"):
        ENGINES["llama.cpp"].check("inference", weights_format)
        assert default_engine(weights_format) == ("transformers" if weights_format == "fp16" else "llama.cpp")
    for engine in ("vllm", "transformers"):
        with pytest.raises(
            EngineMismatch, match=f"--weights gguf-q4_k_m with --engine {engine}.*use --engine llama.cpp"
        ):
            ENGINES[engine].check("inference", "gguf-q4_k_m")
    with pytest.raises(
        EngineMismatch, match="--weights gptq-int4 with --engine llama.cpp.*use --engine transformers or vllm"
    ):
        ENGINES["llama.cpp"].check("inference", "gptq-int4")
    with pytest.raises(EngineMismatch, match="--mode lora with --engine llama.cpp"):
        ENGINES["llama.cpp"].check("lora", "bf16")


@pytest.mark.parametrize(
    ("config", "kwargs"),
    [
        ("llama", {"weights": "gguf-q4_k_m"}),
        ("llama", {"weights": "fp8", "kv_cache": "q8_0"}),
        ("moe", {"weights": "mxfp4"}),
    ],
)
def test_the_extrapolation_from_two_depths_still_equals_a_full_depth_trace(config, kwargs):
    model = tiny_llama() if config == "llama" else from_config(QWEN3_MOE)
    setup = make_setup("inference", seq_len=32, **kwargs)
    phases = StepTracer(model, setup, None).peak(32)
    assert LLMPredictor(model, setup).breakdown(32) == max(phases.values(), key=lambda kinds: kinds["total"])


@pytest.mark.slow
def test_a_gguf_model_in_llama_cpp_spreads_its_layers_over_two_gpus(llama_json):
    args = ("--model", llama_json, "--gpu", "T4", "--weights", "gguf-q4_k_m", "--seq-len", "64", "--json")
    one = json.loads(invoke(*args).stdout)
    result = invoke(*args, "--gpus", "2")
    assert result.exit_code == 0 and "Traceback" not in result.output, result.output
    two = json.loads(result.stdout)
    assert one["engine"] == two["engine"] == "llama.cpp" and (one["gpus"], two["gpus"]) == (1, 2)
    assert two["largest_context"] >= one["largest_context"]
    refused = invoke(*args, "--gpus", "2", "--parallel", "data")
    assert refused.exit_code == 2 and "--parallel data with --engine llama.cpp" in said(refused)
