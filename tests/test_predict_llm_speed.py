"""Language-model speed per engine: `benchlib predict --engine`, serving at batch > 1, fine-tuning, quantized weights.

Most tests build a model, and the first one pays for importing transformers and peft: they are marked slow.
"""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from benchlib.catalog.gpus import find_gpu
from benchlib.catalog.language_models import resolve_model
from benchlib.catalog.reached_rates import reached_matmul
from benchlib.derive.published_llm_speed import FITTED
from benchlib.predict.engines import DEQUANTIZE, ENGINES, EngineMismatch
from benchlib.predict.hosts import HOSTS
from benchlib.predict.llm_memory import make_setup
from benchlib.predict.llm_speed import count_inference, count_training, predict_llm_speed
from benchlib.predict.roofline import gpu_rates
from benchlib.tables import read

A100 = "A100 80GB SXM"


def invoke(*args: str):
    from benchlib.cli import app

    return CliRunner().invoke(app, ["predict", *args])


def tiny_config(tmp_path) -> str:
    path = tmp_path / "config.json"
    path.write_text(
        json.dumps(
            {
                "model_type": "llama",
                "architectures": ["LlamaForCausalLM"],
                "hidden_size": 128,
                "intermediate_size": 256,
                "num_hidden_layers": 2,
                "num_attention_heads": 4,
                "num_key_value_heads": 2,
                "vocab_size": 1000,
                "max_position_embeddings": 4096,
            }
        )
    )
    return str(path)


@pytest.fixture
def tiny(tmp_path):
    return resolve_model(tiny_config(tmp_path))


@pytest.mark.slow
def test_a_language_model_decodes_at_the_speed_its_weights_can_be_read(tiny):
    p = predict_llm_speed(
        tiny, find_gpu(A100), make_setup("inference", seq_len=256), ENGINES["vllm"], concurrency=False
    )
    answer = p.as_dict()
    assert (answer["unit"], answer["dtype"], answer["batch"], answer["seq_len"]) == ("tokens/s", "bf16", 1, 256)
    assert answer["decode_tokens_per_s"] == answer["throughput"] > 0
    assert answer["prefill_tokens_per_s"] > answer["decode_tokens_per_s"]
    assert answer["decode_shares"]["compute"] < 0.05  # batch-1 decode is bound by memory, or by the host
    # The bf16 bytes of the layers and the output layer; the embedding gives up only one row.
    weights = (2 * 128 * (128 + 64 + 64 + 128) + 2 * 3 * 128 * 256 + 1000 * 128) * 2
    assert answer["decode_bytes_moved"] > weights
    assert answer["engine"] == "vllm" and answer["kind"] == "predicted"


@pytest.mark.slow
def test_eager_generate_of_a_small_model_is_bound_by_kernel_launches(tiny):
    setup = make_setup("inference", seq_len=256)
    eager = predict_llm_speed(tiny, find_gpu(A100), setup, ENGINES["transformers"], concurrency=False)
    served = predict_llm_speed(tiny, find_gpu(A100), setup, ENGINES["vllm"], concurrency=False)
    assert eager.decode.bound == "overhead"
    # About one launch per op: the decode step of two layers launches tens of kernels, each at the engine's cost.
    assert eager.decode.overhead_s == pytest.approx(eager.decode.launches * ENGINES["transformers"].launch_s, rel=0.3)
    # A served engine replays the step as one CUDA graph: its overhead is one fixed cost per step.
    assert served.decode.overhead_s == pytest.approx(ENGINES["vllm"].step_s)


@pytest.mark.slow
def test_serving_more_sequences_at_once_gives_more_tokens_per_second_in_all(tiny):
    gpu, engine = find_gpu(A100), ENGINES["vllm"]
    one = predict_llm_speed(tiny, gpu, make_setup("inference", batch=1, seq_len=512), engine, concurrency=False)
    many = predict_llm_speed(tiny, gpu, make_setup("inference", batch=32, seq_len=512), engine, concurrency=False)
    assert many.decode_tokens_per_s > 4 * one.decode_tokens_per_s
    assert many.decode.seconds > one.decode.seconds  # each of the 32 caches is read


@pytest.mark.slow
def test_the_largest_concurrency_is_the_kv_caches_that_fit_beside_the_weights(tiny):
    setup = make_setup("inference", seq_len=2048)
    big = predict_llm_speed(tiny, find_gpu(A100), setup, ENGINES["vllm"]).concurrency
    small = predict_llm_speed(
        tiny, find_gpu("T4"), make_setup("inference", dtype="fp16", seq_len=2048), ENGINES["vllm"]
    )
    assert big is not None and small.concurrency is not None
    # Two layers x (keys + values) x 2 KV heads x 32 dims x 2,048 tokens x 2 bytes.
    assert big.kv_bytes_per_sequence == 2 * 2 * 2 * 32 * 2048 * 2
    assert big.sequences == big.free_bytes // big.kv_bytes_per_sequence
    assert 0 < small.concurrency.sequences < big.sequences


