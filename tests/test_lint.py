"""ruff, as pyproject.toml configures it, over the whole project: the fast run fails on a lint error or an
unformatted file, so the rules hold by test, not by memory."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
RUFF = Path(sys.executable).parent / "ruff"


@pytest.mark.parametrize("command", [["check"], ["format", "--check"]], ids=["check", "format"])
def test_ruff_finds_nothing(command: list[str]) -> None:
    run = subprocess.run([str(RUFF), *command, "."], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, (
        f"ruff {' '.join(command)} (fix with: ruff check --fix . && ruff format .):\n{run.stdout}{run.stderr}"
    )
