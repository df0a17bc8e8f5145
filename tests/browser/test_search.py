"""Searching the site for what readers typed on 2026-11-25 lands on the page that answers it.

Both builders: Material's search (lunr, in the page) on the MkDocs build, and Zensical's own search
engine and dialog, whose ranking is its own, on the Zensical build.
"""

from __future__ import annotations

from urllib.parse import urljoin, urlparse

import pytest
from playwright.sync_api import expect

pytestmark = pytest.mark.browser

# What a reader types, and the page that answers it, among the first pages the results list.
QUERIES = [
    ("dev/shm", "platforms/kaggle/"),
    ("shm", "platforms/kaggle/"),
    ("bus error", "platforms/kaggle/"),
    ("Colab Pro", "platforms/colab/"),
    ("QLoRA T4", "gpus/can-i-run-it/"),
    ("RTX 5090", "gpus/buying-guide/"),
]
TOP = 3
# The search index loads in a web worker after the page: on a busy 2-core machine it has taken over
# Playwright's 20 s to answer the first query.
FIRST_ANSWER_MS = 90_000


def settled(results) -> list[str]:
    """The results' links once the list stops changing: each keystroke runs a search, and the list
    of a prefix ("Colab P") can show before the whole query's."""
    links = results.evaluate_all("links => links.map(a => a.getAttribute('href'))")
    for _ in range(100):
        results.page.wait_for_timeout(300)
        again = results.evaluate_all("links => links.map(a => a.getAttribute('href'))")
        if again == links:
            return links
        links = again
    return links


def mkdocs_results(page, query: str) -> list[str]:
    page.locator(".md-search__input").first.click()
    # Typed key by key, as a reader does: the search runs on each keystroke.
    page.locator("input.md-search__input").press_sequentially(query, delay=20)
    results = page.locator(".md-search-result__item > .md-search-result__link")
    expect(results.first).to_be_visible(timeout=FIRST_ANSWER_MS)
    return settled(results)


def zensical_results(page, query: str) -> list[str]:
    page.keyboard.press("/")  # opens Zensical's search dialog, as its header button does
    page.get_by_role("combobox", name="Search").press_sequentially(query, delay=20)
    results = page.get_by_role("listbox", name="Search results").get_by_role("option")
    expect(results.first).to_be_visible(timeout=FIRST_ANSWER_MS)
    return settled(results)


# Each builder's way to search; `builder` (tests/browser/conftest.py) runs the test once per builder.
SEARCH = {"mkdocs": mkdocs_results, "zensical": zensical_results}


@pytest.mark.parametrize(("query", "answer"), QUERIES)
def test_a_reader_s_search_lands_on_the_page_that_answers_it(page, built_site, builder, query, answer):
    origin = built_site(builder)
    page.goto(urljoin(origin, ""), wait_until="networkidle")
    paths = [urlparse(urljoin(origin, href)).path for href in SEARCH[builder](page, query)]
    pages = list(dict.fromkeys(paths))[:TOP]
    assert "/" + answer in pages, (query, pages)
