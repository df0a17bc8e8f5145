"""Every "cheapest" the buying guide and the cost table print holds at both ends of every price range
they quote, or says up to which price it holds and what is cheaper above.

The verdicts are read from the pages' text, as a reader reads them; the costs they are checked
against are worked out here from the committed predictions and the specs' prices, so the tests
hold whatever the prices become.
"""

from __future__ import annotations

import re
from html import unescape

import pytest

from benchlib.catalog.gpus import find_gpu
from benchlib.core import freshness
from benchlib.site import buying_guide as blocks
from benchlib.site import llm_speed
from benchlib.site.llm_speed import Option, Price, cheapest
from benchlib.site.platform_pages import Source
from benchlib.tables.can_i_run_it import COLUMNS, read_table

PRICE = r"\$(?P<low>[\d.]+)(?:–(?P<top>[\d.]+))?/h"


def _text(html: str) -> str:
    return unescape(re.sub(r"<[^>]+>", "", html))


@pytest.fixture(scope="module")
def verdict() -> dict[str, str]:
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(freshness.BUILD_DATE_ENV, "2026-11-26")
        html = blocks.recommendations()
    lines = [_text(li) for li in re.findall(r"<li>(.*?)</li>", html, flags=re.S)]
    return {line.split(":", 1)[0]: line for line in lines}


def _offers(metric: str) -> dict[str, tuple[float, float, float]]:
    """Per rentable single GPU, by its label: (low price, top price, cost per $/h) for ``metric``
    ("served", "qlora", "lora" in $ per million tokens, or "hour", the price itself)."""
    row = next(r for r in read_table()["rows"] if r["model"] == llm_speed.COST_MODEL)
    out = {}
    for column in COLUMNS:
        prices = find_gpu(column.gpu).hourly_prices()
        if column.count > 1 or not prices:
            continue
        low, top = prices[0].usd_per_hour, prices[0].usd_per_hour_max or prices[0].usd_per_hour
        if metric == "hour":
            out[column.label] = (low, top, 1.0)
            continue
        rate = (
            row["serving"][column.key]["tokens_per_s"]
            if metric == "served" and row["serving"][column.key]
            else row["training_tokens_per_s"].get(metric, {}).get(column.key)
        )
        if rate:
            out[column.label] = (low, top, 1e6 / (rate * 3600))
    return out


def _check(metric: str, gpu: str, up_to: float | None, then: str | None, then_price: float | None) -> None:
    """``gpu`` is cheapest for ``metric`` at both ends of the prices it is quoted at (its range, or its
    low end up to ``up_to``) against every other offer at both ends of its own range; where the
    verdict stops at ``up_to``, it must, and ``then`` at ``then_price`` costs less above it."""
    offers = _offers(metric)
    low, top, per = offers.pop(gpu)
    ends = (low, top if up_to is None else up_to)
    for price in ends:
        for other, (o_low, o_top, o_per) in offers.items():
            for o_price in (o_low, o_top):
                assert price * per <= o_price * o_per * (1 + 1e-9), (metric, gpu, price, other, o_price)
    if up_to is None:
        return
    assert low <= up_to < top, (metric, gpu, up_to)
    # Stopping there is needed: above it, `then` at its quoted price costs less.
    t_low, _, t_per = offers[then]
    assert then_price == pytest.approx(t_low)
    assert then_price * t_per < (up_to + 0.01) * per and then_price * t_per < top * per
    for other, (o_low, o_top, o_per) in offers.items():
        if other != then:
            for o_price in (o_low, o_top):
                assert then_price * t_per <= o_price * o_per, (metric, then, other, o_price)


def test_the_fine_tuning_verdict_holds_at_both_ends_of_every_quoted_range(verdict):
    line = verdict["LoRA or QLoRA on a 7–8B model"]
    checked = set()
    for m in re.finditer(rf"Cheapest per token: the (?P<gpu>[^,]+), (?P<body>.*?), at {PRICE}", line):
        for mode in re.findall(r"with (QLoRA|LoRA)", m["body"]):
            _check(mode.lower(), m["gpu"], None, None, None)
            checked.add(mode)
    for m in re.finditer(
        r"Cheapest per token with (?P<mode>\w+): the (?P<gpu>.+?) up to \$(?P<up>[\d.]+)/h"
        r".*?; above that, the (?P<then>.+?) at \$(?P<then_price>[\d.]+)/h",
        line,
    ):
        _check(m["mode"].lower(), m["gpu"], float(m["up"]), m["then"], float(m["then_price"]))
        checked.add(m["mode"])
    assert checked == {"QLoRA", "LoRA"}, line


def test_the_serving_verdict_holds_at_both_ends_of_every_quoted_range(verdict):
    line = verdict["Serving a model"]
    m = re.search(
        r"the (?P<gpu>.+?) serves .+? cheapest(?: up to \$(?P<up>[\d.]+)/h)?"
        r"(?:.*?; above that, the (?P<then>.+?) at \$(?P<then_price>[\d.]+)/h)?",
        line,
    )
    up = float(m["up"]) if m["up"] else None
    _check("served", m["gpu"], up, m["then"], float(m["then_price"]) if m["then_price"] else None)


def test_the_cheapest_rental_holds_at_both_ends_of_every_quoted_range(verdict):
    line = verdict["Learning on a budget"]
    m = re.search(
        rf"after that, the (?P<gpu>.+?) from {PRICE} \([^)]*\)(?: up to \$(?P<up>[\d.]+)/h, else the "
        r"(?P<then>.+?) from \$(?P<then_price>[\d.]+)/h)?",
        line,
    )
    up = float(m["up"]) if m["up"] else None
    _check("hour", m["gpu"], up, m["then"], float(m["then_price"]) if m["then_price"] else None)


def test_the_cost_tables_cheapest_way_to_generate_holds_at_both_ends_of_every_quoted_range():
    first = _text(re.search(r"<p>The cheapest way to generate: (.*?)</p>", llm_speed.cost_table(), re.S).group(1))
    m = re.search(
        r"a served engine on the (?P<gpu>.+?)(?: at up to \$(?P<up>[\d.]+)/h)?, "
        r"(?:.*?; above that, the (?P<then>.+?) at \$(?P<then_price>[\d.]+)/h)?",
        first,
    )
    up = float(m["up"]) if m["up"] else None
    _check("served", m["gpu"], up, m["then"], float(m["then_price"]) if m["then_price"] else None)


def _price(low: float, top: float | None = None) -> Price:
    text = f"${low:.2f}" + (f"–{top:.2f}" if top else "") + "/h"
    return Price("gpu", low, "provider", text, Source("https://example.com", "2026-03"), top)


def test_a_verdict_on_a_price_range_says_up_to_which_price_it_holds_and_what_is_cheaper_above():
    # The spot range of the issue: $0.035 per million tokens at $0.17/h, twice that at $0.34/h,
    # against $0.065 at one $0.54/h price.
    spot, fixed = Option("spot", _price(0.17, 0.34), 0.035), Option("fixed", _price(0.54), 0.065)
    found = cheapest([fixed, spot])
    assert found.winner is spot and found.then is fixed
    # The price where the two meet, rounded down to the cent: 0.065 / 0.035 × 0.17 = 0.3157.
    assert found.up_to == 0.31 and found.up_to_text == "$0.31/h"
    assert found.cost_text == "$0.035–0.064"
    # A range that stays cheapest at its top needs no condition.
    assert cheapest([Option("spot", _price(0.17, 0.34), 0.030), fixed]) == llm_speed.Cheapest(
        Option("spot", _price(0.17, 0.34), 0.030)
    )
    assert cheapest([]) is None
