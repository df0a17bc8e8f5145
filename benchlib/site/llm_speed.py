"""Predicted language-model speeds on the pages: the error each carries, and what they cost.

The speeds come from the committed "Can I run it?" table (``benchlib/tables/can_i_run_it.json``);
their measured error, and the engines' constants, from the committed check against published
measurements (``benchlib/tables/llm_speed_check.json``, `benchlib.derive.compared.held_out_error`).
Costs are worked out when the site is built, from those speeds and the dated prices in the specs
file, so a new price changes the pages without recomputing any prediction.

* **$ per million generated tokens**: a served engine (vLLM) decoding as many sequences at once as
  fit (capped, as the table states), and ``model.generate()`` at batch 1.
* **$ per million training tokens**: QLoRA and LoRA at the largest batch that fits.

A price quoted as a range gives a cost range, and a verdict ("cheapest per token") holds over the
whole range of every price it quotes, or says up to which price it holds and what is cheaper above
(`cheapest`).

* **Break-even hours**: the hours of use after which a card's dated purchase price and its
  electricity (board power at a dated price per kWh, ``benchlib/data/buying_advice.yaml``) cost
  less than renting the same work: the tokens the card fine-tunes in those hours, rented at the
  cheapest price per token. The rest of the computer and the card's resale value are not counted.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

import yaml

from benchlib.catalog.gpus import AcceleratorSpec, find_gpu
from benchlib.catalog.language_models import shipped_models
from benchlib.catalog.published_llm_speeds import published_rows
from benchlib.core.package_data import data_file
from benchlib.derive import compared
from benchlib.site.platform_pages import Source, cited
from benchlib.site.render import page_link, render
from benchlib.site.sources import read_table

TABLE = "can_i_run_it"
CHECK_TABLE = "llm_speed_check"
METHOD_SECTION = "benchmarks/methodology.md#how-speed-is-predicted"
# The model the cost tables and the LLM price-performance chart are for: the 8B model most
# fine-tuning guides start from, and one a 24 GB card serves in bf16.
COST_MODEL = "llama-3.1-8b"
NOT_CHECKED = "not yet checked against a published measurement"
# The two bars of the LLM price-performance chart.
GENERATED, TRAINED = "generated (vLLM)", "QLoRA training"
# The work a bought card is weighed against renting by: LoRA fine-tuning of `COST_MODEL`, the task
# most readers buy a card for (Can I run it?'s tab), in tokens.
BREAK_EVEN_TASK = "lora"
# The tick on a bar whose price is a range: the figure at the range's top.
TOP_OF_RANGE = "top of price range"
ELECTRICITY_FILE = data_file("buying_advice.yaml")
KIND_TEXT = {"decode": "decode", "prefill": "prefill", "training": "fine-tuning"}


@functools.cache
def _table() -> dict[str, Any]:
    return read_table(TABLE)


@functools.cache
def _check_table() -> dict[str, Any]:
    return read_table(CHECK_TABLE)


def rate_text(rate: float) -> str:
    """A predicted rate to two significant digits (``1,500``, ``52``, ``9.3``): no more than the prediction knows."""
    rounded = float(f"{rate:.2g}")
    return f"{rounded:,.0f}" if rounded >= 10 else f"{rounded:g}"


def hours_text(hours: float) -> str:
    """Hours to two significant digits."""
    return rate_text(hours)


def per_million_tokens(usd_per_hour: float, tokens_per_s: float) -> float:
    """US dollars per million tokens at ``tokens_per_s`` on a GPU rented at ``usd_per_hour``."""
    return usd_per_hour / (tokens_per_s * 3600) * 1e6


def hours_per_million_tokens(tokens_per_s: float) -> float:
    """Hours a run at ``tokens_per_s`` takes for a million tokens."""
    return 1e6 / tokens_per_s / 3600


def usd_text(usd: float) -> str:
    """Dollars to two significant digits, and at least whole cents: ``$0.035``, ``$0.10``, ``$3.1``, ``$1,200``."""
    if usd >= 1:
        return "$" + rate_text(usd)
    decimals = max(2, 1 - math.floor(math.log10(usd)))
    return f"${usd:.{decimals}f}"


def usd_range_text(low: float, high: float) -> str:
    """``$0.029–0.059``: a cost at both ends of a price range, or one figure where both read the same."""
    low_text, high_text = usd_text(low), usd_text(high)
    return low_text if low_text == high_text else f"{low_text}–{high_text.removeprefix('$')}"


def hourly_text(usd_per_hour: float) -> str:
    return f"${usd_per_hour:.2f}/h"


# ----------------------------------------------------------------------------- measured error


def held_out_error(engine: str, kind: str) -> dict[str, Any] | None:
    """The held-out error of ``engine``'s ``kind`` predictions, or None where nothing checked them yet."""
    return compared.held_out_error(_check_table(), engine, kind)


