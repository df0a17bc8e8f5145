"""The "Can I run it?" picker in Chromium: it evaluates each model's formulas in the page, and its
answers are Python's (tests/formula_reference.py: `benchlib.predict`'s own objects and code on the
same formulas) at random settings and at the issue's two questions.

What a reader sees is read off the page: the verdict, the figures' text, and the same figures in
full in the answer's data attributes (the text rounds them), within the issue's tolerances: the
largest batch or context exactly or within 1 %, the peak within 1 %, tokens/s within 2 %.
"""

from __future__ import annotations

import json
import random
from urllib.parse import urljoin

import pytest
from formula_reference import answer, llama_cpp_answer
from playwright.sync_api import expect
from typer.testing import CliRunner

from benchlib.catalog.gpus import find_gpu
from benchlib.catalog.platforms import session_budgets
from benchlib.cli import app
from benchlib.core.units import format_bytes
from benchlib.predict.memory import gpu_memory
from benchlib.site.can_i_run_it import picker_data
from benchlib.site.llm_speed import rate_text
from benchlib.tables import read

pytestmark = [pytest.mark.browser, pytest.mark.slow]

PAGE = "gpus/can-i-run-it/"
MEMORY, SPEED = 0.01, 0.02  # the issue's tolerances (#37)
RANDOM_SETTINGS = 6


@pytest.fixture(scope="module")
def formulas():
    return read("llm_formulas")


@pytest.fixture(scope="module")
def gpus():
    return {g["name"]: g for g in read("llm_constants")["gpus"]}


@pytest.fixture
def can_i(page, site_url):
    page.goto(urljoin(site_url, PAGE), wait_until="networkidle")
    expect(page.locator(".fg-picker--live")).to_be_visible()
    return page


def pick(page, **choices: str) -> dict:
    """Set the picker's controls (the mode first, as it resets the rest; then in the order of their
    names, so gradient checkpointing before the weights it offers; LoRA's layers, then its rank, and
    llama.cpp's cache type, which the weights show, last) and read its answer, once the model's
    formulas are in."""
    picker = page.locator(".fg-picker--live")
    last = ("layers", "adapters", "cache")
    for name in sorted(choices, key=lambda n: (n != "mode", last.index(n) if n in last else -1, n)):
        control = picker.locator(f"[data-control={name}]")
        if name in ("tokens", "batch", "job"):
            control.fill(str(choices[name]))
        else:
            control.select_option(str(choices[name]))
    answer_box = picker.locator(".fg-picker__answer")
    expect(answer_box).not_to_have_attribute("data-verdict", "loading")
    facts = {li.get_attribute("data-fact"): li for li in answer_box.locator(":scope > ul > li").all()}
    return {
        "verdict": answer_box.get_attribute("data-verdict"),
        "text": answer_box.locator(".fg-picker__verdict").inner_text(),
        "numbers": {
            name: answer_box.get_attribute(f"data-{name}")
            for name in ("tensor-peak", "peak", "largest", "concurrency", "gpu-layers")
        },
        "facts": {name: li.inner_text() for name, li in facts.items()},
        "speeds": {
            name.removeprefix("speed-"): {k: li.get_attribute(f"data-{k}") for k in ("prefill", "decode", "training")}
            for name, li in facts.items()
            if name.startswith("speed-")
        },
        "hours": facts["job"].get_attribute("data-hours") if "job" in facts else None,
    }


def check(shown: dict, expected: dict, gpu: dict, count: int) -> None:
    """The picker's answer against Python's, figure by figure. A served engine on a GPU it doesn't
    run on (before compute capability 7.0) is not predicted, as the tables leave it out."""
    device = gpu_memory(find_gpu(gpu["name"]))
    if gpu["no_served"]:
        expected = {**expected, "vllm": None}
    peak = int(shown["numbers"]["tensor-peak"])
    assert peak == pytest.approx(expected["peak"], rel=MEMORY)
    assert shown["verdict"] == ("fits" if expected["peak"] <= device.tensor_budget else "no")
    assert format_bytes(device.on_device(peak)) in shown["text"], "the verdict says the peak, allowances included"
    largest = int(shown["numbers"]["largest"])
    assert largest == expected["largest"] or largest == pytest.approx(expected["largest"], rel=MEMORY)
    if "concurrency" in expected:
        assert int(shown["numbers"]["concurrency"]) == pytest.approx(expected["concurrency"], rel=MEMORY, abs=1)
    for engine in ("transformers", "vllm"):
        speeds = expected[engine]
        if speeds is None:
            assert not any((shown["speeds"].get(engine) or {}).values()), (engine, shown["facts"])
            continue
        for kind, value in speeds.items():
            figure = shown["speeds"][engine][kind]
            if value is None:
                assert figure is None
                continue
            assert float(figure) == pytest.approx(value, rel=SPEED), (engine, kind)
            assert rate_text(float(figure)) in shown["facts"][f"speed-{engine}"]


