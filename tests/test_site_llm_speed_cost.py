"""What generating and fine-tuning cost on the pages: worked out from the committed speeds and the dated prices.

Every expected figure here is computed from the data (the "Can I run it?" table and the specs'
prices), never written down, so the tests hold whatever the prices or predictions become.
"""

from __future__ import annotations

import re

import pytest
from markupsafe import escape as html_escape

from benchlib.catalog.gpus import find_gpu
from benchlib.predict.engines import ENGINES
from benchlib.predict.hosts import HOSTS
from benchlib.site import llm_speed
from benchlib.tables.can_i_run_it import COLUMNS, EAGER, SERVED, read_table

MODEL = llm_speed.COST_MODEL


@pytest.fixture(scope="module")
def table():
    return read_table()


def _row(table):
    return next(r for r in table["rows"] if r["model"] == MODEL)


def _cheapest(gpu: str) -> float | None:
    prices = [p.usd_per_hour / p.units for p in find_gpu(gpu).cloud_prices]
    return min(prices) if prices else None


def _per_million(usd_per_hour: float, tokens_per_s: float) -> float:
    return usd_per_hour / (tokens_per_s * 3600) * 1e6


def test_each_rentable_gpu_costs_its_cheapest_price_over_its_predicted_tokens(table):
    row = _row(table)
    found = {c["column"]["key"]: c for c in llm_speed.costs()}
    rentable = [c for c in COLUMNS if c.count == 1 and _cheapest(c.gpu) is not None]
    assert set(found) == {c.key for c in rentable} and len(found) >= 5
    for column in rentable:
        cost, usd = found[column.key], _cheapest(column.gpu)
        assert cost["price"].usd_per_hour == pytest.approx(usd)
        serving = row["serving"][column.key]
        if serving is None:
            assert cost["served"] is None
        else:
            assert cost["served"] == pytest.approx(_per_million(usd, serving["tokens_per_s"]))
            assert cost["served_batch"] == serving["batch"]
        eager = row["decode_tokens_per_s"][EAGER][column.key]
        assert cost["eager"] == (pytest.approx(_per_million(usd, eager)) if eager else None)
        for task in ("qlora", "lora"):
            rate = row["training_tokens_per_s"][task][column.key]
            assert cost["training"][task]["usd"] == (pytest.approx(_per_million(usd, rate)) if rate else None)
            assert cost["training"][task]["batch"] == row["cells"][task][column.key]


def test_the_cost_table_shows_each_figure_with_the_dated_price_it_came_from(table):
    html = llm_speed.cost_table()
    for cost in llm_speed.costs():
        key = cost["column"]["key"]
        tr = re.search(rf'<tr data-gpu="{key}">(.*?)</tr>', html, re.S).group(1)
        assert cost["price"].text in tr and cost["price"].provider in tr
        assert f", {cost['price'].source.as_of}</span>" in tr  # the price's date, where the stale mark follows
        for name, value in (("served", cost["served"]), ("eager", cost["eager"])):
            cell = re.search(rf'<td data-cost="{name}"([^>]*)>(.*?)</td>', tr).group(1, 2)
            if value is None:
                assert cell[1].startswith("✗")
            else:
                assert float(re.search(r'data-usd="([^"]+)"', cell[0]).group(1)) == pytest.approx(value, rel=1e-3)
                assert cell[1].startswith(llm_speed.usd_text(value))
    legend = re.search(r'<p class="fg-note">(.*?)</p>', html, re.S).group(1)
    assert "<strong>predicted</strong> dollars per million tokens" in legend
    assert llm_speed.error_text(SERVED, "decode") in legend and llm_speed.error_text(EAGER, "training") in legend
    assert f"up to {table['speed']['serving_batch_cap']}" in legend


def test_the_answer_first_names_the_cheapest_served_gpu(table):
    found = [c for c in llm_speed.costs() if c["served"] is not None and c["eager"] is not None]
    best = min(found, key=lambda c: c["served"])
    first = re.search(r"<p>The cheapest way to generate: (.*?)</p>", llm_speed.cost_table()).group(1)
    assert llm_speed.usd_text(best["served"]) in first and best["column"]["label"] in first
    assert llm_speed.usd_text(best["eager"]) in first


