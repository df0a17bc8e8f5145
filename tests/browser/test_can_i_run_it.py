"""The "Can I run it?" page in Chromium: a table per task, every model and GPU, sources for published figures."""

from __future__ import annotations

import re
from urllib.parse import urljoin

import pytest
from playwright.sync_api import expect

from benchlib.catalog.language_models import shipped_models
from benchlib.catalog.platforms import session_budgets
from benchlib.core.units import format_bytes
from benchlib.site.llm_speed import hours_per_million_tokens, hours_text, rate_text
from benchlib.site.sources import read_table

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


# The picker at the top of the page (docs/assets/javascripts/can-i-run-it.js): its answers are read
# off the page and checked against the committed table itself.


def pick(page, **choices: str) -> dict[str, str]:
    """Set the picker's controls (mode first: choosing a mode resets weights, tokens and batch) and read its answer."""
    picker = page.locator(".fg-picker--live")
    for name in sorted(choices, key=lambda n: n != "mode"):
        control = picker.locator(f"[data-control={name}]")
        if name in ("tokens", "batch", "job"):
            control.fill(str(choices[name]))
        else:
            control.select_option(choices[name])
    answer = picker.locator(".fg-picker__answer")
    facts = {li.get_attribute("data-fact"): li.inner_text() for li in answer.locator("li").all()}
    return {
        "verdict": answer.get_attribute("data-verdict"),
        "text": answer.locator(".fg-picker__verdict").inner_text(),
        **facts,
    }


def test_the_picker_answers_gpt_oss_20b_on_a_t4_in_llama_cpp_with_its_own_mxfp4_file(can_i, page_log):
    table = read_table("can_i_run_it")
    row = next(r for r in table["rows"] if r["model"] == "gpt-oss-20b")
    assert row["cells"]["inference-gguf-q4_k_m"]["t4"] == row["max_positions"]
    answer = pick(can_i, model="gpt-oss-20b", gpu="t4", mode="inference", weights="gguf-q4_k_m", tokens="1024")
    assert answer["verdict"] == "fits", answer
    assert "in llama.cpp with its GGUF MXFP4 file" in answer["text"]
    rate = row["decode_tokens_per_s"]["llama.cpp"]["t4"]
    assert f"about {rate_text(rate)} tokens/s in llama.cpp" in answer["speed"]
    assert "llama.cpp's GPU buffers" in answer["peak"]
    assert not page_log.blocked_requests and not page_log.console_errors


def test_the_picker_answers_a_training_batch_from_the_table(can_i, page_log):
    table = read_table("can_i_run_it")
    row = next(r for r in table["rows"] if r["model"] == "llama-3.1-8b")
    largest = row["cells"]["qlora"]["t4"]
    assert largest >= 1
    answer = pick(can_i, mode="qlora", model="llama-3.1-8b", gpu="t4", batch=largest)
    assert answer["verdict"] == "fits" and answer["text"].startswith("Fits.")
    assert f"Largest batch that fits: {largest}," in answer["largest"]
    assert format_bytes(row["peaks_at_one"]["qlora"]["total"]) in answer["peak"]
    rate = row["training_tokens_per_s"]["qlora"]["t4"]
    assert f"about {rate_text(rate)} tokens/s, {hours_text(hours_per_million_tokens(rate))} hours" in answer["speed"]
    assert "predicted" in answer["kind"] and table["created"][:10] in answer["kind"]
    over = pick(can_i, batch=largest + 1)
    assert over["verdict"] == "no" and over["text"].startswith("Does not fit.")
    assert not page_log.blocked_requests and not page_log.console_errors