def check_llama_cpp(shown: dict, expected: dict) -> None:
    """The picker's answer for a GGUF file against Python's: llama.cpp's buffers exactly (whole
    bytes, no formula between), and its tokens/s within the speed tolerance."""
    fit = expected["fit"]
    assert shown["verdict"] == ("fits" if fit.fits else "no"), shown["text"]
    assert int(shown["numbers"]["peak"]) == fit.gpu_bytes
    assert int(shown["numbers"]["largest"]) == fit.largest_context
    assert int(shown["numbers"]["gpu-layers"]) == fit.gpu_layers
    if fit.fits:
        assert format_bytes(fit.gpu_bytes) in shown["text"]
    else:
        assert (
            f"-ngl {fit.gpu_layers} puts" in shown["text"] if fit.gpu_layers else "not even one layer" in shown["text"]
        )
    speeds = expected["llama.cpp"]
    if speeds is None:
        assert not any((shown["speeds"].get("llama.cpp") or {}).values()), shown["facts"]
        return
    for kind in ("prefill", "decode"):
        if speeds[kind] is not None:
            assert float(shown["speeds"]["llama.cpp"][kind]) == pytest.approx(speeds[kind], rel=SPEED), kind


def settings(formulas: dict, gpus: dict, seed: int) -> list[tuple]:
    """Seeded random settings: a model and one of its setups, a GPU, a count, a batch and a length."""
    rng = random.Random(seed)
    out = []
    while len(out) < RANDOM_SETTINGS:
        model = rng.choice(formulas["models"])
        keys = [k for k, e in model["setups"].items() if "memory" in e]
        if not keys:
            continue
        key = rng.choice(keys)
        trains = formulas["setups"][key]["mode"] != "inference"
        batch = rng.choice((1, 2, 3, 8)) if trains else rng.choice((1, 2, 4, 16, 64))
        if key in model["llama_cpp"]:
            batch = 1  # llama.cpp's memory is predicted for one sequence

        length = min(model["max_positions"], rng.choice((1, 300, 1024, 2048, 5000, 32_768)))
        out.append((model["model"], key, rng.choice(list(gpus)), rng.choice((1, 1, 2, 3, 8)), batch, length))
    return out


@pytest.mark.parametrize("seed", [37, 2026])
def test_at_random_settings_the_pickers_figures_are_pythons(can_i, formulas, gpus, page_log, seed):
    models = {m["model"]: m for m in formulas["models"]}
    varies = {s["key"]: s["adapter_of"] for s in picker_data()["setups"]}
    for name, key, gpu, count, batch, length in settings(formulas, gpus, seed):
        setup = formulas["setups"][key]
        # Training with gradient checkpointing or without is a menu of its own, hidden for inference,
        # and LoRA's adapters another, under the weights of the setup they vary.
        training = (
            {} if setup["mode"] == "inference" else {"checkpointing": "on" if setup["grad_checkpointing"] else "off"}
        )
        if setup["lora_rank"] is not None:
            training |= {"layers": setup["lora_targets"], "adapters": key}
        shown = pick(
            can_i,
            mode=setup["mode"],
            model=name,
            weights=varies[key] or key,
            gpu=gpus[gpu]["key"],
            count=count,
            batch=batch,
            tokens=length,
            **training,
        )
        if key in models[name]["llama_cpp"]:
            check_llama_cpp(shown, llama_cpp_answer(models[name], formulas["setups"], key, gpu, count, length))
            continue
        expected = answer(models[name], formulas["setups"], key, gpu, count, batch, length)
        check(shown, expected, gpus[gpu], count)
    assert not page_log.blocked_requests and not page_log.console_errors


