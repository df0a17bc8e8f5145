"""How much faster `benchlib fit` and `benchlib predict` answer for a shipped model from the committed
formulas (benchlib/tables/llm_formulas.json) than by tracing it (``--trace``), and whether they agree.

Each command runs as a reader types it, in a fresh process with a fresh empty benchlib cache: once
answering from the formulas (numpy over the committed coefficients, no torch or transformers) and
once traced (import torch and transformers, build the model at reduced depth on fake tensors, trace
or count it). Printed per command: both wall times, their ratio (traced / formulas) measured in
this one run, and both answers (the largest batch or context, or tokens/s). The machine may be
shared, so the wall times move with its load; the ratio is the report, not a timed test.

    .venv/bin/python benchmarks/cli_formula_speed.py [--runs 1]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

from timed_run import timed_run

ROOT = Path(__file__).resolve().parents[1]
BENCHLIB = Path(sys.executable).with_name("benchlib")
GPTQ_70B = ["--model", "llama-3.3-70b", "--gpu", "A100 80GB SXM", "--weights", "gptq-int4", "--batch", "8"]
QLORA_8B = ["--model", "llama-3.1-8b", "--gpu", "T4", "--mode", "qlora", "--grad-checkpointing", "--batch", "4"]
COMMANDS = {
    "fit 70B GPTQ, 2 x A100 80GB, 8 x 4,096": ["fit", *GPTQ_70B, "--seq-len", "4096", "--gpus", "2"],
    "predict 70B GPTQ, A100 80GB, 8 x 4,096": ["predict", *GPTQ_70B, "--seq-len", "4096"],
    "fit 8B QLoRA, T4, 4 x 2,048": ["fit", *QLORA_8B, "--seq-len", "2048"],
    "predict 8B QLoRA, T4, 4 x 2,048": ["predict", *QLORA_8B, "--seq-len", "2048"],
}


def run_once(arguments: list[str]) -> tuple[float, dict[str, Any]]:
    """One fresh process's wall seconds and its answer (``--json``)."""
    with tempfile.TemporaryDirectory(prefix="benchlib-formulas-") as cache:
        env = os.environ | {"BENCHLIB_CACHE_DIR": cache, "HF_HUB_OFFLINE": "1"}
        wall, printed = timed_run(
            [str(BENCHLIB), *arguments, "--json"], cwd=ROOT, env=env, what=f"benchlib {' '.join(arguments)}"
        )
    return wall, json.loads(printed)


def summary(answer: dict[str, Any]) -> str:
    """What the reader reads first: the largest batch or context and the peak, or the tokens/s."""
    if "peak_bytes" in answer:
        searched = next(k for k in answer if k.startswith("largest_"))
        return f"{searched.replace('_', ' ')} {answer[searched]:,}, peak {answer['peak_bytes'] / 2**30:.2f} GiB"
    rates = ("training_tokens_per_s", "decode_tokens_per_s", "prefill_tokens_per_s")
    return ", ".join(f"{k.removesuffix('_tokens_per_s')} {answer[k]:,.1f} tokens/s" for k in rates if answer[k])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=1, help="fresh processes of each way of each command (default 1)")
    runs = parser.parse_args().runs
    for name, arguments in COMMANDS.items():
        times: dict[str, list[float]] = {"formulas": [], "traced": []}
        answers: dict[str, dict[str, Any]] = {}
        for _ in range(runs):
            for way, extra in (("formulas", []), ("traced", ["--trace"])):
                wall, answers[way] = run_once([*arguments, *extra])
                times[way].append(wall)
        if "formulas committed" not in answers["formulas"]["method"]:
            sys.exit(f"{name}: answered without the formulas ({answers['formulas']['method']}): is the table stale?")
        formulas, traced = (statistics.median(times[way]) for way in ("formulas", "traced"))
        print(f"{name}")
        print(f"  from the formulas {formulas:6.2f} s   {summary(answers['formulas'])}")
        print(f"  traced            {traced:6.2f} s   {summary(answers['traced'])}")
        print(f"  traced / formulas {traced / formulas:6.1f}x")


if __name__ == "__main__":
    main()
