"""Every page block that shows a dated fact or a reported figure applies the one staleness rule.

The blocks are rendered as the pages render them, with the build date fixed through
``$BENCHLIB_BUILD_DATE``; every dated figure found in the HTML must carry the "may be out of
date" badge exactly when `benchlib.core.freshness.is_stale` says so. A block a page calls must be
either checked here or exempt with a reason, so a new block cannot skip the rule unnoticed.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from datetime import date
from pathlib import Path

import pandas as pd
import pytest

from benchlib.catalog.platforms import TIER_FIELDS, load_platforms
from benchlib.core import freshness
from benchlib.core.paths import RESULTS_ENV
from benchlib.site import ChartsOnPage, chart, sources
from benchlib.site import buying_guide as fit_blocks
from benchlib.site import can_i_run_it as llm_fit
from benchlib.site import llm_speed as llm_cost
from benchlib.site import platform_pages as platform_blocks
from benchlib.site import speed_check as speed_blocks
from benchlib.site.data import site_data
from benchlib.workloads import charts

ROOT = Path(__file__).resolve().parents[1]
LATEST = date(2026, 11, 21)  # Lambda's 2024 throughput is older than a year here
EARLIER = date(2024, 12, 1)  # and fresh here, while its 2020 prices are old at both dates

DATE = r"\d{4}(?:-\d{2}(?:-\d{2})?)?"
MARKS = r"((?:\[\w+\])*)"
BADGE = re.compile(r'<span class="fg-badge fg-badge--(\w+)"[^>]*>[^<]*</span>')
DATED = [
    # 'source, date' after a fact, a price or a reported result: the link, its date, then the badges
    re.compile(rf"</a>, (?:read on )?({DATE})(?: · also <a [^>]*>[^<]*</a>)*</span>{MARKS}"),
    # 'Reported by source, as of date' in chart captions and under tables
    re.compile(rf"as of ({DATE}){MARKS}"),
    # a platform's list of sources: 'url (date)'
    re.compile(rf"</a> \(({DATE})\){MARKS}"),
    # a reported row in a chart's data table: its date cell, then the link to its source
    re.compile(rf"<td>({DATE}){MARKS}</td><td><a "),
]

# Blocks the pages call that show no figure which can go out of date, and why.
EXEMPT = {
    "badge_legend": "explains the badges with a sample date",
    "bf16_table": "hardware specification, fixed at launch",
    "sixteen_bit_ceiling": "hardware specifications, fixed at launch",
    "bandwidth_vs_compute": "hardware specifications, fixed at launch",
    "what_fits": "predictions from hardware specifications",
    "precision_batches": "predictions from hardware specifications",
    "models_table": "no dates",
    "measured_results": "benchlib's own measurements, dated and versioned",
    "measured_vs_predicted": "benchlib's own measurements, dated and versioned",
    "scaling_chart": "benchlib's own measurements, dated and versioned",
    "score_block": "benchlib's own measurements, dated and versioned",
    "notebook_markdown": "the notebook's code, and a committed run's table labelled with its date and versions",
    "sample_run": "picks which committed run the notebook page shows, and shows nothing itself",
    "build_stamp": "the build date itself, which the marks count from",
    "time_budget": "benchlib contribute's time budget, from its code",
    "kept_table": "the fields of the results format, no dates",
    "lottery": "each bar's month is in its label: a session's date is what the chart shows",
    "reference_table": "benchlib's own measurement, dated and versioned",
    "thresholds_table": "methodology, no dates",
    "score_tests_table": "methodology, no dates",
    "timer_table": "methodology, no dates",
    "check_thresholds": "methodology, no dates",
    "workloads_table": "methodology, no dates",
    "suite_params_table": "methodology, no dates",
    "params_line": "methodology, no dates",
    "FULL_SHAPE": "the conv2d workload's shape that params_line shows, not a block",
    "versions": "methodology, no dates",
    "fit_table": "benchlib's own predictions, dated and versioned by the committed table",
    "assumptions": "benchlib's own predictions, dated and versioned by the committed table",
    "on_platform": "benchlib's own predictions, dated and versioned by the committed table",
    "snippet_prediction": "benchlib's own prediction, dated and versioned by the committed table",
    "snippet_for_8b": "benchlib's own predictions, dated by the committed table (the tip shows its date)",
    "sharding_table": "arithmetic on benchlib's own predictions, dated and versioned by the committed table",
    "picker": "benchlib's own predictions, dated by the committed table (the picker's answer shows its date)",
    "speed_method": "methodology: the engines' constants and their errors, no dates",
}


# A table cell of hardware specifications (a card's board power beside the prices it is weighed
# against): fixed at launch, so never marked.
SPEC_CELL = re.compile(r"<td data-spec>.*?</td>", re.S)


def dated_figures(html: str) -> list[tuple[str, bool]]:
    """Each dated figure in ``html`` as (its date, whether the stale badge follows it), outside spec cells."""
    text = BADGE.sub(lambda m: f"[{m.group(1)}]", SPEC_CELL.sub("", html))
    return [(m.group(1), "[stale]" in m.group(2)) for pattern in DATED for m in pattern.finditer(text)]


def _frame() -> pd.DataFrame:
    """Predictions in the shape the buying guide's blocks take; the batches are test inputs."""
    return pd.DataFrame(
        [
            {
                "model": model["name"],
                "dtype": dtype,
                "gpu": gpu,
                "usable_bytes": fit_blocks.usable_bytes(gpu),
                "max_batch": 64,
            }
            for model in fit_blocks.matrix_models()
            for dtype in fit_blocks.matrix_dtypes()
            for gpu in fit_blocks.gpu_names()
        ]
    )