def test_the_picker_counts_a_training_job_in_the_free_tiers_sessions_and_quotas(can_i, page_log):
    table = read_table("can_i_run_it")
    row = next(r for r in table["rows"] if r["model"] == "llama-3.1-8b")
    rate = row["training_tokens_per_s"]["qlora"]["t4"]
    answer = pick(can_i, mode="qlora", model="llama-3.1-8b", gpu="t4", batch=1, job=100_000_000)
    hours = 100_000_000 / rate / 3600
    budgets = session_budgets("T4", hours)
    assert {b.tier for b in budgets} >= {"Google Colab Free", "Kaggle Notebooks Free"}
    for budget in budgets:  # as `benchlib predict --tokens` says it
        assert budget.describe() in answer["job"], (budget.describe(), answer["job"])
    assert "save checkpoints and resume" in answer["job"]
    # No free tier has an H100: the time alone.
    h100 = pick(can_i, gpu="h100")
    assert "No free tier offers H100" in h100["job"]
    assert can_i.locator("[data-control=job]").is_visible()
    pick(can_i, mode="inference")
    assert can_i.locator("[data-control=job]").is_hidden()
    assert not page_log.blocked_requests and not page_log.console_errors


def test_the_picker_answers_a_prompt_length_from_the_table(can_i):
    table = read_table("can_i_run_it")
    # A model and GPU whose longest prompt the GPU's memory sets, not the model's own limit.
    row, gpu = next(
        (r, g)
        for r in table["rows"]
        for g, v in r["cells"]["inference"].items()
        if 1024 < v < r["max_positions"] and r["decode_tokens_per_s"]["transformers"][g]
    )
    largest = row["cells"]["inference"][gpu]
    answer = pick(can_i, mode="inference", model=row["model"], gpu=gpu, tokens=largest)
    assert answer["verdict"] == "fits"
    assert f"{largest:,} tokens." in answer["largest"]
    assert f"about {rate_text(row['decode_tokens_per_s']['transformers'][gpu])} tokens/s" in answer["speed"]
    assert "At your setting: not predicted" in answer["peak"], "the table holds the peak at 1,024 tokens only"
    assert pick(can_i, tokens=largest + 1)["verdict"] == "no"
    beyond = pick(can_i, tokens=row["max_positions"] + 1)
    assert beyond["verdict"] == "limit" and f"{row['max_positions']:,} tokens" in beyond["text"]


def test_a_combination_the_table_lacks_is_not_predicted_and_says_why(can_i):
    table = read_table("can_i_run_it")
    held = {t["setup"]["weights"] for t in table["tasks"] if t["setup"]["mode"] == "qlora"}
    other = next(t["setup"]["weights"] for t in table["tasks"] if t["setup"]["weights"] not in held)
    answer = pick(can_i, mode="qlora", weights=other)
    assert answer["verdict"] == "not-predicted" and answer["text"].startswith("Not predicted.")
    assert all(w in answer["text"] for w in held) and other in answer["text"]
    qlora = next(t for t in table["tasks"] if t["key"] == "qlora")
    longer = pick(can_i, weights=qlora["setup"]["weights"], tokens=qlora["setup"]["seq_len"] * 2)
    assert (
        longer["verdict"] == "not-predicted" and f"{qlora['setup']['seq_len']:,}-token samples only" in longer["text"]
    )


def test_a_4_bit_file_is_answered_and_a_gptq_mixture_of_experts_says_why_not(can_i):
    table = read_table("can_i_run_it")
    gguf = next(t for t in table["tasks"] if t["setup"]["weights"] == "gguf-q4_k_m")
    row = next(r for r in table["rows"] if r["model"] == "qwen3-30b-a3b")
    largest = row["cells"][gguf["key"]]["rtx-4090"]
    answer = pick(can_i, mode="inference", weights="gguf-q4_k_m", model=row["model"], gpu="rtx-4090", tokens=1024)
    assert answer["verdict"] == ("fits" if largest >= 1024 else "no")
    gptq = pick(can_i, weights="gptq-int4")
    assert gptq["verdict"] == "not-predicted" and "MoE Kernel Unsupported" in gptq["text"]


def test_without_javascript_the_page_keeps_a_short_answer_and_the_tables(browser, site_url):
    context = browser.new_context(viewport={"width": 1280, "height": 900}, java_script_enabled=False)
    try:
        page = context.new_page()
        page.goto(urljoin(site_url, PAGE))
        expect(page.locator(".fg-picker__fallback")).to_be_visible()
        assert "On T4" in page.locator(".fg-picker__fallback").inner_text()
        expect(page.locator("table[data-table=llm-fit-inference]")).to_be_visible()
        assert page.locator(".fg-picker__form").count() == 0
    finally:
        context.close()
