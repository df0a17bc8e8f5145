"""Run the standard suite several times and print each run's score, whether it was disturbed, and the spread.

The spread is (max - min) / median of the complete scores; the goal is 3 % or less on a quiet
machine. With --write-reference, the quietest run that was not disturbed becomes the score's
reference (benchlib/data/reference/<machine id>.json, shipped with the package, replacing the one
there). Run on a quiet machine:

    python benchmarks/score_spread.py [--runs 3] [--device auto|cpu|cuda|mps] [--out DIR] [--write-reference]

--suite quick and --only check the script itself in seconds; such runs have no score.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from benchlib.derive.score import Score, load_reference, reference_folder, score, untested, write_reference
from benchlib.measure.conditions import disturbed_line
from benchlib.measure.isolation import prestart
from benchlib.measure.runner import SUITES, preload_modules, run_suite, select_workloads
from benchlib.probe import probe_machine
from benchlib.results.schema import ResultsFile
from benchlib.workloads import Workload

GOAL = 0.03


@dataclass(frozen=True)
class Run:
    path: Path
    results: ResultsFile
    score: Score | None
    wall_s: float


def spread(values: list[float]) -> float | None:
    """(max - min) / median; None for fewer than two values."""
    return (max(values) - min(values)) / statistics.median(values) if len(values) >= 2 else None


def others_cpu_s(results: ResultsFile) -> float:
    """CPU seconds other processes used during the run's workloads (0 where not recorded)."""
    conditions = results.plan.conditions.values() if results.plan else []
    return sum(c.others_cpu_s or 0.0 for c in conditions)


def quietest(runs: list[Run]) -> Run | None:
    """The undisturbed run with every score test during which other processes used the least CPU."""
    eligible = [r for r in runs if r.results.disturbed is False and not untested(r.results)]
    return min(eligible, key=lambda r: others_cpu_s(r.results), default=None)


def yardstick(runs: list[tuple[Path, ResultsFile, float]]) -> tuple[ResultsFile | None, str]:
    """The reference, or where there is none, a run with every test (the spread is the same), and which it is."""
    try:
        reference = load_reference()
        return reference, f"scores relative to {reference.machine.label}, measured {reference.created:%Y-%m-%d} (= 100)"
    except ValueError as exc:
        problem = f"no reference ({exc})"
    for i, (_, results, _) in enumerate(runs, 1):
        if not untested(results):
            # Only the ratios between runs matter here, so a disturbed run serves as well as any.
            return results.model_copy(
                update={"disturbed": None}
            ), f"{problem}; scores relative to run {i} (= 100), only to compare the runs"
    return None, f"{problem}; no run has every score test, so there are no scores"


def _percent(value: float | None) -> str:
    return "—" if value is None else f"{value:.1%}"


def report(runs: list[Run]) -> list[str]:
    """The table of runs and the spread of each complete score, as lines."""
    lines = [f"{'run':<5}{'score':>8}{'training':>10}{'inference':>11}{'seconds':>9}  conditions"]
    for i, run in enumerate(runs, 1):
        s = run.score
        cells = [f"{v:.1f}" if v is not None else "—" for v in (s.value, s.training, s.inference)] if s else ["—"] * 3
        quiet = "not recorded" if run.results.disturbed is None else "disturbed" if run.results.disturbed else "quiet"
        lines.append(f"{i:<5}{cells[0]:>8}{cells[1]:>10}{cells[2]:>11}{run.wall_s:>9.0f}  {quiet}")
    for i, run in enumerate(runs, 1):
        lines.append(f"  run {i}: {run.path}")
        if run.score is not None and not run.score.complete:
            lines.append(f"    incomplete: missing {run.score.missing_text()}")
        line = disturbed_line(run.results)
        if line:
            lines.append(f"    {line}")
    complete = [r.score for r in runs if r.score is not None and r.score.complete]
    if len(complete) < 2:
        lines.append(f"spread: needs two complete scores, got {len(complete)}")
        return lines
    overall = spread([s.value for s in complete])
    lines.append(
        f"spread over {len(complete)} complete runs: score {_percent(overall)}, "
        f"training {_percent(spread([s.training for s in complete]))}, "
        f"inference {_percent(spread([s.inference for s in complete]))}; "
        f"goal {GOAL:.0%} or less: {'met' if overall is not None and overall <= GOAL else 'not met'}"
    )
    if any(r.results.disturbed for r in runs):
        lines.append(
            "some runs were disturbed: the spread says as much about the machine's other work as about benchlib"
        )
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="How many times to run the suite (default 3).")
    parser.add_argument("--suite", default="standard", choices=SUITES, help="Only the standard suite has a score.")
    parser.add_argument("--only", action="append", help="Run only this workload (repeatable); for checking the script.")
    parser.add_argument("--device", default="auto")
    parser.add_argument("--out", type=Path, help="Where the runs' files go (default: a new temporary folder).")
    parser.add_argument(
        "--write-reference",
        action="store_true",
        help=f"Make the quietest undisturbed run the score's reference, in {reference_folder()}.",
    )
    args = parser.parse_args(argv)
    if args.runs < 1:
        parser.error("--runs must be 1 or more")
    if args.write_reference and (args.suite != "standard" or args.only):
        parser.error("--write-reference needs the whole standard suite: drop --suite and --only")

    out = args.out or Path(tempfile.mkdtemp(prefix="benchlib-score-spread-"))
    workloads = select_workloads(args.suite, args.only)
    # The same process isolation as `benchlib run`, whose numbers the score is about.
    prestart(preload_modules(workloads))
    machine = probe_machine(results_dir=str(out))
    print(
        f"machine: {machine.label} ({machine.id}); {args.suite} suite, {len(workloads)} workloads, {args.runs} runs",
        flush=True,
    )

    done: list[tuple[Path, ResultsFile, float]] = []
    for n in range(1, args.runs + 1):
        started = time.perf_counter()

        def on_start(w: Workload) -> None:
            print(f"  run {n}: {w.name:<26}", end="", flush=True)  # noqa: B023 (used within this run)

        def on_done(w: Workload, records: list) -> None:
            print(f" {time.perf_counter() - started:7.1f} s", flush=True)  # noqa: B023 (used within this run)

        outcome = run_suite(
            workloads,
            suite=args.suite,
            device=args.device,
            machine=machine,
            out_dir=out,
            isolate=True,
            on_start=on_start,
            on_done=on_done,
        )
        done.append((outcome.path, outcome.results, outcome.wall_s))

    print()
    reference, relative_to = (
        yardstick(done) if args.suite == "standard" else (None, "no score: the score is defined on the standard suite")
    )
    print(relative_to)
    runs = [
        Run(path, results, score(results.measurements, reference) if reference else None, wall_s)
        for path, results, wall_s in done
    ]
    print("\n".join(report(runs)))
    if not args.write_reference:
        return 0
    chosen = quietest(runs)
    if chosen is None:
        print("no reference written: no run was both complete and undisturbed; run again on a quieter machine")
        return 1
    target = write_reference(chosen.path)
    print(f"wrote the new reference {target} (run {runs.index(chosen) + 1}); scores are now relative to it")
    return 0


if __name__ == "__main__":
    sys.exit(main())
