"""Elementwise add throughput: an example of a complete workload module.

Save a file like this as benchlib/workloads/<name>.py; it is registered on import, and its
chart appears on the Results page with no other file edited.
"""

from __future__ import annotations

from typing import Any

from benchlib.backends import torch_backend as tb
from benchlib.core.timing import Timer
from benchlib.results.schema import MeasurementRecord, Metric
from benchlib.workloads import Chart, Plot, RunContext, Workload, register
from benchlib.workloads._record import stats_of

METRIC = Metric(name="throughput", unit="Gelem/s", higher_is_better=True)
# One chart for this workload: a bar per machine and dtype (the records' "dtype" field).
CHART = Chart("example_add", "Elementwise add throughput", "dtype")


def run(ctx: RunContext, params: dict[str, Any]) -> list[MeasurementRecord]:
    torch = tb.import_torch()
    sync, sync_name = tb.sync_function(ctx.device)
    x = torch.randn(params["elements"], device=ctx.device)
    m = Timer(lambda: x.add(1.0), sync=sync, sync_name=sync_name, threads=tb.threads()).measure(**params["timer"])
    return [
        MeasurementRecord(
            workload="example_add", framework="torch", device=x.device.type,
            device_name=tb.device_name(ctx.device, ctx.cpu_name), dtype="fp32",
            params={"elements": params["elements"]}, metric=METRIC,
            value=params["elements"] / m.median / 1e9, stats=stats_of(m),
        )
    ]


register(
    Workload(
        name="example_add",
        framework="torch",
        description="Elementwise add throughput (an example for contributors).",
        metric=METRIC,
        sizes={
            "quick": {"elements": 1_000_000, "timer": {"warmup_s": 0.05, "max_time_s": 0.3}},
            "full": {"elements": 100_000_000, "timer": {"warmup_s": 0.5, "max_time_s": 2.0}},
        },
        run=run,
        suites=("full",),
        plots=(Plot(CHART, "throughput", "{dtype}"),),
    )
)
