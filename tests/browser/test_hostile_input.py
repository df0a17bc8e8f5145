"""Hostile strings in results files are data, never markup: nothing they carry runs in the browser.

The shared site (tests/conftest.py, built by MkDocs and by Zensical) is built from results that
include files (site_samples.hostile_files) whose every free-text field carries a payload: ``<script>``, ``<img onerror>``, ``<svg onload>``, a markdown
link and ``javascript:`` URLs, as machine label and id, device name, dtype, params, message,
software versions and a reported source's URL and context. Each payload would set
``window.__pwned`` or open an ``alert``. Every page is visited (in the session's one crawl of each
build), every chart drawn and hovered for its tooltips; no dialog may open, ``window.__pwned``
must stay unset, and the strings must show up as visible text.
"""

from __future__ import annotations

from urllib.parse import urljoin

import pytest
from site_samples import IMG, MARKDOWN, SCRIPT, hostile_files

from benchlib.results.store import read_results, write_results

pytestmark = pytest.mark.browser

CHART_TIMEOUT_MS = 15_000


@pytest.fixture
def hostile_site(site_url) -> str:
    """The shared build (tests/conftest.py), whose results include the hostile files."""
    return site_url


def test_the_hostile_files_are_valid_results(tmp_path):
    # Otherwise the test would prove only that the build rejects them.
    for rel, data in hostile_files().items():
        assert read_results(write_results(data, tmp_path / rel)).measurements


def draw_charts(page) -> int:
    figures = page.locator("figure.bench-chart")
    for i in range(figures.count()):
        page.wait_for_function(
            "f => f.classList.contains('bench-chart--live')",
            arg=figures.nth(i).element_handle(),
            timeout=CHART_TIMEOUT_MS,
        )
    return figures.count()


def test_no_payload_runs_on_any_page_and_the_charts_still_render(crawl, builder):
    """Read from the session's one crawl of the build (browser/conftest.py), which visited every page,
    drew and hovered every chart and opened every data table."""
    visit = crawl(builder)
    assert len(visit.shown) > 10, "the sitemap listed too few pages to be this site's"
    assert not visit.ran, f"payload ran: {visit.ran}"
    assert not {path: found for path, found in visit.injected.items() if found}
    assert not visit.dialogs, f"alert() ran: {visit.dialogs}"
    assert visit.charts_drawn["benchmarks/results/"] >= 3, "every chart kind still draws with hostile labels"
    assert visit.tooltips >= 6, "tooltips were brought up"
    assert not visit.log.blocked_requests, f"requests left 127.0.0.1: {visit.log.blocked_requests}"


def test_hostile_strings_are_shown_as_text(page, hostile_site):
    page.goto(urljoin(hostile_site, "benchmarks/results/"), wait_until="networkidle")
    draw_charts(page)
    for details in page.locator("details.bench-chart__data").all():
        details.locator("summary").click()
    text = page.locator(".md-content").inner_text()
    for payload in (SCRIPT, IMG, MARKDOWN):
        assert payload in text, f"{payload!r} is not shown as text"
    assert "too fast " + SCRIPT in text
    # The invalid value is left out of the chart, with a visible note saying so.
    note = page.locator(".admonition.warning", has_text="left out of the chart")
    assert note.count() >= 1 and note.first.is_visible()
    # A javascript: source URL becomes plain text, never a link.
    hrefs = page.eval_on_selector_all(".md-content a[href]", "els => els.map(e => e.getAttribute('href'))")
    assert not [h for h in hrefs if h.strip().lower().startswith(("javascript:", "data:"))], hrefs
    # An https URL with quotes and tags in it stays one intact attribute value.
    assert hostile_files()["reported/quote-break.json"].provenance.source_url in hrefs
    # Chart axis labels carry the machine label as SVG text.
    labels = page.locator("figure.bench-chart .bench-chart__view svg text").all_text_contents()
    assert any(IMG in label or label.startswith("Rig <img") for label in labels), labels[:20]