def error_text(engine: str, kind: str) -> str:
    """``a median error of 14% on 52 published measurements held out of the fit``, or that none checked it."""
    summary = held_out_error(engine, kind)
    if summary is None:
        return NOT_CHECKED
    text = (
        f"a median error of {summary['held_out_median_abs_error']:.0%} on {summary['held_out_rows']} "
        "published measurements held out of the fit"
    )
    band = summary.get("band")
    if band:  # where four in five of those predictions fell, as a share of the measurement
        text += f", predicted at {band['p10']:.2f} to {band['p90']:.2f} times the measured speed (p10 to p90)"
    return text


def method_link(here: str) -> str:
    return page_link(METHOD_SECTION, here)


# ----------------------------------------------------------------------------- prices


@dataclass(frozen=True)
class Price:
    """The cheapest dated hourly price of one GPU, as the pages cite it: one price or a range."""

    gpu: str
    usd_per_hour: float
    provider: str
    text: str
    source: Source
    usd_per_hour_max: float | None = None

    @property
    def top(self) -> float:
        """The top of the range; the one price where there is no range."""
        return self.usd_per_hour_max or self.usd_per_hour

    @property
    def low_text(self) -> str:
        return hourly_text(self.usd_per_hour)


def cheapest_price(spec: AcceleratorSpec) -> Price | None:
    """The cheapest listed hourly price of ``spec`` (ranges ordered by their low end), or None."""
    prices = spec.hourly_prices()
    if not prices:
        return None
    p = prices[0]
    top = f"–{p.usd_per_hour_max:.2f}" if p.usd_per_hour_max else ""
    return Price(
        spec.name, p.usd_per_hour, p.provider, f"${p.usd_per_hour:.2f}{top}/h", cited(p, note=False), p.usd_per_hour_max
    )


@dataclass(frozen=True)
class Option:
    """Something to rent at ``price``, costing ``cost`` (per token, or per hour) at the price's low end;
    the cost scales with the price."""

    item: Any
    price: Price
    cost: float

    def cost_at(self, usd_per_hour: float) -> float:
        return self.cost * usd_per_hour / self.price.usd_per_hour

    @property
    def top_cost(self) -> float:
        return self.cost_at(self.price.top)


@dataclass(frozen=True)
class Cheapest:
    """The cheapest of some options over every price each one quotes (both ends of a range).

    ``winner`` is cheapest at every price up to ``up_to`` (its range's top where it wins across the
    whole range, and then ``up_to`` and ``then`` are None); above ``up_to``, ``then`` at its lowest
    price costs less.
    """

    winner: Option
    up_to: float | None = None
    then: Option | None = None

    @property
    def holds_to(self) -> float:
        """The winner's highest price at which the verdict holds."""
        return self.winner.price.top if self.up_to is None else self.up_to

    @property
    def cost_text(self) -> str:
        """The winner's cost over the prices where it wins."""
        return usd_range_text(self.winner.cost, self.winner.cost_at(self.holds_to))

    @property
    def up_to_text(self) -> str | None:
        return None if self.up_to is None else hourly_text(self.up_to)


def cheapest(options: list[Option]) -> Cheapest | None:
    """The option that costs least across the whole range of every price, or up to which of its
    prices it does and what costs less above: the verdict the pages print for ``options``."""
    if not options:
        return None
    winner = min(options, key=lambda o: o.cost)
    rest = [o for o in options if o is not winner]
    runner_up = min(rest, key=lambda o: o.cost, default=None)
    # Every other option at its lowest price is the worst case for the winner at its highest.
    if runner_up is None or winner.top_cost <= runner_up.cost:
        return Cheapest(winner)
    # The winner's price where its cost meets the runner-up's lowest, rounded down to the cent so
    # the verdict still holds at the price it prints.
    even = runner_up.cost / winner.cost * winner.price.usd_per_hour
    up_to = max(math.floor(even * 100 + 1e-9) / 100, winner.price.usd_per_hour)
    return Cheapest(winner, up_to, runner_up)