def test_llama_3_3_70b_on_two_a100s_gptq_int4_eight_sequences_of_4096_tokens(can_i, formulas, gpus, page_log):
    model = next(m for m in formulas["models"] if m["model"] == "llama-3.3-70b")
    gpu = "A100 80GB SXM"
    shown = pick(
        can_i,
        mode="inference",
        model="llama-3.3-70b",
        weights="inference-gptq-int4",
        gpu=gpus[gpu]["key"],
        count=2,
        batch=8,
        tokens=4096,
    )
    check(shown, answer(model, formulas["setups"], "inference-gptq-int4", gpu, 2, 8, 4096), gpus[gpu], 2)
    assert shown["text"].startswith("Fits. Llama 3.3 70B, inference with gptq-int4 weights, 8 sequences × 4,096 tokens")
    assert "on the fullest GPU" in shown["text"] and "Each GPU:" in shown["facts"]["memory"]
    assert "tensor parallelism, which is not modelled" in shown["facts"]["speed-vllm"]
    assert "one GPU's rate" in shown["facts"]["split"]
    assert not page_log.blocked_requests and not page_log.console_errors


def test_qlora_of_llama_3_1_8b_on_a_t4_with_the_time_for_10m_tokens_in_kaggle_weeks(can_i, formulas, gpus, page_log):
    model = next(m for m in formulas["models"] if m["model"] == "llama-3.1-8b")
    shown = pick(
        can_i, mode="qlora", model="llama-3.1-8b", weights="qlora", gpu="t4", count=1, batch=4, tokens=2048, job=10**7
    )
    expected = answer(model, formulas["setups"], "qlora", "T4", 1, 4, 2048)
    check(shown, expected, gpus["T4"], 1)
    assert "in fp16: the T4 has no bf16" in shown["facts"]["setup"]
    # The job at batch 4 if it fits, else at the largest batch that does.
    batch = 4 if shown["verdict"] == "fits" else expected["largest"]
    rate = answer(model, formulas["setups"], "qlora", "T4", 1, batch, 2048)["transformers"]["training"]
    hours = 10**7 / rate / 3600
    assert float(shown["hours"]) == pytest.approx(hours, rel=SPEED)
    kaggle = next(b for b in session_budgets("T4", float(shown["hours"])) if b.tier.startswith("Kaggle"))
    assert kaggle.weekly_hours and kaggle.describe() in shown["facts"]["job"]
    assert not page_log.blocked_requests and not page_log.console_errors


def test_training_without_gradient_checkpointing_is_an_answer_of_its_own(can_i, formulas, gpus, page_log):
    """Trainer's default keeps every activation: the same QLoRA peaks higher without checkpointing."""
    model = next(m for m in formulas["models"] if m["model"] == "llama-3.1-8b")
    sizes = {"model": "llama-3.1-8b", "gpu": "t4", "count": 1, "batch": 4, "tokens": 2048}
    on = pick(can_i, mode="qlora", checkpointing="on", weights="qlora", **sizes)
    off = pick(can_i, mode="qlora", checkpointing="off", weights="qlora-no-checkpointing", **sizes)
    check(off, answer(model, formulas["setups"], "qlora-no-checkpointing", "T4", 1, 4, 2048), gpus["T4"], 1)
    assert "no gradient checkpointing" in off["text"] and "no gradient checkpointing" not in on["text"]
    assert int(off["numbers"]["tensor-peak"]) > int(on["numbers"]["tensor-peak"])
    can_i.locator(".fg-picker--live [data-control=mode]").select_option("inference")
    expect(can_i.locator(".fg-picker--live [data-control=checkpointing]")).to_be_hidden()
    assert not page_log.blocked_requests and not page_log.console_errors


