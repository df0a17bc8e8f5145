"""How long a cold `benchlib predict` and `benchlib fit` of a 70B model take, against their 10 s target.

Each command runs in a fresh process with an empty benchlib cache and ``--trace``, so it imports
torch and transformers and traces the model: what a first question about a model or setup the
committed formulas don't hold costs (a shipped one is answered from them:
``benchmarks/cli_formula_speed.py``). Printed per run: the
wall time, its ratio to the target (below 1 meets it) and the CPU time (user + system); then each
command's median. The machine is shared on CI, so the wall time moves with what else runs; the
CPU time moves less.

Python compiles every module it imports that has no bytecode on disk: a venv installed without
``--compile-bytecode`` (uv's default) and run with ``PYTHONDONTWRITEBYTECODE=1`` compiles torch,
sympy and transformers in every process, about 7 s of CPU. The report says which case this is.

    .venv/bin/python benchmarks/cold_predict.py [--runs 3]
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# The command as a reader types it: the venv's console script.
BENCHLIB = Path(sys.executable).with_name("benchlib")
TARGET_S = 10.0
SETUP = ["--model", "llama-3.3-70b", "--gpu", "A100 80GB SXM", "--weights", "gptq-int4", "--batch", "8"]
COMMANDS = {
    "predict --trace": ["predict", *SETUP, "--seq-len", "4096", "--trace"],
    "fit --gpus 2 --trace": ["fit", *SETUP, "--seq-len", "4096", "--gpus", "2", "--trace"],
}


def bytecode_state() -> str:
    """Whether torch's modules have bytecode on disk, or are compiled in each process."""
    spec = importlib.util.find_spec("torch")
    assert spec is not None and spec.origin is not None
    compiled = Path(importlib.util.cache_from_source(spec.origin)).exists()
    if compiled:
        return "bytecode on disk (compiled at install, or written by an earlier import)"
    writes = "not written (PYTHONDONTWRITEBYTECODE)" if sys.dont_write_bytecode else "written by the first run"
    return f"no bytecode on disk: every process compiles what it imports; {writes}"


def run_once(arguments: list[str]) -> tuple[float, float]:
    """One cold run's wall and CPU seconds."""
    with tempfile.TemporaryDirectory(prefix="benchlib-cold-") as cache:
        env = os.environ | {"BENCHLIB_CACHE_DIR": cache, "HF_HUB_OFFLINE": "1"}
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        run = subprocess.run([str(BENCHLIB), *arguments], cwd=ROOT, env=env, capture_output=True, text=True)
        wall = time.perf_counter() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if run.returncode != 0:
        sys.exit(f"benchlib {' '.join(arguments)} failed:\n{(run.stdout + run.stderr)[-4000:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=3, help="cold runs of each command (default 3)")
    runs = parser.parse_args().runs
    print(f"{bytecode_state()}; target {TARGET_S:g} s a command")
    for name, arguments in COMMANDS.items():
        walls = []
        for i in range(runs):
            wall, cpu = run_once(arguments)
            walls.append(wall)
            print(f"{name:>13} run {i + 1}: {wall:5.1f} s wall ({wall / TARGET_S:.2f} of the target), {cpu:5.1f} s CPU")
        median = statistics.median(walls)
        print(f"{name:>13} median: {median:5.1f} s ({median / TARGET_S:.2f} of the target)")


if __name__ == "__main__":
    main()