def _row(model: str) -> dict[str, Any]:
    return next(r for r in _table()["rows"] if r["model"] == model)


def _rentable() -> list[dict[str, Any]]:
    """The single-GPU columns with a price, each with its cheapest price."""
    out = []
    for column in _table()["columns"]:
        if column["count"] > 1:
            continue  # a pair of T4s is rented as two T4s: the T4's row says it
        price = cheapest_price(find_gpu(column["gpu"]))
        if price is not None:
            out.append({"column": column, "price": price})
    return out


def costs(model: str = COST_MODEL) -> list[dict[str, Any]]:
    """Per single-GPU column with a price: the price and $ per million tokens generated and trained,
    at the price's low end (`Price.top` over `Price.usd_per_hour` scales them to its top).

    Each figure is None where the model doesn't fit (or the engine doesn't run there).
    """
    table, row = _table(), _row(model)
    out = []
    for rentable in _rentable():
        column, price = rentable["column"], rentable["price"]
        key = column["key"]
        served = row["serving"][key]
        eager = row["decode_tokens_per_s"][table["speed"]["eager"]][key]

        def cost(tokens_per_s: float | None, usd: float = price.usd_per_hour) -> float | None:
            return per_million_tokens(usd, tokens_per_s) if tokens_per_s else None

        out.append(
            {
                "column": column,
                "price": price,
                "served": cost(served["tokens_per_s"]) if served else None,
                "served_batch": served["batch"] if served else None,
                "eager": cost(eager),
                "training": {
                    task: {
                        "usd": cost(row["training_tokens_per_s"][task][key]),
                        "batch": row["cells"][task][key],
                    }
                    for task in ("qlora", "lora")
                },
            }
        )
    return out


def options(found: list[dict[str, Any]], figure: Any) -> list[Option]:
    """The GPUs of `costs` output where ``figure(cost)`` (a $ per million tokens) is predicted, as options to rent."""
    return [Option(c, c["price"], figure(c)) for c in found if figure(c) is not None]


def _money(value: float | None, price: Price) -> str:
    """A cost over the whole range of ``price``, or ✗ where there is none."""
    return usd_range_text(value, value * price.top / price.usd_per_hour) if value is not None else "✗"


def _cost_cell(name: str, value: float | None, price: Price, batch: int | None) -> dict[str, Any]:
    return {
        "name": name,
        "text": _money(value, price),
        "value": value,
        "top": None if value is None else value * price.top / price.usd_per_hour,
        "note": f"batch {batch}" if value is not None and batch else "",
    }