def cli(*args: str) -> dict:
    """What `benchlib` answers with ``--json``, as a reader runs it."""
    result = CliRunner().invoke(app, [*args, "--json"], env={"HF_HUB_OFFLINE": "1"})
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def test_lora_adapters_of_another_rank_are_what_benchlib_fit_and_predict_answer(can_i, gpus, page_log):
    """The adapters menu: QLoRA of Llama 3.1 8B at rank 64, against `benchlib fit` and `predict`
    with --lora-rank 64."""
    sizes = {"model": "llama-3.1-8b", "gpu": "t4", "count": 1, "batch": 2, "tokens": 1024}
    asked = ["--model", "llama-3.1-8b", "--gpu", "T4", "--batch", "2", "--seq-len", "1024", "--grad-checkpointing"]
    default = pick(can_i, mode="qlora", weights="qlora", **sizes)
    assert can_i.locator(".fg-picker--live [data-control=adapters] option").all_inner_texts() == ["16", "64"]
    r64 = pick(can_i, mode="qlora", weights="qlora", adapters="qlora-r64", **sizes)
    fit = cli("fit", *asked, "--mode", "qlora", "--lora-rank", "64")
    assert int(r64["numbers"]["tensor-peak"]) == pytest.approx(fit["tensor_peak_bytes"], rel=MEMORY)
    assert int(r64["numbers"]["largest"]) == fit["largest_batch"]
    assert fit["method"].startswith("the formulas committed in"), "fit answers from the same formulas"
    rate = cli("predict", *asked, "--mode", "qlora", "--lora-rank", "64")["training_tokens_per_s"]
    assert float(r64["speeds"]["transformers"]["training"]) == pytest.approx(rate, rel=SPEED)
    assert "LoRA rank 64 on every linear layer" in r64["text"]
    # Four times the rank holds more adapter weights, gradients and optimizer state.
    assert int(r64["numbers"]["tensor-peak"]) > int(default["numbers"]["tensor-peak"])
    assert "LoRA rank" not in default["text"], "the default adapters go unsaid, as the weights menu offers them"
    # Without checkpointing, the formulas hold rank 16 on every linear layer alone: the menus say so.
    lora = pick(can_i, mode="lora", checkpointing="off", weights="lora-no-checkpointing", **sizes)
    menu = can_i.locator(".fg-picker--live [data-control=adapters] option")
    assert menu.all_inner_texts() == ["16"]
    assert can_i.locator(".fg-picker--live [data-control=layers] option").all_inner_texts() == ["all linear"]
    assert "Llama 3.1 8B, LoRA with fp16 weights," in lora["text"], "the mode as the menu names it; a T4 has no bf16"
    can_i.locator(".fg-picker--live [data-control=mode]").select_option("inference")
    expect(can_i.locator(".fg-picker--live [data-control=adapters]")).to_be_hidden()
    expect(can_i.locator(".fg-picker--live [data-control=layers]")).to_be_hidden()
    assert not page_log.blocked_requests and not page_log.console_errors


@pytest.mark.parametrize(("mode", "model"), [("qlora", "llama-3.1-8b"), ("lora", "phi-4-mini")])
def test_lora_on_the_attention_projections_alone_is_what_benchlib_fit_and_predict_answer(
    can_i, formulas, page_log, mode, model
):
    """The layers menu: LoRA and QLoRA on the attention projections (Phi's fused qkv_proj among
    them), against `benchlib fit` and `predict` with the same --lora-targets."""
    targets = formulas["setups"][f"{mode}-attention"]["lora_targets"]
    sizes = {"model": model, "gpu": "t4", "count": 1, "batch": 2, "tokens": 1024}
    asked = ["--model", model, "--gpu", "T4", "--batch", "2", "--seq-len", "1024", "--grad-checkpointing"]
    every = pick(can_i, mode=mode, weights=mode, **sizes)
    layers = can_i.locator(".fg-picker--live [data-control=layers] option")
    assert layers.all_inner_texts() == ["all linear", "attention only"]
    shown = pick(can_i, mode=mode, weights=mode, layers=targets, **sizes)
    # The formulas hold rank 16 alone on these layers: the rank menu offers what there is.
    assert can_i.locator(".fg-picker--live [data-control=adapters] option").all_inner_texts() == ["16"]
    fit = cli("fit", *asked, "--mode", mode, "--lora-targets", targets)
    assert fit["method"].startswith("the formulas committed in"), "fit answers from the same formulas"
    assert int(shown["numbers"]["tensor-peak"]) == pytest.approx(fit["tensor_peak_bytes"], rel=MEMORY)
    assert int(shown["numbers"]["largest"]) == fit["largest_batch"]
    rate = cli("predict", *asked, "--mode", mode, "--lora-targets", targets)["training_tokens_per_s"]
    assert float(shown["speeds"]["transformers"]["training"]) == pytest.approx(rate, rel=SPEED)
    assert "LoRA rank 16 on the attention projections" in shown["text"]
    # Fewer adapted layers hold fewer adapter weights and less optimizer state.
    assert int(shown["numbers"]["tensor-peak"]) < int(every["numbers"]["tensor-peak"])
    assert not page_log.blocked_requests and not page_log.console_errors


