"""Mixed precision in PyTorch: the Fashion-MNIST CNN's training step in fp32 and with autocast.

fp16 runs under ``torch.autocast`` with ``torch.amp.GradScaler``; bf16 under autocast alone
(bf16 has fp32's exponent range, so gradients don't underflow). A dtype runs only where the
device has it: fp16 on CUDA and MPS, bf16 on the CPU and on CUDA compute capability >= 8.

The speedup is fp32 step time / mixed-precision step time, both measured in the same run on
fresh copies of the model, so it is a ratio of like with like. The Keras twin is `amp_keras`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from benchlib.backends import torch_backend as tb
from benchlib.core.timing import Timer
from benchlib.models import fashion_mnist as fm
from benchlib.models.training import Step, torch_step
from benchlib.results.schema import MeasurementRecord, Metric
from benchlib.workloads import Chart, Plot, RunContext, Workload, register
from benchlib.workloads._record import stats_of

NAME = "amp"
SPEEDUP = Metric(name="speedup", unit="x", higher_is_better=True)
STEP_TIME = Metric(name="step_time", unit="ms", higher_is_better=False)
AMP_DTYPES = ("fp16", "bf16")
CHART = Chart(
    NAME,
    "Mixed-precision speedup over fp32",
    "setting",
    axis_title="speedup (×; 1 = no gain)",
    label="{value}×",
    rule_at=1.0,
)
PLOTS = (Plot(CHART, "speedup", "{framework_name} · {dtype}"),)

SIZES: dict[str, dict[str, Any]] = {
    "quick": {
        "batch_size": 32,
        "train_samples": 128,
        "dtypes": list(AMP_DTYPES),
        "timer": {"warmup_s": 0.1, "min_time_s": 0.1, "max_time_s": 1.0, "min_samples": 3, "target_block_s": 0.1},
    },
    "standard": {
        "batch_size": 128,
        "train_samples": 1024,
        "dtypes": list(AMP_DTYPES),
        "timer": {"warmup_s": 1.0, "min_time_s": 2.0, "max_time_s": 8.0, "min_samples": 3, "target_block_s": 0.5},
    },
    "full": {
        "batch_size": 1024,
        "train_samples": 8192,
        "dtypes": list(AMP_DTYPES),
        "timer": {"warmup_s": 3.0, "min_time_s": 5.0, "max_time_s": 20.0, "min_samples": 5, "target_block_s": 1.0},
    },
}


def amp_records(
    *,
    framework: str,
    make_step: Callable[[str | None], Step],
    available: list[str],
    why_not: str,
    sync: Callable[[], None],
    sync_name: str,
    threads: int | None,
    device: str,
    device_name: str,
    params: dict[str, Any],
) -> list[MeasurementRecord]:
    """Step times for fp32 and each available mixed-precision dtype, and each one's speedup.

    A requested dtype the device lacks gets a ``skipped`` record saying why.
    """
    base = dict(workload=NAME, framework=framework, device=device, device_name=device_name)
    # Random data of Fashion-MNIST's shape: only the speed matters here.
    common = {"mode": "training", "model": "cnn_fashion_mnist", "batch_size": params["batch_size"], "data": "synthetic"}

    def measure(amp: str | None) -> tuple[float, MeasurementRecord]:
        step = make_step(amp)
        m = Timer(
            step.run, sync=sync, sync_name=sync_name, threads=threads, label=f"{NAME} {framework} {amp or 'fp32'}"
        ).measure(**params["timer"])
        record = MeasurementRecord(
            **base,
            dtype=amp or "fp32",
            params=common | step.details,
            metric=STEP_TIME,
            value=m.median * 1e3,
            stats=stats_of(m),
        )
        return m.median, record

    fp32_s, fp32_record = measure(None)
    records = [fp32_record]
    for dtype in params["dtypes"]:
        if dtype not in available:
            records.append(
                MeasurementRecord(
                    **base,
                    dtype=dtype,
                    params=common,
                    metric=SPEEDUP,
                    status="skipped",
                    message=f"{NAME}: {dtype} mixed precision is not available on {device_name}: {why_not}",
                )
            )
            continue
        amp_s, amp_record = measure(dtype)
        records.append(amp_record)
        records.append(
            MeasurementRecord(
                **base,
                dtype=dtype,
                metric=SPEEDUP,
                value=fp32_s / amp_s,
                params=common | {"fp32_step_ms": fp32_s * 1e3, "amp_step_ms": amp_s * 1e3, **amp_record.params},
            )
        )
    return records


def run(ctx: RunContext, params: dict[str, Any]) -> list[MeasurementRecord]:
    tb.import_torch()
    sync, sync_name = tb.sync_function(ctx.device)
    x, y = fm.synthetic(params["train_samples"])
    available = [d for d in tb.supported_dtypes(ctx.device) if d in AMP_DTYPES]
    return amp_records(
        framework="torch",
        make_step=lambda amp: torch_step(fm.torch_model(), x, y, params["batch_size"], ctx.device, amp),
        available=available,
        why_not="autocast here runs only "
        + (", ".join(available) or "fp32")
        + " (fp16 needs CUDA or MPS; bf16 needs a CPU or CUDA compute capability 8.0+)",
        sync=sync,
        sync_name=sync_name,
        threads=tb.threads(),
        device=ctx.device,
        device_name=tb.device_name(ctx.device, ctx.cpu_name),
        params=params,
    )


WORKLOAD = register(
    Workload(
        name=NAME,
        framework="torch",
        description="fp32 vs mixed-precision (autocast fp16 + GradScaler, bf16) training step of the Fashion-MNIST CNN, and the speedup.",
        metric=SPEEDUP,
        sizes=SIZES,
        run=run,
        expected_s={"quick": 2.7, "standard": 8.6},
        suites=("standard", "full"),
        plots=PLOTS,
    )
)
