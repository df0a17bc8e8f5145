"""The "Can I run it?" picker's data: generated from the committed tables, whatever they hold.

The page's script (docs/assets/javascripts/can-i-run-it.js) evaluates each model's formulas
(docs/assets/formulas/, from the llm_formulas table) with this data: the models and setups, every
GPU's figures and the engines' constants, llama.cpp's among them (the llm_constants table), and the
published comparisons' errors (the can_i_run_it table). tests/browser/test_picker_formulas.py
reads its answers off the page.
"""

from __future__ import annotations

import copy
import html
import json
import re

import pytest

from benchlib.catalog.platforms import session_budgets
from benchlib.core.units import format_bytes
from benchlib.predict.llama_cpp import KV_PAD, MICRO_BATCH
from benchlib.predict.memory import CUDA_CONTEXT_BYTES
from benchlib.site import can_i_run_it as llm_fit
from benchlib.site.llm_speed import error_text
from benchlib.site.sources import read_table


def embedded(page_html: str) -> dict:
    """The picker's data as the page holds it, in its data-picker attribute."""
    match = re.search(r'data-picker="([^"]*)"', page_html)
    assert match, "the picker carries its data"
    return json.loads(html.unescape(match.group(1)))


@pytest.fixture
def table():
    return read_table("can_i_run_it")


@pytest.fixture
def formulas():
    """The formulas' header, which the picker reads (tests/test_tables_llm_formulas.py checks its index)."""
    return read_table("llm_formulas", fields=("created", "setups", "index"))


@pytest.fixture
def constants():
    return read_table("llm_constants")


def test_the_embedded_data_is_the_committed_tables_reshaped(table, formulas, constants):
    data = embedded(llm_fit.picker())
    assert data == json.loads(json.dumps(llm_fit.picker_data()))
    assert [m["key"] for m in data["models"]] == [m["model"] for m in formulas["index"]]
    assert [s["key"] for s in data["setups"]] == list(formulas["setups"])
    # The weights menu tells two setups of one format apart by their KV cache.
    labels = [s["label"] for s in data["setups"] if s["mode"] == "inference"]
    assert len(set(labels)) == len(labels) and "bf16, fp8 KV cache" in labels and "awq-int4" in labels
    # A menu of its own tells a mode's training setups apart: with gradient checkpointing and without.
    for mode in ("qlora", "lora", "train"):
        menu = [s["checkpointing"] for s in data["setups"] if s["mode"] == mode and not s["adapter_of"]]
        assert sorted(menu) == [False, True], mode
    assert [m["key"] for m in data["modes"]] == list(dict.fromkeys(s["mode"] for s in formulas["setups"].values()))
    assert data["created"] == formulas["created"][:10]
    for model, entry in zip(data["models"], formulas["index"], strict=True):
        assert (model["title"], model["max_positions"]) == (entry["title"], entry["max_positions"])
        assert model["not_predicted"] == entry["not_predicted"]
    # Every GPU and engine figure is the constants table's, untouched.
    for gpu, figures in zip(data["gpus"], constants["gpus"], strict=True):
        assert {k: v for k, v in gpu.items() if k in figures} == figures
        assert gpu["usable_text"] == format_bytes(figures["memory"]["usable_bytes"])
    assert data["engines"] == constants["engines"] and data["evaluation"] == constants["evaluation"]


def test_the_gpus_list_the_notebooks_first_and_carry_the_free_tiers_limits_per_count():
    data = llm_fit.picker_data()
    groups = [g["group"] for g in data["gpus"]]
    assert groups == sorted(groups, key=["notebook", "table", "other"].index), "each group's GPUs together, in order"
    assert [g["name"] for g in data["gpus"] if g["group"] == "notebook"] == ["T4", "P100 PCIe 16GB", "L4"]
    t4 = next(g for g in data["gpus"] if g["name"] == "T4")
    assert set(t4["budgets"]) == {"1", "2"}, "free tiers offer one T4, and Kaggle two"
    assert [b["tier"] for b in t4["budgets"]["2"]] == [b.tier for b in session_budgets("T4", 1.0, count=2)]
    h100 = next(g for g in data["gpus"] if g["name"] == "H100 SXM")
    assert h100["budgets"] == {}, "no free tier offers an H100"
    assert data["most_gpus"] == 8


def test_each_kind_of_prediction_carries_the_published_comparisons_error(table):
    errors = llm_fit.picker_data()["errors"]
    compared = [r for r in table["published"] if not r["left_out"]]
    assert errors["memory"] == (
        f"a median error of {table['median_abs_error']:.1%} on {len(compared)} published peak memory measurements"
    )
    assert errors["decode"] == {e: error_text(e, "decode") for e in ("transformers", "vllm", "llama.cpp")}
    assert errors["training"] == error_text("transformers", "training")


