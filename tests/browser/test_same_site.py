"""Zensical builds the same site as MkDocs from mkdocs.yml: checked in the browser, not assumed.

Both builds come from the same results (conftest's ``built_site``). Every page of either build's
sitemap must be in the other, and on each page a reader must find the same title and headings and
the same number of charts, tables and code blocks (the included snippets among them). The counts
are of what the page shows, not of theme markup, which Zensical is free to write differently.
"""

from __future__ import annotations

from urllib.parse import urljoin
from xml.etree import ElementTree

import pytest

pytestmark = pytest.mark.browser

WHAT_A_READER_SEES = """() => {
  const article = document.querySelector('article');
  return {
    title: article.querySelector('h1').innerText.replace('¶', '').trim(),
    headings: [...article.querySelectorAll('h2, h3')].map(h => h.innerText.replace('¶', '').trim()),
    charts: article.querySelectorAll('figure.bench-chart').length,
    tables: article.querySelectorAll('table').length,
    code_blocks: article.querySelectorAll('pre').length,
    traceback: article.innerText.includes('Traceback (most recent call last)'),
  };
}"""


def site_pages(page, origin: str) -> list[str]:
    """The pages in the build's sitemap, as paths from the site's root."""
    xml = page.request.get(urljoin(origin, "sitemap.xml")).text()
    locs = [el.text for el in ElementTree.fromstring(xml).iter() if el.tag.endswith("loc")]
    assert locs and all(loc.startswith(origin) for loc in locs), f"{origin}sitemap.xml: {locs}"
    return sorted(loc[len(origin) :] for loc in locs)


def what_each_page_shows(page, origin: str) -> dict[str, dict]:
    shown = {}
    for path in site_pages(page, origin):
        page.goto(urljoin(origin, path), wait_until="networkidle")
        shown[path] = page.evaluate(WHAT_A_READER_SEES)
    return shown


def test_zensical_builds_every_page_with_the_same_charts_tables_and_code(page, page_log, built_site):
    mkdocs = what_each_page_shows(page, built_site("mkdocs"))
    zensical = what_each_page_shows(page, built_site("zensical"))

    assert sorted(zensical) == sorted(mkdocs), "the two builds have different pages"
    assert "notebooks/run-benchlib/" in mkdocs
    differences = [
        f"{path}: MkDocs {mkdocs[path]}\n{' ' * len(path)}  Zensical {zensical[path]}"
        for path in mkdocs
        if zensical[path] != mkdocs[path]
    ]
    assert not differences, "pages that read differently:\n" + "\n".join(differences)
    # Zensical's --strict lets a failed build-time block through; its traceback would be on the page.
    assert not [path for path, shown in zensical.items() if shown["traceback"]]
    totals = {kind: sum(shown[kind] for shown in mkdocs.values()) for kind in ("charts", "tables", "code_blocks")}
    assert all(totals.values()), f"the comparison saw nothing to compare: {totals}"
    assert not page_log.blocked_requests and not page_log.console_errors
