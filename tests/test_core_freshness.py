"""The one staleness rule (benchlib.core.freshness) and the build date it counts from."""

from __future__ import annotations

from datetime import date

import pytest

from benchlib.core import freshness

TODAY = date(2026, 11, 21)


def test_months_before_clamps_to_the_end_of_month() -> None:
    assert freshness.months_before(date(2024, 2, 29), 12) == date(2023, 2, 28)
    assert freshness.months_before(date(2026, 3, 31), 1) == date(2026, 2, 28)


@pytest.mark.parametrize(
    ("as_of", "stale"),
    [
        (date(2025, 11, 21), False),  # exactly twelve months: still fresh
        (date(2025, 11, 20), True),
        ("2025-11", False),  # a month counts from its last day
        ("2025-10", True),
        ("2025", False),  # a year counts from 31 December
        ("2024", True),
        ("2026-03-10", False),
    ],
)
def test_older_than_twelve_months_is_stale(as_of: date | str, stale: bool) -> None:
    assert freshness.is_stale(as_of, TODAY) is stale


def test_partial_dates_mean_the_last_day_they_cover() -> None:
    assert freshness.latest_day("2024") == date(2024, 12, 31)
    assert freshness.latest_day("2024-02") == date(2024, 2, 29)
    assert freshness.latest_day("2024-02-03") == date(2024, 2, 3)
    with pytest.raises(ValueError, match="YYYY, YYYY-MM or YYYY-MM-DD"):
        freshness.latest_day("March 2024")


def test_age_in_whole_months_and_its_short_text() -> None:
    assert freshness.age_in_months(date(2019, 3, 15), TODAY) == 92
    assert freshness.age_in_months("2026-11-30", TODAY) == 0  # a date after the build is not negative
    assert freshness.age_text(92) == "7y 8m" and freshness.age_text(8) == "8m"


def test_the_build_date_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(freshness.BUILD_DATE_ENV, "2020-01-31")
    assert freshness.build_date() == date(2020, 1, 31)
    assert freshness.is_stale("2018-12") and not freshness.is_stale("2019-01")
    monkeypatch.setenv(freshness.BUILD_DATE_ENV, "31/01/2020")
    with pytest.raises(ValueError, match="BENCHLIB_BUILD_DATE='31/01/2020'"):
        freshness.build_date()
    monkeypatch.delenv(freshness.BUILD_DATE_ENV)
    assert freshness.build_date() == date.today()


def test_the_mark_names_the_month_of_the_source() -> None:
    assert freshness.stale_text(date(2019, 3, 15)) == "as of 2019-03, may be out of date"
    assert freshness.stale_text("2020") == "as of 2020, may be out of date"
