"""How far tracing could bring `benchlib tables --fresh` down, against issue 37's 5-minute target.

A formula's terms are fixed by traces (`benchlib.predict.formula`): today, for each traced depth
and range of lengths, 7 sizes for the memory formula (and a first step left out) and 7 for the time
formula, each a pass of its own. However the trace were made (one symbolic pass per depth and
side, memory and time counted together), it would still run the model's step at least once per
traced depth, per range of lengths, for one sequence and for several, after building that model.
This script times that floor: a plain step under fake tensors, with no memory tracker and no
op counter, at the smallest size each side is traced at, plus building the traced model. It times
today's entry (`benchlib.predict.formula_json.entry`) in the same run, for the ratio.

Measured per model for QLoRA (standing for the 10 fine-tuning setups) and bf16 inference (for the
13 inference setups); both totals are the sum of the setups so weighted over the models measured,
spread over the machine's cores as `benchlib tables` spreads its jobs. By default over a sample of
four models (``--all``: every shipped one), scaled to all of them by kind of model (dense, with
sliding-window layers, or mixture of experts: their entries' costs differ tenfold), each kind by
how many shipped models are of it over how many the sample holds. QLoRA traces the most ops of
the fine-tuning setups, so both totals lean high; the ratio between them is the figure to read.

    .venv/bin/python benchmarks/formula_floor.py [--models NAME ...]
"""

from __future__ import annotations

import argparse
import os
import time
import warnings

TARGET_S = 5 * 60
# What each measured setup stands for: the picker's setups by kind (`llm_formulas.SETUPS`).
MEASURED = {"qlora": "fine-tuning", "inference-bf16": "inference"}
# The sample the default run times: a small and an 8B dense model, a sliding-window one, a MoE.
SAMPLE = ("qwen2.5-0.5b", "llama-3.1-8b", "gemma-3-12b", "qwen3-30b-a3b")


def floor_seconds(name: str, key: str) -> float:
    """Building each traced depth's model and running its step once per side and range of lengths."""
    import torch

    from benchlib.catalog.language_models import resolve_model
    from benchlib.predict.formula import derived_at, length_pieces
    from benchlib.predict.llm_memory import StepTracer
    from benchlib.predict.llm_speed import plan_of
    from benchlib.tables.llm_formulas import SETUPS

    model, setup = resolve_model(name), SETUPS[key]
    started = time.perf_counter()
    for _, lengths in length_pieces(model):
        for layers in plan_of(model).layers:
            tracer = StepTracer(model, setup, layers)
            for one in (True, False):
                batch, length = derived_at(one, lengths)[0]
                inputs = tracer.inputs(batch, length)
                with tracer.mode:
                    if setup.trains:
                        tracer.forward_backward(inputs)
                        tracer.optimizer_step()
                    else:
                        filled = tracer.prefill(inputs)
                        cache = getattr(filled, "past_key_values", None)
                        if cache is not None:
                            with torch.no_grad():
                                tracer.model(
                                    input_ids=inputs["input_ids"][:, :1], past_key_values=cache, use_cache=True
                                )
    return time.perf_counter() - started


def entry_seconds(name: str, key: str) -> float:
    from benchlib.predict.formula_json import entry
    from benchlib.tables.llm_formulas import SETUPS

    started = time.perf_counter()
    entry(name, SETUPS[key])
    return time.perf_counter() - started


def kind_of(name: str) -> str:
    """The kind of model whose entries cost alike: sliding-window layers trace two ranges of lengths."""
    from benchlib.catalog.language_models import resolve_model

    model = resolve_model(name)
    return "sliding window" if model.sliding_window else "mixture of experts" if model.experts else "dense"


def setup_counts() -> dict[str, int]:
    from benchlib.tables.llm_formulas import SETUPS

    kinds = {kind: 0 for kind in MEASURED.values()}
    for setup in SETUPS.values():
        kinds["fine-tuning" if setup.trains else "inference"] += 1
    return kinds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", nargs="+", metavar="NAME", help=f"the models to time (default: {' '.join(SAMPLE)})")
    parser.add_argument(
        "--all",
        action="store_true",
        help="every shipped model (over an hour: the entries are timed in this one process)",
    )
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    from benchlib.tables.llm_formulas import predicted_models

    known = predicted_models()
    names = known if args.all else (args.models or list(SAMPLE))
    unknown = [n for n in names if n not in known]
    if unknown:
        parser.error(f"--models: {', '.join(unknown)} is not a shipped model; choose from {', '.join(known)}")
    counts = setup_counts()
    kinds = {name: kind_of(name) for name in known}
    missing = sorted(set(kinds.values()) - {kinds[n] for n in names})
    if missing:
        parser.error(f"--models: add a model of each kind to scale from; none is {', '.join(missing)}")
    cores = os.cpu_count() or 1
    print(f"{cores} cores; per model, today's entry against the floor, in seconds of one core\n")
    print(f"{'model':<22}{'setup':<16}{'today':>8}{'floor':>8}{'ratio':>7}")
    # Per kind of model: the seconds of its sampled models' setups, weighted by how many setups each stands for.
    today: dict[str, float] = {}
    floor: dict[str, float] = {}
    for name in names:
        for key, kind in MEASURED.items():
            # The better of two: the first run of a process also imports peft and bitsandbytes.
            low = min(floor_seconds(name, key) for _ in range(2))
            now = entry_seconds(name, key)
            today[kinds[name]] = today.get(kinds[name], 0.0) + now * counts[kind]
            floor[kinds[name]] = floor.get(kinds[name], 0.0) + low * counts[kind]
            print(f"{name:<22}{key:<16}{now:8.1f}{low:8.1f}{now / low:7.1f}")
    now_sample, floor_sample = sum(today.values()) / cores, sum(floor.values()) / cores
    # Each kind scaled by how many shipped models it has over how many were timed.
    scale = {k: sum(v == k for v in kinds.values()) / sum(kinds[n] == k for n in names) for k in today}
    now_all = sum(today[k] * scale[k] for k in today) / cores
    floor_all = sum(floor[k] * scale[k] for k in floor) / cores
    print(
        f"\n{len(names)} models, {sum(counts.values())} setups each "
        f"({counts['fine-tuning']} fine-tuning as QLoRA, {counts['inference']} inference as bf16), "
        f"over {cores} cores:"
    )
    print(
        f"  today: {now_sample / 60:.1f} min; the floor: {floor_sample / 60:.1f} min ({now_sample / floor_sample:.1f}x less)"
    )
    print(
        f"  all {len(known)} models, scaled by kind: today about {now_all / 60:.0f} min, "
        f"the floor about {floor_all / 60:.0f} min (target: {TARGET_S / 60:.0f} min for every table)"
    )
    print(f"  the floor against the target: {floor_all / TARGET_S:.1f}x (1 or less meets it)")


if __name__ == "__main__":
    main()