def _platform_blocks() -> Iterator[tuple[str, Callable[[], str]]]:
    data = load_platforms()
    for pid, platform in data.platforms.items():
        refs = [(f"{pid}/{tid}", field) for tid in platform.tiers for field in TIER_FIELDS]
        yield "verdict", lambda pid=pid: platform_blocks.verdict(pid)
        yield "tier_table", lambda pid=pid: platform_blocks.tier_table(pid)
        yield "fact_list", lambda refs=refs: platform_blocks.fact_list(refs)
        yield "detection_table", lambda pid=pid: platform_blocks.detection_table(pid)
        yield "sources", lambda pid=pid: platform_blocks.sources(pid)
        if platform.history:
            yield "history_list", lambda pid=pid: platform_blocks.history_list(pid)
    all_tiers = [f"{pid}/{tid}" for pid, p in data.platforms.items() for tid in p.tiers]
    yield "limits_table", lambda: platform_blocks.limits_table(all_tiers)
    yield "glance_table", lambda: platform_blocks.glance_table(all_tiers, here="platforms/index.md")
    yield "decision_table", lambda: platform_blocks.decision_table()
    for workload in sorted(set(site_data().frame.query("source == 'reported'")["workload"])):
        yield "reported_table", lambda workload=workload: platform_blocks.reported_table(workload)
    yield "memory_units", lambda: platform_blocks.memory_units("kagglevscolab2019-colab-k80")


def _buying_guide_blocks() -> Iterator[tuple[str, Callable[[], str]]]:
    frame = _frame()
    yield "resnet50_throughput", fit_blocks.resnet50_throughput
    yield "predicted_against_reported", speed_blocks.predicted_against_reported
    yield "lambda_batches", fit_blocks.lambda_batches
    yield "price_performance", fit_blocks.price_performance
    yield "free_tiers", lambda: fit_blocks.free_tiers(frame)
    yield "rent_table", lambda: fit_blocks.rent_table(frame)
    yield "buy_table", lambda: fit_blocks.buy_table(frame)
    yield "older_cards", lambda: fit_blocks.older_cards(frame)
    yield "recommendations", fit_blocks.recommendations
    yield "reported_largest_batches", fit_blocks.reported_largest_batches
    yield "advice_history", fit_blocks.advice_history


def _chart_blocks() -> Iterator[tuple[str, Callable[[], str]]]:
    for chart_id in charts():
        yield "chart", lambda chart_id=chart_id: chart(chart_id)
    # The Results page shows its charts through a ChartsOnPage; one with nothing shown yet shows them all.
    yield "ChartsOnPage", lambda: ChartsOnPage().remaining()


def _llm_blocks() -> Iterator[tuple[str, Callable[[], str]]]:
    yield "published_comparison", llm_fit.published_comparison
    yield "cost_table", llm_cost.cost_table
    yield "break_even_table", llm_cost.break_even_table
    yield "llm_price_performance", llm_cost.llm_price_performance


