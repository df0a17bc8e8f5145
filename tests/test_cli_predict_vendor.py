"""`benchlib predict` on a GPU whose vendor no published measurement covers says that its error band
comes from other vendors' cards, and how to measure it."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from benchlib.cli import app

ENV = {"HF_HUB_OFFLINE": "1", "COLUMNS": "80"}
DECODE = ["predict", "--model", "qwen2.5-0.5b", "--json"]


def _note(gpu: str) -> str:
    result = CliRunner().invoke(app, [*DECODE, "--gpu", gpu], env=ENV)
    assert result.exit_code == 0, result.output
    return json.loads(result.output)["note"] or ""


@pytest.mark.slow
def test_a_radeon_prediction_says_no_amd_measurement_checks_it() -> None:
    note = _note("RX 7900 XTX")
    assert "no published measurement on any AMD GPU" in note and "NVIDIA" in note
    assert "benchlib contribute" in note


@pytest.mark.slow
def test_an_nvidia_prediction_carries_no_such_caveat() -> None:
    assert "no published measurement on any" not in _note("T4")
