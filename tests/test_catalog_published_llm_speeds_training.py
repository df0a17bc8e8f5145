"""The published speed data (training tokens/s, prefill) is reported data a reader can check.

Every row names a source that exists, the source's URL is pinned where it can be, the figure is in
the quoted text or the note shows how it was derived from figures the source gives, and the setup
fields use the values benchlib knows (modes, weight formats, GPU names).
"""

from __future__ import annotations

import re
from typing import Any

import pytest
import yaml

from benchlib.catalog.gpus import find_gpu
from benchlib.core.package_data import data_file

TRAINING = "published_llm_training_speed.yaml"
PREFILL = "published_llm_prefill.yaml"
TRAIN_MODES = {"train", "lora", "qlora"}
TRAIN_WEIGHTS = {"fp32", "bf16", "fp16", "nf4", "int8"}
# Inference rows also carry the GGUF formats llama.cpp runs.
PREFILL_WEIGHTS = TRAIN_WEIGHTS | {"q4_0", "q8_0"}
PREFILL_METRICS = {"prefill_tokens_per_s", "total_tokens_per_s"}
ENGINES = {"transformers", "vllm", "sglang", "llama.cpp"}
# A GitHub file or folder pinned to a commit; a PR/issue thread has no commit to pin to.
PINNED = re.compile(r"^https://github\.com/[^/]+/[^/]+/(blob|tree)/[0-9a-f]{40}/")
THREAD = re.compile(r"^https://github\.com/[^/]+/[^/]+/(pull|issues)/\d+$")
DERIVED = re.compile(r"derived: ([\d.]+) / ([\d.]+) = ([\d.]+)")


def load(name: str) -> dict[str, Any]:
    return yaml.safe_load(data_file(name).read_text(encoding="utf-8"))


def rows_of(name: str) -> list[dict[str, Any]]:
    return load(name)["rows"]


def figure_in_quote(value: float, quote: str) -> bool:
    """True when the quote holds the value as a number (1650 matches '1650', 5637.74 matches '5637.74 ±')."""
    numbers = {float(n) for n in re.findall(r"\d+(?:\.\d+)?", quote)}
    return float(value) in numbers


@pytest.mark.parametrize("name", [TRAINING, PREFILL])
def test_every_source_is_dated_described_and_pinned(name):
    data = load(name)
    for source in data["sources"]:
        for key in ("id", "title", "url", "measure", "code", "note"):
            assert source.get(key), (source.get("id"), key)
        assert "as_of" in source, source["id"]
        url = source["url"]
        if "github.com" in url:
            assert PINNED.match(url) or (THREAD.match(url) and "cannot be pinned" in source["note"]), url
    ids = [s["id"] for s in data["sources"]]
    assert len(ids) == len(set(ids))
    assert {r["source"] for r in data["rows"]} <= set(ids)


@pytest.mark.parametrize("name", [TRAINING, PREFILL])
def test_every_figure_is_quoted_or_derived_from_quoted_figures(name):
    for row in rows_of(name):
        assert row["quote"] and row["value"] > 0 and row["unit"] == "tokens/s", row
        if figure_in_quote(row["value"], row["quote"]):
            continue
        derived = DERIVED.search(row["note"] or "")
        assert derived, f"{row['value']} is neither in the quote nor derived in the note: {row['quote']}"
        tokens, seconds, result = (float(g) for g in derived.groups())
        # The derivation's inputs come from the source: the token count is the one quoted.
        assert figure_in_quote(tokens, row["quote"]), row["quote"]
        assert tokens / seconds == pytest.approx(row["value"], rel=1e-9)
        assert result == pytest.approx(row["value"], rel=1e-9)


def test_training_rows_use_the_modes_and_weights_benchlib_knows():
    rows = rows_of(TRAINING)
    for row in rows:
        assert row["mode"] in TRAIN_MODES, row["mode"]
        assert row["weights"] in TRAIN_WEIGHTS, row["weights"]
        assert row["metric"] == "training_tokens_per_s"
        assert (row["weights"] == "nf4") == (row["mode"] == "qlora"), row["quote"]
        if row["mode"] == "train":
            assert row["lora_rank"] is None and row["lora_targets"] is None, row["quote"]
        assert isinstance(row["gpus"], int) and row["gpus"] >= 1
    assert len(rows) >= 8
    assert len({r["source"] for r in rows}) >= 2


def test_prefill_rows_name_an_engine_a_prompt_and_a_metric():
    for row in rows_of(PREFILL):
        assert row["mode"] == "inference"
        assert row["engine"] in ENGINES, row["engine"]
        assert row["weights"] in PREFILL_WEIGHTS, row["weights"]
        assert row["metric"] in PREFILL_METRICS, row["metric"]
        assert isinstance(row["prompt_len"], int) and row["prompt_len"] >= 1
        assert isinstance(row["batch"], int) and row["batch"] >= 1


@pytest.mark.parametrize("name", [TRAINING, PREFILL])
def test_every_named_gpu_is_one_benchlib_has_specs_for(name):
    for row in rows_of(name):
        if row["gpu"] is None:
            # An unnamed or unknown card must say why in the row or its source.
            assert row["note"], row["quote"]
        else:
            assert find_gpu(row["gpu"]).name == row["gpu"]


def test_a_field_the_source_leaves_open_is_null_not_guessed():
    # torchtune's Llama 3.1 table names no config: the LoRA settings stay null there.
    rows = [r for r in rows_of(TRAINING) if r["model"] == "meta-llama/Llama-3.1-8B" and r["mode"] == "lora"]
    assert rows and all(r["lora_rank"] is None and r["grad_checkpointing"] is None for r in rows)
