"""A command run for a benchmark: its wall seconds and what it printed, or the script stopped with
the end of its output where it fails (a benchmark of a failing command measures nothing)."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path


def timed_run(command: list[str], *, cwd: Path, env: dict[str, str], what: str) -> tuple[float, str]:
    """Run ``command`` in ``cwd`` with ``env``; its wall seconds and its standard output. ``what``
    names it in the message where it fails."""
    started = time.perf_counter()
    run = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - started
    if run.returncode != 0:
        sys.exit(f"error: {what} failed:\n{(run.stdout + run.stderr)[-4000:]}")
    return wall, run.stdout
