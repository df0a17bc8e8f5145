"""Inference in PyTorch: images/s and latency (p50, p90) of resnet50 and mobilenet_v2.

Every forward call is timed on its own and synchronised (the Timer with one call per sample),
so each sample is one request's latency: p50 and p90 come straight from those per-call times,
and throughput is batch size / median latency. Batch 1 is the latency case, the large batch
the throughput case. Inputs are random 224x224 RGB images already on the device, fp32,
``model.eval()`` under ``torch.inference_mode()``. The Keras twin is `inference_keras`.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from typing import Any

from benchlib.backends import require
from benchlib.backends import torch_backend as tb
from benchlib.core.timing import Measurement, Timer
from benchlib.models.vision import INPUT_SIDE, torch_classifier
from benchlib.results.schema import MeasurementRecord, Metric
from benchlib.workloads import (
    INFERENCE_THROUGHPUT,
    Chart,
    Plot,
    PredictionCheck,
    RunContext,
    ScorePart,
    Workload,
    register,
)
from benchlib.workloads._record import stats_of

NAME = "inference"
THROUGHPUT = Metric(name="throughput", unit="images/s", higher_is_better=True)
P50 = Metric(name="latency_p50", unit="ms", higher_is_better=False)
P90 = Metric(name="latency_p90", unit="ms", higher_is_better=False)
MODELS = ["resnet50", "mobilenet_v2"]
# One call per sample (target_block_s 0): a sample's time is one request's latency.
PER_CALL = {"target_block_s": 0.0}
CHART = Chart(
    NAME,
    "Inference latency at batch 1 (p50, tick at p90)",
    "model",
    axis_title="ms",
    label="{value} ms",
    tick_title="p90",
)
PLOTS = (
    Plot(
        CHART,
        "latency_p50",
        "{param_model} · {framework_name}",
        where={"param_batch_size": 1},
        tick_metric="latency_p90",
    ),
)


def score_parts(framework: str) -> tuple[ScorePart, ...]:
    """Per model: batch-1 median latency and batch-32 images/s, as the standard suite measures them."""
    return tuple(
        part
        for model in MODELS
        for part in (
            ScorePart(
                f"{model}-{framework}-b1",
                "inference",
                "latency_p50",
                {"model": model, "batch_size": 1},
                f"{model} inference, batch 1, median latency ({framework})",
            ),
            ScorePart(
                f"{model}-{framework}-b32",
                "inference",
                "throughput",
                {"model": model, "batch_size": 32},
                f"{model} inference, batch 32, images/s ({framework})",
            ),
        )
    )


# Quick and full change the standard size's large batch and timer.
STANDARD: dict[str, Any] = {
    "models": MODELS,
    "batches": [1, 32],
    "side": INPUT_SIDE,
    "timer": PER_CALL | {"warmup_s": 0.5, "min_time_s": 1.0, "max_time_s": 4.0, "min_samples": 5, "max_samples": 200},
}
SIZES: dict[str, dict[str, Any]] = {
    "quick": {
        **STANDARD,
        "batches": [1, 8],
        "timer": PER_CALL | {"warmup_s": 0.1, "min_time_s": 0.2, "max_time_s": 1.0, "min_samples": 5},
    },
    "standard": STANDARD,
    "full": {
        **STANDARD,
        "batches": [1, 128],
        "timer": PER_CALL
        | {"warmup_s": 2.0, "min_time_s": 3.0, "max_time_s": 10.0, "min_samples": 10, "max_samples": 1000},
    },
}


def p90(m: Measurement) -> float:
    """The 90th percentile of the per-call times (the largest time when there are fewer than 2)."""
    if m.n < 2:
        return m.max
    return statistics.quantiles(m.times, n=10, method="inclusive")[8]


def inference_records(
    *, framework: str, model: str, batch: int, m: Measurement, device: str, device_name: str, extra: dict[str, Any]
) -> list[MeasurementRecord]:
    base = dict(
        workload=NAME,
        framework=framework,
        device=device,
        device_name=device_name,
        dtype="fp32",
        params={"mode": "inference", "model": model, "batch_size": batch, "data": "synthetic", **extra},
    )
    return [
        MeasurementRecord(**base, metric=THROUGHPUT, value=batch / m.median, stats=stats_of(m)),
        MeasurementRecord(**base, metric=P50, value=m.median * 1e3),
        MeasurementRecord(**base, metric=P90, value=p90(m) * 1e3),
    ]


def each_model(
    params: dict[str, Any],
    measure: Callable[[str, int], list[MeasurementRecord]],
    is_oom: Callable[[BaseException], bool],
    failed: Callable[[str, int, str], MeasurementRecord],
) -> list[MeasurementRecord]:
    """Records for every model and batch size.

    Out of memory at one batch size is an ``oom`` record for it and the others go on; any other
    error fails the workload with the model and batch in the message.
    """
    records = []
    for model in params["models"]:
        for batch in params["batches"]:
            try:
                records += measure(model, batch)
            except Exception as exc:
                if is_oom(exc):
                    records.append(failed(model, batch, f"{NAME}: {model} at batch {batch}: out of memory: {exc}"))
                    continue
                raise RuntimeError(f"{model} at batch {batch}: {type(exc).__name__}: {exc}") from exc
    return records


def oom_record(framework: str, device: str, device_name: str) -> Callable[[str, int, str], MeasurementRecord]:
    def failed(model: str, batch: int, message: str) -> MeasurementRecord:
        return MeasurementRecord(
            workload=NAME,
            framework=framework,
            device=device,
            device_name=device_name,
            dtype="fp32",
            params={"mode": "inference", "model": model, "batch_size": batch},
            metric=THROUGHPUT,
            status="oom",
            message=message,
        )

    return failed


def run(ctx: RunContext, params: dict[str, Any]) -> list[MeasurementRecord]:
    torch = tb.import_torch()
    require("torchvision", "install it with `pip install 'benchlib[fastai]'` (it brings torchvision)")
    sync, sync_name = tb.sync_function(ctx.device)
    name = tb.device_name(ctx.device, ctx.cpu_name)
    side = params["side"]

    def measure(model_name: str, batch: int) -> list[MeasurementRecord]:
        model = torch_classifier(model_name).to(ctx.device).eval()
        x = torch.randn(batch, 3, side, side, device=ctx.device)
        with torch.inference_mode():
            m = Timer(
                lambda: model(x), sync=sync, sync_name=sync_name, threads=tb.threads(), label=f"{model_name} b{batch}"
            ).measure(**params["timer"])
        return inference_records(
            framework="torch",
            model=model_name,
            batch=batch,
            m=m,
            device=ctx.device,
            device_name=name,
            extra={"side": side},
        )

    def oom(exc: BaseException) -> bool:
        if tb.is_oom(exc):
            tb.empty_cache(ctx.device)
            return True
        return False

    return each_model(params, measure, oom, oom_record("torch", ctx.device, name))


WORKLOAD = register(
    Workload(
        name=NAME,
        framework="torch",
        description="Inference images/s and p50/p90 latency of resnet50 and mobilenet_v2 at batch 1 and a large batch (PyTorch).",
        metric=THROUGHPUT,
        sizes=SIZES,
        run=run,
        expected_s={"quick": 9.4, "standard": 38.1},
        suites=("standard", "full"),
        plots=PLOTS,
        score=score_parts("torch"),
        checks=(PredictionCheck(INFERENCE_THROUGHPUT, metric=THROUGHPUT.name),),
    )
)
