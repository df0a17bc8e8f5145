"""Does `benchlib campaign` keep its time targets, and what does starting a search at fit's guess save?

Two reports, each from one run on this machine:

1. The tiny campaign (`--device cpu --tiny`): wall time of each step and of the whole, against
   the 3-minute target (`--device cpu --tiny` must run the whole campaign in 3 minutes or less).
   On a GPU, `--gpu` runs the default campaign against its 9-minute target instead.
2. The largest-batch search started at `benchlib fit`'s prediction against the same search by
   doubling from batch 1, for the tiny campaign's models: trials and seconds, and their ratio.

Run:

    python benchmarks/campaign.py          # about 4 minutes on a 2-core CPU
    python benchmarks/campaign.py --gpu    # on a machine with a CUDA GPU
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from benchlib.derive.searched import fit_guess
from benchlib.measure import campaign as plan
from benchlib.measure.isolation import prestart
from benchlib.measure.max_batch import TrialRequest, search_from_guess, search_max_batch, trial_runner
from benchlib.probe import probe_machine

TARGET_S = {"tiny": 180.0, "gpu": 540.0}


def campaign_times(tiny: bool, device: str) -> None:
    kind = "tiny" if tiny else "gpu"
    prestart(plan.preload_modules(tiny))
    with tempfile.TemporaryDirectory() as folder:
        machine = probe_machine(results_dir=folder)
        budget = 10 * TARGET_S[kind]  # a generous budget: this measures the steps, it doesn't cut them
        state = plan.Campaign(
            device=device, tiny=tiny, out=Path(folder), machine=machine, budget_s=budget, guess=fit_guess
        )
        started: dict[str, float] = {}
        times: list[tuple[str, float]] = []

        def on_step(step: plan.Step, what: str) -> None:
            if what == "start":
                started[step.title] = time.perf_counter()
            elif what == "done":
                times.append((step.title, time.perf_counter() - started[step.title]))

        t0 = time.perf_counter()
        plan.run_campaign(state, plan.steps(tiny), on_step)
        total = time.perf_counter() - t0
    print(f"1. {kind} campaign on {machine.label}")
    for title, seconds in times:
        print(f"   {title:<28} {seconds:7.1f} s")
    verdict = "meets" if total <= TARGET_S[kind] else "MISSES"
    print(
        f"   {'total':<28} {total:7.1f} s  ({total / TARGET_S[kind]:.0%} of the {TARGET_S[kind]:.0f} s target: {verdict} it)"
    )


def guess_against_doubling(device: str) -> None:
    print("2. largest-batch search: from fit's guess against doubling from 1 (same request, same run)")
    requests = [
        TrialRequest(model=m, batch=1, size="small", dtype=d, device=device, memory_limit=plan.TINY_MEMORY_LIMIT)
        for m in plan.TINY_FIT_MODELS
        for d in plan.FIT_DTYPES
    ]
    requests.append(
        TrialRequest(
            model=plan.TINY_LANGUAGE_MODEL,
            batch=1,
            dtype="fp32",
            device=device,
            memory_limit=plan.TINY_MEMORY_LIMIT,
            seq_len=plan.TINY_SEQ_LEN,
        )
    )
    print(f"   {'search':<22} {'guess':>5} {'answer':>6} {'trials':>11} {'seconds':>15}")
    for request in requests:
        guess = fit_guess(request, None)
        t0 = time.perf_counter()
        seeded = search_from_guess(trial_runner(request), guess or 1)
        t1 = time.perf_counter()
        doubling = search_max_batch(trial_runner(request))
        t2 = time.perf_counter()
        agree = "" if seeded.max_batch == doubling.max_batch else f"  (doubling found {doubling.max_batch})"
        name = f"{request.model.rpartition(':')[2]} {request.dtype}"
        print(
            f"   {name:<22} {guess or '-':>5} {seeded.max_batch:>6} {len(seeded.trials):>4} vs {len(doubling.trials):>3}"
            f" {t1 - t0:6.1f} vs {t2 - t1:5.1f} s  ({(t1 - t0) / (t2 - t1):.0%} of the time){agree}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gpu", action="store_true", help="the default campaign on a CUDA GPU, against 9 minutes")
    args = parser.parse_args()
    campaign_times(tiny=not args.gpu, device="cuda" if args.gpu else "cpu")
    guess_against_doubling("cpu")


if __name__ == "__main__":
    main()
