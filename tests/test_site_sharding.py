"""The "More than one GPU" page's table of what FSDP holds on two T4s: halves of the full fine-tune
state that "Can I run it?" predicts, in size order, up to the first model whose half is too big."""

from __future__ import annotations

import re

from benchlib.site.sharding import sharding_rows, sharding_table
from benchlib.site.sources import read_table

GIB = 2**30


def model(name: str, gib: float, one_t4_batch: int) -> dict:
    """A row of the table whose weights, gradients and optimizer state are ``gib`` in all."""
    weights = int(gib * GIB / 5)  # AdamW's state is counted as three times the fp32 weights
    return {
        "model": name,
        "title": name.title(),
        "cells": {"train": {"t4": one_t4_batch, "t4x2": 0}},
        "peaks_at_one": {
            "train": {"weights": weights, "gradients": weights, "optimizer_state": int(gib * GIB) - 2 * weights}
        },
    }


def table(*rows: dict) -> dict:
    return {"columns": [{"key": "t4", "usable_bytes": 15 * GIB}], "rows": list(rows)}


def test_rows_run_from_the_smallest_to_the_first_whose_half_outgrows_a_t4() -> None:
    rows = sharding_rows(
        table(model("big", 40, 0), model("small", 10, 4), model("middle", 20, 0), model("huge", 90, 0))
    )
    assert [(r["model"], r["one_gpu"], r["state"], r["share"], r["left"]) for r in rows] == [
        ("small", "fits, batch 4", "10.0 GiB", "5.0 GiB", "10.0 GiB"),
        ("middle", "does not fit", "20.0 GiB", "10.0 GiB", "5.0 GiB"),
        ("big", "does not fit", "40.0 GiB", "20.0 GiB", None),  # the first too big even halved; huge is left out
    ]


def test_the_page_block_links_each_model_to_its_full_fine_tune_row() -> None:
    committed = read_table("can_i_run_it")
    html = sharding_table("guides/multi-gpu.md")
    anchors = re.findall(r'href="\.\./\.\./gpus/can-i-run-it/#(train-[^"]+)"', html)
    assert anchors == [f"train-{r['model']}" for r in sharding_rows(committed)]
    assert {row["model"] for row in committed["rows"]} >= {a.removeprefix("train-") for a in anchors}
    # At least one model fits two T4s only when sharded: the reason the table is on the page.
    assert any(r["one_gpu"] == "does not fit" and r["left"] for r in sharding_rows(committed))
    assert "none: does not fit" in html
