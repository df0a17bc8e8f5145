"""The "Can I run it?" page in Chromium: a table per task, every model and GPU, sources for published figures."""

from __future__ import annotations

import re
from urllib.parse import urljoin

import pytest
from playwright.sync_api import expect

from benchlib.catalog.language_models import shipped_models

pytestmark = pytest.mark.browser

PAGE = "gpus/can-i-run-it/"
TASKS = {
    "Inference": "inference",
    "Inference, 4-bit GPTQ": "inference-gptq-int4",
    "llama.cpp, GGUF": "inference-gguf-q4_k_m",
    "QLoRA": "qlora",
    "LoRA": "lora",
    "Full fine-tuning": "train",
}
# A dash: not predicted (a GPTQ mixture of experts; the legend says why).
CELL = re.compile(r"\d+K?\*?|✗|–")
# An inference cell that fits a 1,024-token prompt adds the predicted decode speed of generate() and
# of a served engine on a second line; a training cell that fits, tokens/s and hours per million tokens.
SPEED = re.compile(r"[\d,.]+ / ([\d,.]+|–) tok/s")
TRAINING = (re.compile(r"[\d,.]+ tok/s"), re.compile(r"[\d,.]+ h/M"))


@pytest.fixture
def can_i(page, site_url):
    page.goto(urljoin(site_url, PAGE), wait_until="networkidle")
    return page


def test_each_task_tab_shows_every_model_on_every_gpu(can_i, page_log):
    models = [m for m in shipped_models().values() if m.on_page]
    for label, key in TASKS.items():
        can_i.locator(".tabbed-labels label", has_text=re.compile(f"^{re.escape(label)}$")).click()
        table = can_i.locator(f"table[data-table=llm-fit-{key}]")
        assert table.is_visible(), f"the {label} tab shows its table"
        rows = table.locator("tbody tr")
        assert rows.count() == len(models)
        for i in range(rows.count()):
            cells = rows.nth(i).locator("td[data-gpu]")
            assert cells.count() == 10
            for text in cells.all_inner_texts():
                memory, *speed = text.strip().split("\n")
                assert CELL.fullmatch(memory.strip()), text
                if key == "inference":
                    assert len(speed) <= 1 and all(SPEED.fullmatch(s.strip()) for s in speed), text
                elif key == "inference-gguf-q4_k_m":  # llama.cpp's decode speed alone
                    assert len(speed) <= 1 and all(TRAINING[0].fullmatch(s.strip()) for s in speed), text
                elif speed:
                    assert [bool(p.fullmatch(s.strip())) for p, s in zip(TRAINING, speed)] == [True, True], text
    assert not page_log.blocked_requests and not page_log.console_errors


def test_an_8b_model_qloras_on_the_free_t4_and_says_it_is_predicted(can_i):
    can_i.locator(".tabbed-labels label", has_text=re.compile("^QLoRA$")).click()
    cell = can_i.locator("table[data-table=llm-fit-qlora] tr[data-model='llama-3.1-8b'] td[data-gpu='t4']")
    assert int(cell.get_attribute("data-value")) >= 1
    assert "(predicted)" in cell.get_attribute("title")


def test_inference_cells_show_predicted_decode_speed_and_link_the_check(can_i, page):
    cell = can_i.locator("table[data-table=llm-fit-inference] tr[data-model='llama-3.1-8b'] td[data-gpu='h100']")
    assert SPEED.fullmatch(cell.locator(".fg-note").inner_text().strip())
    assert "served (vLLM) (predicted)" in cell.get_attribute("title")
    legend = can_i.locator("p.fg-note", has_text="tok/s").first
    assert "predicted" in legend.inner_text() and "model.generate()" in legend.inner_text()
    assert re.search(r"a median error of \d+%|not yet checked against a published measurement", legend.inner_text())
    legend.locator("a", has_text="How speed is predicted").click()
    expect(page).to_have_url(re.compile(r"benchmarks/methodology/"))  # navigation.tracking may rewrite the fragment
    expect(page.locator("h2#how-speed-is-predicted")).to_be_visible()


def test_the_cost_table_gives_dollars_per_million_tokens_with_dated_prices(can_i):
    rows = can_i.locator("table[data-table=llm-cost] tbody tr")
    assert rows.count() >= 5
    for text in rows.all_inner_texts():
        assert re.search(r"\$\d+\.\d\d(–\d+\.\d\d)?/h", text) and re.search(r"\d{4}(-\d{2})?", text)
        assert re.search(r"\$[\d,.]+|✗", text)


def test_published_measurements_carry_source_date_and_error(can_i):
    rows = can_i.locator("table[data-table=llm-published] tbody tr")
    assert rows.count() >= 10
    first = rows.first.inner_text()
    assert re.search(r"\d{4}-\d{2}", first) and re.search(r"[+-]\d+%", first)
    assert rows.first.locator("a[href^='https://github.com/']").count() == 1
    assert re.search(r"Median absolute error: \d+\.\d%", can_i.locator("article").inner_text())


def test_the_kaggle_page_links_to_its_row_of_the_table(page, site_url):
    page.goto(urljoin(site_url, "platforms/kaggle/"), wait_until="networkidle")
    summary = page.locator("ul.fg-llm-platform")
    assert "On T4 ×2" in summary.inner_text()
    row_link = summary.locator("a[href*='#inference-']").first
    anchor = row_link.get_attribute("href").rsplit("#", 1)[1]
    row_link.click()
    # The path, not the fragment: navigation.tracking rewrites the fragment to the nearest heading
    # as soon as the page has scrolled to the row, which a loaded machine can show before this looks.
    expect(page).to_have_url(re.compile(r"gpus/can-i-run-it/"))
    expect(page.locator("h1")).to_contain_text("Can I run it?")  # instant navigation swaps the page in after the URL
    expect(page.locator(f"tr[id='{anchor}']")).to_be_visible()
