"""llama.cpp's memory (`benchlib.predict.llama_cpp`), its engine, and the host an eager engine runs on."""

from __future__ import annotations

import json

import pytest
from fit_cli import invoke as fit
from typer.testing import CliRunner

from benchlib.catalog.gpus import find_gpu
from benchlib.catalog.language_models import resolve_model
from benchlib.core.package_data import data_file, sourced_rows
from benchlib.core.units import MIB
from benchlib.predict.engines import ENGINES
from benchlib.predict.hosts import HOSTS, default_host, find_host
from benchlib.predict.llama_cpp import compute_buffer_bytes, fit_llama_cpp, kv_cache_bytes, shape_of, with_cache_of
from benchlib.predict.llm_memory import LLMPredictor, make_setup
from benchlib.predict.memory import gpu_memory

# A published llama.cpp load log (reported data, with its source and quoted lines).
LOGGED = data_file("published_llama_cpp_memory.yaml")


def _setup(weights: str, seq_len: int):
    return make_setup("inference", weights=weights, dtype="fp16", seq_len=seq_len, kv_cache="fp16")


def _weights(model, setup) -> int:
    return LLMPredictor(model, setup, None).breakdown(1)["weights"]


@pytest.mark.slow
def test_the_buffers_are_the_ones_llama_cpp_logs_for_llama_3_8b():
    rows = sourced_rows(LOGGED)
    source = rows[0][0]
    assert {s["id"] for s, _ in rows} == {source["id"]}
    model = resolve_model(source["model"])
    setup = _setup(source["weights"], int(source["n_ctx"]))
    # The card logged isn't in the specs; the buffers don't depend on the card, only whether they fit.
    fit = fit_llama_cpp(model, setup, gpu_memory(find_gpu("RTX 4090")), _weights(model, setup))
    assert fit.fits
    predicted = {
        "host_model": fit.host_model_buffer,
        "gpu_model": fit.model_buffer,
        "kv": fit.kv_cache,
        "compute": fit.compute_buffer,
    }
    for _, row in rows:
        assert f"{row['value_mib']:.2f} MiB" in row["quote"]
        assert predicted[row["buffer"]] == pytest.approx(row["value_mib"] * MIB, rel=0.005), row["buffer"]


@pytest.mark.slow
def test_gpt_oss_20b_fits_a_t4_in_llama_cpp_with_its_whole_context():
    result = fit("--model", "gpt-oss-20b", "--gpu", "T4", "--engine", "llama.cpp", "--json")
    assert result.exit_code == 0, result.output
    answer = json.loads(result.output)
    assert answer["fits"] and answer["setup"]["weights"] == "gguf-mxfp4"
    assert answer["gpu_layers"] == answer["layers"] == 24
    # The file ggml-org publishes is 12.1 GB: experts in MXFP4, the rest in Q8_0.
    assert 11.5e9 < answer["breakdown"]["model_buffer"] + answer["host_model_buffer"] < 12.5e9
    assert answer["largest_context"] == answer["limit"] == 131072
    said = " ".join(fit("--model", "gpt-oss-20b", "--gpu", "T4", "--engine", "llama.cpp").output.split())
    assert "fits (-ngl 99)" in said and "131,072 tokens (the model's maximum)" in said


@pytest.mark.slow
def test_a_model_too_big_for_the_gpu_says_how_many_layers_fit():
    model = resolve_model("llama-3.3-70b")
    setup = _setup("gguf-q4_k_m", 4096)
    fit = fit_llama_cpp(model, setup, gpu_memory(find_gpu("RTX 4090")), _weights(model, setup))
    assert not fit.fits and 0 < fit.gpu_layers < fit.layers
    assert fit.gpu_bytes <= gpu_memory(find_gpu("RTX 4090")).usable_bytes
    assert fit.largest_context == 0


@pytest.mark.parametrize("name", ["llama-3.1-8b", "gpt-oss-20b", "gemma-3-27b", "qwen3-30b-a3b"])
def test_a_shape_for_an_f16_cache_converts_to_the_one_shape_of_gives_for_q8_0(name):
    """The formulas hold each GGUF file's shape for llama.cpp's default f16 cache; a q8_0 cache is
    the same cells at 34 bytes per 32 values, to the byte."""
    model = resolve_model(name)
    weights = 10 * 2**30
    f16 = shape_of(model, _setup("gguf-q4_k_m", 1024), weights)
    q8_0 = shape_of(model, make_setup("inference", weights="gguf-q4_k_m", dtype="fp16", kv_cache="q8_0"), weights)
    assert with_cache_of(f16, make_setup("inference", weights="gguf-q4_k_m", dtype="fp16", kv_cache="q8_0")) == q8_0
    assert with_cache_of(f16, _setup("gguf-q4_k_m", 1024)) == f16
    assert q8_0.kv_bytes_per_cell < f16.kv_bytes_per_cell
    assert kv_cache_bytes(q8_0, 4096) == pytest.approx(kv_cache_bytes(f16, 4096) * 17 / 32, rel=1e-9)


