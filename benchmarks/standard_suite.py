"""Run the standard suite and report its wall time against the 10-minute target, each workload's time, and the score.

On the 2-core machines that build the site, `benchlib run --suite standard` must end within 10
minutes (issue 23); on a free T4 it takes a few. This runs the suite as that command does, each
workload in its own process, and prints per workload its wall time, the time benchlib expected
before the run (what `benchlib run` prints) and its share of the suite, then the wall time as a
ratio of the target. It asserts nothing: on a shared machine, compare the ratios.

Run:

    python benchmarks/standard_suite.py [--device auto|cpu|cuda|mps] [--out results] [--only NAME ...]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from benchlib.derive.score import score
from benchlib.measure.budget import suite_estimate
from benchlib.measure.runner import resolve_device, run_suite, select_workloads
from benchlib.probe import probe_machine
from benchlib.workloads import Workload

TARGET_S = 600.0
SIZE = "standard"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="auto")
    parser.add_argument("--out", type=Path, default=Path("results"))
    parser.add_argument("--only", action="append", help="time only this workload (repeatable)")
    parser.add_argument("--no-isolate", action="store_true", help="run every workload in this process")
    args = parser.parse_args()
    isolate = not args.no_isolate

    workloads = select_workloads(SIZE, args.only)
    machine = probe_machine(results_dir=str(args.out))
    device = resolve_device(args.device)
    expected = suite_estimate(workloads, SIZE, args.out / machine.id, isolate=isolate)
    print(f"machine: {machine.label} ({machine.id}); {len(workloads)} workloads on {device}", flush=True)
    print(f"expected: {expected.seconds:.0f} s ({'; '.join(expected.basis())})", flush=True)
    started = time.perf_counter()

    def on_start(w: Workload) -> None:
        print(f"  {w.name:<26} ...", end="", flush=True)

    def on_done(w: Workload, records: list) -> None:
        bad = sorted({r.status for r in records if r.status != "ok"})
        note = f"  ({len(records)} records; not ok: {', '.join(bad)})" if bad else f"  ({len(records)} records)"
        print(f" {time.perf_counter() - started:7.1f} s elapsed{note}", flush=True)

    outcome = run_suite(
        workloads,
        suite=SIZE,
        device=args.device,
        machine=machine,
        out_dir=args.out,
        isolate=isolate,
        on_start=on_start,
        on_done=on_done,
    )
    print(f"\nwrote {outcome.path}")
    print(f"{'workload':<28}{'seconds':>9}{'expected':>10}{'share':>8}")
    for name, seconds in outcome.per_workload_s.items():
        guess = expected.estimates[name].seconds
        print(f"{name:<28}{seconds:9.1f}{guess:10.1f}{seconds / outcome.wall_s:8.0%}")
    print(f"{'wall time':<28}{outcome.wall_s:9.1f}{expected.seconds:10.1f}")
    print(f"{'target':<28}{TARGET_S:9.1f}")
    verdict = "within" if outcome.wall_s <= TARGET_S else "over"
    print(f"{'wall time / target':<28}{outcome.wall_s / TARGET_S:9.2f}  ({verdict} the 10-minute target)")
    try:
        print(score(outcome.results.measurements))
    except (FileNotFoundError, ValueError) as exc:
        print(f"no score: {exc}")


if __name__ == "__main__":
    main()