def cheapest_served(found: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The verdict on serving: the GPU that generates cheapest with a served engine over every quoted
    price, what ``model.generate()`` costs on it at the same prices, and what is cheaper above."""
    verdict = cheapest(options([c for c in found if c["eager"] is not None], lambda c: c["served"]))
    if verdict is None:
        return None
    best, then = verdict.winner.item, verdict.then
    return {
        "verdict": verdict,
        "gpu": best["column"]["label"],
        "served": verdict.cost_text,
        "eager": usd_range_text(best["eager"], best["eager"] * verdict.holds_to / best["price"].usd_per_hour),
        "then": None if then is None else {"gpu": then.item["column"]["label"], "served": usd_text(then.cost)},
    }


def cost_table(model: str = COST_MODEL, here: str = "gpus/can-i-run-it.md") -> str:
    """The compact cost table: per GPU, the cheapest dated price and $ per million tokens; then what
    serving costs for every model."""
    table = _table()
    speed = table["speed"]
    found = costs(model)
    rows = [
        {
            "gpu": c["column"]["label"],
            "key": c["column"]["key"],
            "price": c["price"],
            "cells": [
                _cost_cell("served", c["served"], c["price"], c["served_batch"]),
                _cost_cell("eager", c["eager"], c["price"], None),
                *(
                    _cost_cell(task, c["training"][task]["usd"], c["price"], c["training"][task]["batch"])
                    for task in ("qlora", "lora")
                ),
            ],
        }
        for c in found
    ]
    head = [
        "GPU",
        ("Cheapest price", "dated"),
        ("Generating, served", f"vLLM, up to {speed['serving_batch_cap']} at once"),
        ("Generating, generate()", "batch 1"),
        ("QLoRA training", "largest batch"),
        ("LoRA training", "largest batch"),
    ]
    return render(
        "llm_cost.html",
        head=head,
        rows=rows,
        cheapest=cheapest_served(found),
        served=served_costs(),
        model=shipped_models()[model].title,
        seq_len=f"{speed['seq_len']:,}",
        cap=speed["serving_batch_cap"],
        decode_error={e: error_text(e, "decode") for e in (speed["served"], speed["eager"])},
        training_error=error_text(speed["eager"], "training"),
        link=method_link(here),
    )


def served_costs() -> dict[str, Any]:
    """$ per million tokens generated by a served engine (vLLM, batch > 1) for every model on every
    rentable GPU, over the whole range of each price: the head and one row per model it serves."""
    table = _table()
    rentable = _rentable()
    rows = []
    for row in table["rows"]:
        cells = []
        for r in rentable:
            served = row["serving"][r["column"]["key"]]
            usd = per_million_tokens(r["price"].usd_per_hour, served["tokens_per_s"]) if served else None
            cells.append(_cost_cell("served", usd, r["price"], served["batch"] if served else None))
        if any(cell["value"] is not None for cell in cells):
            rows.append({"model": row["title"], "key": row["model"], "cells": cells})
    return {
        "head": ["Model"] + [(r["column"]["label"], r["price"].text) for r in rentable],
        "rows": rows,
    }


# ----------------------------------------------------------------------------- buying against renting


def electricity() -> SimpleNamespace:
    """The price of a kWh the break-even counts: a dated fact of ``buying_advice.yaml``."""
    fact = yaml.safe_load(ELECTRICITY_FILE.read_text(encoding="utf-8")).get("electricity")
    if not isinstance(fact, dict) or "usd_per_kwh" not in fact:
        raise ValueError(
            f"{ELECTRICITY_FILE}: 'electricity' needs usd_per_kwh, source, as_of and status: "
            "the break-even counts a card's electricity at that price"
        )
    return SimpleNamespace(**{"note": None, **fact})


def _renting(found: list[dict[str, Any]]) -> tuple[Option, Option] | None:
    """The cheapest rental per token of `BREAK_EVEN_TASK`: with every price at its low end, and at its top."""
    rented = options(found, lambda c: c["training"][BREAK_EVEN_TASK]["usd"])
    if not rented:
        return None
    return min(rented, key=lambda o: o.cost), min(rented, key=lambda o: o.top_cost)


def break_even() -> list[dict[str, Any]]:
    """Each column card with a dated purchase price, its board power and a predicted `BREAK_EVEN_TASK`
    speed: the hours of use after which buying it and paying its electricity costs less than renting
    the tokens it trains in those hours at the cheapest price per token, shortest first (every price
    at its top) and longest (at its low end). None where renting costs less than the electricity."""
    table, row = _table(), _row(COST_MODEL)
    renting = _renting(costs())
    if renting is None:
        return []
    low, high = renting
    kwh = electricity()
    out = []
    seen = set()
    for column in table["columns"]:
        spec = find_gpu(column["gpu"])
        rate = row["training_tokens_per_s"][BREAK_EVEN_TASK][column["key"]]
        if column["count"] > 1 or spec.name in seen or spec.launch_price_usd is None or spec.tdp_w is None or not rate:
            continue
        seen.add(spec.name)
        purchase, watts = spec.launch_price_usd.value, spec.tdp_w.value
        power_usd = watts / 1000 * kwh.usd_per_kwh
        million_per_hour = rate * 3600 / 1e6
        # What renting the tokens the card trains in one hour costs: every price at its top, then its low end.
        rent = (million_per_hour * high.top_cost, million_per_hour * low.cost)
        hours = tuple(purchase / (r - power_usd) if r > power_usd else None for r in rent)
        out.append(
            {
                "gpu": spec.name,
                "purchase": purchase,
                "purchase_text": f"${purchase:,.0f}",
                "purchase_source": cited(spec.launch_price_usd),
                "rate": rate,
                "watts": watts,
                "watts_source": cited(spec.tdp_w, ages=False, note=False),
                "rent_per_hour": rent,
                "power_per_hour": power_usd,
                "hours": hours,
                "kwh": tuple(None if h is None else h * watts / 1000 for h in hours),
                "tokens": tuple(None if h is None else h * rate * 3600 for h in hours),
            }
        )
    return sorted(out, key=lambda r: r["purchase"])


def _span(values: tuple[float | None, float | None], text: Any, unbounded: str = "{} or never") -> str:
    """Two ends as one range (``6,100–17,000``); ``unbounded`` words a range whose far end never comes
    (renting cheaper than the electricity), and "never" where neither end does."""
    if values[0] is None:
        return "never"
    if values[1] is None:
        return unbounded.format(text(values[0]))
    first, second = text(values[0]), text(values[1])
    return first if first == second else f"{first}–{second}"


def break_even_table() -> str:
    """Buying a card against renting its work, electricity counted: one row per card, and what every row assumes."""
    found = costs()
    renting = _renting(found)
    kwh = electricity()
    rows = [
        {
            **r,
            "rate_text": rate_text(r["rate"]),
            "watts_text": f"{r['watts']:,.0f}",
            # Renting from the low end of every price to the top, as the price ranges read.
            "rent_text": "$" + _span(r["rent_per_hour"][::-1], lambda v: f"{v:.2f}"),
            "power_text": f"${r['power_per_hour']:.3f}",
            "hours_text": _span(r["hours"], rate_text),
            "kwh_text": _span(r["kwh"], rate_text, "at least {}"),
            "tokens_text": _span(tuple(None if t is None else t / 1e9 for t in r["tokens"]), rate_text, "at least {}"),
        }
        for r in break_even()
    ]
    low, high = renting if renting else (None, None)
    return render(
        "llm_break_even.html",
        rows=rows,
        model=shipped_models()[COST_MODEL].title,
        low=low and {"gpu": low.item["column"]["label"], "price": low.price, "usd": usd_text(low.cost)},
        high=high
        and {"gpu": high.item["column"]["label"], "top": hourly_text(high.price.top), "usd": usd_text(high.top_cost)},
        kwh={"usd": f"${kwh.usd_per_kwh:.2f}", "source": cited(kwh)},
        seq_len=f"{_table()['speed']['training_seq_len']:,}",
        training_error=error_text(_table()["speed"]["eager"], "training"),
        link=method_link("gpus/buying-guide.md"),
    )


# ----------------------------------------------------------------------------- how speed is predicted


def _launch_text(engine: dict[str, Any]) -> str:
    if engine.get("host_launched"):
        return "the host's (below)"
    if engine["launch_s"]:
        return f"{engine['launch_s'] * 1e6:g} µs of GPU time at least (CUDA graph)"
    return "none (CUDA graph)"


def speed_method(here: str = "benchmarks/methodology.md") -> str:
    """The engines with their constants and versions, the hosts, and each engine's held-out error per
    kind and class of GPU, from the committed tables."""
    check = _check_table()
    engines = [
        {
            "name": name,
            "version": f"{engine['version']} ({engine['as_of']})",
            "launch": _launch_text(engine),
            "step": f"{engine['step_s'] * 1e3:g} ms" if engine["step_s"] else "none",
            "stream": f"{engine['stream_efficiency']:.0%}",
            "attention": f"{engine['attention_efficiency']:.0%}",
            "quantized": f"{engine['quantized_efficiency']:.0%}",
            "ceiling": f"{engine['matmul_ceiling_tflops']:g} TFLOPS" if engine.get("matmul_ceiling_tflops") else "",
            "basis": engine["basis"],
        }
        for name, engine in check["engines"].items()
    ]
    hosts = [
        {"name": name, "title": h["title"], "launch": f"{h['launch_s'] * 1e6:g} µs", "basis": h["basis"]}
        for name, h in check.get("hosts", {}).items()
    ]
    held_out = []
    for name, engine in check["engines"].items():
        for kind in ("decode", "prefill", "training"):
            rows = [
                s for s in check["summaries"] if (s["engine"], s["kind"], s["half"]) == (name, kind, compared.HELD_OUT)
            ]
            trains = "lora" in engine["modes"]
            if not rows and kind == "training" and not trains:
                continue  # a served engine doesn't train
            if not rows:
                held_out.append({"engine": name, "kind": KIND_TEXT[kind], "gpus": "", "rows": None})
            for summary in rows:
                ratio = summary.get("ratio") or {}
                held_out.append(
                    {
                        "engine": name,
                        "kind": KIND_TEXT[kind],
                        "gpus": "all" if summary.get("gpu_class", "all") == "all" else summary["gpu_class"],
                        "rows": summary["rows"],
                        "median": f"{summary['median_abs_error']:.0%}",
                        "band": f"{ratio['p10']:.2f}–{ratio['p90']:.2f}" if ratio else "",
                        "worst": f"{summary['worst_error']:+.0%}",
                        "target": f"{summary['target']:.0%}" if summary["target"] is not None else None,
                        "met": summary["target"] is None or summary["median_abs_error"] <= summary["target"],
                    }
                )
    checked = {r["source"] for r in check["rows"]}
    sources = {
        p.source["id"]: {"url": p.source["url"], "title": p.source["title"]}
        for p in published_rows()
        if p.source["id"] in checked
    }
    return render(
        "llm_speed_method.html",
        engines=engines,
        hosts=hosts,
        held_out=held_out,
        not_checked=NOT_CHECKED,
        sources=[sources[key] for key in sorted(sources)],
        table_page=page_link("gpus/can-i-run-it.md", here),
    )


# ----------------------------------------------------------------------------- LLM price-performance


def tokens_per_dollar(model: str = COST_MODEL) -> list[dict[str, Any]]:
    """Per rentable GPU at its cheapest price: million tokens per dollar generated by a served
    engine and trained with QLoRA at the largest batch, where the model fits; at the price's low
    end (``value``) and its top (``top``, the same where the price is not a range)."""
    out = []
    for c in costs(model):
        for setting, usd, batch in (
            (GENERATED, c["served"], c["served_batch"]),
            (TRAINED, c["training"]["qlora"]["usd"], c["training"]["qlora"]["batch"]),
        ):
            if usd:
                out.append(
                    {
                        "gpu": c["column"]["label"],
                        "price": c["price"],
                        "setting": setting,
                        "value": 1 / usd,
                        # At the top of a price range, where there is one.
                        "top": 1 / usd * c["price"].usd_per_hour / c["price"].top,
                        "batch": batch,
                    }
                )
    return out


def _range_text(low: float, high: float) -> str:
    """Tokens per dollar from the top of a price range to its low end: ``14–29``."""
    first, second = rate_text(low), rate_text(high)
    return first if first == second else f"{first}–{second}"


def llm_price_performance(here: str = "gpus/buying-guide.md") -> str:
    """Million tokens per dollar for `COST_MODEL`, generated and fine-tuned: chart, static fallback and data table."""
    import pandas as pd

    from benchlib.site.charts import PREDICTED, chart_spec, plotted_rows
    from benchlib.site.figures import figure_context
    from benchlib.workloads import Chart

    title = shipped_models()[COST_MODEL].title
    points = tokens_per_dollar()
    if not points:
        return render("buying_empty.html", what="price")
    chart = Chart(
        id="llm-price-performance",
        title=f"{title}: million tokens per dollar (predicted)",
        setting_title="tokens",
        axis_title="million tokens per $",
        setting_order=(GENERATED, TRAINED),
        tick_title=TOP_OF_RANGE,
    )
    frame = pd.DataFrame(
        [
            {
                "subject": p["gpu"],  # one price per GPU (the cheapest): the data table names its provider
                "setting": p["setting"],
                "value": p["value"],
                "tick": p["top"] if p["top"] < p["value"] else None,
                "unit": "M tokens/$",
                "higher_is_better": True,
                "source": PREDICTED,
                "date": p["price"].source.as_of,
                "status": "ok",
                "created": "",
            }
            for p in points
        ]
    )
    plotted = plotted_rows(frame, chart)
    speed = _table()["speed"]
    rows = [
        {
            "gpu": p["gpu"],
            "setting": p["setting"],
            "batch": p["batch"],
            "price": p["price"],
            "value": p["value"],
            "top": p["top"],
            "text": _range_text(p["top"], p["value"]),
        }
        for p in points
    ]
    return render(
        "llm_price.html",
        chart=chart,
        **figure_context(chart.id, chart_spec(plotted, chart)),
        rows=rows,
        model=title,
        seq_len=f"{speed['seq_len']:,}",
        cap=speed["serving_batch_cap"],
        top_of_range=TOP_OF_RANGE,
        served_error=error_text(speed["served"], "decode"),
        training_error=error_text(speed["eager"], "training"),
        link=method_link(here),
    )