def test_a_sliding_window_layer_keeps_only_its_window():
    model = resolve_model("gpt-oss-20b")  # 12 of its 24 layers attend to the last 128 tokens
    shape = shape_of(model, _setup("gguf-mxfp4", 1024), 12 * 2**30)
    grown = kv_cache_bytes(shape, 65536) - kv_cache_bytes(shape, 32768)
    assert grown == shape.kv_bytes_per_cell * 32768  # the full-attention layers alone grow
    assert shape.swa_layers_bytes_per_cell == shape.kv_bytes_per_cell
    assert compute_buffer_bytes(shape, 100) < compute_buffer_bytes(shape, 512) == compute_buffer_bytes(shape, 4096)


def test_each_gpu_gets_the_host_readers_find_it_on_and_a_server_is_the_fitted_engine():
    assert default_host(find_gpu("T4")).name == "colab"
    assert default_host(find_gpu("P100 PCIe 16GB")).name == "kaggle"
    assert default_host(find_gpu("RTX 4090")).name == "desktop"
    assert default_host(find_gpu("H100 SXM")).name == "server"
    # The transformers engine's launch cost is the server's: both are fitted on the same rows.
    assert HOSTS["server"].launch_s == ENGINES["transformers"].launch_s
    assert ENGINES["transformers"].on_host(1e-6).launch_s == 1e-6
    assert ENGINES["vllm"].on_host(1e-6) == ENGINES["vllm"]  # a CUDA graph launches nothing per kernel
    for host in HOSTS.values():
        assert host.status in ("fitted", "assumed") and host.basis


def test_an_unknown_host_lists_the_hosts():
    with pytest.raises(ValueError, match="--host 'laptop': choose one of server, desktop, colab, kaggle"):
        find_host("laptop")
    from benchlib.cli import app

    result = CliRunner().invoke(app, ["predict", "--model", "llama-3.2-1b", "--gpu", "T4", "--host", "laptop"])
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert "choose one of server, desktop, colab, kaggle" in " ".join(result.output.split())


@pytest.mark.slow
def test_predict_in_llama_cpp_gives_decode_prefill_their_bounds_and_the_command_that_measures_it():
    from benchlib.cli import app

    args = ["predict", "--engine", "llama.cpp", "--model", "llama-3.1-8b", "--gpu", "RTX 4090"]
    result = CliRunner().invoke(app, [*args, "--weights", "gguf-q4_k_m", "--json"])
    assert result.exit_code == 0, result.output
    answer = json.loads(result.output)
    assert answer["engine"] == "llama.cpp" and answer["weights"] == "gguf-q4_k_m"
    assert answer["decode_tokens_per_s"] > 0 and answer["prefill_tokens_per_s"] > answer["decode_tokens_per_s"]
    assert answer["decode_bound"] in ("compute", "memory", "overhead") and answer["prefill_bound"]
    assert answer["check_command"].startswith("llama-bench -m") and "-p 2048 -n 128" in answer["check_command"]
    assert answer["published_check"]["band"]["p10"] <= answer["published_check"]["band"]["p90"]
    assert "max_concurrency" not in answer  # llama.cpp's serving memory is its own, not transformers'


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--engine", "vllm", "--weights", "int8"], "--weights int8 with --engine vllm"),
        (["--engine", "llama.cpp", "--weights", "gptq-int4"], "use --engine transformers or vllm for gptq-int4"),
        (["--engine", "llama.cpp", "--mode", "qlora"], "--mode qlora with --engine llama.cpp"),
        (["--weights", "gguf-mxfp4"], "gguf-mxfp4 is llama.cpp's MXFP4_MOE file, for mixtures of experts"),
    ],
)
def test_an_engine_with_a_format_or_mode_it_cant_run_says_what_to_use(args, message):
    from benchlib.cli import app

    result = CliRunner().invoke(app, ["predict", "--model", "llama-3.2-1b", "--gpu", "T4", *args])
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert message in " ".join(result.output.split())


@pytest.mark.slow
def test_predict_in_llama_cpp_says_when_the_model_does_not_fit_whole():
    from benchlib.cli import app

    args = ["predict", "--engine", "llama.cpp", "--model", "llama-3.3-70b", "--gpu", "RTX 4090"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    said = " ".join(result.output.split())
    assert "does not fit the GeForce RTX 4090 whole in llama.cpp" in said and "-ngl" in said
    assert all(len(line) <= 80 for line in result.output.splitlines())