def test_gguf_files_are_offered_as_llama_cpps_with_its_constants():
    data = llm_fit.picker_data()
    gguf = {s["key"]: s for s in data["setups"] if s["llama_cpp"]}
    assert gguf["inference-gguf-q4_k_m"]["label"] == "GGUF Q4_K_M"
    assert gguf["inference-gguf-mxfp4"]["label"] == "GGUF MXFP4_MOE"
    assert all(s["weights"].startswith("gguf-") and s["cache"] is None for s in gguf.values())
    assert not any(s["weights"].startswith("gguf-") for s in data["setups"] if not s["llama_cpp"])
    assert data["llama_cpp"] == "llama.cpp" and data["llama_cpp"] in {e["key"] for e in data["engines"]}
    assert data["evaluation"]["llama_cpp"] == {
        "micro_batch": MICRO_BATCH,
        "kv_pad": KV_PAD,
        "cuda_context_bytes": CUDA_CONTEXT_BYTES,
        "cache_types": {"fp16": 2.0, "q8_0": 34 / 32},
    }


def test_other_lora_adapters_are_a_menu_of_the_setup_they_vary(formulas):
    setups = {s["key"]: s for s in llm_fit.picker_data()["setups"]}
    assert setups["qlora"]["adapters"] == "rank 16 on every linear layer" and setups["qlora"]["adapter_of"] is None
    assert setups["qlora-r64"]["adapters"] == "rank 64 on every linear layer" and setups["qlora-r64"]["rank"] == 64
    # The layers menu says a target list briefly, and the answer in words.
    attention = setups["qlora-attention"]
    assert (attention["layers"], attention["adapters"]) == ("attention only", "rank 16 on the attention projections")
    assert attention["targets"] == formulas["setups"]["qlora-attention"]["lora_targets"]
    assert setups["qlora"]["layers"] == "all linear"
    # Each varies the one setup that differs from it in its adapters alone, which comes first.
    for key, setup in setups.items():
        varied = setup["adapter_of"]
        if varied is None:
            continue
        differs = {f for f, v in formulas["setups"][key].items() if formulas["setups"][varied][f] != v}
        assert differs and differs <= {"lora_rank", "lora_targets", "describe"}, key
        assert list(setups).index(varied) < list(setups).index(key)
    assert {k: s["adapter_of"] for k, s in setups.items() if s["adapter_of"]} == {
        "qlora-r64": "qlora",
        "qlora-attention": "qlora",
        "lora-r64": "lora",
        "lora-attention": "lora",
    }
    assert setups["train"]["adapters"] is None and setups["inference-bf16"]["adapters"] is None


def test_a_model_added_to_the_formulas_reaches_the_picker_unchanged(formulas, monkeypatch):
    grown = copy.deepcopy(formulas)
    new = copy.deepcopy(grown["index"][0])
    new["model"], new["title"] = "new-model", "New Model <b>9B</b>"
    new["not_predicted"]["train"] = "its step runs other operations at other sizes"
    grown["index"].append(new)
    read = llm_fit.read_table
    monkeypatch.setattr(
        llm_fit, "read_table", lambda name, fields=None: grown if name == "llm_formulas" else read(name, fields)
    )
    data = llm_fit.picker_data()
    assert data["models"][-1]["key"] == "new-model"
    assert data["models"][-1]["not_predicted"]["train"] == "its step runs other operations at other sizes"
    page = llm_fit.picker()
    assert "<b>9B</b>" not in page and embedded(page)["models"][-1]["title"] == "New Model <b>9B</b>"


def test_without_javascript_the_picker_leaves_a_short_answer_for_the_free_gpus(table):
    page = llm_fit.picker()
    assert 'class="fg-picker__fallback"' in page
    for label in ("T4", "T4 ×2"):
        assert f"<strong>On {label}</strong>" in page
    # Kaggle's P100 is being phased out: no free GPU to plan on.
    assert "On P100" not in page
    assert 'href="#qlora-' in page


def test_beside_the_qlora_snippet_the_8b_advice_gives_the_tables_batch_on_a_t4(table):
    html = llm_fit.snippet_for_8b()
    rows = {r["model"]: r for r in table["rows"]}
    for name in llm_fit.EIGHT_B_MODELS:
        row = rows[name]
        assert f"<code>{row['hf_id']}</code>" in html
        assert f"BATCH_SIZE, SEQ_LEN = {row['cells']['qlora']['t4']}, 1024" in html
    # The first is the one the snippet loads without a token.
    assert "gated" in html and rows[llm_fit.EIGHT_B_MODELS[0]]["hf_id"].startswith("Qwen/")
