"""Every numeric option of the commands is checked before anything runs: a value out of range is
one line naming the option, the least it takes and what was given, with exit code 2."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from benchlib.cli import app

runner = CliRunner()

LLM = ["--model", "qwen2.5-0.5b", "--gpu", "T4"]


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["predict", *LLM, "--batch", "0"], "--batch must be at least 1, got 0"),
        (["predict", *LLM, "--seq-len", "0"], "--seq-len must be at least 1, got 0"),
        (["predict", *LLM, "--seq-len", "-3"], "--seq-len must be at least 1, got -3"),
        (["predict", *LLM, "--mode", "lora", "--lora-rank", "0"], "--lora-rank must be at least 1, got 0"),
        (["predict", "--model", "resnet50", "--gpu", "T4", "--batch", "-1"], "--batch must be at least 1, got -1"),
        (["fit", *LLM, "--batch", "0"], "--batch must be at least 1, got 0"),
        (["fit", *LLM, "--seq-len", "0"], "--seq-len must be at least 1, got 0"),
        (["fit", *LLM, "--mode", "lora", "--lora-rank", "-4"], "--lora-rank must be at least 1, got -4"),
        (["fit", *LLM, "--gpus", "0"], "--gpus must be at least 1, got 0"),
        (["fit", *LLM, "--gpus", "99999999999999999999"], "--gpus must be at most 1024, got 99999999999999999999"),
        (["fit", *LLM, "--batch", "99999999999999999999"], "--batch must be at most 1048576, got 99999999999999999999"),
        (["predict", *LLM, "--mode", "lora", "--lora-rank", "70000"], "--lora-rank must be at most 65536, got 70000"),
        (["fit", "--model", "resnet50", "--gpu", "T4", "--batch", "0"], "--batch must be at least 1, got 0"),
        (["run", "--devices", "0"], "--devices must be at least 1, got 0"),
        (["run", "--budget", "-5"], "--budget must be at least 0, got -5"),
        (["run", "--budget", "nan"], "--budget must be a finite number, got nan"),
        (["campaign", "--minutes", "0"], "--minutes must be at least 0.5, got 0"),
        (["contribute", "--minutes", "0.1"], "--minutes must be at least 0.5, got 0.1"),
        (["contribute", "--minutes", "inf"], "--minutes must be a finite number, got inf"),
    ],
)
def test_a_number_out_of_range_is_refused_in_one_line_naming_the_option(args, expected):
    result = runner.invoke(app, args)
    assert result.exit_code == 2, result.output
    assert result.output.strip() == f"error: {expected}"


def test_the_message_fits_80_columns():
    result = runner.invoke(app, ["fit", *LLM, "--seq-len", "-1000000000000"], env={"COLUMNS": "80"})
    assert result.exit_code == 2
    assert result.output.splitlines() == ["error: --seq-len must be at least 1, got -1000000000000"]


@pytest.mark.parametrize("command", ["run", "max-batch", "launch", "campaign"])
def test_help_shows_where_the_results_file_goes(command: str) -> None:
    # The help is rendered as Markdown, which took <machine id> for a tag and printed "OUT//.json".
    result = runner.invoke(app, [command, "--help"], env={"COLUMNS": "80"})
    assert result.exit_code == 0
    text = " ".join(" ".join(line.strip(" │") for line in result.output.splitlines()).split())
    assert "OUT/<machine id>/<run id>.json" in text
