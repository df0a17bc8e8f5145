"""The seeds' convolution: 128 images of 256x256x3, 256 filters of 5x5, stride 2, SAME padding.

``scale`` shrinks batch and image side so a CPU finishes in seconds; scale 1.0 is the seeds' op.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from benchlib.backends import torch_backend as tb
from benchlib.core.timing import Timer
from benchlib.results.schema import MeasurementRecord, Metric
from benchlib.workloads import Chart, NotPredicted, Plot, RunContext, Workload, WorkRate, register
from benchlib.workloads._record import stats_of

# The seeds' 2018 timings (this op and the Fashion-MNIST CNN, in TensorFlow) have no speed prediction.
NOT_FIT_MODELS = NotPredicted(
    "2018 TensorFlow timings on Colab (a conv2d op, a Keras CNN)", "`predict` builds fit's PyTorch models, not these"
)
METRIC = Metric(name="time", unit="ms", higher_is_better=False)
# The 2018 articles' conv2d shape, run at scale 1.0 (the full suite); smaller suites scale it down.
FULL_SHAPE = {"batch": 128, "side": 256, "channels": 3, "filters": 256, "kernel": 5, "stride": 2}


def shape_for(scale: float) -> dict[str, int]:
    """Batch and image side scaled down together; kernel, filters and stride stay the seeds'."""
    shape = dict(FULL_SHAPE)
    shape["batch"] = max(1, round(FULL_SHAPE["batch"] * scale))
    shape["side"] = max(16, round(FULL_SHAPE["side"] * scale))
    return shape


def flops(params: Mapping[str, Any]) -> float | None:
    """Floating-point operations of one call (SAME padding), times the TPU shards that each ran it.

    None when the params don't describe the convolution (a record without its shape).
    """
    try:
        n, side, channels = (int(params[k]) for k in ("batch", "side", "channels"))
        filters, kernel, stride = (int(params[k]) for k in ("filters", "kernel", "stride"))
    except (KeyError, TypeError, ValueError):
        return None
    out = -(-side // stride)
    return 2.0 * n * out * out * filters * kernel * kernel * channels * int(params.get("shards", 1))


def run(ctx: RunContext, params: dict[str, Any]) -> list[MeasurementRecord]:
    torch = tb.import_torch()
    sync, sync_name = tb.sync_function(ctx.device)
    shape = shape_for(params["scale"])
    conv = torch.nn.Conv2d(
        shape["channels"],
        shape["filters"],
        shape["kernel"],
        stride=shape["stride"],
        padding=shape["kernel"] // 2,  # TF's SAME for an odd kernel at stride 2 gives the same output size
        bias=False,
    ).to(ctx.device)
    x = torch.randn(shape["batch"], shape["channels"], shape["side"], shape["side"], device=ctx.device)
    with torch.inference_mode():
        out = conv(x)
        timer = Timer(lambda: conv(x), sync=sync, sync_name=sync_name, threads=tb.threads(), label="conv2d")
        m = timer.measure(**params["timer"])
    return [
        MeasurementRecord(
            workload="conv2d",
            framework="torch",
            device=out.device.type,
            device_name=tb.device_name(ctx.device, ctx.cpu_name),
            dtype="fp32",
            params={"scale": params["scale"], **shape},
            metric=METRIC,
            value=m.median * 1e3,
            stats=stats_of(m),
        )
    ]


register(
    Workload(
        name="conv2d",
        framework="torch",
        description="Forward time of a 2018 Colab TPU article's 5x5 stride-2 convolution, scaled to fit the device.",
        metric=METRIC,
        sizes={
            "quick": {"scale": 0.125, "timer": {"warmup_s": 0.05, "max_time_s": 1.0, "min_samples": 3}},
            "standard": {"scale": 0.5, "timer": {"warmup_s": 0.3, "max_time_s": 2.0}},
            "full": {"scale": 1.0, "timer": {"warmup_s": 1.0, "max_time_s": 4.0}},
        },
        run=run,
        expected_s={"quick": 1.1, "standard": 2.5},
        plots=(
            Plot(
                Chart("conv2d", "Convolution forward time", "input"),
                "time",
                "batch {param_batch}, {param_side}×{param_side} px",
            ),
        ),
        # What a reported time would mean if the convolution really ran: the seed's TPU figure can't.
        derived=(WorkRate("implied throughput", "TFLOP/s", of="time", work=flops, work_unit="FLOP", scale=1e-12),),
        not_predicted=NOT_FIT_MODELS,
    )
)