def test_the_issues_two_questions_are_what_benchlib_fit_and_predict_answer(can_i, gpus):
    """The picker's figures for the issue's two questions against the command line's, as a reader
    would compare them: fit's peak, largest size and each GPU's peak, and predict's tokens/s (one
    GPU's: the layers of a split model run in turn)."""
    a100 = ["--gpu", "A100 80GB SXM", "--weights", "gptq-int4", "--batch", "8", "--seq-len", "4096"]
    shown = pick(
        can_i,
        mode="inference",
        model="llama-3.3-70b",
        weights="inference-gptq-int4",
        gpu=gpus["A100 80GB SXM"]["key"],
        count=2,
        batch=8,
        tokens=4096,
    )
    fit = cli("fit", "--model", "llama-3.3-70b", *a100, "--gpus", "2")
    assert int(shown["numbers"]["tensor-peak"]) == pytest.approx(fit["tensor_peak_bytes"], rel=MEMORY)
    assert int(shown["numbers"]["largest"]) == pytest.approx(fit["largest_context"], rel=MEMORY)
    assert all(format_bytes(peak) in shown["facts"]["memory"] for peak in fit["per_gpu"])
    predict = cli("predict", "--model", "llama-3.3-70b", *a100)
    for kind in ("prefill", "decode"):
        shown_rate = float(shown["speeds"]["transformers"][kind])
        assert shown_rate == pytest.approx(predict[f"{kind}_tokens_per_s"], rel=SPEED), kind

    t4 = ["--model", "llama-3.1-8b", "--gpu", "T4", "--mode", "qlora", "--seq-len", "2048", "--grad-checkpointing"]
    shown = pick(
        can_i, mode="qlora", model="llama-3.1-8b", weights="qlora", gpu="t4", count=1, batch=4, tokens=2048, job=10**7
    )
    fit = cli("fit", *t4, "--batch", "4")
    assert shown["verdict"] == ("fits" if fit["fits"] else "no")
    assert int(shown["numbers"]["largest"]) == fit["largest_batch"]
    # The job runs at the largest batch that fits; predict --tokens at that batch gives its hours and quotas.
    batch = 4 if fit["fits"] else fit["largest_batch"]
    predict = cli("predict", *t4, "--batch", str(batch), "--tokens", "1e7")
    assert float(shown["hours"]) == pytest.approx(predict["job"]["seconds"] / 3600, rel=SPEED)
    kaggle = next(p for p in predict["job"]["platforms"] if p["tier"].startswith("Kaggle"))
    assert kaggle["text"] in shown["facts"]["job"]


def test_a_setup_the_formulas_could_not_be_derived_for_says_why(page, site_url, formulas):
    """The table writes ``not_predicted`` with the reason where a setup's formulas can't be derived;
    every shipped setup has them today, so the page is served a model's file with one taken out."""
    name, why = formulas["models"][0]["model"], "its step runs other operations at other sizes"

    def serve(route):
        response = route.fetch()
        written = response.json()
        written["setups"]["qlora"] = {"not_predicted": why}
        route.fulfill(response=response, json=written)

    page.route(f"**/assets/formulas/{name}.json", serve)
    page.goto(urljoin(site_url, PAGE), wait_until="networkidle")
    shown = pick(page, mode="qlora", model=name, weights="qlora", gpu="t4", count=1)
    assert shown["verdict"] == "not-predicted" and shown["text"].startswith("Not predicted.")
    assert why in shown["text"]


def test_the_weights_menu_offers_what_the_chosen_model_has_formulas_for(can_i, formulas):
    """MXFP4 quantizes a mixture of experts' experts: offered for gpt-oss, not for a dense model."""
    picker = can_i.locator(".fg-picker--live")
    menu = picker.locator("[data-control=weights] option")
    picker.locator("[data-control=mode]").select_option("inference")
    for model in ("gpt-oss-20b", "llama-3.1-8b"):
        picker.locator("[data-control=model]").select_option(model)
        row = next(m for m in formulas["models"] if m["model"] == model)
        offered = [key for key in menu.evaluate_all("options => options.map(o => o.value)") if key in row["setups"]]
        assert offered == [k for k, e in row["setups"].items() if "memory" in e and k.startswith("inference")]
        assert ("inference-mxfp4" in offered) == (model == "gpt-oss-20b")
    assert "bf16, fp8 KV cache" in menu.all_inner_texts()


