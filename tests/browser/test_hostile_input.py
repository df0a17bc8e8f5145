"""Hostile strings in results files are data, never markup: nothing they carry runs in the browser.

The shared site (tests/conftest.py, built by MkDocs and by Zensical) is built from results that
include files (site_samples.hostile_files) whose every free-text field carries a payload: ``<script>``, ``<img onerror>``, ``<svg onload>``, a markdown
link and ``javascript:`` URLs, as machine label and id, device name, dtype, params, message,
software versions and a reported source's URL and context. Each payload would set
``window.__pwned`` or open an ``alert``. Every page is visited, every chart drawn and hovered for
its tooltips; no dialog may open, ``window.__pwned`` must stay unset, and the strings must show
up as visible text.
"""

from __future__ import annotations

from urllib.parse import urljoin
from xml.etree import ElementTree

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


def pages(page, site_url: str) -> list[str]:
    xml = page.request.get(urljoin(site_url, "sitemap.xml")).text()
    return [el.text for el in ElementTree.fromstring(xml).iter() if el.tag.endswith("loc")]


def draw_charts(page) -> int:
    figures = page.locator("figure.bench-chart")
    for i in range(figures.count()):
        page.wait_for_function(
            "f => f.classList.contains('bench-chart--live')",
            arg=figures.nth(i).element_handle(),
            timeout=CHART_TIMEOUT_MS,
        )
    return figures.count()


def hover_every_mark(page) -> int:
    """Bring up each bar's tooltip, where vega-embed renders data values as HTML if unescaped.

    Returns how many were hovered: every bar a pointer can land on (one drawn less than a pixel
    wide beside a far longer one can't be pointed at, by a reader or by Playwright).
    """
    marks = page.locator(".bench-chart__view svg [role='graphics-symbol']")
    hovered = 0
    for i in range(marks.count()):
        box = marks.nth(i).bounding_box()
        if not box or box["width"] < 1 or box["height"] < 1:
            continue
        marks.nth(i).hover(force=True)
        page.wait_for_timeout(30)
        hovered += 1
    return hovered


INJECTED = """() => {
  const content = document.querySelector('.md-content') || document.body;
  const found = [];
  for (const el of content.querySelectorAll('*')) {
    for (const a of el.attributes) {
      const v = a.value.trim().toLowerCase();
      if (a.name.startsWith('on')) found.push(el.tagName + ' ' + a.name);
      if ((a.name === 'href' || a.name === 'src' || a.name === 'xlink:href') && v.startsWith('javascript:')) found.push(el.tagName + ' ' + a.name + '=' + v);
    }
  }
  for (const s of document.querySelectorAll('script')) {
    if ((s.textContent || '').includes('__pwned')) found.push('script element: ' + s.textContent.slice(0, 80));
  }
  return found;
}"""


def test_no_payload_runs_on_any_page_and_the_charts_still_render(page, page_log, hostile_site):
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    charts: dict[str, int] = {}
    hovered = 0
    for url in pages(page, hostile_site):
        page.goto(url, wait_until="networkidle")
        charts[url] = draw_charts(page)
        hovered += hover_every_mark(page)
        for details in page.locator("details.bench-chart__data").all():
            details.locator("summary").click()
        assert page.evaluate("typeof window.__pwned") == "undefined", (
            f"{url}: payload ran: {page.evaluate('window.__pwned')}"
        )
        assert page.evaluate(INJECTED) == [], url
    assert not dialogs, f"alert() ran: {dialogs}"
    results = urljoin(hostile_site, "benchmarks/results/")
    assert charts[results] >= 3, "every chart kind still draws with hostile labels"
    assert hovered >= 6, "tooltips were brought up"
    assert not page_log.blocked_requests, f"requests left 127.0.0.1: {page_log.blocked_requests}"


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
