"""Run the standard suite and print its wall time, each workload's time, and the score.

The standard suite is sized to take a few minutes on a free T4; it must also finish on a CPU.
Run:

    python benchmarks/standard_suite.py [--device auto|cpu|cuda|mps] [--out results]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from benchlib.derive.score import score
from benchlib.measure.runner import run_suite, select_workloads
from benchlib.probe import probe_machine
from benchlib.workloads import Workload


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="auto")
    parser.add_argument("--out", type=Path, default=Path("results"))
    args = parser.parse_args()

    workloads = select_workloads("standard")
    machine = probe_machine(results_dir=str(args.out))
    print(f"machine: {machine.label} ({machine.id}); {len(workloads)} workloads", flush=True)
    started = time.perf_counter()

    def on_start(w: Workload) -> None:
        print(f"  {w.name:<26} ...", end="", flush=True)

    def on_done(w: Workload, records: list) -> None:
        bad = sorted({r.status for r in records if r.status != "ok"})
        note = f"  ({len(records)} records; not ok: {', '.join(bad)})" if bad else f"  ({len(records)} records)"
        print(f" {time.perf_counter() - started:7.1f} s elapsed{note}", flush=True)

    outcome = run_suite(
        workloads,
        suite="standard",
        device=args.device,
        machine=machine,
        out_dir=args.out,
        on_start=on_start,
        on_done=on_done,
    )
    print(f"\nwrote {outcome.path}")
    print(f"{'workload':<28}{'seconds':>9}")
    for name, seconds in outcome.per_workload_s.items():
        print(f"{name:<28}{seconds:9.1f}")
    print(f"{'wall time':<28}{outcome.wall_s:9.1f}")
    try:
        print(score(outcome.results.measurements))
    except (FileNotFoundError, ValueError) as exc:
        print(f"no score: {exc}")


if __name__ == "__main__":
    main()
