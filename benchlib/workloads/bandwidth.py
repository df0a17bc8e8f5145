"""Memory bandwidth: device-to-device copy, and host<->device transfers where there is a device.

A copy reads and writes every byte once, so bytes moved = 2 x buffer size (the convention of
STREAM's copy and of nvbandwidth's device-local copy).
"""

from __future__ import annotations

from typing import Any

from benchlib.backends import torch_backend as tb
from benchlib.catalog.gpus import peak_bandwidth_gbps
from benchlib.core.timing import Timer
from benchlib.results.schema import MeasurementRecord, Metric
from benchlib.workloads import Chart, Plot, RunContext, Workload, register
from benchlib.workloads._record import stats_of

METRIC = Metric(name="bandwidth", unit="GB/s", higher_is_better=True)
DIRECTIONS = {"device_copy": "copy on device", "host_to_device": "host → device", "device_to_host": "device → host"}
CHART = Chart("bandwidth", "Memory bandwidth", "direction", setting_order=tuple(DIRECTIONS.values()))


def run(ctx: RunContext, params: dict[str, Any]) -> list[MeasurementRecord]:
    torch = tb.import_torch()
    sync, sync_name = tb.sync_function(ctx.device)
    nbytes = int(params["mib"] * 2**20)
    name = tb.device_name(ctx.device, ctx.cpu_name)
    src = torch.empty(nbytes, dtype=torch.uint8, device=ctx.device).fill_(1)
    dst = torch.empty_like(src)
    cases = {"device_copy": (lambda: dst.copy_(src), 2 * nbytes, str(dst.device.type))}
    if ctx.device != "cpu":
        host = torch.empty(nbytes, dtype=torch.uint8, pin_memory=ctx.device == "cuda").fill_(1)
        cases["host_to_device"] = (lambda: src.copy_(host, non_blocking=True), nbytes, str(src.device.type))
        cases["device_to_host"] = (lambda: host.copy_(src, non_blocking=True), nbytes, str(src.device.type))
    records = []
    for direction, (fn, moved, ran_on) in cases.items():
        m = Timer(fn, sync=sync, sync_name=sync_name, threads=tb.threads(), label=direction).measure(**params["timer"])
        records.append(
            MeasurementRecord(
                workload="bandwidth",
                framework="torch",
                device=ran_on,
                device_name=name,
                dtype="uint8",
                params={"direction": direction, "mib": params["mib"]},
                metric=METRIC,
                value=moved / m.median / 1e9,
                stats=stats_of(m),
                # Only on-device copies are bounded by the memory's bandwidth; transfers by the bus.
                peak=peak_bandwidth_gbps(name) if direction == "device_copy" and ran_on != "cpu" else None,
            )
        )
    return records


register(
    Workload(
        name="bandwidth",
        framework="torch",
        description="Device copy GB/s, plus host-to-device and device-to-host GB/s on accelerators.",
        metric=METRIC,
        sizes={
            "quick": {"mib": 64, "timer": {"warmup_s": 0.05, "max_time_s": 0.6}},
            "standard": {"mib": 256, "timer": {"warmup_s": 0.2, "max_time_s": 1.5}},
            "full": {"mib": 1024, "timer": {"warmup_s": 0.5, "max_time_s": 3.0}},
        },
        run=run,
        expected_s={"quick": 0.4, "standard": 0.7},
        plots=(Plot(CHART, "bandwidth", "{param_direction}", setting_names=DIRECTIONS),),
    )
)
