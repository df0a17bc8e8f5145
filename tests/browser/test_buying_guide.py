"""The GPU buying guide in Chromium: the fit matrix, its charts drawn locally, sources on every figure."""

from __future__ import annotations

import re
from urllib.parse import urljoin

import pytest

pytestmark = pytest.mark.browser

CHART_TIMEOUT_MS = 15_000
PAGE = "gpus/buying-guide/"


@pytest.fixture
def guide(page, site_url):
    page.goto(urljoin(site_url, PAGE), wait_until="networkidle")
    return page


def test_matrix_lists_gpus_with_a_prediction_for_every_model(guide):
    rows = guide.locator("table[data-table=fit-matrix] tbody tr")
    assert rows.count() >= 10
    t4 = guide.locator('table[data-table=fit-matrix] tr[data-gpus="T4"]')
    assert t4.count() == 1
    cells = t4.locator("td[data-model]")
    assert cells.count() == 5
    for i in range(cells.count()):
        # "fp32 / fp16": each a batch size or ✗ for does not fit.
        assert re.fullmatch(r"(\d[\d,]*|✗) / (\d[\d,]*|✗)", cells.nth(i).inner_text().strip())
    # The T4's usable memory is a published but unverified figure: it must say so.
    assert t4.locator(".fg-badge").count() >= 1


def test_fp16_never_fits_fewer_samples_than_fp32(guide):
    for text in guide.locator("table[data-table=fit-matrix] td[data-model]").all_inner_texts():
        fp32, fp16 = (0 if part == "✗" else int(part.replace(",", "")) for part in text.strip().split(" / "))
        assert fp16 >= fp32, text


def test_charts_draw_from_local_scripts_and_keep_their_data_tables(guide, page_log):
    figures = guide.locator("figure.bench-chart")
    assert figures.count() >= 3
    for i in range(figures.count()):
        figure = figures.nth(i)
        guide.wait_for_function(
            "f => f.classList.contains('bench-chart--live')", arg=figure.element_handle(), timeout=CHART_TIMEOUT_MS
        )
        assert figure.locator(".bench-chart__fallback svg").count() == 1, "every chart keeps its static SVG"
        assert (
            figure.locator("figcaption a[href^='http']").count() >= 1
            or "specs" in figure.locator("figcaption").inner_text()
        )
    details = guide.locator("details.bench-chart__data")
    assert details.count() == figures.count()
    details.first.locator("summary").click()
    assert details.first.locator("table tbody tr").count() >= 5
    assert not page_log.blocked_requests, f"requests left the machine: {page_log.blocked_requests}"
    assert not page_log.console_errors, f"console errors: {page_log.console_errors}"


def test_reported_figures_name_their_source_and_date(guide):
    text = guide.locator("article").inner_text()
    assert "Reported" in text
    assert guide.locator("a[href*='github.com/lambdal/deeplearning-benchmark']").count() >= 1
    assert guide.locator("a[href*='lambdalabs.com/blog/choosing-a-gpu-for-deep-learning']").count() >= 1
    assert re.search(r"as of \d{4}-\d{2}-\d{2}", text)


def test_llm_price_performance_and_break_even_carry_dated_prices(guide):
    chart = guide.locator("figure[data-chart=llm-price-performance]")
    assert chart.count() == 1 and "Predicted" in chart.locator("figcaption").inner_text()
    rows = guide.locator("table[data-table=llm-price] tbody tr")
    assert rows.count() >= 5
    hours = guide.locator("table[data-table=break-even] tbody tr")
    assert hours.count() >= 3
    for text in hours.all_inner_texts():
        # The price to buy, and the break-even hours with the kWh used by then.
        assert re.search(r"\$[\d,]+", text) and re.search(r"[\d,.–]+ h\s+[\d,.–]+ kWh", text), text


def test_recommendations_start_free_and_carry_dated_prices(guide):
    free = guide.locator("table[data-table=free-tiers] tbody tr")
    assert free.count() >= 2 and "Colab" in free.first.inner_text()
    rent = guide.locator("table[data-table=rent] tbody tr")
    assert rent.count() >= 5
    prices = [float(m) for m in re.findall(r"\$(\d+\.\d\d)", " ".join(rent.all_inner_texts()))]
    assert prices and prices[0] == min(prices), "cheapest listed price first"
    assert guide.locator("ul.fg-advice[data-guide='dettmers-2023'] .fg-badge--unverified").count() >= 1


@pytest.mark.parametrize("width", [1280, 390])
def test_the_verdict_is_on_the_first_screen_and_links_to_can_i_run_it(page, site_url, width):
    page.set_viewport_size({"width": width, "height": 900})
    page.goto(urljoin(site_url, PAGE), wait_until="networkidle")
    lines = page.locator("ul.fg-verdict > li")
    assert lines.count() == 4
    bottom = page.evaluate("document.querySelector('ul.fg-verdict').getBoundingClientRect().bottom")
    assert bottom <= 900, f"the verdict ends at {bottom:.0f} px"
    for i in range(lines.count()):
        assert lines.nth(i).locator("a[href*='can-i-run-it']").count() == 1
