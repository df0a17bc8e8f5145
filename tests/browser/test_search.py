"""Searching the site for what readers typed on 2026-11-25 lands on the page that answers it.

Material's search (lunr, in the page) on the MkDocs build; Zensical ships a search engine of its
own, whose ranking is its own.
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


@pytest.mark.parametrize(("query", "answer"), QUERIES)
def test_a_reader_s_search_lands_on_the_page_that_answers_it(page, built_site, query, answer):
    origin = built_site("mkdocs")
    page.goto(urljoin(origin, ""), wait_until="networkidle")
    page.locator(".md-search__input").first.click()
    # Typed key by key, as a reader does: the search runs on each keystroke.
    page.locator("input.md-search__input").press_sequentially(query, delay=20)
    results = page.locator(".md-search-result__item > .md-search-result__link")
    expect(results.first).to_be_visible()
    paths = [urlparse(urljoin(origin, results.nth(i).get_attribute("href"))).path for i in range(results.count())]
    pages = list(dict.fromkeys(paths))[:TOP]
    assert "/" + answer in pages, (query, pages)