def render_all(today: date) -> dict[str, list[str]]:
    """Every checked block's HTML at build date ``today``, by block name."""
    rendered: dict[str, list[str]] = {}
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(freshness.BUILD_DATE_ENV, today.isoformat())
        mp.setenv(RESULTS_ENV, str(ROOT / "results"))
        mp.delenv(sources.MEASURE_ENV, raising=False)
        for name, block in [*_platform_blocks(), *_buying_guide_blocks(), *_chart_blocks(), *_llm_blocks()]:
            rendered.setdefault(name, []).append(block())
    return rendered


@pytest.fixture(scope="module", params=[LATEST, EARLIER], ids=str)
def build(request: pytest.FixtureRequest) -> tuple[date, dict[str, list[str]]]:
    return request.param, render_all(request.param)


@pytest.mark.slow
def test_every_dated_figure_is_marked_exactly_when_older_than_twelve_months(build) -> None:
    today, rendered = build
    checked, wrong = 0, []
    for name, pages in rendered.items():
        for html in pages:
            for as_of, marked in dated_figures(html):
                checked += 1
                if marked != freshness.is_stale(as_of, today):
                    wrong.append(f"{name}: {as_of} {'marked' if marked else 'not marked'}")
    assert not wrong, wrong[:20]
    # The check must have looked at plenty of figures, old and new, or it proves nothing.
    figures = [f for pages in rendered.values() for html in pages for f in dated_figures(html)]
    assert checked > 100
    assert any(marked for _, marked in figures) and not all(marked for _, marked in figures)


@pytest.mark.slow
def test_every_block_with_reported_figures_or_prices_shows_dated_figures(build) -> None:
    _, rendered = build
    for name in (
        "tier_table",
        "reported_table",
        "resnet50_throughput",
        "predicted_against_reported",
        "lambda_batches",
        "price_performance",
        "rent_table",
        "buy_table",
        "older_cards",
        "recommendations",
        "reported_largest_batches",
        "advice_history",
        "chart",
        "ChartsOnPage",
        "sources",
        "published_comparison",
        "cost_table",
        "break_even_table",
        "llm_price_performance",
    ):
        assert any(dated_figures(html) for html in rendered[name]), name


@pytest.mark.slow
def test_the_buying_guide_marks_lambdas_2024_throughput_only_once_it_is_a_year_old(build) -> None:
    today, rendered = build
    lambda_2024 = [
        marked
        for name in ("resnet50_throughput", "lambda_batches", "price_performance")
        for html in rendered[name]
        for as_of, marked in dated_figures(html)
        if as_of.startswith("2024-03")
    ]
    assert len(lambda_2024) >= 3  # the throughput chart, the batch check and the price chart
    assert all(lambda_2024) if today == LATEST else not any(lambda_2024)
    prices_2020 = [
        marked
        for html in rendered["reported_largest_batches"]
        for as_of, marked in dated_figures(html)
        if as_of.startswith("2020")
    ]
    assert prices_2020 and all(prices_2020)


def test_every_block_the_pages_call_is_checked_or_exempt_with_a_reason() -> None:
    called = {
        name
        # docs/, and includes/ (appended to every page)
        for page in [*(ROOT / "docs").rglob("*.md"), *(ROOT / "includes").glob("*.md")]
        for name in re.findall(r"from benchlib(?:\.\w+)* import (\w+)", page.read_text(encoding="utf-8"))
    }
    checked = {name for name, _ in [*_platform_blocks(), *_buying_guide_blocks(), *_chart_blocks(), *_llm_blocks()]}
    assert called, "no blocks found in docs/"
    assert called <= checked | set(EXEMPT), sorted(called - checked - set(EXEMPT))


def test_hardware_specs_show_their_dates_without_the_mark(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(freshness.BUILD_DATE_ENV, LATEST.isoformat())
    html = fit_blocks.bandwidth_vs_compute()
    dates = dated_figures(html)
    assert any(freshness.is_stale(as_of, LATEST) for as_of, _ in dates)
    assert not any(marked for _, marked in dates)
    # The break-even's board power is such a spec, in a cell of its own among dated prices.
    cells = SPEC_CELL.findall(llm_cost.break_even_table())
    assert cells and all("</a>, " in c for c in cells)  # each with its source and date
    assert not any("fg-badge--stale" in c for c in cells)
