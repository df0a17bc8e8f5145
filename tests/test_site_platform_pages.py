"""Each platform page opens with its verdict, and shows every fact block once.

The pages' markdown-exec blocks are run as the build runs them, and the HTML they print is read
as a reader sees it: the verdict's questions answered before any heading, and no fact (its value,
source, date, badges and note) shown twice on one page.
"""

from __future__ import annotations

import contextlib
import io
import re
import textwrap
from collections import Counter
from pathlib import Path

import pytest

from benchlib.catalog.platforms import load_platforms
from benchlib.site import platform_pages as site

PAGES = Path(__file__).resolve().parents[1] / "docs" / "platforms"
PLATFORM_PAGES = ("colab.md", "kaggle.md", "ai-studio.md", "others.md", "index.md")
VERDICT_PAGES = {"colab.md": "colab", "kaggle.md": "kaggle", "ai-studio.md": "ai-studio"}
QUESTIONS = ("GPU", "GPU hours", "Session length", "What survives a restart", "What paying buys")

EXEC_BLOCK = re.compile(r'^(?P<indent>[ ]*)```python exec="true"[^\n]*\n(?P<code>.*?)^(?P=indent)```', re.M | re.S)
# A fact block runs from its value to the next fact, or to the end of its list item or table cell.
FACT_BLOCK = re.compile(r'<span class="fg-fact">.*?(?=<span class="fg-fact">|</li>|</td>)', re.S)


def page_html(name: str) -> str:
    """Every exec block of a docs/platforms page run in page order, its printed HTML joined."""
    out = []
    for block in EXEC_BLOCK.finditer((PAGES / name).read_text(encoding="utf-8")):
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            exec(textwrap.dedent(block["code"]), {})
        out.append(printed.getvalue())
    return "\n".join(out)


def repeated_facts(html: str) -> list[str]:
    """The fact blocks that appear more than once in ``html``."""
    counts = Counter(re.sub(r"\s+", " ", block).strip() for block in FACT_BLOCK.findall(html))
    return [block for block, n in counts.items() if n > 1]


@pytest.fixture(scope="module")
def rendered() -> dict[str, str]:
    return {name: page_html(name) for name in PLATFORM_PAGES}


@pytest.mark.parametrize("name", PLATFORM_PAGES)
def test_no_fact_block_repeats_on_a_platform_page(rendered: dict[str, str], name: str) -> None:
    assert FACT_BLOCK.search(rendered[name]), f"{name}: no fact blocks found, so the check proves nothing"
    assert not repeated_facts(rendered[name]), repeated_facts(rendered[name])[:3]


def test_the_check_finds_a_repeated_fact() -> None:
    colab = site.tier_table("colab")  # every field of every tier: the shared facts repeat across tiers
    assert any("Google Drive" in block for block in repeated_facts(colab + site.verdict("colab")))


@pytest.mark.parametrize(("name", "platform_id"), VERDICT_PAGES.items())
def test_each_platform_page_opens_with_its_verdict(name: str, platform_id: str) -> None:
    text = (PAGES / name).read_text(encoding="utf-8")
    first_block = EXEC_BLOCK.search(text)
    assert first_block and f'verdict("{platform_id}")' in first_block["code"]
    assert "\n## " not in text[: first_block.start()], "the verdict comes before any section"
    html = site.verdict(platform_id)
    assert re.findall(r"<tr><th>([^<]*)</th>", html.split("<tbody>", 1)[1]) == list(QUESTIONS)


def _pro_units_and_t4_rate() -> tuple[float, float]:
    """Colab Pro's monthly units and the T4's burn rate, as the sourced facts state them."""
    pro = load_platforms().platforms["colab"].tiers["pro"]
    units = re.search(r"(\d+) compute units", pro.price[0].value)
    t4 = re.search(r"T4 (\d+\.\d+)", pro.quotas[0].value)
    assert units and t4
    return float(units.group(1)), float(t4.group(1))


def test_colab_verdict_turns_compute_units_into_gpu_hours() -> None:
    html = site.verdict("colab")
    # The figures are computed from the sourced price and burn-rate facts, which the line names.
    units, t4 = _pro_units_and_t4_rate()
    assert f"Pro: ≈ {units / t4:,.0f} T4 hours" in html
    assert f"from {units:,.0f} units a month" in html and f"T4 {t4:.2f}" in html
    assert "mccormickml.com</a>, 2026-03-10" in html  # each input's source and date


def test_verdicts_say_what_paying_buys_or_that_it_is_not_known() -> None:
    assert "No paid plan found" in site.verdict("kaggle")
    assert "how many GPU-hours a point buys is not published" in site.verdict("ai-studio")


def test_others_and_index_open_with_a_table_of_the_same_questions(rendered: dict[str, str]) -> None:
    for name in ("others.md", "index.md"):
        first = EXEC_BLOCK.search((PAGES / name).read_text(encoding="utf-8"))
        assert first and "glance_table(" in first["code"], name
        head = re.search(r'<table data-table="glance">.*?</thead>', rendered[name], re.S)
        assert head and all(f"<th>{q}</th>" in head.group(0) for q in QUESTIONS), name
    # Colab Pro's row answers with the hours its units buy, as the Colab page does.
    units, t4 = _pro_units_and_t4_rate()
    assert f"Pro: ≈ {units / t4:,.0f} T4 hours" in rendered["index.md"]


def test_verdict_and_glance_dates_carry_the_stale_mark_exactly_when_old(monkeypatch: pytest.MonkeyPatch) -> None:
    from test_site_staleness_marks import LATEST, dated_figures

    from benchlib.core import freshness

    monkeypatch.setenv(freshness.BUILD_DATE_ENV, LATEST.isoformat())
    data = load_platforms()
    refs = [f"{pid}/{tid}" for pid, p in data.platforms.items() for tid in p.tiers]
    blocks = [site.verdict(pid) for pid in data.platforms] + [site.glance_table(refs, here="platforms/index.md")]
    figures = [figure for html in blocks for figure in dated_figures(html)]
    assert len(figures) > 40 and any(marked for _, marked in figures)
    assert all(marked == freshness.is_stale(as_of, LATEST) for as_of, marked in figures)


@pytest.mark.parametrize("name", PLATFORM_PAGES)
def test_no_tier_repeats_its_platforms_name(rendered: dict[str, str], name: str) -> None:
    # "Hugging Face ZeroGPU" has one tier, "ZeroGPU": a row read "Hugging Face ZeroGPU ZeroGPU".
    data = load_platforms()
    text = " ".join(re.sub(r"<br>", " ", re.sub(r"<(?!br)[^>]+>", " ", rendered[name])).split())
    repeats = [
        f"{p.name} {t.name}" for p in data.platforms.values() for t in p.tiers.values() if p.name.endswith(t.name)
    ]
    assert repeats, "no platform's name ends with a tier's, so the check proves nothing"
    assert [r for r in repeats if r in text] == []


def test_a_glance_cell_equal_to_the_one_above_names_that_tier_instead_of_spanning_rows() -> None:
    # A cell spanning rows reads as blank in the lower rows on a phone, where the table scrolls.
    html = site.glance_table(["colab/free", "colab/payg", "colab/pro", "colab/proplus"], here="platforms/index.md")
    assert "rowspan" not in html
    assert '<td class="fg-same">As Google Colab Pay As You Go</td>' in html
    assert html.count("<tr>") == 1 + 4  # the header and every tier, Pay As You Go included
