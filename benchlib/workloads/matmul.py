"""Matrix multiply throughput in TFLOPS per dtype, the maximum over a small shape sweep.

Like the MAMF finder, the best rate over several shapes is what the device can achieve; unlike
it, the sweep is a handful of shapes so it fits in seconds. Efficiency is the best rate divided
by the device's theoretical peak where the specs table knows it.

On a CPU the standard sweep stops at 1024 (`CPU_STANDARD`). A CPU's fp32 rate peaks by then: the
reference CPU's best fp32 size of 1024, 2048 and 4096 was 1024. And a CPU without native bf16
(no AVX-512 BF16 or AMX) emulates it: on a 2-core build machine without it, a 1024 matmul ran at
0.6 GFLOPS in bf16 against 43 in fp32, so one 4096 bf16 call would take about four minutes.
"""

from __future__ import annotations

from typing import Any

from benchlib.backends import torch_backend as tb
from benchlib.catalog.gpus import peak_tflops
from benchlib.core.timing import Timer
from benchlib.results.schema import MeasurementRecord, Metric
from benchlib.workloads import LONGER_SWEEP, PEAK_COMPUTE, Chart, Plot, PredictionCheck, RunContext, Workload, register
from benchlib.workloads._record import stats_of

METRIC = Metric(name="throughput", unit="TFLOPS", higher_is_better=True)
# The standard timer over the quick sizes (see the module note).
CPU_STANDARD = {"sizes": [256, 512, 1024]}
CHART = Chart("matmul", "Matrix multiply throughput", "dtype", setting_order=("fp32", "tf32", "fp16", "bf16"))


def run(ctx: RunContext, params: dict[str, Any]) -> list[MeasurementRecord]:
    torch = tb.import_torch()
    sync, sync_name = tb.sync_function(ctx.device)
    name = tb.device_name(ctx.device, ctx.cpu_name)
    records = []
    for dtype in tb.supported_dtypes(ctx.device):
        if params.get("dtypes") and dtype not in params["dtypes"]:
            continue
        tb.set_tf32(dtype == "tf32")
        best = None
        for n in params["sizes"]:
            a = torch.randn(n, n, device=ctx.device, dtype=tb.torch_dtype(dtype))
            b = torch.randn(n, n, device=ctx.device, dtype=tb.torch_dtype(dtype))
            out = torch.empty(n, n, device=ctx.device, dtype=tb.torch_dtype(dtype))
            timer = Timer(
                lambda a=a, b=b, out=out: torch.matmul(a, b, out=out),
                sync=sync,
                sync_name=sync_name,
                threads=tb.threads(),
                label=f"matmul {n} {dtype}",
            )
            m = timer.measure(**params["timer"])
            tflops = 2 * n**3 / m.median / 1e12
            if best is None or tflops > best[0]:
                best = (tflops, n, m, str(out.device.type))
        tb.set_tf32(False)
        tflops, n, m, ran_on = best
        records.append(
            MeasurementRecord(
                workload="matmul",
                framework="torch",
                device=ran_on,
                device_name=name,
                dtype=dtype,
                params={"n": n, "sizes": params["sizes"]},
                metric=METRIC,
                value=tflops,
                stats=stats_of(m),
                peak=peak_tflops(name, dtype) if ran_on != "cpu" else None,
            )
        )
    return records


register(
    Workload(
        name="matmul",
        framework="torch",
        description="Square matmul TFLOPS per dtype (fp32, tf32, fp16, bf16), best over a shape sweep.",
        metric=METRIC,
        sizes={
            "quick": {"sizes": [256, 512, 1024], "timer": {"warmup_s": 0.05, "max_time_s": 0.6}},
            "standard": {"sizes": [1024, 2048, 4096], "timer": {"warmup_s": 0.2, "max_time_s": 1.5}},
            "full": {"sizes": [2048, 4096, 8192, 16384], "timer": {"warmup_s": 1.0, "max_time_s": 3.0}},
        },
        run=run,
        expected_s={"quick": 2.9, "standard": 3.1},
        device_sizes={"cpu": {"standard": CPU_STANDARD}},
        plots=(Plot(CHART, "throughput", "{dtype}"),),
        # A GPU's best rate against its specs; a CPU's peak isn't in them. A longer sweep, run beside
        # a run's own, shows how much of the best its sizes reach.
        checks=(
            PredictionCheck(PEAK_COMPUTE, metric=METRIC.name, device="cuda"),
            PredictionCheck(LONGER_SWEEP, metric=METRIC.name),
        ),
    )
)