def test_a_gguf_file_is_what_benchlib_fit_and_predict_answer_for_llama_cpp(can_i, gpus, page_log):
    """Any GGUF file, context, count of GPUs and cache type: llama.cpp's buffers and the layers that
    fit, and its tokens/s, as the command line answers them."""
    for weights, gpu, count, tokens, cache in (
        ("gguf-q5_k_m", "L4", 1, 8192, "fp16"),
        ("gguf-q8_0", "T4", 2, 32_768, "fp16"),
        ("gguf-q4_k_m", "T4", 1, 65_536, "q8_0"),
    ):
        shown = pick(
            can_i,
            mode="inference",
            model="llama-3.1-8b",
            weights=f"inference-{weights}",
            gpu=gpus[gpu]["key"],
            count=count,
            batch=1,
            tokens=tokens,
            cache=cache,
        )
        asked = ["--model", "llama-3.1-8b", "--gpu", gpu, "--weights", weights, "--seq-len", str(tokens)]
        asked += ["--kv-cache", cache]
        fit = cli("fit", *asked, "--gpus", str(count))
        assert shown["verdict"] == ("fits" if fit["fits"] else "no")
        assert int(shown["numbers"]["peak"]) == fit["peak_bytes"]
        assert int(shown["numbers"]["largest"]) == fit["largest_context"]
        assert int(shown["numbers"]["gpu-layers"]) == fit["gpu_layers"]
        assert f"{weights.removeprefix('gguf-').upper()} file" in shown["text"]
        assert ("q8_0 KV cache" in shown["text"]) == (cache == "q8_0")
        assert f"({'f16' if cache == 'fp16' else cache})" in shown["facts"]["memory"]
        predict = cli("predict", *asked)
        for kind in ("prefill", "decode"):
            shown_rate = float(shown["speeds"]["llama.cpp"][kind])
            assert shown_rate == pytest.approx(predict[f"{kind}_tokens_per_s"], rel=SPEED), kind
        assert set(shown["speeds"]) == {"llama.cpp"}, "a GGUF file runs in llama.cpp alone"
    assert not page_log.blocked_requests and not page_log.console_errors


def test_a_gguf_file_that_does_not_fit_says_how_many_layers_do(can_i, page_log):
    shown = pick(can_i, mode="inference", model="llama-3.3-70b", weights="inference-gguf-q4_k_m", gpu="t4", count=1)
    assert shown["verdict"] == "no" and shown["text"].startswith("Does not fit whole.")
    layers = int(shown["numbers"]["gpu-layers"])
    assert 0 < layers < 80 and f"-ngl {layers} puts {layers} of its 80 layers on the GPU" in shown["text"]
    assert "The CPU's share of the layers is not predicted" in shown["facts"]["speed-llama.cpp"]
    assert "job" not in shown["facts"], "no job time from a speed that assumes every layer on the GPU"
    several = pick(can_i, batch=4)
    assert several["verdict"] == "not-predicted" and "predicted for one sequence" in several["text"]
    assert not page_log.blocked_requests and not page_log.console_errors


def test_a_prompt_longer_than_the_model_reads_is_too_long(can_i, formulas):
    model = formulas["models"][0]
    shown = pick(can_i, mode="inference", model=model["model"], tokens=model["max_positions"] + 1)
    assert shown["verdict"] == "limit" and f"{model['max_positions']:,} tokens" in shown["text"]


def test_without_javascript_the_page_keeps_a_short_answer_and_the_tables(browser, site_url):
    context = browser.new_context(viewport={"width": 1280, "height": 900}, java_script_enabled=False)
    try:
        page = context.new_page()
        page.goto(urljoin(site_url, PAGE))
        expect(page.locator(".fg-picker__fallback")).to_be_visible()
        assert "On T4" in page.locator(".fg-picker__fallback").inner_text()
        expect(page.locator("table[data-table=llm-fit-inference]")).to_be_visible()
        assert page.locator(".fg-picker__form").count() == 0
    finally:
        context.close()


def test_where_the_formulas_cant_be_fetched_the_picker_says_so_in_one_line_and_the_tables_answer(page, site_url):
    page.route("**/assets/formulas/**", lambda route: route.abort())
    page.goto(urljoin(site_url, PAGE), wait_until="networkidle")
    answer_box = page.locator(".fg-picker__answer")
    expect(answer_box).to_have_attribute("data-verdict", "offline")
    assert answer_box.locator("p").count() == 1 and "the tables below answer" in answer_box.inner_text()
    assert answer_box.locator("li").count() == 0
    expect(page.locator("table[data-table=llm-fit-inference]")).to_be_visible()
