"""How long does `benchlib fit` take to answer for a model? (target: 10 s or less per prediction, imports included)

Each mode is predicted in a fresh process, as a reader's command runs, with no trace cache; the
report splits the time into imports (torch and transformers; peft too for LoRA and QLoRA) and predicting (building
the model at 3 and 4 layers, tracing and searching for the largest batch or context). Also
prints a full-depth trace of one step for the same model, which reduced depth replaces.

    python benchmarks/llm_fit_speed.py [--model llama-3.3-70b] [--no-full-trace]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys

CHILD = """
import json, sys, time
started = time.perf_counter()
from benchlib.predict.llm_memory import LLMPredictor, StepTracer, make_setup, versions
from benchlib.catalog.language_models import resolve_model
from benchlib.catalog.gpus import find_gpu
from benchlib.predict.memory import gpu_memory
model, mode, full = sys.argv[1], sys.argv[2], sys.argv[3] == "full"
versions()
import transformers.models.llama.modeling_llama  # what building the model imports
if mode in ("lora", "qlora"):
    import peft  # only the adapter modes import it (the slowest import)
imported = time.perf_counter()
setup = make_setup(mode, seq_len=2048, grad_checkpointing=mode != "inference")
language_model = resolve_model(model)
if full:
    StepTracer(language_model, setup, None).peak(setup.seq_len if mode == "inference" else 1)
else:
    LLMPredictor(language_model, setup).predict(gpu_memory(find_gpu("T4")))
done = time.perf_counter()
print(json.dumps({"import_s": imported - started, "predict_s": done - imported}))
"""
TARGET_S = 10.0


def run(model: str, mode: str, full: bool) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, "-c", CHILD, model, mode, "full" if full else "reduced"],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="llama-3.1-8b")
    parser.add_argument(
        "--no-full-trace", action="store_true", help="skip the full-depth trace (minutes for a 70B model)"
    )
    args = parser.parse_args()
    print(f"{args.model}, 2,048 tokens, on a T4; seconds")
    print(f"{'mode':<10} {'imports':>8} {'predict':>8} {'total':>7}  target {TARGET_S:.0f} s in all")
    for mode in ("inference", "train", "lora", "qlora"):
        t = run(args.model, mode, full=False)
        verdict = "ok" if t["import_s"] + t["predict_s"] <= TARGET_S else "over"
        print(
            f"{mode:<10} {t['import_s']:>8.1f} {t['predict_s']:>8.1f} {t['import_s'] + t['predict_s']:>7.1f}  {verdict}"
        )
    if args.no_full_trace:
        return
    full = run(args.model, "qlora", full=True)
    print(f"one full-depth qlora trace at batch 1 instead: {full['predict_s']:.1f} s")


if __name__ == "__main__":
    main()
