"""The "Can I run it?" picker's data: generated from the committed table, whatever the table holds.

The page's script (docs/assets/javascripts/can-i-run-it.js) answers only from this data; the
browser test in tests/browser/test_can_i_run_it.py reads its answers off the page.
"""

from __future__ import annotations

import copy
import html
import json
import re

import pytest

from benchlib.core.units import format_bytes
from benchlib.site import can_i_run_it as llm_fit
from benchlib.site.llm_speed import hours_per_million_tokens, hours_text, rate_text
from benchlib.site.sources import read_table


def embedded(page_html: str) -> dict:
    """The picker's data as the page holds it, in its data-picker attribute."""
    match = re.search(r'data-picker="([^"]*)"', page_html)
    assert match, "the picker carries its data"
    return json.loads(html.unescape(match.group(1)))


@pytest.fixture
def table():
    return read_table("can_i_run_it")


def test_the_embedded_data_is_the_committed_table_reshaped(table):
    data = embedded(llm_fit.picker())
    assert data == json.loads(json.dumps(llm_fit.picker_data()))
    assert [m["key"] for m in data["models"]] == [r["model"] for r in table["rows"]]
    assert [g["key"] for g in data["gpus"]] == [c["key"] for c in table["columns"]]
    assert data["formats"] == list(dict.fromkeys(t["setup"]["weights"] for t in table["tasks"]))
    assert [m["key"] for m in data["modes"]] == list(dict.fromkeys(t["setup"]["mode"] for t in table["tasks"]))
    assert data["created"] == table["created"][:10]
    rows = {r["model"]: r for r in table["rows"]}
    for task, picked in zip(table["tasks"], data["tasks"], strict=True):
        key = task["key"]
        assert (picked["mode"], picked["weights"]) == (task["setup"]["mode"], task["setup"]["weights"])
        assert (picked["batch"], picked["seq_len"]) == (task["setup"]["batch"], task["setup"]["seq_len"])
        assert picked["left_out"] == task["experts_left_out"]
        for model, row in rows.items():
            assert picked["largest"][model] == row["cells"][key]
            if key not in row["peaks_at_one"]:  # not predicted: a GPTQ mixture of experts
                assert model not in picked["peak"] and picked["left_out"]
                assert set(row["cells"][key].values()) == {None}
                continue
            total = row["peaks_at_one"][key]["total"]
            assert picked["peak"][model] == {"bytes": total, "text": format_bytes(total)}
            for gpu in picked["largest"][model]:
                if "training" in picked:
                    rate = row["training_tokens_per_s"][key][gpu]
                    expected = rate and {
                        "value": rate,
                        "text": rate_text(rate),
                        "hours_text": hours_text(hours_per_million_tokens(rate)),
                    }
                    assert picked["training"][model][gpu] == expected
                if "decode" in picked:
                    for engine in (e["key"] for e in picked["decode"]["engines"]):
                        rate = row["decode_tokens_per_s"][engine][gpu]
                        expected = rate and {"value": rate, "text": rate_text(rate)}
                        assert picked["decode"]["rates"][model][gpu][engine] == expected
    # Decode speeds: generate() and a served engine on the 16-bit task, llama.cpp on its GGUF task.
    decoding = {t["key"]: [e["key"] for e in t["decode"]["engines"]] for t in data["tasks"] if "decode" in t}
    assert decoding == {"inference": ["transformers", "vllm"], "inference-gguf-q4_k_m": ["llama.cpp"]}
    trains = [t for t in table["tasks"] if t["setup"]["mode"] != "inference"]
    assert [t["key"] for t in data["tasks"] if "training" in t] == [t["key"] for t in trains]


def test_a_format_and_a_model_added_to_the_table_reach_the_picker_unchanged(table, monkeypatch):
    grown = copy.deepcopy(table)
    added = copy.deepcopy(next(t for t in grown["tasks"] if t["key"] == "inference"))
    added["key"], added["setup"]["weights"] = "inference-mxfp4", "mxfp4"
    grown["tasks"].append(added)
    new = copy.deepcopy(grown["rows"][0])
    new["model"], new["title"] = "new-model", "New Model <b>9B</b>"
    grown["rows"].append(new)
    for row in grown["rows"]:
        row["cells"]["inference-mxfp4"] = {k: v // 2 for k, v in row["cells"]["inference"].items()}
        row["peaks_at_one"]["inference-mxfp4"] = row["peaks_at_one"]["inference"]
    monkeypatch.setattr(llm_fit, "_table", lambda: grown)

    data = llm_fit.picker_data()
    assert "mxfp4" in data["formats"] and [m["key"] for m in data["modes"]].count("inference") == 1
    assert data["models"][-1]["key"] == "new-model"
    task = next(t for t in data["tasks"] if t["key"] == "inference-mxfp4")
    assert task["mode"] == "inference" and task["axis"] == "tokens"
    assert task["largest"]["new-model"] == new["cells"]["inference-mxfp4"]
    assert "decode" not in task, "the table's decode speeds are for its own inference task only"
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
