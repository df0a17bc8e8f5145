"""Every page of the built site in Chromium: charts drawn, nothing remote, no console errors."""

from __future__ import annotations

import re
from urllib.parse import urljoin, urlparse

import pytest
from page_crawl import wait_for_charts
from site_samples import GPU, HOSTILE

pytestmark = pytest.mark.browser

SAMPLED = ("matmul", "conv2d", "bandwidth")  # the chart kinds tests/site_samples.py has records for


def test_every_page_draws_its_charts_without_errors_or_remote_requests(page, crawl, builder):
    visit = crawl(builder)
    assert len(visit.charts_drawn) > 10, "the sitemap listed too few pages to be this site's"
    not_drawn = {path: why for path, why in visit.charts_drawn.items() if isinstance(why, str)}
    assert not not_drawn, f"charts that did not draw: {not_drawn}"
    broken = sorted(u for u in visit.links if page.request.get(u).status != 200)
    # The samples' three chart kinds, beside the committed sources' reported figures.
    assert visit.charts_drawn["benchmarks/results/"] >= 3
    assert not broken, f"links to missing pages or files: {broken}"
    assert not visit.log.blocked_requests, f"requests left 127.0.0.1: {visit.log.blocked_requests}"
    assert not visit.log.console_errors, f"console errors: {visit.log.console_errors}"


def test_instant_navigation_round_trip_redraws_the_charts(page, page_log, site_url):
    page.goto(urljoin(site_url, "benchmarks/results/"), wait_until="networkidle")
    drawn = wait_for_charts(page)
    assert drawn >= 3 and all(page.locator(f"figure#chart-{c}").count() == 1 for c in SAMPLED)
    page.evaluate("window.__sameDocument = true")  # survives only if navigation is instant
    page.locator('a.md-nav__link[href$="methodology/"]:visible').first.click()
    page.wait_for_url(re.compile(r"/benchmarks/methodology/$"))
    page.locator("h1", has_text="Methodology").wait_for()
    page.locator('a.md-nav__link[href$="benchmarks/results/"]:visible').first.click()
    page.wait_for_url(re.compile(r"/benchmarks/results/$"))
    page.locator("h1", has_text="Benchmark results").wait_for()
    assert wait_for_charts(page) == drawn
    assert page.evaluate("window.__sameDocument") is True, "Material fell back to full page loads"
    assert page.locator(".bench-chart__view svg.marks").count() == drawn  # old views were replaced, not stacked
    assert not page_log.console_errors and not page_log.blocked_requests


def test_dark_mode_redraws_charts_in_the_dark_palette(page, site_url):
    page.goto(urljoin(site_url, "benchmarks/results/"), wait_until="networkidle")
    wait_for_charts(page)
    label = "figure.bench-chart .bench-chart__view .role-axis-label text"
    light = page.locator(label).first.get_attribute("fill")
    page.locator("form[data-md-component=palette] label:visible").first.click()
    assert page.evaluate("document.body.getAttribute('data-md-color-scheme')") == "slate"
    page.wait_for_function(f"() => document.querySelector({label!r}).getAttribute('fill') !== {light!r}")
    wait_for_charts(page)


def test_hostile_names_are_shown_as_text_and_never_run(page, site_url):
    page.goto(urljoin(site_url, "benchmarks/results/"), wait_until="networkidle")
    wait_for_charts(page)
    assert page.evaluate("window.__xss") is None
    page.locator("details.bench-chart__data summary").first.click()
    assert HOSTILE in page.locator("details.bench-chart__data").first.inner_text()


def test_this_build_machine_is_highlighted_in_the_drawn_chart(page, site_url):
    page.goto(urljoin(site_url, "benchmarks/results/"), wait_until="networkidle")
    wait_for_charts(page)
    star = page.locator("figure#chart-matmul .bench-chart__view .role-axis-label text", has_text="★").first
    assert "built this site" in star.text_content()
    assert star.get_attribute("font-weight") == "bold"


def test_notebook_page_has_a_gpu_runs_sample_output_and_a_self_hosted_colab_badge(page, page_log, site_url):
    page.goto(urljoin(site_url, "notebooks/run-benchlib/"), wait_until="networkidle")
    badge = page.locator("a.colab-badge")
    href = badge.get_attribute("href")
    assert href.startswith("https://colab.research.google.com/github/")
    assert href.endswith("/blob/main/docs/notebooks/run-benchlib.ipynb")
    img = badge.locator("img")
    assert urlparse(img.evaluate("i => i.src")).netloc == urlparse(site_url).netloc
    assert img.evaluate("i => i.complete && i.naturalWidth > 0")
    # The sample output: the results folder's GPU run (site_samples'), never the build machine's.
    label = page.locator(".notebook-sample")
    assert label.inner_text().startswith(f"Sample output: the quick suite on {GPU.label}, run on 2026-11-01")
    assert "Test GPU" in page.locator(".notebook-output table").inner_text()
    assert not page_log.blocked_requests and not page_log.console_errors


def test_the_home_page_answers_the_three_questions_first(page, site_url):
    page.goto(site_url, wait_until="networkidle")
    opening = page.locator("article p").first.inner_text()
    assert all(kind in opening for kind in ("measured", "reported", "predicted"))
    cards = page.locator(".grid.cards > ul > li")
    assert cards.count() == 3
    targets = [cards.nth(i).locator("a").last.get_attribute("href") for i in range(3)]
    for target, page_name in zip(targets, ("platforms/", "gpus/can-i-run-it/", "gpus/buying-guide/"), strict=True):
        assert urlparse(urljoin(page.url, target)).path.endswith("/" + page_name), targets
    page.locator(".tabbed-labels label", has_text="I want to rent or buy a GPU").click()
    tab = page.locator(".tabbed-block").filter(has_text="buying guide").first
    links = [urlparse(urljoin(page.url, a.get_attribute("href"))).path for a in tab.locator("a").all()]
    assert any(p.endswith("/gpus/buying-guide/") for p in links) and any(
        p.endswith("/gpus/can-i-run-it/") for p in links
    )
