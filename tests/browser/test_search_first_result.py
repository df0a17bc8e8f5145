"""Two searches readers made on 2026-11-28 rank the section that answers them first, in both builds.

"dev/shm" found the Contributing page's field table before the Kaggle section that explains the
error; on the buying guide, "RTX 5090" found the price-performance chart's data before "Buy a card"
(issue 39). test_search.py checks that each answer is among the first pages; this checks the order.
"""

from __future__ import annotations

from urllib.parse import urljoin, urlparse

import pytest
from test_search import SEARCH

pytestmark = pytest.mark.browser


def results(page, origin: str, builder: str, query: str) -> list[str]:
    """The results' links as path#section, in the order listed: Material lists a page and then its
    best sections under it ("path#" for the page itself), Zensical lists sections."""
    page.goto(urljoin(origin, ""), wait_until="networkidle")
    return [f"{u.path}#{u.fragment}" for u in (urlparse(urljoin(origin, h)) for h in SEARCH[builder](page, query))]


def test_dev_shm_finds_the_kaggle_section_on_the_error_first(page, built_site, builder):
    found = results(page, built_site(builder), builder, "dev/shm")
    sections = [link for link in found if not link.endswith("#")]
    assert found[0].startswith("/platforms/kaggle/#"), found[:4]
    assert sections[0] == "/platforms/kaggle/#the-shared-memory-dataloader-error", found[:4]


def test_rtx_5090_on_the_buying_guide_finds_buy_a_card_first(page, built_site, builder):
    found = results(page, built_site(builder), builder, "RTX 5090")
    pages = list(dict.fromkeys(link.split("#")[0] for link in found))
    guide = [link for link in found if link.startswith("/gpus/buying-guide/#") and not link.endswith("#")]
    # The buying guide (boosted: the page about every card) before the tables that price it by the hour.
    assert pages[0] == "/gpus/buying-guide/", found[:6]
    assert guide[0] == "/gpus/buying-guide/#buy-a-card", guide[:4]
