"""Runs for the score's tests: one record per score test, a given factor faster than the reference.

The values are test inputs, not measurements.
"""

from __future__ import annotations

from datetime import datetime, timezone

from site_samples import measurement, results_file

from benchlib.derive.score import SCORE_TESTS
from benchlib.results.schema import Conditions, Machine, MeasurementRecord, Metric, ResultsFile, RunPlan

HIGHER = {"throughput": True, "latency_p50": False, "epoch_time": False}


def records(
    factor: float = 1.0, skip: set[str] | tuple = (), per_test: dict[str, float] | None = None
) -> list[MeasurementRecord]:
    """One record per score test; ``factor`` = how many times faster than the reference."""
    out = []
    for i, t in enumerate(SCORE_TESTS):
        if t.key in skip:
            continue
        ref = 10.0 + i
        f = (per_test or {}).get(t.key, factor)
        value = ref * f if HIGHER[t.metric] else ref / f
        metric = Metric(name=t.metric, unit="u", higher_is_better=HIGHER[t.metric])
        params = dict(t.params) | {"extra": "ignored"}
        out.append(
            measurement(t.workload, metric, value, framework=t.framework, device="cpu", dtype=t.dtype, params=params)
        )
    return out


def results(measurements: list[MeasurementRecord], machine: Machine, label: str = "Reference CPU") -> ResultsFile:
    return results_file(
        machine.model_copy(update={"label": label}),
        measurements,
        run_id="r1",
        created=datetime(2026, 11, 21, tzinfo=timezone.utc),
        suite="standard",
        complete=True,
    )


BUSY = ["other processes took 40% of the CPU (0.80 CPUs on average)"]


def with_conditions(run: ResultsFile, busy: dict[str, list[str]] | None = None) -> ResultsFile:
    """``run`` as `benchlib run` writes it now: conditions per workload, and the run-level flag."""
    names = sorted({r.workload for r in run.measurements})
    busy = busy or {}
    conditions = {
        n: Conditions(seconds=10.0, others_cpu_s=8.0 if n in busy else 0.01, disturbed=busy.get(n, [])) for n in names
    }
    plan = RunPlan(
        workloads=names, size="standard", device="cpu", wall_s={n: 10.0 for n in names}, conditions=conditions
    )
    return run.model_copy(update={"plan": plan, "disturbed": bool(busy)})
