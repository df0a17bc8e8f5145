"""The reported LLM speed data (benchlib/data/published_llm_speed.yaml): every row traceable to its source.

The file holds other people's measurements, typed in by hand from a pinned page; these tests check
that what a reader (or a fit) takes from it is what the source printed, for every row.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
import yaml

from benchlib.catalog.gpus import find_gpu
from benchlib.catalog.language_models import resolve_model, shipped_models
from benchlib.core.package_data import data_file

PUBLISHED = data_file("published_llm_speed.yaml")
WEIGHTS = {"bf16", "gptq-int8", "gptq-int4", "awq-int4"}
ENGINES = {"transformers", "vllm"}
PINNED = re.compile(r"^https://github\.com/[\w.-]+/[\w.-]+/blob/[0-9a-f]{40}/\S+$")
# The header comment's "#   <source id>: <n> rows" lines.
STATED_COUNT = re.compile(r"^#\s+(\S+): (\d+) rows$", re.MULTILINE)


@pytest.fixture(scope="module")
def text() -> str:
    return PUBLISHED.read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def data(text: str) -> dict[str, Any]:
    loaded = yaml.safe_load(text)
    assert isinstance(loaded, dict)
    return loaded


@pytest.fixture(scope="module")
def sources(data: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {s["id"]: s for s in data["sources"]}


def cells(quote: str) -> list[str]:
    """The cells of a quoted grid-table row line, stripped."""
    assert quote.startswith("|") and quote.rstrip().endswith("|"), quote
    return [c.strip() for c in quote.strip().strip("|").split("|")]


def numbers(quote: str) -> list[float]:
    found = []
    for cell in cells(quote):
        try:
            found.append(float(cell))
        except ValueError:
            pass
    return found


def test_each_source_is_pinned_dated_and_names_a_gpu_and_engine_benchlib_knows(sources):
    assert sources
    for sid, source in sources.items():
        assert PINNED.match(source["url"]), f"{sid}: url not pinned to a commit: {source['url']}"
        as_of = source.get("as_of")
        if as_of is None:
            assert "as_of" in source["note"], f"{sid}: no as_of and the note does not say why"
        else:
            assert re.fullmatch(r"\d{4}-\d{2}(-\d{2})?", str(as_of)), f"{sid}: as_of {as_of!r}"
        assert find_gpu(source["gpu"]).name == source["gpu"], sid
        assert source["engine"] in ENGINES, sid
        for field in ("title", "measure", "settings", "note"):
            assert source[field], f"{sid}: {field} is empty"


def test_every_row_names_a_source_and_an_allowed_setup(data, sources):
    for i, row in enumerate(data["rows"]):
        where = f"row {i} ({row['model']})"
        assert row["source"] in sources, where
        assert row["mode"] == "inference", where
        assert row["weights"] in WEIGHTS, where
        assert row["metric"] == "decode_tokens_per_s" and row["unit"] == "tokens/s", where
        assert isinstance(row["gpus"], int) and row["gpus"] >= 1, where
        assert row["batch"] == 1 and row["output_tokens"] == 2048, where
        assert isinstance(row["input_tokens"], int) and row["input_tokens"] >= 1, where
        assert isinstance(row["value"], float) and row["value"] > 0, where


def test_every_figure_appears_in_its_quote(data):
    # The quote is the row line as printed; the merged Model/Input Length cells may be blank in it,
    # but the quantization, GPU count and figures are always on the line itself.
    for i, row in enumerate(data["rows"]):
        where = f"row {i}: {row['quote']}"
        printed = numbers(row["quote"])
        assert row["value"] in printed, where
        assert row["gpus"] in printed, where
        if row["memory_gb"] is not None:
            assert row["memory_gb"] in printed, where
        names = {"bf16": "BF16", "gptq-int8": "GPTQ-Int8", "gptq-int4": "GPTQ-Int4", "awq-int4": "AWQ"}
        assert names[row["weights"]] in cells(row["quote"]), where
        first = cells(row["quote"])[:2]
        if first[0]:
            assert row["model"] == f"Qwen/{first[0]}", where
        if first[1]:
            assert row["input_tokens"] == int(first[1]), where


def test_the_vllm_tables_report_no_memory_and_the_transformers_tables_always_do(data, sources):
    for i, row in enumerate(data["rows"]):
        engine = sources[row["source"]]["engine"]
        assert (row["memory_gb"] is None) == (engine == "vllm"), f"row {i} ({row['source']})"


def test_the_rows_per_source_are_what_the_header_comment_states(text, data, sources):
    stated = {sid: int(n) for sid, n in STATED_COUNT.findall(text.split("\nsources:")[0])}
    counted: dict[str, int] = {}
    for row in data["rows"]:
        counted[row["source"]] = counted.get(row["source"], 0) + 1
    assert stated == counted
    assert set(stated) == set(sources)
    for sid, n in counted.items():
        assert f"{n} rows" in sources[sid]["note"], f"{sid}: the note does not state its {n} rows"


def test_no_row_is_typed_twice(data):
    seen = set()
    for row in data["rows"]:
        key = (row["source"], row["model"], row["input_tokens"], row["weights"], row["gpus"])
        assert key not in seen, key
        seen.add(key)


def test_every_row_model_is_a_shipped_config(data):
    # A shipped id or alias is what resolve_model takes first, offline; nothing here may need the hub.
    shipped = {hf_id.lower() for m in shipped_models().values() for hf_id in (m.hf_id, *m.aliases)}
    models = sorted({row["model"] for row in data["rows"]})
    assert [m for m in models if m.lower() not in shipped] == []


@pytest.mark.slow  # builds each config with transformers (its import alone takes seconds)
def test_every_row_model_resolves_offline_to_its_shipped_config(data):
    for model in sorted({row["model"] for row in data["rows"]}):
        resolved = resolve_model(model)  # conftest sets HF_HUB_OFFLINE=1
        shipped = shipped_models()[resolved.name]
        assert model in shipped.aliases or model == shipped.hf_id, model
        assert resolved.depth == shipped.config["num_hidden_layers"], model