@pytest.mark.slow
def test_qlora_dequantizes_every_layer_in_the_forward_and_again_in_the_backward(tiny):
    linears = 2 * 7  # q, k, v, o, gate, up, down per layer
    # The first layer's q, k and v read the embeddings, which need no gradient: no backward through them.
    first = 3
    plain = count_training(tiny, make_setup("qlora", batch=2, seq_len=128))
    checkpointed = count_training(tiny, make_setup("qlora", batch=2, seq_len=128, grad_checkpointing=True))
    # One count at full depth: the tiny model has fewer layers than the reduced depths.
    assert [sum(op.op == DEQUANTIZE for op in ops) for ops in plain.ops] == [2 * linears - first]
    # Checkpointing adds a forward, and torch's non-reentrant checkpoint takes the backward through every layer.
    assert [sum(op.op == DEQUANTIZE for op in ops) for ops in checkpointed.ops] == [3 * linears]
    lora = count_training(tiny, make_setup("lora", batch=2, seq_len=128))
    assert not any(op.op == DEQUANTIZE for ops in lora.ops for op in ops)


@pytest.mark.slow
def test_packed_weights_are_read_packed_in_a_decode_step_and_dequantized_in_a_prefill(tiny):
    rates, engine = gpu_rates(find_gpu(A100)), ENGINES["transformers"]
    dense = count_inference(tiny, make_setup("inference", seq_len=256))
    packed = count_inference(tiny, make_setup("inference", weights="gptq-int4", seq_len=256))
    assert packed.decode.time(rates, engine).bytes < dense.decode.time(rates, engine).bytes
    # A prefill feeds many tokens to each layer: a dequantize kernel per layer first.
    assert packed.prefill.time(rates, engine).launches > dense.prefill.time(rates, engine).launches


@pytest.mark.slow
def test_training_counts_tokens_in_the_dtype_the_gpu_has(tmp_path):
    result = invoke(
        "--model", tiny_config(tmp_path), "--gpu", "T4", "--mode", "train", "--batch", "2", "--seq-len", "128", "--json"
    )
    assert result.exit_code == 0, result.output
    answer = json.loads(result.stdout)
    assert (answer["unit"], answer["dtype"], answer["prefill_tokens_per_s"]) == ("tokens/s", "fp16", None)
    assert answer["throughput"] == pytest.approx(2 * 128 / answer["train_s"])


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["lora", "qlora"])
def test_lora_and_qlora_print_training_tokens_per_second(tmp_path, mode):
    result = invoke("--model", tiny_config(tmp_path), "--gpu", "T4", "--mode", mode, "--seq-len", "128", "--json")
    assert result.exit_code == 0, result.output
    answer = json.loads(result.stdout)
    assert answer["unit"] == "tokens/s" and answer["training_tokens_per_s"] == answer["throughput"] > 0
    assert answer["mode"] == mode and answer["engine"] == "transformers"


@pytest.mark.slow
def test_the_table_names_the_engine_what_bounds_it_and_that_it_is_predicted(tmp_path):
    result = invoke("--model", tiny_config(tmp_path), "--gpu", "T4", "--seq-len", "128")
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert "predicted" in text and "decode" in text and "prefill" in text and "overhead" in text
    assert "transformers" in text and "fits at once" in text
    assert "A prediction, not a measurement" in text


@pytest.mark.slow
@pytest.mark.parametrize("engine", ["transformers", "vllm"])
def test_the_done_when_command_prints_decode_tokens_per_second(engine):
    result = invoke("--model", "qwen2.5-0.5b", "--gpu", A100, "--mode", "inference", "--engine", engine, "--json")
    assert result.exit_code == 0, result.output
    answer = json.loads(result.stdout)
    assert answer["engine"] == engine and answer["decode_tokens_per_s"] > 0
    assert answer["decode_bound"] in ("compute", "memory", "overhead")
    assert answer["prefill_bound"] in ("compute", "memory", "overhead")
    check = answer["published_check"]
    if engine == "vllm":  # its one held-out source ran vLLM 0.4.2, which its 0.6.3 constants don't stand for
        assert check is None and answer["check_command"].startswith("vllm bench serve --model qwen2.5-0.5b")
    else:
        assert check["held_out_rows"] > 0 and 0 <= check["held_out_median_abs_error"] < 1
        assert check["band"]["p10"] <= 1 <= check["band"]["p90"]
    # The A100's matmuls run at MAMF's reported rate for the card; no copy bandwidth is reported for it.
    reached, mamf = answer["reached"], reached_matmul(A100)
    assert mamf is not None and mamf.source == "ml-engineering-mamf"
    assert reached["matmul_basis"].startswith(f"reported: {mamf.value:g} {mamf.dtype} TFLOPS (ml-engineering-mamf")
    peak = gpu_rates(find_gpu(A100)).peaks_tflops[mamf.dtype]
    assert reached["matmul_fraction"] == pytest.approx(mamf.value / peak) and reached["bandwidth_gbps"] is None
    if engine == "transformers":
        # Qwen measured Qwen2-0.5B at 49.94 tok/s with generate() on this GPU; the roofline alone said 890.
        assert 25 < answer["decode_tokens_per_s"] < 100


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--engine", "tgi"], "--engine 'tgi': choose one of transformers, vllm"),
        (["--engine", "vllm", "--weights", "nf4"], "--weights nf4 with --engine vllm"),
        (["--engine", "vllm", "--mode", "qlora"], "--mode qlora with --engine vllm"),
        (["--weights", "gguf"], "--weights 'gguf'"),
        (["--mode", "serve"], "--mode 'serve'"),
    ],
)
def test_a_pair_an_engine_cant_run_is_one_line_naming_it(tmp_path, args, says):
    result = invoke("--model", tiny_config(tmp_path), "--gpu", "T4", *args)
    assert result.exit_code == 2, result.output
    assert says in " ".join(result.output.split()) and "Traceback" not in result.output


