"""The buying guide opens with its verdict, taken from the predictions and dated prices the site shows;
the History page holds the old figures the guides no longer fold in place."""

from __future__ import annotations

import re
from html import unescape
from pathlib import Path

import pytest
import yaml

from benchlib.catalog.platforms import load_platforms
from benchlib.core import freshness
from benchlib.site import buying_guide as blocks
from benchlib.site import llm_speed
from benchlib.site.can_i_run_it import _table as llm_table
from benchlib.site.platform_pages import fact_flags

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
GUIDE = DOCS / "gpus" / "buying-guide.md"
HISTORY = DOCS / "history.md"
OLD_RUNS = 'runs="kagglevscolab2019-"'


@pytest.fixture
def verdict(monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """The verdict's lines as a reader reads them, by their lead, at a fixed build date."""
    monkeypatch.setenv(freshness.BUILD_DATE_ENV, "2026-11-26")
    html = blocks.recommendations()
    items = re.findall(r"<li>(.*?)</li>", html, flags=re.S)
    return {_text(re.search(r"<strong>(.*?):</strong>", i).group(1)): i for i in items}


def _text(html: str) -> str:
    return unescape(re.sub(r"<[^>]+>", "", html))


def test_the_verdict_answers_the_four_uses_each_linked_to_where_it_is_answered(verdict):
    assert list(verdict) == [
        "LoRA or QLoRA on a 7–8B model",
        "Serving a model",
        "Learning on a budget",
        "A large training run",
    ]
    for use, line in verdict.items():
        assert re.search(r'href="\.\./can-i-run-it/(#[\w.-]+)?"', line), use


def test_every_price_in_the_verdict_carries_its_source_and_date(verdict):
    for use, line in verdict.items():
        # A verdict's threshold ("up to $0.31/h") is a price of no offer: it cites none.
        prices = re.findall(r"(?<!up to )\$[\d.]+(?:–[\d.]+)?/h", _text(line))
        sources = re.findall(
            r'<span class="fg-source"><a href="https://[^"]+">[^<]+</a>, \d{4}(?:-\d\d){0,2}</span>', line
        )
        assert len(sources) >= len(prices), use


def test_the_fine_tuning_and_serving_lines_are_the_cheapest_the_cost_table_predicts(verdict):
    model = next(r for r in llm_table()["rows"] if r["model"] == blocks.VERDICT_MODEL)
    costs = llm_speed.costs(blocks.VERDICT_MODEL)
    tuning = _text(verdict["LoRA or QLoRA on a 7–8B model"])
    for mode, name in blocks.TUNING_MODES:
        best = min((c for c in costs if c["training"][mode]["usd"]), key=lambda c: c["training"][mode]["usd"])
        assert best["column"]["label"] in tuning
        assert f"{llm_speed.usd_text(best['training'][mode]['usd'])}" in tuning and name in tuning
    t4 = next(c for c in llm_table()["columns"] if c["key"] == "t4")
    assert f"fits a free {t4['label']} (batch {model['cells']['qlora']['t4']})" in tuning
    served = min((c for c in costs if c["served"]), key=lambda c: c["served"])
    serving = _text(verdict["Serving a model"])
    assert served["column"]["label"] in serving and llm_speed.usd_text(served["served"]) in serving


def test_the_large_run_names_the_fastest_single_gpu_and_that_a_full_fine_tune_needs_more(verdict):
    table = llm_table()
    model = next(r for r in table["rows"] if r["model"] == blocks.VERDICT_MODEL)
    singles = [c for c in table["columns"] if c["count"] == 1]
    rate, fastest = max(
        (model["training_tokens_per_s"]["lora"][c["key"]], c["label"])
        for c in singles
        if model["training_tokens_per_s"]["lora"][c["key"]]
    )
    line = _text(verdict["A large training run"])
    assert f"the {fastest}, {llm_speed.rate_text(rate)} tokens/s" in line
    assert not any(model["cells"]["train"][c["key"]] for c in singles)
    # "spread it over several" leads to the section on sharded training.
    assert "fits no single GPU" in line and "multi-gpu/#sharded-training" in verdict["A large training run"]


def test_the_budget_line_leaves_out_free_offers_whose_price_may_be_out_of_date(verdict):
    line = verdict["Learning on a budget"]
    platforms = load_platforms().platforms
    for platform_id, tier_id, _ in blocks.FREE_TIERS:
        price = platforms[platform_id].tiers[tier_id].field("price")[0]
        stale = any(f.kind == "stale" for f in fact_flags(price))
        assert (platforms[platform_id].name in line) != stale, platform_id
    assert "fg-badge--stale" not in line


def test_the_guide_opens_with_the_verdict():
    text = GUIDE.read_text(encoding="utf-8")
    first_heading = text.index("\n## ")
    assert "import recommendations" in text[:first_heading]
    assert text.index("import recommendations") < text.index("import what_fits")


def test_the_old_kaggle_and_colab_figures_are_on_the_history_page_only():
    folded = [p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md") if OLD_RUNS in p.read_text(encoding="utf-8")]
    assert folded == ["history.md"]
    history = HISTORY.read_text(encoding="utf-8")
    assert "import older_cards" in history
    opening = history.split("\n## ", 1)[0]
    assert "2018 and 2019" in opening and "changed since" in opening
    for page in ("platforms/kaggle.md", "guides/mixed-precision.md", "gpus/buying-guide.md"):
        assert "history.md" in (DOCS / page).read_text(encoding="utf-8"), page


def test_history_is_in_the_nav_before_the_glossary():
    nav = [next(iter(item.values())) for item in yaml.safe_load(_nav_yaml())]
    assert nav.index("history.md") == nav.index("glossary.md") - 1


def _nav_yaml() -> str:
    # mkdocs.yml holds !!python tags that safe_load refuses: read the nav block alone.
    text = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    block = text.split("\nnav:\n", 1)[1]
    return "\n".join(line for line in block.splitlines() if line.startswith("  ") or not line.strip())


def test_precision_batches_show_the_predicted_fp32_and_fp16_batches():
    html = blocks.precision_batches(["T4"])
    predictions = blocks._batches(blocks._site_predictions())
    for model in blocks.matrix_models():
        batches = predictions[("T4", model["name"])]
        row = re.search(rf"<tr><td>T4</td><td>{re.escape(model['title'])}</td>(.*?)</tr>", html).group(1)
        cells = re.findall(r"<td>([^<]*)</td>", row)
        assert cells[:2] == [f"{batches['fp32']:,}", f"{batches['fp16']:,}"]
        assert cells[2] == f"{batches['fp16'] / batches['fp32']:.1f}×"
