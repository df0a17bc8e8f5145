"""What generating and fine-tuning cost on the pages: worked out from the committed speeds and the dated prices.

Every expected figure here is computed from the data (the "Can I run it?" table and the specs'
prices), never written down, so the tests hold whatever the prices or predictions become.
"""

from __future__ import annotations

import re
from html import unescape

import pytest
from glossary_text import without_tooltips
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


def _ends(gpu: str) -> tuple[float, float] | None:
    """The cheapest listed price of ``gpu`` per device, at the low end and the top of its range."""
    prices = find_gpu(gpu).hourly_prices()
    if not prices:
        return None
    return prices[0].usd_per_hour, prices[0].usd_per_hour_max or prices[0].usd_per_hour


def test_break_even_weighs_buying_and_its_electricity_against_renting_the_same_tokens(table):
    """The card's tokens in H hours, rented at the cheapest price per token, cost its price to buy
    plus H hours of its board power at the stated price per kWh."""
    row = _row(table)
    kwh = llm_speed.electricity().usd_per_kwh
    # Renting a million LoRA tokens: the cheapest GPU with every price at its low end, and at its top.
    per_million = [
        (_per_million(low, rate), _per_million(top, rate))
        for c in COLUMNS
        if c.count == 1 and (ends := _ends(c.gpu)) is not None and (rate := row["training_tokens_per_s"]["lora"][c.key])
        for low, top in [ends]
    ]
    rent_low, rent_top = min(p[0] for p in per_million), min(p[1] for p in per_million)
    rows = {r["gpu"]: r for r in llm_speed.break_even()}
    buyable = {
        c.spec.name: c
        for c in COLUMNS
        if c.count == 1 and c.spec.launch_price_usd and c.spec.tdp_w and row["training_tokens_per_s"]["lora"][c.key]
    }
    assert set(rows) == set(buyable) and {"GeForce RTX 4090", "GeForce RTX 5090"} <= set(rows)
    html = llm_speed.break_even_table()
    for name, column in buyable.items():
        spec, rate = column.spec, row["training_tokens_per_s"]["lora"][column.key]
        watts = spec.tdp_w.value
        power = watts / 1000 * kwh
        million_per_hour = rate * 3600 / 1e6
        shortest = spec.launch_price_usd.value / (million_per_hour * rent_top - power)
        longest = spec.launch_price_usd.value / (million_per_hour * rent_low - power)
        assert rows[name]["hours"] == pytest.approx((shortest, longest))
        # After those hours the two ways cost the same: the check the table's reader can do.
        for hours, rent in zip((shortest, longest), (rent_top, rent_low)):
            bought = spec.launch_price_usd.value + hours * power
            assert bought == pytest.approx(hours * million_per_hour * rent)
        tr = re.search(rf'<tr data-gpu="{re.escape(name)}">(.*?)</tr>', html, re.S).group(1)
        hours_text = "–".join(dict.fromkeys(llm_speed.rate_text(h) for h in (shortest, longest)))
        kwh_text = "–".join(dict.fromkeys(llm_speed.rate_text(h * watts / 1000) for h in (shortest, longest)))
        assert f"{hours_text} h" in tr and f"{kwh_text} kWh" in tr and f"{watts:,.0f} W" in tr
        assert f"${spec.launch_price_usd.value:,.0f}" in tr and str(spec.launch_price_usd.as_of) in tr
    note = re.search(r'<p class="fg-note">(.*?)</p>', html, re.S).group(1)
    fact = llm_speed.electricity()
    assert f"${fact.usd_per_kwh:.2f} per kWh" in note and fact.source in note and str(fact.as_of) in note
    assert "electricity" not in note.split("Not counted:")[1]


def test_a_missing_electricity_price_names_the_file_and_what_it_needs(tmp_path, monkeypatch):
    broken = tmp_path / "buying_advice.yaml"
    broken.write_text("guides: []\n", encoding="utf-8")
    monkeypatch.setattr(llm_speed, "ELECTRICITY_FILE", broken)
    with pytest.raises(ValueError, match=r"buying_advice.yaml: 'electricity' needs usd_per_kwh"):
        llm_speed.electricity()


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
    html = without_tooltips(llm_speed.speed_method())
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


def test_a_price_range_gives_a_cost_range_in_every_cell(table):
    html = llm_speed.cost_table()
    ranged = [c for c in llm_speed.costs() if c["price"].usd_per_hour_max]
    assert ranged  # the RTX 4090's spot range, at least
    for cost in ranged:
        price = cost["price"]
        tr = re.search(rf'<tr data-gpu="{cost["column"]["key"]}">(.*?)</tr>', html, re.S).group(1)
        for low in (cost["served"], cost["eager"], cost["training"]["qlora"]["usd"], cost["training"]["lora"]["usd"]):
            if low is not None:
                top = low * price.usd_per_hour_max / price.usd_per_hour
                assert f">{llm_speed.usd_range_text(low, top)}" in tr and "–" in llm_speed.usd_range_text(low, top)


def test_the_rtx_5090_is_in_every_cost_table_the_tokens_per_dollar_chart_and_the_rent_table():
    from benchlib.site import buying_guide

    label = next(c.label for c in COLUMNS if c.key == "rtx-5090")
    price = find_gpu("RTX 5090").hourly_prices()[0]
    cost = llm_speed.cost_table()
    assert '<tr data-gpu="rtx-5090">' in cost and f"${price.usd_per_hour:.2f}" in cost
    served_head = re.search(r'<table data-table="llm-served-cost">\s*<thead>(.*?)</thead>', cost, re.S).group(1)
    assert label in served_head
    chart = llm_speed.llm_price_performance()
    assert f"<tr><td>{label}</td>" in chart and f'"subject":"{label}"' in unescape(chart)
    assert "<td>GeForce RTX 5090</td>" in buying_guide.rent_table()
    assert "GeForce RTX 5090" in {r["gpu"] for r in llm_speed.break_even()}


def test_every_model_served_has_a_batch_above_one_cost_on_each_rentable_gpu(table):
    html = llm_speed.cost_table()
    part = re.search(r'<table data-table="llm-served-cost">(.*?)</table>', html, re.S).group(1)
    rentable = [c for c in COLUMNS if c.count == 1 and _cheapest(c.gpu) is not None]
    served_models = [r for r in table["rows"] if any(r["serving"][c.key] for c in rentable)]
    assert len(served_models) > 10  # every shipped model that fits a rentable GPU, not only the 8B one
    for row in served_models:
        tr = re.search(rf'<tr data-model="{re.escape(row["model"])}">(.*?)</tr>', part, re.S).group(1)
        cells = re.findall(r"<td([^>]*)>(.*?)</td>", tr)
        assert len(cells) == len(rentable)
        for column, (attrs, text) in zip(rentable, cells):
            serving = row["serving"][column.key]
            if serving is None:
                assert text == "✗"
                continue
            usd = _per_million(_cheapest(column.gpu), serving["tokens_per_s"])
            assert float(re.search(r'data-usd="([^"]+)"', attrs).group(1)) == pytest.approx(usd, rel=1e-3)
            assert text.startswith(llm_speed.usd_text(usd)) and f"batch {serving['batch']}" in text
            assert serving["batch"] > 1 or serving["max_concurrency"] <= 1