def _bandwidth(gpu: str) -> float:
    return find_gpu(gpu).peak_bandwidth_gbps()


def test_break_even_is_the_price_to_buy_over_the_cheapest_rent_of_the_same_or_nearest_card():
    rows = {r["gpu"]: r for r in llm_speed.break_even()}
    buyable = {c.spec.name for c in COLUMNS if c.spec.launch_price_usd is not None}
    assert set(rows) == buyable and len(rows) >= 3
    rentable = {c.spec.name for c in COLUMNS if _cheapest(c.gpu) is not None}
    for name, row in rows.items():
        if name in rentable:
            expected = name
        else:  # nobody rents it: the rentable column GPU nearest in memory bandwidth
            expected = min(rentable, key=lambda other: (abs(_bandwidth(other) - _bandwidth(name)), other))
        assert row["rented"] == expected and row["same"] == (expected == name)
        launch = find_gpu(name).launch_price_usd
        assert row["hours"] == pytest.approx(launch.value / _cheapest(expected))
    html = llm_speed.break_even_table()
    for name, row in rows.items():
        tr = re.search(rf'<tr data-gpu="{re.escape(name)}">(.*?)</tr>', html, re.S).group(1)
        assert f"${row['purchase']:,.0f}" in tr and f"{llm_speed.rate_text(row['hours'])} h" in tr
        assert str(find_gpu(name).launch_price_usd.as_of) in tr
    assert "Not counted: electricity" in html


def test_llm_price_performance_charts_tokens_per_dollar_with_a_fallback_and_its_data():
    html = llm_speed.llm_price_performance()
    assert 'data-chart="llm-price-performance"' in html and "<svg" in html  # the static fallback
    points = llm_speed.tokens_per_dollar()
    assert {p["setting"] for p in points} == {llm_speed.GENERATED, llm_speed.TRAINED}
    values = [float(v) for v in re.findall(r'<td data-value="([^"]+)">', html)]
    assert values == pytest.approx([p["value"] for p in points], rel=1e-3)
    by_gpu = {(c["column"]["label"], llm_speed.TRAINED): c["training"]["qlora"]["usd"] for c in llm_speed.costs()}
    for p in points:
        if p["setting"] == llm_speed.TRAINED:
            assert p["value"] == pytest.approx(1 / by_gpu[p["gpu"], p["setting"]])
    assert "<strong>Predicted</strong>" in html


def test_the_methodology_section_shows_each_engines_constants_and_held_out_errors():
    html = llm_speed.speed_method()
    for name, engine in ENGINES.items():
        tr = re.search(rf'<tr data-engine="{re.escape(name)}">(.*?)</tr>', html).group(1)
        assert f"{engine.stream_efficiency:.0%}" in tr and f"{engine.attention_efficiency:.0%}" in tr
        assert engine.version in tr and engine.as_of in tr
        if engine.host_launched:
            assert html_escape("the host's") in tr
        elif engine.launch_s:
            assert f"{engine.launch_s * 1e6:g} µs of GPU time" in tr
        else:
            assert "none (CUDA graph)" in tr
        assert (f"{engine.step_s * 1e3:g} ms" if engine.step_s else "none") in tr
        error = llm_speed.held_out_error(name, "decode")
        pattern = rf'<tr data-engine="{re.escape(name)}" data-kind="decode" data-gpus="(?:all)?">(.*?)</tr>'
        errors = re.search(pattern, html).group(1)
        if error is None:
            assert llm_speed.NOT_CHECKED in errors
        else:
            assert f"{error['held_out_median_abs_error']:.0%}" in errors and str(error["held_out_rows"]) in errors
    assert 'data-engine="vllm" data-kind="fine-tuning"' not in html  # a served engine doesn't train
    for name, host in HOSTS.items():  # the hosts an eager engine's launch cost comes from
        tr = re.search(rf'<tr data-host="{name}">(.*?)</tr>', html).group(1)
        assert f"{host.launch_s * 1e6:g} µs" in tr and html_escape(host.basis) in tr
