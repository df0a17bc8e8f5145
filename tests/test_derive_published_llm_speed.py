"""Counting the published speed rows for `benchlib tables --only llm_speed_check`."""

from __future__ import annotations

from collections import Counter
from types import SimpleNamespace

from benchlib.catalog.published_llm_speeds import published_rows
from benchlib.derive import published_llm_speed


def test_rows_that_differ_only_in_gpu_or_engine_share_one_count(monkeypatch):
    # A model and file published on several GPUs, or under two engines, is counted once.
    calls: Counter = Counter()

    def count_inference(model, setup, *, decode_context=None):
        calls[model.name, setup, decode_context] += 1
        return SimpleNamespace(prefill=("prefill", setup, decode_context), decode=("decode", setup, decode_context))

    monkeypatch.setattr(published_llm_speed, "count_inference", count_inference)
    rows = [p for p in published_rows() if p.kind != "training" and p.row["model"] == "Qwen/Qwen2.5-7B-Instruct"]
    counted, _ = published_llm_speed.count_rows(rows)
    assert len(counted) > len(calls) > 0, "the data no longer has rows that share a count"
    assert set(calls.values()) == {1}
    # Each row still gets the count of its own setup and context.
    for c in counted:
        prefill, decode = c.calls
        assert prefill[0] == "prefill" and decode[0] == "decode" and prefill[1:] == decode[1:]
        assert prefill[1].seq_len == max(1, c.published.input_tokens or 1)
        assert prefill[1].batch == int(c.published.row["batch"])
