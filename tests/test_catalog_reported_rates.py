"""The reported data added for llama.cpp, bitsandbytes and the GPUs' reached rates: every row traceable
to its source, typed as the code reads it, and quoting the figure it gives."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from benchlib.catalog.gpus import find_gpu
from benchlib.catalog.language_models import shipped_models
from benchlib.catalog.reached_rates import RATES_FILE, reached_bandwidth, reached_matmul
from benchlib.core.package_data import data_file, sourced_rows

SPEED_FILES = [data_file("published_llm_speed_llama_cpp.yaml"), data_file("published_llm_speed_stacks.yaml")]
STATED_COUNT = re.compile(r"^#\s+(\S+): (\d+) rows$", re.MULTILINE)
DATE = re.compile(r"\d{4}-\d{2}(-\d{2})?")
HF_IDS = {m.hf_id for m in shipped_models().values()}


def _load(path: Path) -> dict[str, Any]:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert isinstance(data, dict) and data["sources"] and data["rows"], path.name
    return data


def _quotes_value(quote: str, value: float) -> bool:
    """Whether the quoted line holds the figure, as printed (7980.12, 25.66, 1,012.7 ...)."""
    printed = {f"{value:g}", f"{value:.1f}", f"{value:.2f}", f"{value:,.1f}", f"{value:,.2f}", str(value)}
    text = quote.replace(",", "")
    return any(p.replace(",", "") in text for p in printed)


@pytest.mark.parametrize("path", SPEED_FILES, ids=lambda p: p.name)
def test_each_published_speed_row_names_its_source_a_shipped_model_and_a_known_gpu(path):
    data = _load(path)
    sources = {s["id"]: s for s in data["sources"]}
    for sid, source in sources.items():
        assert source["url"].startswith("https://") and source["title"], sid
        assert DATE.fullmatch(str(source["as_of"])), (sid, source["as_of"])
    counts: dict[str, int] = {}
    for row in data["rows"]:
        where = f"{path.name}: {row['source']} {row['model']}"
        assert row["source"] in sources, where
        counts[row["source"]] = counts.get(row["source"], 0) + 1
        assert row["model"] in HF_IDS, where
        gpu = row.get("gpu") or sources[row["source"]].get("gpu")
        if gpu:
            assert find_gpu(gpu).name == gpu, where
        else:
            assert row.get("gpu_stated") or sources[row["source"]].get("gpu_stated"), where
        assert row["value"] > 0 and row["quote"], where
        assert _quotes_value(row["quote"], float(row["value"])), (where, row["value"], row["quote"])
    stated = {sid: int(n) for sid, n in STATED_COUNT.findall(path.read_text(encoding="utf-8"))}
    assert stated == counts, f"{path.name}: the header's rows per source"


def test_each_reached_rate_is_quoted_dated_and_for_a_known_gpu():
    data = _load(RATES_FILE)
    sources = {s["id"]: s for s in data["sources"]}
    for row in data["rows"]:
        where = f"{row['source']} {row['gpu']} {row['kind']}"
        assert row["source"] in sources and find_gpu(row["gpu"]).name == row["gpu"], where
        assert row["kind"] in ("matmul", "bandwidth"), where
        assert row["unit"] == ("TFLOPS" if row["kind"] == "matmul" else "GB/s"), where
        assert DATE.fullmatch(str(row.get("as_of") or sources[row["source"]]["as_of"])), where
        assert row["value"] > 0 and row["quote"], where


def test_a_gpu_reaches_the_best_half_precision_rate_reported_for_it():
    spec = find_gpu("T4")
    t4 = reached_matmul("T4")
    assert t4 is not None and t4.dtype in ("fp16", "bf16") and t4.value < spec.fp16_tensor_tflops.value
    h100 = reached_matmul("H100 SXM")
    assert h100 is not None and h100.dtype == "bf16"  # MAMF's FP8 row is not a half-precision rate
    bandwidth = reached_bandwidth("T4")
    assert bandwidth is not None and bandwidth.value < spec.bandwidth_gbps.value
    rows = [r for _, r in sourced_rows(RATES_FILE) if r["gpu"] == "T4" and r["kind"] == "bandwidth"]
    assert bandwidth.value == max(r["value"] for r in rows)  # the best figure reported for the card
    assert reached_matmul("no such gpu") is None
