"""The session budget: how a long job on a free GPU fits each platform's session limit and quota,
from the limits in the platforms data with their sources and dates."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest
import yaml

from benchlib.catalog.gpus import find_gpu
from benchlib.catalog.platforms import DATA_FILE, PlatformsFileError, load_platforms, session_budgets


def test_every_budget_names_gpus_the_specs_know_and_dated_sourced_limits() -> None:
    budgets = [t.budget for p in load_platforms().platforms.values() for t in p.tiers.values() if t.budget]
    assert budgets  # Colab's, Kaggle's and Studio Lab's free tiers state theirs
    for budget in budgets:
        assert all(find_gpu(name).name == name for name in budget.gpus)
        limits = [budget.session_hours, budget.gpu_hours_per_day, budget.gpu_hours_per_week]
        assert any(limits)
        assert all(str(limit.source).startswith("https://") for limit in limits if limit)


def test_a_long_job_is_counted_in_sessions_and_in_the_weekly_quota() -> None:
    data = load_platforms()
    kaggle = data.platforms["kaggle"].tiers["free"].budget
    assert kaggle and kaggle.session_hours and kaggle.gpu_hours_per_week
    hours = 2.5 * kaggle.session_hours.value
    lines = {b.tier: b for b in session_budgets("T4", hours, data)}
    assert {"Google Colab Free", "Kaggle Notebooks Free"} <= set(lines)
    on_kaggle = lines["Kaggle Notebooks Free"]
    assert on_kaggle.sessions == 3
    assert on_kaggle.weeks == pytest.approx(hours / kaggle.gpu_hours_per_week.value)
    text = on_kaggle.describe()
    assert text.startswith("Kaggle Notebooks Free: 3 sessions of at most 12 h")
    assert f"of its {kaggle.gpu_hours_per_week.value:g} GPU hours a week" in text
    assert f"limits as of {kaggle.gpu_hours_per_week.as_of.isoformat()}" in text
    short = {b.tier: b for b in session_budgets("T4", 0.5, data)}["Kaggle Notebooks Free"]
    assert short.sessions == 1 and "1 session of" in short.describe()
    assert math.isclose(short.weeks or 0, 0.5 / kaggle.gpu_hours_per_week.value)


def test_a_gpu_no_free_tier_offers_has_no_budget() -> None:
    assert session_budgets("H100 SXM", 10) == []


def test_a_limit_of_zero_hours_names_the_field(tmp_path: Path) -> None:
    loaded: dict[str, Any] = yaml.safe_load(DATA_FILE.read_text(encoding="utf-8"))
    loaded["platforms"]["kaggle"]["tiers"]["free"]["budget"]["session_hours"]["value"] = 0
    path = tmp_path / "platforms.yaml"
    path.write_text(yaml.safe_dump(loaded, sort_keys=False), encoding="utf-8")
    with pytest.raises(PlatformsFileError) as err:
        load_platforms(path)
    assert "tier 'free'" in str(err.value) and "budget.session_hours.value" in str(err.value)


def test_two_gpus_count_only_where_a_session_gets_two() -> None:
    tiers = [b.tier for b in session_budgets("T4", 5, count=2)]
    assert tiers == ["Kaggle Notebooks Free"]
