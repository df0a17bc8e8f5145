"""How fast one of `benchlib fit`'s built-in networks runs on one GPU: one step traced on fake tensors, counted, timed.

The networks (``resnet50`` ...) take `benchlib fit`'s ``--batch`` and ``--dtype`` meanings, so a
page can show memory and speed side by side. Training is one full step (forward, backward, Adam
update) under autocast with fp32 weights; inference is a forward pass in the dtype. Language
models are timed per engine by :mod:`benchlib.predict.llm_speed`.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from benchlib.predict.count import OpCost, op_counter
from benchlib.predict.roofline import GpuRates, StepTime, UnknownSpeedGPU, gpu_rates, step_time

if TYPE_CHECKING:
    from benchlib.catalog.gpus import AcceleratorSpec
    from benchlib.models.trainable import ModelSpec

MODES = ("train", "inference")
DTYPES = ("fp32", "fp16", "bf16")
DEFAULT_IMAGE_BATCH = 64
METHOD = (
    "roofline per op: FLOPs and bytes of one step counted with torch.utils.flop_counter on fake tensors; "
    "compute at the specs' peak x the MAMF fraction for the generation, memory at the peak bandwidth x a "
    "fitted fraction; no op shorter than one eager kernel launch"
)


@dataclass(frozen=True)
class SpeedPrediction:
    """A predicted throughput with everything it was predicted from."""

    model: str
    gpu: str
    mode: str
    dtype: str
    batch: int
    throughput: float
    unit: str
    step: StepTime
    rates: GpuRates

    def as_dict(self) -> dict[str, Any]:
        step = self.step
        return {
            "model": self.model,
            "gpu": self.gpu,
            "mode": self.mode,
            "dtype": self.dtype,
            "batch": self.batch,
            "throughput": self.throughput,
            "unit": self.unit,
            "step_s": step.seconds,
            "compute_bound_s": step.compute_bound_s,
            "memory_bound_s": step.memory_bound_s,
            "launch_bound_s": step.launch_bound_s,
            "compute_bound_share": step.compute_bound_s / step.seconds if step.seconds else 0.0,
            "launch_bound_share": step.launch_bound_s / step.seconds if step.seconds else 0.0,
            "flops": step.flops,
            "bytes_moved": step.bytes,
            "rates": asdict(self.rates),
            "method": METHOD,
            "kind": "predicted",
        }


def _count(run: Any, mode: Any) -> list[OpCost]:
    counter = op_counter()
    with mode, counter:
        run()
    return counter.ops


def builtin_ops(spec: ModelSpec, mode: str, dtype: str, batch: int) -> tuple[list[OpCost], str]:
    """The ops of one step of a built-in network, and its throughput unit."""
    import torch

    from benchlib.predict.memory import PeakTracer

    tracer = PeakTracer(spec.name, dtype=dtype)
    step = tracer.step
    step.set_batch(batch)
    unit = "tokens/s" if spec.kind == "tokens" else "images/s"
    if mode == "train":
        return _count(step.run, tracer.mode), unit

    def forward() -> None:
        step.model.eval()
        with torch.no_grad(), torch.autocast("cpu", dtype=step.amp or torch.float32, enabled=step.amp is not None):
            step.model(step.inputs)

    return _count(forward, tracer.mode), unit


def predict_speed(
    model: ModelSpec,
    gpu: AcceleratorSpec,
    *,
    mode: str = "train",
    dtype: str | None = None,
    batch: int | None = None,
) -> SpeedPrediction:
    """Predict the throughput of a built-in network on ``gpu`` (both resolved by the caller); ValueError
    or UnknownSpeedGPU say what to change. ``dtype`` defaults to fp32, ``batch`` to 64."""
    if mode not in MODES:
        raise ValueError(f"--mode {mode!r}: choose one of {', '.join(MODES)}")
    if dtype is not None and dtype not in DTYPES:
        raise ValueError(f"--dtype {dtype!r}: choose one of {', '.join(DTYPES)}")
    if batch is not None and batch < 1:
        raise ValueError("--batch must be at least 1")
    rates = gpu_rates(gpu)
    dtype = dtype or "fp32"
    if dtype != "fp32" and dtype not in rates.peaks_tflops:
        raise UnknownSpeedGPU(
            f"{rates.name}: the specs give no {dtype} peak (it may not support {dtype}); try --dtype fp16 or fp32"
        )
    batch = batch or DEFAULT_IMAGE_BATCH
    ops, unit = builtin_ops(model, mode, dtype, batch)
    step = step_time(ops, rates)
    per_step = batch * (model.input_shape()[0] if unit == "tokens/s" else 1)
    return SpeedPrediction(
        model=model.title,
        gpu=rates.name,
        mode=mode,
        dtype=dtype,
        batch=batch,
        throughput=per_step / step.seconds,
        unit=unit,
        step=step,
        rates=rates,
    )
