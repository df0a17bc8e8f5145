"""The committed formulas: every model the page shows, every setup the picker offers, and a reason
wherever a setup has none."""

from __future__ import annotations

import pytest

from benchlib import tables
from benchlib.tables.llm_formulas import NAME, SETUPS, predicted_models


@pytest.fixture(scope="module")
def table() -> dict:
    return tables.read(NAME)


def test_every_shown_model_has_every_setup_the_picker_offers(table):
    assert [m["model"] for m in table["models"]] == predicted_models()
    assert list(table["setups"]) == list(SETUPS)
    for row in table["models"]:
        assert list(row["setups"]) == list(SETUPS), row["model"]


def test_a_setup_without_formulas_says_why_in_a_sentence(table):
    for row in table["models"]:
        for key, entry in row["setups"].items():
            if "memory" in entry:
                assert set(entry) == {"memory", "time"}, (row["model"], key)
            else:
                assert len(entry["not_predicted"].split()) >= 5, (row["model"], key, entry)


def test_the_issues_two_questions_have_formulas(table):
    """Llama 3.3 70B in GPTQ int4 (inference) and Llama 3.1 8B in QLoRA: the questions issue 37 asks."""
    rows = {m["model"]: m["setups"] for m in table["models"]}
    assert "memory" in rows["llama-3.3-70b"]["inference-gptq-int4"]
    assert "memory" in rows["llama-3.1-8b"]["qlora"]
    assert set(rows["llama-3.1-8b"]["qlora"]["time"]["calls"]) == {"train"}
    assert set(rows["llama-3.3-70b"]["inference-gptq-int4"]["time"]["calls"]) == {"prefill", "decode"}


def test_every_dense_model_has_formulas_for_bf16_inference_and_each_way_of_fine_tuning(table):
    for row in table["models"]:
        for key in ("inference-bf16", "qlora", "lora", "train"):
            assert "memory" in row["setups"][key], (row["model"], key, row["setups"][key].get("not_predicted"))
