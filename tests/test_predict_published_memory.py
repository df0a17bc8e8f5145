"""The published peak memories are transcribed as their sources print them (benchlib/data/published_llm_memory.yaml)."""

from __future__ import annotations

import pytest
import yaml

from benchlib.catalog.language_models import shipped_models
from benchlib.core.package_data import data_file
from benchlib.predict.published_memory import Comparison, median_abs_error_by_weights, published_rows

QWEN_SOURCES = ("qwen2.5-speed-transformers-memory", "qwen3-speed-transformers-memory")


def qwen_rows():
    return [r for r in published_rows() if r.row["source"] in QWEN_SOURCES]


def test_each_qwen_row_quotes_its_figure_and_reads_input_plus_output_tokens():
    rows = qwen_rows()
    assert {r.row["source"] for r in rows} == set(QWEN_SOURCES)
    shipped = {hf_id for m in shipped_models().values() for hf_id in (m.hf_id, *m.aliases)}
    for r in rows:
        row = r.row
        assert row["mode"] == "inference" and row["batch"] == 1 and row["output_tokens"] == 2048
        assert row["seq_len"] == row["input_tokens"] + row["output_tokens"]
        assert row["input_tokens"] in (1, 6144, 14336, 30720)
        assert row["model"] in shipped, row["model"]
        cell = f"{row['measured']:.2f}" if row["unit"] == "GiB" else f"<td>{row['measured']}</td>"
        assert cell in row["quote"], (row["model"], row["measured"], row["quote"])
        assert row["weights"] in ("bf16", "gptq-int8", "gptq-int4", "awq-int4")
        assert r.excluded() is None


def test_the_qwen2_5_memory_rows_are_the_speed_files_transcription():
    speed = yaml.safe_load(data_file("published_llm_speed.yaml").read_text(encoding="utf-8"))
    transcribed = {
        (r["model"], r["weights"], r["input_tokens"]): (r["memory_gb"], r["gpus"], r["quote"])
        for r in speed["rows"]
        if r["source"] == "qwen2.5-speed-transformers"
    }
    memory = {
        (r.row["model"], r.row["weights"], r.row["input_tokens"]): (r.row["measured"], r.row["gpus"], r.row["quote"])
        for r in qwen_rows()
        if r.row["source"] == QWEN_SOURCES[0]
    }
    assert memory == transcribed


def test_the_median_error_is_reported_per_weight_format():
    rows = qwen_rows()
    bf16 = [r for r in rows if r.row["weights"] == "bf16"][:3]
    awq = [r for r in rows if r.row["weights"] == "awq-int4"][:2]
    comparisons = [Comparison(r, r.measured_bytes * f, None) for r, f in zip(bf16, (1.1, 0.8, 1.02))]
    comparisons += [Comparison(r, r.measured_bytes * 1.3, None) for r in awq]
    comparisons.append(Comparison(rows[0], None, "left out"))
    by_weights = median_abs_error_by_weights(comparisons)
    assert set(by_weights) == {"bf16", "awq-int4"}
    assert by_weights["bf16"][0] == pytest.approx(0.1) and by_weights["bf16"][1] == 3
    assert by_weights["awq-int4"][0] == pytest.approx(0.3) and by_weights["awq-int4"][1] == 2
