"""`benchlib predict --tokens N`: the time for a job at the predicted rate, and how it fits the free
platforms' sessions and quotas for that GPU."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from benchlib.catalog.platforms import load_platforms
from benchlib.cli import app

ENV = {"HF_HUB_OFFLINE": "1", "COLUMNS": "80"}
LORA = ["predict", "--model", "qwen2.5-0.5b", "--mode", "lora", "--batch", "2", "--seq-len", "512"]


@pytest.mark.slow
def test_a_job_on_a_t4_is_timed_and_counted_in_each_free_tiers_limits() -> None:
    result = CliRunner().invoke(app, [*LORA, "--gpu", "T4", "--tokens", "1e9", "--json"], env=ENV)
    assert result.exit_code == 0, result.output
    answer = json.loads(result.output)
    job = answer["job"]
    assert job["seconds"] == pytest.approx(1e9 / answer["training_tokens_per_s"])
    hours = job["seconds"] / 3600
    kaggle = load_platforms().platforms["kaggle"].tiers["free"].budget
    assert kaggle and kaggle.gpu_hours_per_week
    on_kaggle = next(p for p in job["platforms"] if p["tier"] == "Kaggle Notebooks Free")
    assert on_kaggle["weeks"] == pytest.approx(hours / kaggle.gpu_hours_per_week.value)
    assert on_kaggle["as_of"] == kaggle.gpu_hours_per_week.as_of.isoformat()


@pytest.mark.slow
def test_the_job_reads_in_80_columns_and_says_to_checkpoint_past_one_session() -> None:
    result = CliRunner().invoke(app, [*LORA, "--gpu", "T4", "--tokens", "1e9"], env=ENV)
    assert result.exit_code == 0, result.output
    assert "1,000,000,000 tokens" in result.output and "Kaggle Notebooks Free" in result.output
    assert "save checkpoints and resume" in result.output
    assert max(len(line) for line in result.output.splitlines()) <= 80


@pytest.mark.slow
def test_a_gpu_no_free_tier_offers_gets_the_time_alone() -> None:
    result = CliRunner().invoke(app, [*LORA, "--gpu", "H100 SXM", "--tokens", "1e6", "--json"], env=ENV)
    assert result.exit_code == 0, result.output
    job = json.loads(result.output)["job"]
    assert job["platforms"] == [] and job["seconds"] > 0


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--tokens", "0"], "--tokens must be at least 1"),
        (["--tokens", "lots"], "--tokens"),
        (["--model", "resnet50", "--tokens", "1e6"], "--tokens applies to language models"),
    ],
)
def test_a_bad_tokens_value_is_one_line(args: list[str], says: str) -> None:
    base = ["predict", "--gpu", "T4"] + ([] if "--model" in args else ["--model", "qwen2.5-0.5b"])
    result = CliRunner().invoke(app, [*base, *args], env=ENV)
    assert result.exit_code == 2 and says in result.output and "Traceback" not in result.output
