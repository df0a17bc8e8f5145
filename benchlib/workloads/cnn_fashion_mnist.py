"""Training the seeds' Fashion-MNIST CNN in PyTorch: samples/s and time per epoch.

Seed 002 timed this network in Keras on Colab's GPU and TPU (Adam 1e-3, batch 1024); the
Keras twin is `cnn_fashion_mnist_keras`; the two share one chart.

A training step is timed with the Timer (steps grouped into blocks, one sync per block). An
epoch is Fashion-MNIST's 60 000 training images (``epoch_samples``) in whole batches: the
``full`` size times one real epoch end to end; smaller sizes multiply the median step time by
the steps in an epoch, and the record says which.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from benchlib.backends import torch_backend as tb
from benchlib.core.timing import Timer
from benchlib.models import fashion_mnist as fm
from benchlib.models.training import Step, torch_step
from benchlib.results.schema import MeasurementRecord, Metric
from benchlib.workloads import Chart, Plot, Rate, RunContext, ScorePart, Workload, register
from benchlib.workloads._record import stats_of
from benchlib.workloads.conv2d import NOT_FIT_MODELS

NAME = "cnn_fashion_mnist"
THROUGHPUT = Metric(name="throughput", unit="samples/s", higher_is_better=True)
EPOCH_TIME = Metric(name="epoch_time", unit="s", higher_is_better=False)
CHART = Chart(NAME, "Fashion-MNIST CNN training throughput", "framework", axis_title="samples/s")
PLOTS = (Plot(CHART, "throughput", "{framework_name} · batch {param_batch_size}"),)
# Seed 002 reports a total time for epochs x steps x batch samples (with Keras' per-epoch
# validation in it, so the rate it gives is a little low).
FROM_TOTAL_TIME = (Rate("throughput", "samples/s", of="train_time", count=("batch_size", "steps_per_epoch", "epochs")),)

SIZES: dict[str, dict[str, Any]] = {
    "quick": {
        "batch_size": 64,
        "train_samples": 256,
        "data": "auto",
        "real_epoch": False,
        "timer": {"warmup_s": 0.1, "min_time_s": 0.1, "max_time_s": 2.0, "min_samples": 3, "target_block_s": 0.1},
    },
    # A free T4 does the standard size in well under a minute; a 2-core CPU in about 20 s.
    "standard": {
        "batch_size": 256,
        "train_samples": 4096,
        "data": "auto",
        "real_epoch": False,
        "timer": {"warmup_s": 1.0, "min_time_s": 2.0, "max_time_s": 10.0, "min_samples": 3, "target_block_s": 0.5},
    },
    "full": {
        "batch_size": 1024,
        "train_samples": fm.TRAIN_SAMPLES,
        "data": "auto",
        "real_epoch": True,
        "timer": {"warmup_s": 3.0, "min_time_s": 5.0, "max_time_s": 30.0, "min_samples": 5, "target_block_s": 1.0},
    },
}


def training_records(
    *,
    framework: str,
    step: Step,
    sync: Callable[[], None],
    sync_name: str,
    threads: int | None,
    device: str,
    device_name: str,
    dtype: str,
    params: dict[str, Any],
    extra: dict[str, Any],
) -> list[MeasurementRecord]:
    """Time ``step`` and return a throughput record and an epoch-time record."""
    batch_size = params["batch_size"]
    m = Timer(step.run, sync=sync, sync_name=sync_name, threads=threads, label=f"{NAME} {framework}").measure(
        **params["timer"]
    )
    epoch_steps = params.get("epoch_samples", fm.TRAIN_SAMPLES) // batch_size
    if params["real_epoch"] and step.steps_per_epoch >= epoch_steps:
        sync()
        start = time.perf_counter()
        for _ in range(epoch_steps):
            step.run()
        sync()
        epoch_s, epoch_from = time.perf_counter() - start, "measured: one epoch end to end"
    else:
        epoch_s, epoch_from = m.median * epoch_steps, f"median step time x {epoch_steps} steps"
    common = {
        "mode": "training",
        "batch_size": batch_size,
        "train_samples": params["train_samples"],
        "epoch_samples": epoch_steps * batch_size,
        **extra,
        **step.details,
    }
    base = dict(workload=NAME, framework=framework, device=device, device_name=device_name, dtype=dtype)
    return [
        MeasurementRecord(**base, params=common, metric=THROUGHPUT, value=batch_size / m.median, stats=stats_of(m)),
        MeasurementRecord(**base, params=common | {"epoch_time_from": epoch_from}, metric=EPOCH_TIME, value=epoch_s),
    ]


def run(ctx: RunContext, params: dict[str, Any]) -> list[MeasurementRecord]:
    tb.import_torch()
    sync, sync_name = tb.sync_function(ctx.device)
    data = fm.load(fm.load_torchvision, params["train_samples"], params["data"])
    model = fm.torch_model()
    counts = fm.param_counts_torch(model)
    step = torch_step(model, data.x, data.y, params["batch_size"], ctx.device)
    return training_records(
        framework="torch",
        step=step,
        sync=sync,
        sync_name=sync_name,
        threads=tb.threads(),
        device=ctx.device,
        device_name=tb.device_name(ctx.device, ctx.cpu_name),
        dtype="fp32",
        params=params,
        extra={"data": data.source, "data_note": data.note, "parameters": counts.total},
    )


WORKLOAD = register(
    Workload(
        name=NAME,
        framework="torch",
        description="Training samples/s and epoch time of a 2018 Colab TPU article's Fashion-MNIST CNN (PyTorch, fp32).",
        metric=THROUGHPUT,
        sizes=SIZES,
        run=run,
        expected_s={"quick": 2.8, "standard": 6.4},
        suites=("standard", "full"),
        plots=PLOTS,
        score=(
            ScorePart(
                "cnn-torch",
                "training",
                "throughput",
                {"batch_size": 256},
                "Fashion-MNIST CNN training, batch 256, samples/s (PyTorch)",
            ),
        ),
        derived=FROM_TOTAL_TIME,
        not_predicted=NOT_FIT_MODELS,
    )
)
