"""`benchlib facts`: every dated fact, oldest first, with the site's staleness rule."""

from __future__ import annotations

import re
from datetime import date

import pytest
from typer.testing import CliRunner

from benchlib.cli import app
from benchlib.core import freshness
from benchlib.derive.dated_facts import ORIGIN_FILES, dated_facts

runner = CliRunner()
TODAY = "2026-11-21"
KAGGLE_2019 = "https://towardsdatascience.com/kaggle-vs-colab-faceoff-which-free-gpu-provider-is-tops-d4f0cd625029"


@pytest.fixture(autouse=True)
def build_date(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(freshness.BUILD_DATE_ENV, TODAY)


def test_every_data_file_contributes_and_the_oldest_come_first() -> None:
    found = dated_facts()
    assert {f.origin for f in found} == set(ORIGIN_FILES)
    days = [f.day for f in found]
    assert days == sorted(days)
    by_key = {(f.origin, f.key): f for f in found}
    assert by_key[("reported", "kagglevscolab2019-colab-k80")].as_of == "2019-03-15"
    assert by_key[("platforms", "kaggle/free quotas #2")].as_of == "2025-10-06"
    assert by_key[("advice", "lambda-2022 claim #1")].as_of == "2022-03"
    # The break-even's electricity price is dated like every other figure.
    assert by_key[("advice", "electricity price")].source.startswith("https://")


def test_prices_age_but_hardware_specs_do_not() -> None:
    t4 = {f.key: f for f in dated_facts() if f.origin == "gpus" and f.key.startswith("T4 ")}
    assert not t4["T4 bandwidth_gbps"].ages
    prices = [f for key, f in t4.items() if key.startswith("T4 cloud_prices")]
    assert prices and all(f.ages for f in prices)


@pytest.mark.slow  # over 3 s here: kept out of the fast command (README command 3)
def test_the_command_lists_old_facts_oldest_first_with_source_and_age() -> None:
    result = runner.invoke(app, ["facts", "--older-than", "12"])
    assert result.exit_code == 0, result.output
    out = result.output
    assert f"as of {TODAY}" in out
    assert "kagglevscolab2019-colab-k80" in out and KAGGLE_2019 in out and "7y 8m" in out
    shown = re.findall(r"^(\d{4}(?:-\d{2}(?:-\d{2})?)?) ", out, flags=re.M)
    assert shown and [freshness.latest_day(d) for d in shown] == sorted(freshness.latest_day(d) for d in shown)
    assert all(freshness.age_in_months(d, date(2026, 11, 21)) >= 12 for d in shown)
    expected = [f for f in dated_facts() if f.ages and freshness.age_in_months(f.as_of, date(2026, 11, 21)) >= 12]
    assert len(shown) == len(expected)
    stale = sum(freshness.is_stale(f.as_of) for f in expected)
    assert f"{len(expected)} facts shown; {stale} older than 12 months" in out.replace("\n", " ")
    # Readable at 80 columns: only the source URLs, kept whole so they can be copied, may run longer.
    assert all(len(line) <= 80 for line in out.splitlines() if not line.lstrip().startswith("http"))


def test_fresh_facts_come_after_the_line_and_specs_only_on_request() -> None:
    plain = runner.invoke(app, ["facts", "--in", "gpus"]).output
    assert "bandwidth_gbps" not in plain and "cloud_prices" in plain
    old, new = plain.split("--- newer than 12 months")
    assert all(freshness.is_stale(d) for d in re.findall(r"^(\d{4}(?:-\d{2}(?:-\d{2})?)?) ", old, flags=re.M))
    assert not any(freshness.is_stale(d) for d in re.findall(r"^(\d{4}(?:-\d{2}(?:-\d{2})?)?) ", new, flags=re.M))
    with_specs = runner.invoke(app, ["facts", "--in", "gpus", "--specs"]).output
    assert "T4 bandwidth_gbps (spec)" in with_specs


def test_bad_options_and_a_bad_build_date_are_usage_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    result = runner.invoke(app, ["facts", "--in", "blog"])
    assert result.exit_code == 2 and "--in blog: expected one of platforms, gpus, advice, reported" in result.output
    monkeypatch.setenv(freshness.BUILD_DATE_ENV, "yesterday")
    result = runner.invoke(app, ["facts"])
    assert result.exit_code == 2 and "BENCHLIB_BUILD_DATE='yesterday'" in result.output
    assert "Traceback" not in result.output


def _row(table: str, gpu: str) -> list[str]:
    """The words of ``gpu``'s row in a rendered table, as a reader sees them."""
    found = re.search(rf"<tr><td>{re.escape(gpu)}</td>(.*?)</tr>", table, flags=re.S)
    assert found, f"{gpu} is not in the table"
    return re.sub(r"<[^>]+>", " ", found.group(1)).replace(" ,", ",").split()


def test_a_source_with_no_date_is_cited_as_read_on_the_day_it_was_read_and_still_ages(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from benchlib.catalog.gpus import find_gpu
    from benchlib.site.buying_guide import buy_table, older_cards
    from benchlib.site.platform_pages import dated_text

    gpu = "GeForce RTX 3080 12GB"  # its launch price comes from a spec database's page, which states no date
    price = find_gpu(gpu).launch_price_usd
    assert price is not None and price.read_on
    row = " ".join(_row(buy_table(), gpu))
    assert f"read on {price.as_of}" in row and "may be out of date" not in row
    # It ages from that day like any stated date: two years on, the mark appears.
    read = date.fromisoformat(price.as_of)
    monkeypatch.setenv(freshness.BUILD_DATE_ENV, read.replace(year=read.year + 2).isoformat())
    # (By then the card may have moved to the older cards' table.)
    assert "may be out of date" in " ".join(_row(buy_table() + older_cards(), gpu))
    # A fact that states its own date keeps it, even where the accelerator's defaults are read dates.
    rtx5070 = find_gpu("GeForce RTX 5070")
    assert rtx5070.memory_gb.read_on
    dated = rtx5070.fp16_tensor_tflops
    assert dated is not None and not dated.read_on and dated_text(dated) == str(dated.as_of)


@pytest.mark.parametrize(
    ("gpu", "shown"),
    [
        ("GeForce RTX 2060", "$349 trustedreviews.com, 2019-01-07 as of 2019-01, may be out of date"),
        ("GeForce RTX 2070", "$499 engadget.com, 2018-09-14 as of 2018-09, may be out of date"),
        ("GeForce RTX 2080", "$699 engadget.com, 2018-09-14 as of 2018-09, may be out of date"),
        ("GeForce RTX 5070 Ti", "$749 technologistmag.com, 2025-01 as of 2025-01, may be out of date"),
        ("GeForce RTX 5070", "$549 technologistmag.com, 2025-01 as of 2025-01, may be out of date"),
    ],
)
def test_a_launch_price_carries_the_date_its_source_states_and_shows_its_age(gpu: str, shown: str) -> None:
    from benchlib.site.buying_guide import buy_table, older_cards

    row = " ".join(_row(buy_table() + older_cards(), gpu))
    assert shown in row and "read on" not in row