@pytest.mark.slow
def test_a_gpu_without_the_figure_a_prediction_needs_names_it(tmp_path):
    result = invoke("--model", tiny_config(tmp_path), "--gpu", "K80")
    assert result.exit_code == 2, result.output
    text = " ".join(result.output.split())
    assert "K80: the specs give no fp16 peak" in text and "--dtype fp32" in text


@pytest.mark.slow
def test_training_says_how_long_a_million_tokens_take(tmp_path):
    result = invoke("--model", tiny_config(tmp_path), "--gpu", "T4", "--mode", "qlora", "--seq-len", "128")
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert "a million tokens" in text and "min" in text


def test_engine_flags_are_for_language_models():
    result = invoke("--model", "resnet50", "--gpu", "T4", "--engine", "vllm")
    assert result.exit_code == 2 and "--engine applies to language models" in result.output


def test_an_engine_refuses_what_it_cant_run():
    with pytest.raises(EngineMismatch, match="--weights int8 with --engine vllm"):
        ENGINES["vllm"].check("inference", "int8")


# ----------------------------------------------------------------------------- against published speeds


def test_the_engines_and_hosts_constants_are_the_ones_the_calibration_sources_pick():
    table = read("llm_speed_check")
    for name, engine in ENGINES.items():
        fitted = table["fitted"][name]
        shipped = {field: getattr(engine, field) for field in FITTED}
        assert shipped == pytest.approx(fitted), f"update benchlib/predict/engines.py: the calibration picks {fitted}"
    for name, launch in table["fitted_hosts"].items():
        if launch is not None:
            assert HOSTS[name].launch_s == pytest.approx(launch), f"update benchlib/predict/hosts.py: {name} {launch}"
        else:
            assert HOSTS[name].status == "assumed"


# Held-out summaries that miss their target, each a finding the methodology page marks "(missed)":
# a change that meets one, or misses another, fails the test below until this list says so.
KNOWN_MISSES = {
    # 5 rows from two pull requests of early 2024: the median is 20.4 % against 20 %. The F16 prompt on
    # an RTX 4090 reached 150 TFLOPS there, above the ceiling the May 2024 builds show on every card.
    ("llama.cpp", "prefill", "all"): "20.4 % on 5 rows",
}


def test_the_held_out_sources_meet_the_targets_per_engine_and_class_of_gpu():
    table = read("llm_speed_check")
    held_out = [s for s in table["summaries"] if s["half"] == "held out"]
    assert {(s["engine"], s["kind"]) for s in held_out} >= {
        ("transformers", "decode"),
        ("transformers", "training"),
        ("llama.cpp", "decode"),
        ("llama.cpp", "prefill"),
    }
    missed = {(s["engine"], s["kind"], s["gpu_class"]) for s in held_out if s["median_abs_error"] > s["target"]}
    assert missed == set(KNOWN_MISSES), f"held-out summaries over their target: {missed}; update KNOWN_MISSES"
    # A source is calibration or held out whole.
    halves: dict[str, set[str]] = {}
    for r in table["rows"]:
        halves.setdefault(r["source"], set()).add(r["half"])
    assert all(len(h) == 1 for h in halves.values()), halves
    # Every published row is either compared or left out with a reason; vLLM 0.4 rows for the release's.
    assert all(x["reason"] for x in table["left_out"])
    old_vllm = [x for x in table["left_out"] if x["source"] == "qwen2-speed-vllm"]
    assert old_vllm and all("measured with vllm 0.4.2" in x["reason"] for x in old_vllm)
