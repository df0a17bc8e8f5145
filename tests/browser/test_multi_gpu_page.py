"""The "More than one GPU" page in Chromium: every snippet shown verbatim, the Kaggle facts with
their sources, the choice between DDP, FSDP and a layer split, what FSDP holds on two T4s, and the
scaling block (the chart, or the note on how to measure one)."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import urljoin

import pytest
from site_samples import sample_files

pytestmark = pytest.mark.browser

SNIPPETS = Path(__file__).resolve().parents[2] / "snippets" / "multi_gpu"
SHOWN = [
    "ddp_train.py",
    "launch_ddp.sh",
    "data_parallel.py",
    "fsdp_finetune.py",
    "launch_fsdp.sh",
    "launch_fsdp_accelerate.sh",
    "keras_mirrored.py",
    "jax_data_parallel.py",
    "measure.sh",
]


def samples_have_valid_scaling() -> bool:
    return any(r.workload == "dp-scaling" and r.status == "ok" for f in sample_files().values() for r in f.measurements)


def test_multi_gpu_page(page, page_log, site_url):
    page.goto(urljoin(site_url, "guides/multi-gpu/"), wait_until="networkidle")
    assert page.locator("article h1").inner_text().rstrip("¶") == "More than one GPU"

    # What the reader copies is the tested file, character for character.
    blocks = [code.text_content().strip() for code in page.locator("article pre > code").all()]
    for name in SHOWN:
        assert (SNIPPETS / name).read_text(encoding="utf-8").strip() in blocks, f"{name} is not shown verbatim"
    assert len(blocks) == len(SHOWN), "a code block on the page is not one of the tested snippets"

    # Answer first: the way to use two T4s, before how each works.
    headings = [h.rstrip("¶") for h in page.locator("article h2").all_inner_texts()]
    assert headings[0] == "Which way to use two T4s", headings
    choice = page.locator("article table").first.inner_text()
    assert "DDP" in choice and "FSDP" in choice and "A layer split" in choice
    # What FSDP holds on two T4s; each model leads to its full fine-tune row on Can I run it?
    sharding = page.locator('article table[data-table="fsdp-t4x2"]')
    assert sharding.locator("tbody tr").count() >= 2
    assert "does not fit" in sharding.inner_text()
    first = sharding.locator("tbody a").first.evaluate("a => a.href")
    assert first.startswith(urljoin(site_url, "gpus/can-i-run-it/#train-")), first
    row = page.context.new_page()
    row.goto(first, wait_until="networkidle")
    assert row.locator(f'tr[id="{first.split("#")[1]}"]').count() == 1  # the model's full fine-tune row
    row.close()

    facts = page.locator("article ul.fg-facts").all_inner_texts()
    assert any("GPU T4 ×2" in f and "2026-09-17" in f for f in facts)
    assert any("TPU v5e-8" in f for f in facts)
    assert page.locator('article a[href="https://github.com/Kaggle/kaggle-cli/pull/1198"]').count() >= 2

    block = page.locator('article [data-chart="dp-scaling"]')
    assert block.count() == 1
    if samples_have_valid_scaling():
        figure = page.locator("article figure#chart-dp-scaling")
        figure.locator(".bench-chart__view svg").first.wait_for(state="attached", timeout=15_000)
        assert figure.locator("figcaption").inner_text().startswith("Scaling efficiency")
        assert page.locator("article details.bench-chart__data table").count() == 1
    else:
        note = block.inner_text()
        assert "No multi-device measurements yet" in note or "No valid multi-device measurements yet" in note
        assert "benchlib launch" in note and "GPU T4 x2" in note

    # The link to the TPUs guide leads there.
    page.locator("article").get_by_role("link", name="TPUs guide").click()
    # The link may carry a section anchor; instant navigation lands on the page either way.
    page.wait_for_url(re.compile(re.escape(urljoin(site_url, "guides/tpus/")) + r"(#.*)?$"))
    assert not page_log.blocked_requests, f"requests left 127.0.0.1: {page_log.blocked_requests}"
    assert not page_log.console_errors, f"console errors: {page_log.console_errors}"
